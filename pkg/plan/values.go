package plan

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
)

// pastValues bounds the other values valueLevels asks for per act: each is
// a rehearsal, and a rule check, on every answered row of the sample.
const pastValues = 2

// valueLevels adds a refusal level for each rule the act breaks only when
// the caller asks for another value of a number no record fixes: a new
// limit above the one the card has, for a customer who may have no raise.
// The plan grounds one value of such a number (a limit below every
// card's), and a rule only some values break is broken on no row with it.
// On each answered row the act is asked again just above and just below
// the value a number of the case's record holds (pastChoices); carried out
// with a rule's check failing that the row's own value keeps, the row is a
// case of that rule's refusal, asking for that value. No level is added
// for a way a level already deals, nor for a rule every row broke with its
// own value (it is about the conversation, not the value: ruleRefusals).
func (sv *solver) valueLevels(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes) ([]level, error) {
	ls := sol.levels
	if sv.rules == nil || !slices.ContainsFunc(sv.g.C.Rules, func(r contract.Rule) bool { return r.Check != "" }) {
		return ls, nil
	}
	asks, cols, enums := sv.pastAsks(tool, sol.table)
	if (len(asks) == 0 || len(cols) == 0) && enums < 2 {
		return ls, nil
	}
	dealt := dealtWays(ls, played)
	// The rows whose own value the world carried out, and per rule those
	// that broke it.
	carried, always := 0, map[string]int{}
	for _, k := range played.keys {
		if len(played.broken[k]) > 0 || played.outcome[k] == "succeed" {
			carried++
			for _, r := range played.broken[k] {
				always[r]++
			}
		}
	}
	t, pk := sv.g.C.Table(sol.table), sv.g.PK(sol.table)
	// Per way, a level per kind of choice (above, below, another value of
	// an enum): a level's angle says what its cases ask.
	found := map[string]map[Choice]*level{}
	var order []Choice
	done, pastBy := 0, map[string]int{} // the plays carried out, and per rule those that broke it
	for _, k := range played.keys {
		b := sc.bound(played.index[k])
		for _, ch := range pastChoices(t, asks, cols, enums, sv.g.Find(sol.table, pk, k), b, sol.choices[k]) {
			bb := b
			ch.Apply(&bb)
			calls, filled := Chain(sv.g, tool, sol.chain, bb, sv.bs)
			if !filled {
				continue
			}
			ans, err := sv.r.Rehearse(ctx, nil, calls)
			if err != nil {
				return ls, err
			}
			if len(ans) != len(calls) || !allOK(ans) {
				continue // refused: a handler's branch, which other levels deal
			}
			broken, err := sv.rulesBroken(ctx, nil, calls, bb.Caller)
			if err != nil {
				return ls, err
			}
			done++
			for _, r := range broken {
				pastBy[r]++
			}
			for _, r := range broken {
				way := RuleRefusal + r
				if dealt[way] || slices.Contains(played.broken[k], r) || carried > 0 && always[r] == carried {
					continue
				}
				kind := Choice{Outside: ch.Outside, Swap: ch.Swap, Other: ch.Other % 2}
				if found[way] == nil {
					found[way] = map[Choice]*level{}
				}
				lv := found[way][kind]
				if lv == nil {
					lv = &level{outcome: "refuse", branch: way, choices: map[string]Choice{}, elsewhere: sv.elsewhere(ch, sol.table)}
					found[way][kind] = lv
					if !slices.Contains(order, kind) {
						order = append(order, kind)
					}
				}
				if _, have := lv.choices[k]; !have {
					lv.templates = append(lv.templates, k)
					lv.choices[k] = ch
				}
				break
			}
		}
	}
	for _, way := range slices.Sorted(maps.Keys(found)) {
		if r := strings.TrimPrefix(way, RuleRefusal); carried == 0 && pastBy[r] == done {
			// No row's own value was carried out, and every value asked
			// broke it: nothing says it is about the value.
			continue
		}
		// The kind of choice more rows break the rule with; the first
		// tried on a tie.
		var best *level
		for _, kind := range order {
			if lv := found[way][kind]; lv != nil && (best == nil || len(lv.templates) > len(best.templates)) {
				best = lv
			}
		}
		ls = append(ls, *best)
	}
	return ls, nil
}

// pastAsks are the tables whose numbers the act takes from no record
// (outsideTables' more: a new limit, an amount), which a choice asks over,
// and the places in table's columns of the numbers of its record a value
// may be asked past: those the handler's code names first (it reads them
// to decide), then the rest in the schema's order. What a column is
// called never decides. enums is how many values the act's argument of
// an enum no record fixes has (the most, of several), which the case's
// ordinal turns through (ground.Graph.Value).
func (sv *solver) pastAsks(tool *contract.Tool, table string) (asks []string, cols []int, enums int) {
	for _, p := range tool.ParamNames() {
		bd, ok := sv.bs.Of(tool.Name, p)
		if !ok || bd.How == ground.Fresh || bd.How != ground.ByEnum && bd.Table != "" {
			continue
		}
		n := len(tool.Enum(p))
		if bd.How == ground.ByEnum && len(bd.Picks) > 0 {
			n = len(bd.Picks) // the plan settled the choice
		}
		enums = max(enums, n)
	}
	t := sv.g.C.Table(table)
	if t == nil {
		return nil, nil, enums
	}
	for _, o := range sv.outsideTables(tool, table) {
		if o.more {
			asks = append(asks, o.table)
		}
	}
	code := sv.g.C.HandlerSource(tool)
	var rest []int
	for i, c := range t.Columns {
		switch {
		case !sv.pushable(t, c):
		case regexp.MustCompile(`\b` + regexp.QuoteMeta(c.Name) + `\b`).MatchString(code):
			cols = append(cols, i)
		default:
			rest = append(rest, i)
		}
	}
	return asks, append(cols, rest...), enums
}

// pastChoices are the choices that ask each of asks just above and just
// below the value row, of table t, holds of the first of cols it holds one
// of (ground.SwapPast), then, of an enum of enums values, the next values
// (the ordinals after the row's), at most pastValues in all, with the
// row's own choice at otherwise.
func pastChoices(t *contract.Table, asks []string, cols []int, enums int, row ground.Row, b ground.Bound, at Choice) []Choice {
	base := at
	if base == (Choice{}) {
		base.Ordinal = b.Ordinal
	}
	var out []Choice
	if col := slices.IndexFunc(cols, func(i int) bool { return row != nil && row[t.Columns[i].Name] != nil }); col >= 0 {
		for _, o := range asks {
			for dir := range 2 {
				ch := base
				ch.Outside, ch.Swap, ch.Other = o, ground.SwapPast, 2*cols[col]+dir
				out = append(out, ch)
			}
		}
	}
	for o := 1; o < enums; o++ {
		ch := base
		ch.Ordinal += o
		out = append(out, ch)
	}
	return out[:min(len(out), pastValues)]
}
