package prove

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/suitegen/suitegen/pkg/ground"

	"github.com/suitegen/suitegen/pkg/world"
)

// A success must change what it claims to change. That the end state
// differs from doing nothing is not enough when the solution changes state
// more than once: one real change beside an act that writes what is already
// there (an address "changed" to itself), or that a later call undoes
// (changed, then changed back), would pass. Each state-changing call must
// leave a row that still differs, at the end, from the world after setup;
// and a call whose whole setting (see setting) held before it and holds
// after it changed nothing the caller asked for, whatever trail it writes,
// beside the record or on its own row (a count of relabellings).

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
	sets := map[int][]setting{}
	for _, i := range at {
		var whole []setting
		for _, st := range pr.p.settings(pr.results[i]) {
			if st.whole {
				whole = append(whole, st)
			}
		}
		if len(whole) > 0 {
			sets[i] = whole
		}
	}
	if len(at) < 2 && len(sets) == 0 || !pr.compared || len(pr.effect) == 0 {
		return nil
	}
	already := map[int]string{} // solution step -> the setting it finds already made
	setup := pr.setup(ctx)
	snaps := make([]world.Snapshot, 0, len(at)+1) // after setup, then after each state-changing call
	err := pr.p.w.Pair(ctx, setup, func(cp *world.Copy, _ *world.Before) error {
		snaps = snaps[:0]
		s, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		snaps = append(snaps, s)
		for j, r := range pr.results {
			// A setting that already held before the call: whatever the
			// call writes, on the record's row or beside it, is a trail.
			before := make([]bool, len(sets[j]))
			for k, st := range sets[j] {
				held, err := st.holds(ctx, cp)
				if err != nil {
					return err
				}
				before[k] = held != ""
			}
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
			for k, st := range sets[j] {
				held, err := st.holds(ctx, cp)
				if err != nil {
					return err
				}
				if held != "" && before[k] {
					already[j] = held
					break
				}
			}
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
		if held := already[i]; held != "" {
			pr.idle = fmt.Sprintf("solution step %d (%s) sets %s: the change it asks for is already made, and what else it writes (a trail) is no change the caller asked for", i+1, pr.results[i].Tool, held)
			return nil
		}
		if len(at) < 2 {
			continue
		}
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

// setting is what a state-changing call says a record's columns become:
// the record an argument names (x-ref) and the call's other arguments named
// like that record's own plain columns (label_locker(locker_id, label) sets
// lockers.label). It is whole when those columns are all the call asks for:
// every other argument is log-only or names another record (how it acts, a
// payment method). A call that also takes what is no column of the record
// (the flights of a reservation, beside its cabin) asks for more than its
// setting.
type setting struct {
	table, column string // the record: table and the column its argument names
	key           any
	cols          []string
	vals          []any
	whole         bool
}

// settings are the settings a state-changing call names.
func (p *Prover) settings(r world.CallResult) []setting {
	t := p.c.Tool(r.Tool)
	if t == nil {
		return nil
	}
	var out []setting
	for _, n := range slices.Sorted(maps.Keys(r.Args)) {
		table, col, ok := p.c.RefOf(t.Name, n)
		tb := p.c.Table(table)
		if !ok || tb == nil || tb.Column(col) == nil || !tb.IsUnique(col) {
			continue
		}
		if _, isList := r.Args[n].([]any); isList {
			continue
		}
		st := setting{table: table, column: col, key: r.Args[n], whole: true}
		for _, m := range slices.Sorted(maps.Keys(r.Args)) {
			if m == n || t.LogOnlyParam(m) {
				continue
			}
			if _, _, ref := p.c.RefOf(t.Name, m); ref {
				continue
			}
			c := tb.Column(m)
			plain := c != nil && c.References == "" && !tb.IsUnique(m)
			switch r.Args[m].(type) {
			case []any, map[string]any, nil:
				plain = false
			}
			if !plain {
				st.whole = false
				continue
			}
			st.cols = append(st.cols, m)
			st.vals = append(st.vals, r.Args[m])
		}
		if len(st.cols) > 0 {
			out = append(out, st)
		}
	}
	return out
}

// record reads the row the setting names on cp (nil when it is not there).
func (st setting) record(ctx context.Context, cp *world.Copy) (map[string]any, error) {
	sql := "SELECT * FROM " + pgx.Identifier{st.table}.Sanitize() + " WHERE " + pgx.Identifier{st.column}.Sanitize() + "::text = $1"
	rows, err := cp.Query(ctx, sql, ground.Text(st.key))
	if err != nil || len(rows) != 1 {
		return nil, err
	}
	return rows[0].Map(), nil
}

// holds reads the record on cp and, when every column the setting names
// holds its value, says so in words ("" when some column differs or the
// record is not there).
func (st setting) holds(ctx context.Context, cp *world.Copy) (string, error) {
	row, err := st.record(ctx, cp)
	if err != nil || row == nil {
		return "", err
	}
	var words []string
	for i, c := range st.cols {
		if ground.Text(row[c]) != ground.Text(st.vals[i]) {
			return "", nil
		}
		words = append(words, fmt.Sprintf("%s to %s", c, js(st.vals[i])))
	}
	return fmt.Sprintf("%s %s's %s, which it already is", strings.TrimSuffix(st.table, "s"), ground.Text(st.key), strings.Join(words, " and ")), nil
}
