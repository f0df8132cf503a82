package suite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/testenv"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func TestMain(m *testing.M) { testenv.Main(m) }

var testContract = &contract.Contract{
	Agent:    "shop",
	UseCases: []contract.UseCase{{ID: "cancel-order"}, {ID: "return-item"}, {ID: "track-order"}},
	SubGoals: []contract.SubGoal{
		{Name: "order-cancelled", What: "The order is cancelled", Params: map[string]string{"order_id": "string"}, File: "subgoals/order-cancelled.star"},
		{Name: "polite", What: "Stays polite", Judged: true, File: "subgoals/polite.star"},
	},
}

func scenarios() []*scenario.Scenario {
	var out []*scenario.Scenario
	personalities := []string{"Impatient", "Anxious", "Impatient", "Calm"}
	for i := 0; i < 8; i++ {
		uc := "cancel-order"
		if i%2 == 1 {
			uc = "return-item"
		}
		out = append(out, &scenario.Scenario{
			Name: fmt.Sprintf("%s-%02d", uc, i), UseCase: uc, Branch: fmt.Sprintf("branch %d", i),
			Kind: scenario.Kinds[i%4], Expects: scenario.Outcomes[i%2], Bucket: fmt.Sprintf("b%d", i%4),
			Tests: "passes when <the order> & its refund are settled",
			Persona: scenario.Persona{Name: fmt.Sprintf("Caller %c", 'A'+i%7), Personality: personalities[i%4],
				Accent: []string{"Scottish", "Indian"}[i%2], Location: []string{"Leeds", "Pune", "Lima"}[i%3], Opening: "hi"},
			CallerID:    fmt.Sprintf("user_%d", i),
			Instruction: fmt.Sprintf("You want order #W%d gone.", 1000+i),
			Setup:       []scenario.Statement{{SQL: "UPDATE orders SET status = $1 WHERE id = $2", Args: []any{"pending", fmt.Sprintf("#W%d", 1000+i)}}},
			Solution: []scenario.Call{
				{Tool: "find_user_id_by_email", Args: map[string]any{"email": fmt.Sprintf("u%d@x.test", i)}},
				{Tool: "cancel_pending_order", Args: map[string]any{"order_id": fmt.Sprintf("#W%d", 1000+i), "reason": "ordered by mistake", "qty": 2}},
			},
			Outputs:    []string{fmt.Sprintf("%d.50", 10+i)},
			SubGoals:   []scenario.SubGoalRef{{Name: "order-cancelled", Params: map[string]any{"order_id": fmt.Sprintf("#W%d", 1000+i)}}},
			MaxTurns:   12,
			Provenance: scenario.Provenance{ContractSHA256: "csha", WorldSHA256: "wsha", Model: "builtin", Seed: 7},
		})
		if i == 0 {
			out[0].SubGoals = append(out[0].SubGoals, scenario.SubGoalRef{Name: "polite", Judged: true})
		}
	}
	return out
}

// ledgerOf builds a run in a fresh database, journalling scenarios in the
// given order.
func ledgerOf(t *testing.T, order []int) *ledger.Store {
	t.Helper()
	ctx := context.Background()
	s := ledger.New(testenv.Postgres(t))
	if _, err := s.CreateRun(ctx, ledger.Run{ID: "run-1", Agent: "shop", ContractSHA256: "csha", WorldSHA256: "wsha", Model: "builtin", Asked: 10, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	var bs []ledger.Bucket
	for i := 0; i < 5; i++ {
		uc := "cancel-order"
		if i%2 == 1 {
			uc = "return-item"
		}
		// Bucket b0 tests a rule; b4, which nothing is written for, tests
		// another: only the kept scenarios' rules count as tested.
		var spec plan.Spec
		switch i {
		case 0:
			spec.Rules = []string{"verify-identity"}
		case 4:
			spec.Rules = []string{"confirm"}
		}
		bs = append(bs, ledger.Bucket{Bucket: plan.Bucket{ID: fmt.Sprintf("b%d", i), Ord: i, Theme: "t", Cell: fmt.Sprintf("cell-%d", i%3), UseCase: uc, Angle: "a", Outcome: "succeed", Overlay: "none", Kind: "happy", Want: 2, Spec: spec}})
	}
	// Buckets are put in the reverse order too: ord, not insertion, decides.
	for i := len(bs) - 1; i >= 0; i-- {
		if err := s.PutBuckets(ctx, "run-1", bs[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	all := scenarios()
	for _, i := range order {
		if _, err := s.Journal(ctx, "run-1", all[i], "s1", fmt.Sprintf("w%d", i%3), []string{fmt.Sprintf("#W%d", 1000+i)}); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.Refuse(ctx, "run-1", "s1", "b4", "grounding", "unknown-value", "#W9 is not in the world")
	_ = s.Refuse(ctx, "run-1", "s1", "b4", "grounding", "unknown-value", "#W8 is not in the world")
	_ = s.Refuse(ctx, "run-1", "s1", "b4", "static", "placeholder", "John Doe")
	if err := s.SpendCall(ctx, ledger.Call{Run: "run-1", Slice: "s1", Writer: "w1", Model: "gpt-x", Prompt: 800, Completion: 200,
		CachedPrompt: 512, Reasoning: 50, CostUSD: 0.004, Priced: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSubGoal(ctx, "run-1", ledger.SubGoal{Name: "mentions-refund", What: "Says the refund amount", Judged: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimSlice(ctx, ledger.Slice{RunID: "run-1", ID: "s1", BucketIDs: []string{"b4"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishSlice(ctx, "run-1", "s1", "dead", "w1", "", 3); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fold(ctx, "run-1", 1); err != nil {
		t.Fatal(err)
	}
	return s
}

var extra = suite.ReportExtra{
	Rules: []string{"verify-identity", "confirm"}, RulesNamed: []string{"verify-identity", "confirm"},
	GatedTools: []string{"cancel_pending_order"}, GatedToolsNamed: []string{"cancel_pending_order"},
	BuiltinSubGoals: []suite.SubGoalInfo{{Name: "no-unrequested-change", What: "Nothing changed that was not asked for"}},
	Faults:          map[string]string{"crashes": "0"},
}

func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestWriteByteIdentical(t *testing.T) {
	ctx := context.Background()
	a, b := t.TempDir(), t.TempDir()
	// A stale folder from an earlier write that the ledger does not name.
	if err := os.MkdirAll(filepath.Join(b, "scenarios", "gone"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(b, "scenarios", "gone", "scenario.json"), []byte("{}"), 0o644)

	repA, _, err := suite.Write(ctx, ledgerOf(t, []int{0, 1, 2, 3, 4, 5, 6, 7}), "run-1", testContract, a, extra)
	if err != nil {
		t.Fatal(err)
	}
	// The second reads the ledger three scenarios at a time: pages change
	// no byte.
	suite.SetPageSize(t, 3)
	if _, _, err := suite.Write(ctx, ledgerOf(t, []int{7, 3, 5, 1, 6, 0, 2, 4}), "run-1", testContract, b, extra); err != nil {
		t.Fatal(err)
	}
	ta, tb := tree(t, a), tree(t, b)
	if len(ta) != 8+3 {
		t.Fatalf("files written: %d", len(ta))
	}
	for p, x := range ta {
		if !bytes.Equal(x, tb[p]) {
			t.Errorf("%s differs between insertion orders:\n%s\n---\n%s", p, x, tb[p])
		}
	}
	for p := range tb {
		if _, ok := ta[p]; !ok {
			t.Errorf("%s only in the second write (stale folder kept?)", p)
		}
	}
	// The on-disk format is pinned by a golden file.
	got := ta[filepath.Join("scenarios", "cancel-order-00", "scenario.json")]
	golden := filepath.Join("testdata", "scenario.golden.json")
	if *update {
		os.WriteFile(golden, got, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("scenario.json differs from %s (run with -update if intended):\n%s", golden, got)
	}

	// index.json: ledger order (bucket ord, name).
	var idx suite.Index
	if err := json.Unmarshal(ta["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range idx.Scenarios {
		names = append(names, e.Name)
	}
	if idx.Count != 8 || idx.Run != "run-1" || strings.Join(names, " ") != "cancel-order-00 cancel-order-04 return-item-01 return-item-05 cancel-order-02 cancel-order-06 return-item-03 return-item-07" {
		t.Fatalf("index: %+v", idx)
	}
	var cat []suite.SubGoalInfo
	if err := json.Unmarshal(ta["catalogue.json"], &cat); err != nil {
		t.Fatal(err)
	}
	var catNames []string
	for _, g := range cat {
		catNames = append(catNames, g.Name+":"+g.Origin)
	}
	if strings.Join(catNames, " ") != "mentions-refund:run no-unrequested-change:builtin order-cancelled:contract polite:contract" {
		t.Fatalf("catalogue: %v", catNames)
	}

	// The report.
	r := repA
	if r.Count != 8 || r.Asked != 10 || r.Coverage.UseCases != 3 || r.Coverage.UseCasesPresent != 2 ||
		fmt.Sprint(r.Coverage.MissingUseCases) != "[track-order]" || r.Coverage.Cells != 3 || r.Coverage.CellsCovered != 3 ||
		r.Coverage.Outcomes["succeed"] != 4 || r.Coverage.Outcomes["refuse"] != 4 || r.Coverage.Kinds["happy"] != 2 ||
		r.Coverage.Rules != 2 || fmt.Sprint(r.Coverage.RulesTested) != "[verify-identity]" || r.Coverage.GatedTools != 1 ||
		fmt.Sprint(r.Coverage.Planned.RulesNamed) != "[confirm verify-identity]" ||
		fmt.Sprint(r.Coverage.RulesUntested) != "[{confirm no kept scenario names it}]" {
		t.Fatalf("coverage: %+v", r.Coverage)
	}
	if r.Diversity.CallerNameShare != 0.875 || r.Diversity.DistinctCallerNames != 7 || r.Diversity.TopPersonality != "Impatient" || r.Diversity.TopPersonalityShare != 0.5 ||
		r.Diversity.DistinctAccents != 2 || r.Diversity.DistinctLocations != 3 {
		t.Fatalf("diversity: %+v", r.Diversity)
	}
	if r.Outbound != nil || r.Diversity.Phone != nil {
		t.Fatalf("an inbound chat suite reports outbound calls %+v or phone lines %+v", r.Outbound, r.Diversity.Phone)
	}
	if r.Refusals["grounding"]["unknown-value"] != 2 || r.Refusals["static"]["placeholder"] != 1 {
		t.Fatalf("refusals: %+v", r.Refusals)
	}
	if len(r.Blocked) != 1 || r.Blocked[0].Bucket != "b4" || !strings.HasPrefix(r.Blocked[0].Reason, "grounding/unknown-value: ") {
		t.Fatalf("blocked: %+v", r.Blocked)
	}
	if rf := r.Blocked[0].Refusal; rf == nil || rf.Gate != "grounding" || rf.Code != "unknown-value" || rf.Count != 2 || rf.Of != 3 || rf.Example != "#W8 is not in the world" {
		t.Fatalf("blocked bucket's dominant refusal: %+v", r.Blocked[0].Refusal)
	}
	if r.Spend.PromptTokens != 800 || r.Spend.CompletionTokens != 200 || r.Spend.PerScenarioKept != 125 || r.Spend.PerScenarioRefused != 333 ||
		r.Spend.CachedPromptTokens != 512 || r.Spend.ReasoningTokens != 50 || r.Spend.PromptPerKept != 100 || r.Spend.CompletionPerKept != 25 ||
		r.Spend.CostUSD != 0.004 || r.Spend.CostPerKeptUSD != 0.0005 || !r.Spend.Priced {
		t.Fatalf("spend: %+v", r.Spend)
	}
	if r.Provenance.Model != "builtin" || r.Provenance.Seed != 7 || r.Provenance.ContractSHA256 != "csha" || r.Faults["crashes"] != "0" {
		t.Fatalf("provenance/faults: %+v %+v", r.Provenance, r.Faults)
	}

	// Writing again over the same folder changes nothing.
	if _, _, err := suite.Write(ctx, ledgerOf(t, []int{2, 0, 1, 3, 4, 5, 6, 7}), "run-1", testContract, a, extra); err != nil {
		t.Fatal(err)
	}
	for p, x := range tree(t, a) {
		if !bytes.Equal(x, ta[p]) {
			t.Errorf("%s changed on rewrite", p)
		}
	}
}

func TestWriteUnsafeName(t *testing.T) {
	ctx := context.Background()
	s := ledgerOf(t, []int{0})
	evil := scenarios()[1]
	evil.Name = "../../evil"
	if _, err := s.Journal(ctx, "run-1", evil, "s1", "w1", nil); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	out := filepath.Join(root, "out")
	rep, _, err := suite.Write(ctx, s, "run-1", nil, out, suite.ReportExtra{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count != 1 || !strings.Contains(rep.Faults["unsafe_scenario_names"], "evil") {
		t.Fatalf("report: count %d faults %v", rep.Count, rep.Faults)
	}
	if _, err := os.Stat(filepath.Join(root, "evil")); !os.IsNotExist(err) {
		t.Fatalf("wrote outside out: %v", err)
	}
	if rep.Coverage.UseCases != 2 { // from the buckets when no contract is given
		t.Fatalf("use cases without a contract: %+v", rep.Coverage)
	}
	if _, _, err := suite.Write(ctx, s, "nope", nil, out, suite.ReportExtra{}); err == nil {
		t.Fatal("Write of a missing run succeeded")
	}
}

func TestExport(t *testing.T) {
	ctx := context.Background()
	out := t.TempDir()
	if _, _, err := suite.Write(ctx, ledgerOf(t, []int{0, 1, 2}), "run-1", testContract, out, extra); err != nil {
		t.Fatal(err)
	}
	var jl bytes.Buffer
	if err := suite.Export(out, "jsonl", &jl); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(jl.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("jsonl lines: %d\n%s", len(lines), jl.String())
	}
	var first scenario.Scenario
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Name != "cancel-order-00" || strings.Contains(lines[0], "\n  ") {
		t.Fatalf("jsonl first line: %v %q", err, lines[0])
	}
	// The benchmark formats are pkg/taubench's and pkg/tau2's.
	var tb bytes.Buffer
	if err := suite.Export(out, "tau-bench", &tb); err == nil || tb.Len() != 0 {
		t.Fatalf("tau-bench through suite.Export: %v, wrote %q", err, tb.String())
	}
	// What no code proved is marked judged (taubench's TestRoundTrip checks
	// the tau-bench task lists it).
	if !strings.Contains(lines[0], `{"name":"polite","judged":true}`) {
		t.Errorf("jsonl line 0 does not mark its judged sub-goal: %s", lines[0])
	}
	if err := suite.Export(out, "csv", &tb); err == nil {
		t.Fatal("unknown format accepted")
	}
	if err := suite.Export(t.TempDir(), "jsonl", &tb); err == nil {
		t.Fatal("export of an empty folder succeeded")
	}
}

// FuzzExport feeds arbitrary scenario files to the JSONL export: it must fail
// cleanly or produce valid JSON, never panic.
func FuzzExport(f *testing.F) {
	f.Add([]byte(`{"name":"x","solution":[{"tool":"t","args":{"a":1}}],"outputs":["1"]}`))
	f.Add([]byte(`{"name":"x","caller_id":12345678901234567890}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{"solution":null} {}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		out := t.TempDir()
		os.MkdirAll(filepath.Join(out, "scenarios", "x"), 0o755)
		os.WriteFile(filepath.Join(out, "index.json"), []byte(`{"scenarios":[{"name":"x"}]}`), 0o644)
		os.WriteFile(filepath.Join(out, "scenarios", "x", "scenario.json"), body, 0o644)
		var buf bytes.Buffer
		if err := suite.Export(out, "jsonl", &buf); err != nil {
			return
		}
		if !json.Valid(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))) || bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
			t.Fatalf("jsonl not one valid line: %q", buf.String())
		}
	})
}
