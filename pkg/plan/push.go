package plan

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// pushRows bounds the rows the act succeeds on on which pushLevels tries
// every push (further rows try only those that met a way), pushTries the
// settings it rehearses on one row, and addTries the rows added (adds),
// which have their own bound so they take no tries from the settings.
const (
	pushRows  = 2
	pushTries = 32
	addTries  = 16
)

// pushLevels adds a refusal level for each way the world says no to the act
// once a record the case reaches is pushed past a bound: a limit lowered
// below what is asked (a credit cap, a balance), a count raised to its most
// (lines on an order), a date moved past a window (a start already gone),
// a state a related record takes (an expired card). On a row the act
// succeeds on, the records the case reaches (reach) are given, in the
// case's setup, each setting of pushes, and the act rehearsed again; a
// refusal at a branch no level deals yet makes a level whose cases carry
// that setting. Which bound a handler enforces is read from its behaviour,
// never from a column's name.
func (sv *solver) pushLevels(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes) ([]level, map[string]level, error) {
	ls := sol.levels
	dealt := dealtWays(ls, played)
	found := map[string]*level{}
	spare := map[string]*level{} // for ways already dealt (solution.spares)
	met := map[string]bool{}     // pushes that met a new way: the only ones tried past the first rows
	for i, k := range played.succeeded(choiceRows) {
		b := sc.bound(played.index[k])
		sol.choices[k].Apply(&b)
		calls, ok := Chain(sv.g, tool, sol.chain, b, sv.bs)
		if !ok {
			continue
		}
		row, last := sv.g.Find(sol.table, sv.g.PK(sol.table), k), calls[len(calls)-1]
		cands := sv.pushes(tool.Name, sol.table, row, last, false, b.Caller)
		sets := len(cands)
		cands = append(cands, sv.adds(sv.ours(sv.reach(tool.Name, sol.table, row, last), b.Caller), b.Caller)...)
		for j, p := range cands {
			tries, limit := j, pushTries
			if j >= sets {
				tries, limit = j-sets, addTries
			}
			if i >= pushRows && !met[p.what] || tries >= limit {
				continue
			}
			ans, err := sv.r.Rehearse(ctx, []scenario.Statement{p.stmt}, calls)
			if se := (*scenario.SetupError)(nil); errors.As(err, &se) {
				continue // the schema will not hold that value
			}
			if err != nil {
				return ls, nil, err
			}
			if len(ans) != len(calls) || !allOK(ans[:len(ans)-1]) {
				continue
			}
			act := ans[len(ans)-1]
			if !act.Refused || act.Invalid || act.Branch == "" {
				continue
			}
			into := found
			if dealt[act.Branch] {
				into = spare
			}
			cl := into[act.Branch]
			if cl == nil {
				cl = &level{outcome: "refuse", branch: act.Branch, refusal: sv.refusals()[act.Branch],
					prior: map[string][]scenario.Statement{}, pushed: p.what}
				into[act.Branch] = cl
			}
			if cl.pushed != p.what {
				continue // one level, one push: its angle says which
			}
			met[p.what] = true
			if _, ok := cl.prior[k]; ok {
				continue
			}
			cl.templates = append(cl.templates, k)
			cl.prior[k] = []scenario.Statement{p.stmt}
		}
	}
	for _, way := range slices.Sorted(maps.Keys(found)) {
		ls = append(ls, *found[way])
	}
	spares := map[string]level{}
	for way, lv := range spare {
		spares[way] = *lv
	}
	return ls, spares, nil
}

// push is one setting of a number a case's record holds: the statement
// that sets it, and what it does, in words, for a level's angle.
type push struct {
	stmt scenario.Statement
	what string
}

// reached is a record a case reaches: the row of table whose column holds
// value, or, for rows that name the case's record (many), the one of them
// whose pushed column is highest or lowest.
type reached struct {
	table, column string
	value         any
	many          bool
	// arg marks a row an argument of the act names (the slot it books), or
	// rows naming the case's record of a table an argument is drawn from.
	arg bool
}

// pushes are the settings pushLevels tries on the records the case of row
// reaches, nearest the act first, since its tries are bounded: the records
// the act's arguments name (the slot it books) and the rows naming the
// case's record of a table an argument's value is drawn from (the lines of
// an invoice, for a new line's description), the case's own record, the
// records that one names, then the rows that name it. Of each record, its
// states are set to each other value they hold, a record an argument names
// is pointed at other reference rows (repoints), then its dates are moved
// and its numbers pushed (bounds). The case's own
// row's states are left out when own is false: they are the seed's rows at
// each level, which the sample already plays. Records of callers other than
// caller (the case's) are never set (ours).
func (sv *solver) pushes(tool, table string, row ground.Row, act scenario.Call, own bool, caller ground.Row) []push {
	rs := sv.ours(sv.reach(tool, table, row, act), caller)
	rank := func(r reached) int {
		switch {
		case r.arg:
			return 0
		case r.table == table && !r.many:
			return 1
		case !r.many:
			return 2
		}
		return 3
	}
	slices.SortStableFunc(rs, func(a, b reached) int { return rank(a) - rank(b) })
	out := sv.fills(tool, table, row, act, rs)
	for _, r := range rs {
		t := sv.g.C.Table(r.table)
		if own || r.table != table {
			out = append(out, sv.states(t, r)...)
		}
		if r.arg {
			out = append(out, sv.repoints(t, r)...)
		}
		out = append(out, sv.bounds(t, r)...)
	}
	return out
}

// bounds are the settings of r's dates and numbers: each date moved far
// earlier and later, each number raised, then lowered (of rows that name
// the case's record, the highest or lowest).
func (sv *solver) bounds(t *contract.Table, r reached) []push {
	var out []push
	for _, col := range t.Columns {
		if dateType(col.Type) && col.References == "" && !t.IsUnique(col.Name) {
			out = append(out, sv.shifts(t, col, r)...)
			continue
		}
		if !sv.pushable(t, col) {
			continue
		}
		for _, raise := range []bool{true, false} {
			to := pushedValue(t, col, raise)
			where := fmt.Sprintf("%s = $1", r.column)
			if r.many {
				agg := "min"
				if raise {
					agg = "max"
				}
				where += fmt.Sprintf(" AND %s = (SELECT %s(%s) FROM %s WHERE %s = $1)", col.Name, agg, col.Name, t.Name, r.column)
			}
			dir := "lowered"
			if raise {
				dir = "raised"
			}
			out = append(out, push{
				stmt: scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s", t.Name, col.Name, to, where), Args: []any{r.value}},
				what: fmt.Sprintf("%s of %s %s", strings.ReplaceAll(col.Name, "_", " "), strings.ReplaceAll(t.Name, "_", " "), dir),
			})
		}
		// A number at the least its CHECK allows (nothing left due, no
		// seat left): a refusal of "none left" is met only there, and a
		// hundredth of a balance is still some.
		if lo, ok := leastValue(t, col); ok && !r.many {
			out = append(out, push{
				stmt: scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s = $1", t.Name, col.Name, lo, r.column), Args: []any{r.value}},
				what: fmt.Sprintf("%s of %s set to %s", strings.ReplaceAll(col.Name, "_", " "), strings.ReplaceAll(t.Name, "_", " "), lo),
			})
		}
	}
	return out
}

// leastValue is the least value a CHECK of col allows (>= lo, BETWEEN lo
// AND hi), when it states one.
func leastValue(t *contract.Table, col contract.Column) (string, bool) {
	for _, ck := range t.ChecksOn(col.Name) {
		if lo, _ := checkBounds(ck); lo != "" {
			return lo, true
		}
	}
	return "", false
}

// checkBounds are the least and greatest values a CHECK allows, where it
// states them (>=, <=, BETWEEN); empty where it does not.
func checkBounds(ck contract.Check) (lo, hi string) {
	switch {
	case ck.Op == "between" && len(ck.Values) == 2:
		return ck.Values[0], ck.Values[1]
	case ck.Op == ">=" && len(ck.Values) == 1:
		return ck.Values[0], ""
	case ck.Op == "<=" && len(ck.Values) == 1:
		return "", ck.Values[0]
	}
	return "", ""
}

// repoints are the settings of a record the act's arguments name to refer
// to another row of a table no caller owns, one for each other state that
// table's rows hold (the slot given to a provider who has left, to one on
// leave): the record named is set, not the reference row, which a setup
// may not change.
func (sv *solver) repoints(t *contract.Table, r reached) []push {
	g := sv.g
	cur := g.Find(r.table, r.column, r.value)
	if cur == nil || r.many {
		return nil
	}
	var out []push
	for _, fk := range g.FKs(t.Name) {
		rt := g.C.Table(fk.RefTable)
		if rt == nil || g.OwnedTable(fk.RefTable) || cur[fk.Column] == nil {
			continue
		}
		ref := g.Find(fk.RefTable, fk.RefColumn, cur[fk.Column])
		if ref == nil || sv.namedByKey(t, cur, fk.Column) {
			continue
		}
		low := g.LowCardinality(rt.Name, 8)
		to := map[string]bool{ground.Text(ref[fk.RefColumn]): true} // a row once, whichever states it differs in
		for _, col := range rt.Columns {
			values, ok := low[col.Name]
			if !ok || g.Renamed(rt.Name, col.Name) != "" || rt.IsUnique(col.Name) {
				continue
			}
			for _, v := range values {
				if ground.Text(ref[col.Name]) == v {
					continue
				}
				rows := g.Where(rt.Name, col.Name, v)
				if len(rows) == 0 || to[ground.Text(rows[0][fk.RefColumn])] {
					continue
				}
				to[ground.Text(rows[0][fk.RefColumn])] = true
				out = append(out, push{
					stmt: scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s = $2 WHERE %s = $1", t.Name, fk.Column, r.column), Args: []any{r.value, rows[0][fk.RefColumn]}},
					what: fmt.Sprintf("%s of %s set to one whose %s is %s", strings.ReplaceAll(fk.Column, "_", " "), strings.ReplaceAll(t.Name, "_", " "), strings.ReplaceAll(col.Name, "_", " "), v),
				})
			}
		}
	}
	return out
}

// namedByKey reports whether row's value of col is a part of one of its
// unique values (a section FA26-MATH152-01 of term FA26): the record's own
// name says it, so a setting that changes it (the section moved to another
// term) is a state no world holds.
func (sv *solver) namedByKey(t *contract.Table, row ground.Row, col string) bool {
	v := ground.Text(row[col])
	if row[col] == nil || v == "" {
		return false
	}
	for _, c := range t.Columns {
		if c.Name == col || !t.IsUnique(c.Name) && !(len(t.PrimaryKey) == 1 && t.PrimaryKey[0] == c.Name) {
			continue
		}
		k, ok := row[c.Name].(string)
		if !ok || k == v {
			continue
		}
		parts := strings.FieldsFunc(k, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if len(parts) > 1 && slices.Contains(parts, v) {
			return true
		}
	}
	return false
}

// states are the settings of a record's state (a column of few values,
// not who someone is) to each other value the seed holds in it.
func (sv *solver) states(t *contract.Table, r reached) []push {
	g := sv.g
	var cur ground.Row
	if !r.many {
		if cur = g.Find(r.table, r.column, r.value); cur == nil {
			return nil
		}
	}
	low := g.LowCardinality(t.Name, 8)
	var out []push
	for _, col := range t.Columns {
		values, ok := low[col.Name]
		if !ok || g.Renamed(t.Name, col.Name) != "" || t.IsUnique(col.Name) || cur != nil && sv.namedByKey(t, cur, col.Name) {
			continue
		}
		for _, v := range values {
			if cur != nil && ground.Text(cur[col.Name]) == v {
				continue
			}
			out = append(out, push{
				stmt: scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s = CAST($2::text AS %s) WHERE %s = $1", t.Name, col.Name, col.Type, r.column), Args: []any{r.value, v}},
				what: fmt.Sprintf("%s of %s set to %s", strings.ReplaceAll(col.Name, "_", " "), strings.ReplaceAll(t.Name, "_", " "), v),
			})
		}
	}
	return out
}

// reach lists the records a case of row of table reaches: the row, the
// rows it names and the rows those name (the caller's account, its plan),
// the rows that name it (its lines), and the rows the act's arguments name
// (the card it pays with, the flight it moves to).
func (sv *solver) reach(tool, table string, row ground.Row, act scenario.Call) []reached {
	g := sv.g
	pk := g.PK(table)
	if row == nil || pk == "" {
		return nil
	}
	out := []reached{{table: table, column: pk, value: row[pk]}}
	seen := map[string]bool{table: true}
	level := []reached{{table: table, value: row[pk]}}
	for range 2 {
		var next []reached
		for _, r := range level {
			cur := g.Find(r.table, g.PK(r.table), r.value)
			if r.table == table {
				cur = row
			}
			for _, fk := range g.FKs(r.table) {
				v := cur[fk.Column]
				if v == nil || seen[fk.RefTable] || g.Find(fk.RefTable, fk.RefColumn, v) == nil {
					continue
				}
				seen[fk.RefTable] = true
				p := reached{table: fk.RefTable, column: fk.RefColumn, value: v}
				out = append(out, p)
				if fk.RefColumn == g.PK(fk.RefTable) {
					next = append(next, p)
				}
			}
		}
		level = next
	}
	named := map[string]bool{}
	for _, r := range out {
		named[r.table+"\x00"+r.column+"\x00"+ground.Text(r.value)] = true
	}
	// The tool's own order of its arguments, not their names': a plan must
	// not change when a contract is renamed.
	var params []string
	if t := g.C.Tool(tool); t != nil {
		params = t.ParamNames()
	}
	argTables := map[string]bool{}
	for _, p := range params {
		if _, ok := act.Args[p]; !ok {
			continue
		}
		bd, ok := sv.bs.Of(tool, p)
		if !ok || bd.Table == "" || bd.Column == "" || g.C.Table(bd.Table) == nil {
			continue
		}
		// Only an argument bound to a key names a record: a rating's stars
		// bound to trips.rider_stars match every trip rated alike, most of
		// them other callers'. One bound to another column of a table
		// whose rows name the case's record (a line's description) puts
		// those rows first, below.
		if g.PK(bd.Table) != bd.Column && !g.C.Table(bd.Table).IsUnique(bd.Column) {
			argTables[bd.Table] = true
			continue
		}
		vs, many := act.Args[p].([]any)
		if !many {
			vs = []any{act.Args[p]}
		}
		for _, v := range vs {
			k := bd.Table + "\x00" + bd.Column + "\x00" + ground.Text(v)
			if v == nil || named[k] || g.Find(bd.Table, bd.Column, v) == nil {
				continue
			}
			named[k] = true
			out = append(out, reached{table: bd.Table, column: bd.Column, value: v, arg: true})
		}
	}
	for _, t := range g.C.Tables {
		for _, fk := range g.FKs(t.Name) {
			if fk.RefTable != table || seen[t.Name] || len(g.Where(t.Name, fk.Column, row[fk.RefColumn])) == 0 {
				continue
			}
			out = append(out, reached{table: t.Name, column: fk.Column, value: row[fk.RefColumn], many: true, arg: argTables[t.Name]})
		}
	}
	return out
}

// ours drops from rs the records of callers other than caller (the
// case's): a setup that changes another caller's rows is refused by the
// prover (setup-overreach), so a refusal reached only through one (another
// resident's permit moved to another zone) is no case of this caller's.
// Of rows that name the case's record (many), all must be the caller's
// or no one's. A nil caller keeps every record.
func (sv *solver) ours(rs []reached, caller ground.Row) []reached {
	g := sv.g
	cl := g.C.Caller
	if cl == nil || caller == nil {
		return rs
	}
	foreign := func(table string, r ground.Row) bool {
		roles := g.OwnerRoles(table)
		if roles == nil {
			roles = []string{""}
		}
		owned := false
		for _, role := range roles {
			o := g.OwnerAs(table, r, role)
			if o == nil {
				continue
			}
			owned = true
			if ground.Text(o[cl.Key]) == ground.Text(caller[cl.Key]) {
				return false
			}
		}
		return owned
	}
	var out []reached
	for _, r := range rs {
		if !g.OwnedTable(r.table) {
			out = append(out, r)
			continue
		}
		rows := []ground.Row{g.Find(r.table, r.column, r.value)}
		if r.many {
			rows = g.Where(r.table, r.column, r.value)
		}
		if !slices.ContainsFunc(rows, func(row ground.Row) bool { return row != nil && foreign(r.table, row) }) {
			out = append(out, r)
		}
	}
	return out
}

// pushable reports a column whose number is a state a push may set: a
// numeric column the seed fills, not a key, a reference or unique.
func (sv *solver) pushable(t *contract.Table, col contract.Column) bool {
	if !numericType(col.Type) || col.References != "" || col.Default == "identity" || col.Default == "generated" {
		return false
	}
	if slices.Contains(t.PrimaryKey, col.Name) && len(t.PrimaryKey) == 1 || t.IsUnique(col.Name) {
		return false
	}
	_, fk := fkColumn(sv.g, t.Name, col.Name)
	return !fk
}

// dateShift is how far a shift moves a date: past any window a rule
// measures from today (a start ahead, a booking within the year).
const dateShift = "400 days"

// shifts are the settings of a date column of r: moved far earlier, then
// far later.
func (sv *solver) shifts(t *contract.Table, col contract.Column, r reached) []push {
	var out []push
	for _, sign := range []string{"-", "+"} {
		where := fmt.Sprintf("%s = $1", r.column)
		dir := "moved later"
		if sign == "-" {
			dir = "moved earlier"
		}
		out = append(out, push{
			stmt: scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s = %s %s interval '%s' WHERE %s", t.Name, col.Name, col.Name, sign, dateShift, where), Args: []any{r.value}},
			what: fmt.Sprintf("%s of %s %s", strings.ReplaceAll(col.Name, "_", " "), strings.ReplaceAll(t.Name, "_", " "), dir),
		})
	}
	return out
}

// dateType reports a SQL type that holds a date or a time of day on one.
func dateType(typ string) bool {
	typ = strings.ToLower(strings.TrimSpace(typ))
	return strings.HasPrefix(typ, "date") || strings.HasPrefix(typ, "timestamp")
}

// numericType reports a SQL type that holds numbers.
func numericType(typ string) bool {
	typ = strings.ToLower(strings.TrimSpace(typ))
	for _, p := range []string{"int", "bigint", "smallint", "numeric", "decimal", "real", "double", "float", "money"} {
		if strings.HasPrefix(typ, p) {
			return true
		}
	}
	return false
}

// pushedValue is the expression a push sets col to: far above what it
// holds (a hundred times and more) or far below it (a hundredth), kept
// within the bounds its CHECKs state.
func pushedValue(t *contract.Table, col contract.Column, raise bool) string {
	c := col.Name
	to := fmt.Sprintf("%s * 100 + 100", c)
	if !raise {
		to = fmt.Sprintf("%s / 100.0", c)
	}
	for _, ck := range t.ChecksOn(c) {
		if len(ck.Values) == 0 {
			continue
		}
		lo, hi := checkBounds(ck)
		switch {
		case ck.Op == ">" && !raise:
			to = fmt.Sprintf("%s + (%s - %s) / 100.0", ck.Values[0], c, ck.Values[0])
		case ck.Op == "<" && raise:
			to = fmt.Sprintf("%s - (%s - %s) / 100.0", ck.Values[0], ck.Values[0], c)
		}
		if raise && hi != "" {
			to = hi
		}
		if !raise && lo != "" {
			to = fmt.Sprintf("greatest(%s, %s)", to, lo)
		}
	}
	return to
}

// addCounts are how many rows an add puts in: one (a title already
// reserved on the card), then enough to pass a small cap on how many a
// record may have (four active reservations). None is above
// ground.AddedStride, the keys Carry spaces each case's added rows by.
var addCounts = []int{1, 5}

// adds are rows added, in the setup, to a table the callers own whose
// rows refer to records the case reaches: copies of a seed row of each
// state the table's rows hold, every reference to a reached record's
// table pointed at that record, one row and then several. A refusal that
// finds such a row already there, or counts them, is reached only by
// adding them; changing the rows that exist never gets there. The rows
// added refer to the case's records, never to another caller's. The tables
// take turns, a state of each at a time, since the tries are bounded: a
// table with many states (a claim's types) would otherwise spend them all
// before the next table (its payments) had one. A table keyed by several
// columns (an order's lines, by order and item) is added to as well: see
// keyRows.
func (sv *solver) adds(rs []reached, caller ground.Row) []push {
	g := sv.g
	cl := g.C.Caller
	var per [][]push // per table, in its templates' order
	for i := range g.C.Tables {
		t := &g.C.Tables[i]
		pk := g.PK(t.Name)
		if len(t.PrimaryKey) == 0 || !g.OwnedTable(t.Name) {
			continue
		}
		set, own := map[string]any{}, false
		alts := map[string][]any{} // of a key of several columns: each reached record a key column may name
		for _, fk := range g.FKs(t.Name) {
			keyed := pk == "" && slices.Contains(t.PrimaryKey, fk.Column)
			for _, r := range rs {
				if !r.many && r.table == fk.RefTable && r.column == fk.RefColumn {
					if _, ok := set[fk.Column]; !ok {
						set[fk.Column] = r.value
					}
					own = own || g.OwnedTable(r.table)
					if !keyed {
						break
					}
					if !slices.ContainsFunc(alts[fk.Column], func(v any) bool { return ground.Text(v) == ground.Text(r.value) }) {
						alts[fk.Column] = append(alts[fk.Column], r.value)
					}
				}
			}
		}
		if !own {
			continue
		}
		// A reference to a person the case does not reach (the holder of
		// the seed permit copied) is the case's caller: a row added under
		// another caller's name changes someone else's records.
		if cl != nil && caller != nil {
			for _, fk := range g.FKs(t.Name) {
				if _, ok := set[fk.Column]; !ok && fk.RefTable == cl.Table && fk.RefColumn == cl.Key {
					set[fk.Column] = caller[cl.Key]
				}
			}
		}
		// A reference to a record of the callers' the case does not reach
		// (the claim a seed payment was for, another policy's) is left
		// empty where the schema allows: the row added is the case's alone.
		for _, fk := range g.FKs(t.Name) {
			if _, ok := set[fk.Column]; ok || !g.OwnedTable(fk.RefTable) {
				continue
			}
			if c := t.Column(fk.Column); c != nil && !c.NotNull && !slices.Contains(t.PrimaryKey, c.Name) {
				set[fk.Column] = nil
			}
		}
		var out []push
		for _, tpl := range sv.templateRows(t) {
			if pk == "" {
				for _, k := range sv.keyRows(t, set, alts) {
					if st, ok := insertRows(t, tpl, k, "", []any{nil}); ok {
						out = append(out, push{stmt: st, what: fmt.Sprintf("1 %s added%s", strings.ReplaceAll(t.Name, "_", " "), sv.stateOf(t, tpl))})
					}
				}
				continue
			}
			for _, n := range addCounts {
				keys, ok := freshKeys(g, t.Name, pk, n)
				if !ok {
					break
				}
				if st, ok := insertRows(t, tpl, set, pk, keys); ok {
					out = append(out, push{stmt: st, what: fmt.Sprintf("%d %s added%s", n, strings.ReplaceAll(t.Name, "_", " "), sv.stateOf(t, tpl))})
				}
			}
		}
		per = append(per, out)
	}
	var out []push
	for i := 0; ; i += len(addCounts) {
		more := false
		for _, ps := range per {
			if i < len(ps) {
				out = append(out, ps[i:min(i+len(addCounts), len(ps))]...)
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// keyRows are the values a row added to t, a table keyed by several
// columns, takes: set, with each key column that refers to a record the
// case reaches given each such record in turn (the item an exchange asks
// for, besides the one the order already holds), and a key column that
// refers to nothing numbered past the seed's highest (a payment's sequence
// number). A key the seed already holds is left out, since the row would
// not go in; so is a key column neither names, whose value no copy knows.
func (sv *solver) keyRows(t *contract.Table, set map[string]any, alts map[string][]any) []map[string]any {
	g := sv.g
	rows := []map[string]any{maps.Clone(set)}
	for _, col := range t.PrimaryKey {
		if vs, ok := alts[col]; ok {
			var next []map[string]any
			for _, r := range rows {
				for _, v := range vs {
					n := maps.Clone(r)
					n[col] = v
					next = append(next, n)
				}
			}
			rows = next
			continue
		}
		if _, ok := set[col]; ok {
			continue
		}
		c := t.Column(col)
		if c == nil || !numericType(c.Type) {
			return nil
		}
		high := int64(0)
		for _, r := range g.Rows(t.Name) {
			d, err := strconv.ParseInt(ground.Text(r[col]), 10, 64)
			if err != nil {
				return nil
			}
			high = max(high, d)
		}
		for _, r := range rows {
			r[col] = high + addGap
		}
	}
	var out []map[string]any
	for _, r := range rows {
		held := slices.ContainsFunc(g.Rows(t.Name), func(s ground.Row) bool {
			for _, col := range t.PrimaryKey {
				if ground.Text(s[col]) != ground.Text(r[col]) {
					return false
				}
			}
			return true
		})
		if !held {
			out = append(out, r)
		}
	}
	return out
}

// templateRows are the seed rows of t an add copies: the first row of each
// state its rows hold (a queued reservation, a collected one), or its
// first row when it has no states.
func (sv *solver) templateRows(t *contract.Table) []ground.Row {
	g := sv.g
	rows := g.Rows(t.Name)
	if len(rows) == 0 {
		return nil
	}
	low := g.LowCardinality(t.Name, 8)
	pk := g.PK(t.Name)
	seen := map[string]bool{}
	var out []ground.Row
	for _, col := range t.Columns {
		for _, v := range low[col.Name] {
			rs := g.Where(t.Name, col.Name, v)
			if len(rs) == 0 || seen[ground.Text(rs[0][pk])] {
				continue
			}
			seen[ground.Text(rs[0][pk])] = true
			out = append(out, rs[0])
		}
	}
	if len(out) == 0 {
		out = append(out, rows[0])
	}
	return out
}

// stateOf says the states row holds, for an angle: ", state queued".
func (sv *solver) stateOf(t *contract.Table, row ground.Row) string {
	low := sv.g.LowCardinality(t.Name, 8)
	var out string
	for _, col := range t.Columns {
		if _, ok := low[col.Name]; ok && row[col.Name] != nil {
			out += fmt.Sprintf(", %s %s", strings.ReplaceAll(col.Name, "_", " "), ground.Text(row[col.Name]))
		}
	}
	return out
}

// freshKeys are n values for a key column no seed row holds, shaped like
// the ones it does (a number, or a fixed prefix and digits: R10042), so a
// handler that numbers new rows from the highest still can. ok is false for
// keys of any other shape.
func freshKeys(g *ground.Graph, table, col string, n int) ([]any, bool) {
	rows := g.Rows(table)
	if len(rows) == 0 {
		return nil, false
	}
	_, text := rows[0][col].(string)
	prefix, width, high := "", 0, int64(0)
	for i, r := range rows {
		digits := ground.Text(r[col])
		if text {
			s, isText := r[col].(string)
			m := keyShape.FindStringSubmatch(s)
			if !isText || m == nil || i > 0 && m[1] != prefix {
				return nil, false
			}
			prefix, width, digits = m[1], max(width, len(m[2])), m[2]
		}
		d, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return nil, false
		}
		high = max(high, d)
	}
	out := make([]any, n)
	if !text {
		for i := range out {
			out[i] = high + addGap + int64(i)
		}
		return out, true
	}
	// Keys of as many digits as the seed's, which a CHECK on the key's
	// pattern still admits: past the gap when it fits, so that the next key
	// a handler numbers from the highest fits too; else at the bottom of the
	// values minting leaves at the top (ground.Headroom), clear of minted
	// keys and with room above them for the keys a handler numbers next.
	top := int64(1)
	for range width {
		top *= 10
	}
	past := high+addGap+int64(n) < top // and the key after them too
	room := min(ground.Headroom, (top-high-1)/4)
	if !past && int64(2*n) > room {
		return nil, false
	}
	for i := range out {
		k := high + addGap + int64(i)
		if !past {
			k = top - room + int64(i)
		}
		if k <= high {
			return nil, false
		}
		out[i] = fmt.Sprintf("%s%0*d", prefix, width, k)
	}
	return out, true
}

// addGap keeps the numbered keys an add gives clear of those a case mints
// past the seed's highest.
const addGap = 50_000

// keyShape is a key of a fixed prefix and digits.
var keyShape = regexp.MustCompile(`^([^0-9]*)([0-9]{1,15})$`)

// insertRows is the statement adding one copy of tpl for each key, with
// the columns of set given their values and the key column its key;
// identity and generated columns are left to the table.
func insertRows(t *contract.Table, tpl ground.Row, set map[string]any, pk string, keys []any) (scenario.Statement, bool) {
	var cols []contract.Column
	for _, c := range t.Columns {
		if c.Default != "identity" && c.Default != "generated" {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return scenario.Statement{}, false
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	var args []any
	rows := make([]string, len(keys))
	for i, k := range keys {
		vals := make([]string, len(cols))
		for j, c := range cols {
			v, ok := set[c.Name]
			switch {
			case c.Name == pk:
				v = k
			case !ok:
				v = tpl[c.Name]
			}
			if v == nil {
				vals[j] = fmt.Sprintf("CAST(NULL AS %s)", c.Type)
				continue
			}
			args = append(args, ground.Text(v))
			vals[j] = fmt.Sprintf("CAST($%d::text AS %s)", len(args), c.Type)
		}
		rows[i] = "(" + strings.Join(vals, ", ") + ")"
	}
	return scenario.Statement{SQL: fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t.Name, strings.Join(names, ", "), strings.Join(rows, ", ")), Args: args}, true
}
