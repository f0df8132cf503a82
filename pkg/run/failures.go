package run

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/suite"
)

// Failure is one contract of a portfolio that did not deliver its suite:
// which, why (a stable type and the error's text) and what it had spent.
type Failure struct {
	Agent       string `json:"agent"`
	RunID       string `json:"run_id"`
	Type        string `json:"type"` // short, budget, plan_refused, error
	Reason      string `json:"reason"`
	Proved      int    `json:"proved"`
	Asked       int    `json:"asked"`
	SpentTokens int64  `json:"spent_tokens"`
}

// failureType names how a contract's run ended badly.
func failureType(err error) string {
	var short *planner.ShortError
	switch {
	case errors.As(err, &short) && short.Budget:
		return "budget"
	case errors.As(err, &short):
		return "short"
	case errors.Is(err, planner.ErrPlanRefused):
		return "plan_refused"
	default:
		return "error"
	}
}

// writeFailures records a portfolio's failed contracts in OUT/failures.json,
// sorted as the contracts were given, each with its spend from the meter
// (a failed run's calls were paid for too). Nothing is written when every
// contract delivered; a stale file from an earlier run is removed.
func writeFailures(ctx context.Context, store *ledger.Store, out string, results []Result) error {
	if out == "" {
		out = "out"
	}
	path := filepath.Join(out, "failures.json")
	var failed []Failure
	for _, r := range results {
		if r.Err == nil {
			continue
		}
		f := Failure{Agent: r.Agent, RunID: r.RunID, Type: failureType(r.Err), Reason: r.Err.Error(), Proved: r.Proved, Asked: r.Asked}
		if pr, co, err := store.Spent(ctx, r.RunID); err == nil {
			f.SpentTokens = pr + co
		}
		failed = append(failed, f)
	}
	if len(failed) == 0 {
		return removeIfExists(path)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	return suite.WriteJSON(path, map[string]any{"failures": failed})
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
