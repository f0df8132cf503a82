package suite_test

import (
	"context"
	"testing"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/suite"
)

// TestRestate: after a run over a written suite drops one scenario, the
// restated report counts the scenarios left, adds the run's refusals and
// spend to the report's, keeps the suite's first run and its blocked
// buckets, records the contract now and names the run among its refreshes.
func TestRestate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := ledgerOf(t, []int{0, 1, 2, 3, 4, 5, 6, 7})
	was, _, err := suite.Write(ctx, s, "run-1", testContract, dir, extra)
	if err != nil {
		t.Fatal(err)
	}
	w, err := suite.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	gone := w.Index.Scenarios[0].Name
	if err := suite.RemoveScenario(dir, gone); err != nil {
		t.Fatal(err)
	}
	idx := w.Index
	idx.Scenarios = idx.Scenarios[1:]
	if err := suite.WriteIndex(dir, idx); err != nil {
		t.Fatal(err)
	}
	kept := w.Scenarios[1:]
	bs := []ledger.Bucket{
		{Bucket: plan.Bucket{ID: "b0", Cell: "cell-0", UseCase: "cancel-order", Want: 2, Spec: plan.Spec{Rules: []string{"verify-identity"}}}, Done: 1},
		{Bucket: plan.Bucket{ID: "b1", Cell: "cell-1", UseCase: "return-item", Want: 2}, Done: 2},
	}
	for i := range kept {
		kept[i].Bucket = bs[i%2].ID
	}
	c := *testContract
	c.SHA256 = "now"
	a := suite.Account{Run: ledger.Run{ID: "run-2", Model: "other", WorldSHA256: "w2"}, Buckets: bs,
		Refusals: map[string]int{"grounding/unknown-value": 3},
		Meter:    ledger.Meter{Calls: 1, PromptTokens: 100, CompletionTokens: 10, CostUSD: 0.001}}
	rep, err := suite.Restate(ctx, dir, &c, kept, a, "update", extra)
	if err != nil {
		t.Fatal(err)
	}
	read, err := suite.ReadReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case read.Count != len(kept) || rep.Count != len(kept):
		t.Errorf("count %d (read back %d), %d on disk", rep.Count, read.Count, len(kept))
	case rep.Run != "run-1" || rep.Asked != was.Asked || rep.Provenance.Seed != was.Provenance.Seed:
		t.Errorf("the suite's run is not kept: %s asked %d seed %d", rep.Run, rep.Asked, rep.Provenance.Seed)
	case rep.Refusals["grounding"]["unknown-value"] != was.Refusals["grounding"]["unknown-value"]+3 || rep.Refusals["static"]["placeholder"] != was.Refusals["static"]["placeholder"]:
		t.Errorf("refusals %v, before %v", rep.Refusals, was.Refusals)
	case rep.Spend.PromptTokens != was.Spend.PromptTokens+100 || rep.Spend.CompletionTokens != was.Spend.CompletionTokens+10 || !rep.Spend.Priced:
		t.Errorf("spend %+v, before %+v", rep.Spend, was.Spend)
	case rep.Spend.PerScenarioKept != (rep.Spend.PromptTokens+rep.Spend.CompletionTokens)/int64(len(kept)):
		t.Errorf("per kept %d", rep.Spend.PerScenarioKept)
	case len(rep.Blocked) != len(was.Blocked):
		t.Errorf("blocked %v, before %v", rep.Blocked, was.Blocked)
	case rep.Provenance.ContractSHA256 != "now" || rep.Provenance.WorldSHA256 != "w2" || rep.Provenance.Model != "builtin, other":
		t.Errorf("provenance %+v", rep.Provenance)
	case len(rep.Refreshed) != 1 || rep.Refreshed[0] != (suite.Refreshed{Mode: "update", Run: "run-2"}):
		t.Errorf("refreshed %+v", rep.Refreshed)
	case rep.Coverage.Cells != 2 || rep.Coverage.CellsCovered != 2 || len(rep.Coverage.RulesTested) != 1:
		t.Errorf("coverage %+v", rep.Coverage)
	}
	// A second run over it adds to the first's account.
	again, err := suite.Restate(ctx, dir, &c, kept, suite.Account{Buckets: bs}, "update", extra)
	if err != nil {
		t.Fatal(err)
	}
	if again.Spend.PromptTokens != rep.Spend.PromptTokens || len(again.Refreshed) != 2 || again.Refreshed[1].Run != "" {
		t.Errorf("second restatement: spend %+v, refreshed %+v", again.Spend, again.Refreshed)
	}
}
