package taskimport

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// A benchmark's reference actions list the writes; the agent finds what
// they send by looking it up. A booking's flight numbers come from a
// search the gold never lists, while the prover reads the solution as the
// whole conversation and refuses a value no earlier answer shows. Searched
// finds such look-ups by playing them: for each value an act sends that no
// earlier answer shows and the instruction does not say, it plays the
// contract's look-up tools with arguments taken from the record that holds
// the value and from the act's own arguments beside it, and puts before the
// act the first whose answer shows the value. Whether the look-up's own
// arguments are the caller's to give is the prover's to judge.

// maxSearchTries bounds the look-ups played for one value.
const maxSearchTries = 16

// Searched puts into sc's requests the look-ups that show what their acts
// send, found by playing the conversation in a copy of w (the import's
// scenarios have no setup).
func Searched(ctx context.Context, w *world.World, c *contract.Contract, sc *scenario.Scenario) error {
	reqs := []*[]scenario.Call{&sc.Solution}
	for i := range sc.Then {
		reqs = append(reqs, &sc.Then[i].Solution)
	}
	return w.Copy(ctx, func(cp *world.Copy) error {
		shown := map[string]bool{ground.Text(sc.CallerID): true}
		for _, sol := range reqs {
			var out []scenario.Call
			for _, call := range *sol {
				if t := c.Tool(call.Tool); t != nil && changesState(c, t) {
					for _, v := range unshown(call.Args, shown, sc.Instruction) {
						if shown[v] {
							continue // an earlier look-up showed it too
						}
						lk, err := lookFor(ctx, cp, c, call, v)
						if err != nil {
							return err
						}
						if lk == nil {
							continue
						}
						addShown(shown, lk.Result)
						out = append(out, scenario.Call{Tool: lk.Tool, Args: lk.Args})
					}
				}
				r := cp.Call(ctx, call.Tool, call.Args)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if r.OK {
					addShown(shown, r.Result)
				}
				out = append(out, call)
			}
			*sol = out
		}
		return nil
	})
}

// unshown are the text values of args (at any depth) that shown lacks and
// the instruction does not hold, in the order the arguments are written.
func unshown(args map[string]any, shown map[string]bool, instruction string) []string {
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if len(x) >= 3 && !shown[x] && !strings.Contains(strings.ToLower(instruction), strings.ToLower(x)) && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	walk(map[string]any(args))
	return out
}

// lookFor plays the contract's look-up tools for one that shows v, with
// each required argument taken from the act's arguments beside v (a
// flight's date beside its number), from the act's top-level arguments, or
// from the record that holds v under a column of the argument's name; nil
// when none shows it.
func lookFor(ctx context.Context, cp *world.Copy, c *contract.Contract, act scenario.Call, v string) (*world.CallResult, error) {
	row, err := holder(ctx, cp, c, v)
	if err != nil {
		return nil, err
	}
	beside := besideOf(map[string]any(act.Args), v)
	tries := 0
	for i := range c.Tools {
		t := &c.Tools[i]
		if t.Name == act.Tool || t.EndsConversation || changesState(c, t) || len(t.Required()) == 0 {
			continue
		}
		args := map[string]any{}
		for _, p := range t.Required() {
			switch {
			case beside[p] != nil:
				args[p] = beside[p]
			case act.Args[p] != nil:
				args[p] = act.Args[p]
			case row[p] != nil:
				args[p] = row[p]
			default:
				args = nil
			}
			if args == nil {
				break
			}
		}
		if args == nil {
			continue
		}
		if tries++; tries > maxSearchTries {
			return nil, nil
		}
		r := cp.Call(ctx, t.Name, args)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		got := map[string]bool{}
		if r.OK {
			addShown(got, r.Result)
		}
		if got[v] {
			return &r, nil
		}
	}
	return nil, nil
}

// besideOf is the innermost object of doc that holds v as one of its
// values (the flight {number, date} a number is in); nil when none does.
func besideOf(doc any, v string) map[string]any {
	switch x := doc.(type) {
	case map[string]any:
		for _, e := range x {
			if m := besideOf(e, v); m != nil {
				return m
			}
		}
		for _, e := range x {
			if s, ok := e.(string); ok && s == v {
				return x
			}
		}
	case []any:
		for _, e := range x {
			if m := besideOf(e, v); m != nil {
				return m
			}
		}
	}
	return nil
}

// holder is the record of the world that v names: a row holding v in a
// column unique in its table (the flight whose number v is), as a map; nil
// when none does. A value many rows share (a cabin, a date) names none.
func holder(ctx context.Context, cp *world.Copy, c *contract.Contract, v string) (map[string]any, error) {
	for _, t := range c.Tables {
		for _, col := range t.Columns {
			if !t.IsUnique(col.Name) {
				continue
			}
			q := fmt.Sprintf("SELECT * FROM %s WHERE %s::text = $1 LIMIT 1",
				pgx.Identifier{t.Name}.Sanitize(), pgx.Identifier{col.Name}.Sanitize())
			rows, err := cp.Query(ctx, q, v)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				continue
			}
			if len(rows) > 0 {
				return rows[0].Map(), nil
			}
		}
	}
	return nil, nil
}

// addShown adds every scalar of an answer to shown, as text.
func addShown(shown map[string]bool, raw json.RawMessage) {
	var doc any
	if json.Unmarshal(raw, &doc) == nil {
		ground.AddValues(shown, doc)
	}
}
