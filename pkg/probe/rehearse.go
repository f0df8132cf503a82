package probe

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
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
	return r.around(ctx, setup, calls, nil)
}

// RehearseEffect is Rehearse, and also reports whether the calls changed any
// row the setup left: an act the world answers ok yet that writes what is
// already there (roaming turned off on a line where it is off) changes
// nothing, and planning deals no success on it.
func (r rehearser) RehearseEffect(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, bool, error) {
	changed := false
	out, err := r.around(ctx, setup, calls, func(before, after world.Snapshot) error {
		changed = len(world.ChangedTables(before, after)) > 0
		return nil
	})
	return out, changed, err
}

// around runs the setup then the calls on one copy that is rolled back,
// and hands seen, when given, the copy's snapshots from before and after
// the calls.
func (r rehearser) around(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, seen func(before, after world.Snapshot) error) ([]ground.Answer, error) {
	var out []ground.Answer
	err := r.w.Copy(ctx, func(cp *world.Copy) error {
		out = out[:0]
		if err := runSetup(ctx, cp, setup); err != nil {
			return err
		}
		var before, after world.Snapshot
		var err error
		if seen != nil {
			if before, err = cp.Snapshot(ctx); err != nil {
				return err
			}
		}
		for _, c := range calls {
			res := cp.Call(ctx, c.Tool, c.Args)
			out = append(out, ground.Answer{OK: res.OK, Refused: res.Refused, Crash: res.Crash, Invalid: res.Invalid,
				Wrote: res.Wrote, Error: res.Error, Result: res.Result, Read: res.ReadArgs, Branch: res.Branch, Want: want(res)})
		}
		if seen == nil {
			return nil
		}
		if after, err = cp.Snapshot(ctx); err != nil {
			return err
		}
		return seen(before, after)
	})
	return out, err
}

// runSetup runs a rehearsal's setup on its copy. A statement the world
// refuses is a *scenario.SetupError naming it.
func runSetup(ctx context.Context, cp *world.Copy, setup []scenario.Statement) error {
	if len(setup) == 0 {
		return nil
	}
	return cp.ExecBatch(ctx, setup)
}

// RehearseWrites is Rehearse, and also returns statements that write what
// the calls wrote (rows added, changed and removed, as single INSERT,
// UPDATE and DELETE statements keyed by primary key): run as a later
// case's setup, they put the world where the calls left it, so that the
// case asks for an act already done (a second callback, items modified a
// second time). A table without a primary key, or a row change the
// statements could not reproduce, gives no statements.
func (r rehearser) RehearseWrites(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, []scenario.Statement, error) {
	var writes []scenario.Statement
	out, err := r.around(ctx, setup, calls, func(before, after world.Snapshot) error {
		d, err := world.DiffSnapshots(before, after)
		writes = statementsOf(r.w.Contract(), d)
		return err
	})
	return out, writes, err
}

// statementsOf renders a diff as statements: removals, then changes, then
// additions, each in the diff's table order (parents before children).
// Columns the database fills (identity, generated) are left to it.
func statementsOf(c *contract.Contract, d world.StateDiff) []scenario.Statement {
	var dels, upds, ins []scenario.Statement
	for _, td := range d.Tables {
		t := c.Table(td.Table)
		if t == nil || len(t.PrimaryKey) == 0 {
			return nil
		}
		where := func(row map[string]any, args []any) (string, []any) {
			var conds []string
			for _, k := range t.PrimaryKey {
				args = append(args, row[k])
				conds = append(conds, fmt.Sprintf("%s = $%d", k, len(args)))
			}
			return strings.Join(conds, " AND "), args
		}
		for _, row := range td.Removed {
			w, args := where(row, nil)
			dels = append(dels, scenario.Statement{SQL: fmt.Sprintf("DELETE FROM %s WHERE %s", t.Name, w), Args: args})
		}
		for _, ch := range td.Changed {
			var sets []string
			var args []any
			for _, col := range ch.Columns {
				if slices.Contains(t.PrimaryKey, col) {
					return nil // a key changed: no statement keyed by it says so
				}
				args = append(args, ch.After[col])
				sets = append(sets, fmt.Sprintf("%s = $%d", col, len(args)))
			}
			w, args := where(ch.Before, args)
			upds = append(upds, scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s WHERE %s", t.Name, strings.Join(sets, ", "), w), Args: args})
		}
		for _, row := range td.Added {
			var cols, marks []string
			var args []any
			for _, col := range t.Columns {
				v, ok := row[col.Name]
				if !ok || col.Default == "identity" || col.Default == "generated" {
					continue
				}
				args = append(args, v)
				cols = append(cols, col.Name)
				marks = append(marks, "$"+strconv.Itoa(len(args)))
			}
			ins = append(ins, scenario.Statement{SQL: fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t.Name, strings.Join(cols, ", "), strings.Join(marks, ", ")), Args: args})
		}
	}
	return slices.Concat(dels, upds, ins)
}

// want is a refusal's numbers, as grounding reads them.
func want(res world.CallResult) *ground.Want {
	if res.Want == nil {
		return nil
	}
	return &ground.Want{Arg: res.Want.Arg, Value: res.Want.Value}
}
