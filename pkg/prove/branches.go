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
// played for its own sake: every call of it answers ok (the solvable gate),
// so it refuses nowhere. A later request's tempting calls are played where
// a right agent has left the world by then: after setup and the solutions
// of the requests before it.
func (p *Prover) Reach(ctx context.Context, sc *scenario.Scenario) (map[string]int, error) {
	var hits map[string]int
	reqs := sc.Requests()
	for k, r := range reqs {
		if len(r.Tempting) == 0 {
			continue
		}
		err := p.w.Copy(ctx, func(cp *world.Copy) error {
			// A fresh log per attempt: a copy retried plays again.
			var log script.BranchLog
			lctx := script.WithBranchLog(ctx, &log)
			if err := applySetup(ctx, cp, sc.Setup); err != nil {
				return err
			}
			for _, e := range reqs[:k] {
				for _, res := range play(ctx, cp, e.Solution) {
					if res.Crash && infrastructure(res.Err) {
						return res.Err
					}
				}
			}
			for _, res := range play(lctx, cp, r.Tempting) {
				if res.Crash && infrastructure(res.Err) {
					return res.Err
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
