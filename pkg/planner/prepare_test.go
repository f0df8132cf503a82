package planner

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/ledger/ledgertest"
	"github.com/suitegen/suitegen/pkg/plan"
)

// TestPrepareReadsTheRunsPlan: a planner that prepares a run the ledger
// already holds (a planner resumed, the reviewer) works from the plan stored
// with it, asked with other settings or not: it derives nothing, so it
// needs no world (the engine here has none), and its plan is the stored one
// to the byte.
func TestPrepareReadsTheRunsPlan(t *testing.T) {
	c, err := contract.LoadValid("../../examples/retail")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	l := ledgertest.New()
	if _, err := l.CreateRun(ctx, ledger.Run{ID: "r", Agent: c.Agent, ContractSHA256: c.SHA256, State: ledger.RunPlanned, Asked: 4, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	stored := &plan.Plan{Asked: 6, Capacity: 4, Reuse: 1,
		Buckets: []plan.Bucket{bucket("b1", "cancel-order", "c1", 0, 4, 0, 4).Bucket}}
	if err := l.SavePlan(ctx, "r", stored); err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Ledger: l, Queue: &fakeQueue{}, Engine: &engine.Engine{C: c}, RunID: "r", Asked: 4, AllowPartial: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(stored)
	if got, _ := json.Marshal(p.Plan); string(got) != string(want) {
		t.Errorf("prepared plan\n%s\nwant the run's stored plan\n%s", got, want)
	}
}
