package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// Rehearse plays calls after setup on a throwaway copy and returns each
// call's result and, when asked, the state diff the calls made.
func (p *Prover) Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, diff bool) ([]world.CallResult, *world.StateDiff, error) {
	var results []world.CallResult
	var d *world.StateDiff
	err := p.w.Copy(ctx, func(cp *world.Copy) error {
		results = nil
		var before world.Snapshot
		if diff {
			// Setup and the state before the calls in one round trip.
			var err error
			if before, err = setupSnapshot(ctx, cp, setup); err != nil {
				return err
			}
		} else if err := applySetup(ctx, cp, setup); err != nil {
			return err
		}
		results = play(ctx, cp, calls)
		if diff {
			after, err := cp.Snapshot(ctx)
			if err != nil {
				return err
			}
			dd, err := world.DiffSnapshots(before, after)
			if err != nil {
				return err
			}
			d = &dd
		}
		return nil
	})
	return results, d, err
}

var setupVerb = regexp.MustCompile(`(?is)^\s*(insert|update|delete)\b`)

// applySetup runs a scenario's setup in one round trip; a statement the world
// will not run comes back as a *scenario.SetupError.
func applySetup(ctx context.Context, cp *world.Copy, setup []scenario.Statement) error {
	if err := checkSetup(setup); err != nil {
		return err
	}
	return cp.ExecBatch(ctx, setup)
}

// setupSnapshot is applySetup followed by the copy's snapshot, in one batch.
func setupSnapshot(ctx context.Context, cp *world.Copy, setup []scenario.Statement) (world.Snapshot, error) {
	if err := checkSetup(setup); err != nil {
		return world.Snapshot{}, err
	}
	snap, err := cp.ExecBatchSnapshot(ctx, setup)
	return snap, err
}

func checkSetup(setup []scenario.Statement) error {
	for i, st := range setup {
		if !setupVerb.MatchString(st.SQL) {
			return &scenario.SetupError{Index: i, SQL: st.SQL, Err: fmt.Errorf("only INSERT, UPDATE or DELETE statements may set up a scenario")}
		}
		if m := volatileIn(st.SQL); m != "" {
			return &scenario.SetupError{Index: i, SQL: st.SQL, Err: fmt.Errorf("%s changes from run to run (or outlives the copy): a setup gives every value as a $n argument, so every proof of the scenario meets the same world", strings.TrimRight(m, " \t\n("))}
		}
	}
	return nil
}

// sqlQuoted is what sqlCode blanks out: string literals, quoted
// identifiers, dollar quotes and comments.
var sqlQuoted = regexp.MustCompile(`(?s)'(?:[^']|'')*'|"(?:[^"]|"")*"|\$([A-Za-z_]*)\$.*?\$([A-Za-z_]*)\$|--[^\n]*|/\*.*?\*/`)

// sqlCode is a statement with its literals and comments blanked, so that only
// its code is searched.
func sqlCode(sql string) string { return sqlQuoted.ReplaceAllString(sql, " ") }

// refPattern is a reference to an earlier step's result: "$2.user_id".
var refPattern = regexp.MustCompile(`^\$(\d+)\.([A-Za-z0-9_.]+)$`)

// play runs calls in order, resolving references to earlier results.
func play(ctx context.Context, cp *world.Copy, calls []scenario.Call) []world.CallResult {
	out := make([]world.CallResult, 0, len(calls))
	for _, c := range calls {
		args := resolve(c.Args, out)
		out = append(out, cp.Call(ctx, c.Tool, args))
	}
	return out
}

func resolve(args map[string]any, done []world.CallResult) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		out[k] = resolveValue(v, done)
	}
	return out
}

func resolveValue(v any, done []world.CallResult) any {
	switch x := v.(type) {
	case string:
		m := refPattern.FindStringSubmatch(x)
		if m == nil {
			return x
		}
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(done) {
			return x
		}
		var doc any
		if json.Unmarshal(done[n-1].Result, &doc) != nil {
			return x
		}
		for _, part := range strings.Split(m[2], ".") {
			obj, ok := doc.(map[string]any)
			if !ok {
				return x
			}
			doc = obj[part]
		}
		if f, ok := doc.(float64); ok && f == float64(int64(f)) {
			return int64(f)
		}
		return doc
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = resolveValue(e, done)
		}
		return out
	case map[string]any:
		return resolve(x, done)
	}
	return v
}
