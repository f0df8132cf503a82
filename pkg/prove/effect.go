package prove

import (
	"context"
	"fmt"

	"github.com/suitegen/suitegen/pkg/world"
)

// A success must change what it claims to change. That the end state
// differs from doing nothing is not enough when the solution changes state
// more than once: one real change beside an act that writes what is already
// there (an address "changed" to itself), or that a later call undoes
// (changed, then changed back), would pass. Each state-changing call must
// leave a row that still differs, at the end, from the world after setup.

// lasting replays a solution with two or more state-changing calls on a
// copy of its own, reading the world after setup and after each such call,
// and notes (idle) the first whose rows are all, at the end, as they were.
func (pr *proof) lasting(ctx context.Context) error {
	var at []int
	for i, r := range pr.results {
		if pr.p.stateChanging(r) {
			at = append(at, i)
		}
	}
	if len(at) < 2 || !pr.compared || len(pr.effect) == 0 {
		return nil
	}
	setup := func(cp *world.Copy) error { return applySetup(ctx, cp, pr.sc.Setup) }
	snaps := make([]world.Snapshot, 0, len(at)+1) // after setup, then after each state-changing call
	err := pr.p.w.Pair(ctx, setup, func(cp *world.Copy, _ *world.Before) error {
		snaps = snaps[:0]
		s, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		snaps = append(snaps, s)
		for _, r := range pr.results {
			res := cp.Call(ctx, r.Tool, r.Args)
			if res.Crash && infrastructure(res.Err) {
				return res.Err
			}
			if !pr.p.stateChanging(r) {
				continue
			}
			if s, err = cp.Snapshot(ctx); err != nil {
				return err
			}
			snaps = append(snaps, s)
		}
		return nil
	})
	if err != nil {
		return err
	}
	end, err := world.DiffSnapshots(snaps[0], snaps[len(snaps)-1])
	if err != nil {
		return err
	}
	differs := pr.rowKeys(end)
	for k, i := range at {
		d, err := world.DiffSnapshots(snaps[k], snaps[k+1])
		if err != nil {
			return err
		}
		touched := pr.rowKeys(d)
		lasts := false
		for key := range touched {
			lasts = lasts || differs[key]
		}
		if !lasts {
			what := "changes nothing"
			if len(touched) > 0 {
				what = "changes rows that are back as they were by the end of the solution"
			}
			pr.idle = fmt.Sprintf("solution step %d (%s) %s: every state-changing call of a success must leave a change that lasts (a value \"changed\" to what it already was, or changed and changed back, is not a change)", i+1, pr.results[i].Tool, what)
			return nil
		}
	}
	return nil
}

// rowKeys are the rows a diff touches, as table and primary key.
func (pr *proof) rowKeys(d world.StateDiff) map[string]bool {
	out := map[string]bool{}
	for _, t := range d.Tables {
		for _, r := range t.Added {
			out[t.Table+"\x00"+pr.p.keyText(t.Table, r)] = true
		}
		for _, r := range t.Removed {
			out[t.Table+"\x00"+pr.p.keyText(t.Table, r)] = true
		}
		for _, ch := range t.Changed {
			out[t.Table+"\x00"+pr.p.keyText(t.Table, ch.After)] = true
		}
	}
	return out
}
