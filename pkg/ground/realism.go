package ground

import (
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
)

// What makes an argument's value realistic: it is one the world holds in
// the column the argument is grounded to, and two arguments that name two
// roles of one record (an origin and a destination) take equal values only
// when every table of the world recording that pair sometimes does.

// DistinctPair returns the tables with a column named after each of two
// arguments (origin, destination: flights) whose seed rows never hold one
// value in both. One such table shows the two are different roles, even
// where another table's rows sometimes hold one value in both (a few
// reservations recorded from and to one airport); no table is no evidence.
func (g *Graph) DistinctPair(a, b string) []string {
	var out []string
	for _, t := range g.C.Tables {
		if t.Column(a) == nil || t.Column(b) == nil || len(g.Rows(t.Name)) == 0 {
			continue
		}
		equal := false
		for _, r := range g.Rows(t.Name) {
			if r[a] != nil && r[b] != nil && Text(r[a]) == Text(r[b]) {
				equal = true
				break
			}
		}
		if !equal {
			out = append(out, t.Name)
		}
	}
	return out
}

// PairedValue is a value the world pairs with v: b of a seed row whose a is
// v and whose b differs (a destination flown to from that origin), the
// ordinal-th such, or nil.
func (g *Graph) PairedValue(a, b string, v any, ordinal int) any {
	var out []any
	seen := map[string]bool{}
	for _, t := range g.C.Tables {
		if t.Column(a) == nil || t.Column(b) == nil {
			continue
		}
		for _, r := range g.Rows(t.Name) {
			if r[a] == nil || r[b] == nil || Text(r[a]) != Text(v) || Text(r[b]) == Text(v) || seen[Text(r[b])] {
				continue
			}
			seen[Text(r[b])] = true
			out = append(out, r[b])
		}
	}
	if len(out) == 0 {
		return nil
	}
	if ordinal < 0 {
		ordinal = -ordinal
	}
	return out[ordinal%len(out)]
}

// StandIn reports whether free text only repeats what its parameter's
// schema says it is ("A thought to think about"): text that says nothing
// of the case.
func StandIn(value, description string) bool {
	d := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(description), "."))
	if len(strings.Fields(d)) < 3 {
		return false
	}
	return strings.Contains(strings.ToLower(value), strings.ToLower(d))
}

// Realistic makes a filled call's values ones the world holds, for the
// arguments grounded to a column (x-ref or naming rules): on a tool that
// changes nothing (a search), a value no row of the column holds is
// replaced by one it holds; then, where two such arguments of one column
// have one value and the world's records with both roles never do (a
// flight from MIA to MIA), the later argument takes a value the world pairs
// with the earlier one (where flights from MIA go). made reports the values
// the case's setup creates, which the world holds too. args is changed in
// place and returned.
func (g *Graph) Realistic(t *contract.Tool, args map[string]any, ordinal int, made func(string) bool) map[string]any {
	if t == nil {
		return args
	}
	type home struct{ table, column string }
	homes := map[string]home{}
	var names []string
	for _, name := range t.ParamNames() {
		v, ok := args[name].(string)
		if !ok || v == "" || strings.HasPrefix(v, "$") {
			continue
		}
		tb, col, bound := g.C.RefOf(t.Name, name)
		if !bound || g.C.Table(tb) == nil {
			continue
		}
		homes[name] = home{tb, col}
		names = append(names, name)
		readOnly := t.ChangesState != nil && !*t.ChangesState
		if readOnly && !g.Holds(tb, col, v) && !made(v) {
			if w := g.valueOf(tb, col, ordinal); w != nil {
				args[name] = Text(w)
			}
		}
	}
	for j, a := range names {
		for _, b := range names[j+1:] {
			if homes[a] != homes[b] || Text(args[a]) != Text(args[b]) {
				continue
			}
			if len(g.DistinctPair(a, b)) == 0 {
				continue
			}
			if w := g.PairedValue(a, b, args[a], ordinal); w != nil {
				args[b] = Text(w)
			}
		}
	}
	return args
}
