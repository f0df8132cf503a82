package probe

import (
	"context"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// Rehearser plays calls on throwaway copies of a world: what grounding and
// planning learn the world's behaviour from.
func Rehearser(w *world.World) ground.Rehearser { return rehearser{w} }

type rehearser struct{ w *world.World }

// Rehearse runs the setup then the calls, in order, on one copy that is
// rolled back. A setup statement the world refuses is a *scenario.SetupError.
func (r rehearser) Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, error) {
	var out []ground.Answer
	err := r.w.Copy(ctx, func(cp *world.Copy) error {
		out = out[:0]
		if err := runSetup(ctx, cp, setup); err != nil {
			return err
		}
		for _, c := range calls {
			res := cp.Call(ctx, c.Tool, c.Args)
			out = append(out, ground.Answer{OK: res.OK, Refused: res.Refused, Crash: res.Crash, Invalid: res.Invalid,
				Wrote: res.Wrote, Error: res.Error, Result: res.Result, Read: res.ReadArgs, Branch: res.Branch})
		}
		return nil
	})
	return out, err
}

// RehearseEffect is Rehearse, and also reports whether the calls changed any
// row the setup left: an act the world answers ok yet that writes what is
// already there (roaming turned off on a line where it is off) changes
// nothing, and planning deals no success on it.
func (r rehearser) RehearseEffect(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, bool, error) {
	var out []ground.Answer
	changed := false
	err := r.w.Copy(ctx, func(cp *world.Copy) error {
		out, changed = out[:0], false
		if err := runSetup(ctx, cp, setup); err != nil {
			return err
		}
		before, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		for _, c := range calls {
			res := cp.Call(ctx, c.Tool, c.Args)
			out = append(out, ground.Answer{OK: res.OK, Refused: res.Refused, Crash: res.Crash, Invalid: res.Invalid,
				Wrote: res.Wrote, Error: res.Error, Result: res.Result, Read: res.ReadArgs, Branch: res.Branch})
		}
		after, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		changed = len(world.ChangedTables(before, after)) > 0
		return nil
	})
	return out, changed, err
}

// runSetup runs a rehearsal's setup on its copy. A statement the world
// refuses is a *scenario.SetupError naming it.
func runSetup(ctx context.Context, cp *world.Copy, setup []scenario.Statement) error {
	if len(setup) == 0 {
		return nil
	}
	return cp.ExecBatch(ctx, setup)
}
