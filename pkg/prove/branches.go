package prove

import (
	"context"
	"fmt"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// Reach plays a scenario's tempting calls on a fresh copy after its setup
// and returns the handlers' refusal branches they refused at (file:line,
// see script.Branches), with how many calls did. One play, not a proof:
// what a suite's acts reach, cheaply. A kept scenario's solution is not
// played: every call of it answers ok (the solvable gate), so it refuses
// nowhere.
func (p *Prover) Reach(ctx context.Context, sc *scenario.Scenario) (map[string]int, error) {
	var hits map[string]int
	for _, calls := range [][]scenario.Call{sc.Tempting} {
		if len(calls) == 0 {
			continue
		}
		err := p.w.Copy(ctx, func(cp *world.Copy) error {
			// A fresh log per attempt: a copy retried plays again.
			var log script.BranchLog
			lctx := script.WithBranchLog(ctx, &log)
			if err := applySetup(lctx, cp, sc.Setup); err != nil {
				return err
			}
			for _, r := range play(lctx, cp, calls) {
				if r.Crash && infrastructure(r.Err) {
					return r.Err
				}
			}
			for at, n := range log.Hits() {
				if hits == nil {
					hits = map[string]int{}
				}
				hits[at] += n
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("prove: reach %s: %w", sc.Name, err)
		}
	}
	return hits, nil
}
