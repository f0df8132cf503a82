package suite

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// ReadReport reads dir's report.json; a suite that has none gets a zero
// report.
func ReadReport(dir string) (Report, error) {
	path := filepath.Join(dir, "report.json")
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Report{}, nil
	}
	if err != nil {
		return Report{}, &CorruptError{File: path, Err: err}
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return Report{}, &CorruptError{File: path, Err: err}
	}
	return r, nil
}

// Restate rewrites dir's report.json after a run over the written suite
// (mode update, into or revise) changed it. What the suite holds — count,
// coverage, diversity, outbound — is counted from kept, the suite's
// scenarios as they now are, each in the bucket of a.Buckets its Bucket
// names, as Summarize counts a run's. What it cost adds up: the refusals
// and spend of the report before and of a.Run. The suite's first run stays
// its run: its id, state, ask, seed and the buckets it left blocked; the
// contract is c, the one the suite now proves against; Refreshed gains the
// run.
func Restate(ctx context.Context, dir string, c *contract.Contract, kept []scenario.Scenario, a Account, mode string, extra ReportExtra) (Report, error) {
	prev, err := ReadReport(dir)
	if err != nil {
		return Report{}, fmt.Errorf("suite: restate: %w", err)
	}
	if prev.Run == "" {
		// A suite written before its report: the index names its run.
		w, err := Read(dir)
		if err != nil {
			return Report{}, fmt.Errorf("suite: restate: %w", err)
		}
		prev.Run, prev.Agent = w.Index.Run, w.Index.Agent
	}
	refusals := map[string]int{}
	for gate, codes := range prev.Refusals {
		for code, n := range codes {
			k := gate
			if code != "" {
				k += "/" + code
			}
			refusals[k] += n
		}
	}
	for k, n := range a.Refusals {
		refusals[k] += n
	}
	m, ps := a.Meter, prev.Spend
	m.PromptTokens += ps.PromptTokens
	m.CompletionTokens += ps.CompletionTokens
	m.CachedPromptTokens += ps.CachedPromptTokens
	m.ReasoningTokens += ps.ReasoningTokens
	m.CostUSD += ps.CostUSD
	if ps.Priced || ps.PromptTokens+ps.CompletionTokens > 0 {
		// The report before stands for its calls: priced or not.
		m.Calls++
		if !ps.Priced {
			m.UnpricedCalls++
		}
	}
	model := prev.Provenance.Model
	if nm := a.Run.Model; nm != "" && !slices.Contains(strings.Split(model, ", "), nm) {
		model = strings.TrimPrefix(model+", "+nm, ", ")
	}
	run := ledger.Run{ID: prev.Run, Agent: prev.Agent, State: ledger.RunState(prev.State), Asked: prev.Asked,
		ContractSHA256: c.SHA256, WorldSHA256: cmp.Or(a.Run.WorldSHA256, prev.Provenance.WorldSHA256),
		Model: model, Seed: prev.Provenance.Seed, BudgetTokens: ps.BudgetTokens, BudgetUSD: ps.BudgetUSD}
	rep, err := Summarize(ctx, c, kept, Account{Run: run, Buckets: a.Buckets, Refusals: refusals, Meter: m}, extra)
	if err != nil {
		return Report{}, fmt.Errorf("suite: restate: %w", err)
	}
	rep.Blocked = append([]Blocked{}, prev.Blocked...)
	for k, v := range prev.Faults {
		if _, ok := rep.Faults[k]; !ok {
			rep.Faults[k] = v
		}
	}
	rep.Refreshed = append(prev.Refreshed, Refreshed{Mode: mode, Run: a.Run.ID})
	if err := WriteJSON(filepath.Join(dir, "report.json"), rep); err != nil {
		return Report{}, fmt.Errorf("suite: restate: %w", err)
	}
	return rep, nil
}
