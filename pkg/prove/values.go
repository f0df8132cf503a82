package prove

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// Every value a call passes comes from the world or from the caller. An
// argument grounded to a column (its x-ref, or the contract's naming rules)
// takes a value a row of that column holds, one the setup made, one an
// earlier answer showed, or one the caller states; anything else is a value
// no agent could be led to (an airport that does not exist). Two arguments
// grounded to one column that name two roles of a record (origin and
// destination) take equal values only when every table with those two
// roles sometimes holds one value in both (no flight leaves for where it
// left, so no trip does, whatever a few recorded reservations say). Free text that only repeats its parameter's description ("A
// thought to think about") says nothing: it is a stand-in, not content.

// argCalls are the calls whose arguments are checked: the solution and the
// tempting move, with the name each path is reported by.
func argCalls(sc *scenario.Scenario) []struct {
	path  string
	calls []scenario.Call
} {
	return []struct {
		path  string
		calls []scenario.Call
	}{{"solution", sc.Solution}, {"tempting", sc.Tempting}, {"missing", sc.Missing}}
}

// standIns is the static gate's check of free text (CodeStandIn).
func (p *Prover) standIns(sc *scenario.Scenario) []Refusal {
	var rs []Refusal
	for _, path := range argCalls(sc) {
		for i, c := range path.calls {
			t := p.c.Tool(c.Tool)
			if t == nil {
				continue
			}
			for _, name := range sortedArgs(c.Args) {
				s, ok := c.Args[name].(string)
				if !ok {
					continue
				}
				d, _ := t.Param(name)["description"].(string)
				if ground.StandIn(s, d) {
					rs = append(rs, Refusal{Gate: GateStatic, Code: CodeStandIn, Message: fmt.Sprintf("%s step %d (%s): %s %q only repeats what the parameter is (%q); give the content or leave the step out", path.path, i+1, c.Tool, name, s, d)})
				}
			}
		}
	}
	return rs
}

// argValues is the grounding gate's check of argument values
// (CodeValueNotInWorld, CodeSameValue). results are the solution's.
func (p *Prover) argValues(sc *scenario.Scenario, results []world.CallResult) []Refusal {
	setup := map[string]bool{}
	for _, st := range sc.Setup {
		for _, a := range st.Args {
			ground.AddValues(setup, a)
		}
	}
	said := strings.ToLower(sc.Instruction + "\n" + sc.Persona.Opening)
	var rs []Refusal
	for _, path := range argCalls(sc) {
		for i, c := range path.calls {
			// What the agent has seen by this step: the solution's answers
			// before it (the tempting and missing paths follow its look-ups).
			shown := ""
			upTo := len(results)
			if path.path == "solution" {
				upTo = min(i, len(results))
			}
			for _, r := range results[:upTo] {
				shown += string(r.Result) + "\n"
			}
			names := sortedArgs(c.Args)
			// Only a solution's state-changing call (its answer wrote rows,
			// or the contract says its tool changes state) is judged.
			changes := path.path == "solution" && i < len(results) && p.stateChanging(results[i])
			for _, name := range names {
				v, ok := scalarArg(c.Args[name])
				if !ok {
					if changes {
						for _, msg := range p.unknowableWithin(sc, c, name, said, shown, setup) {
							rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeValueNotInWorld, Message: fmt.Sprintf("%s step %d (%s): %s", path.path, i+1, c.Tool, msg)})
						}
					}
					continue
				}
				table, col, bound := p.c.RefOf(c.Tool, name)
				if msg := p.unknowable(sc, c, changes, name, table, col, bound, said, shown); msg != "" && !p.callerHolds(sc, v) {
					rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeValueNotInWorld, Message: fmt.Sprintf("%s step %d (%s): %s", path.path, i+1, c.Tool, msg)})
					continue
				}
				// A caller's own records (an order, a line) are checked by
				// record-named and unreachable-record; this is reference
				// data (airports, products) and the values of columns.
				if !bound || p.g.OwnedTable(table) || p.g.Holds(table, col, v) || setup[v] || strings.Contains(said, strings.ToLower(v)) || strings.Contains(shown, v) {
					continue
				}
				rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeValueNotInWorld, Message: fmt.Sprintf("%s step %d (%s): %s %q is held by no row of %s.%s, made by no setup, shown by no earlier answer and never said by the caller", path.path, i+1, c.Tool, name, v, table, col)})
			}
			for j, a := range names {
				for _, b := range names[j+1:] {
					va, okA := scalarArg(c.Args[a])
					vb, okB := scalarArg(c.Args[b])
					if !okA || !okB || va != vb {
						continue
					}
					ta, ca, boundA := p.c.RefOf(c.Tool, a)
					tb, cb, boundB := p.c.RefOf(c.Tool, b)
					if !boundA || !boundB || ta != tb || ca != cb {
						continue
					}
					if tables := p.g.DistinctPair(a, b); len(tables) > 0 {
						rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeSameValue, Message: fmt.Sprintf("%s step %d (%s): %s and %s are both %q (%s.%s), but no row of %s ever holds one value in both", path.path, i+1, c.Tool, a, b, va, ta, ca, strings.Join(tables, ", "))})
					}
				}
			}
		}
	}
	return rs
}

// scalarArg is a text or number argument as text; a reference to an earlier
// answer ("$2.user_id") is not one: its value is shown by that answer.
func scalarArg(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		if x == "" || refPattern.MatchString(x) {
			return "", false
		}
		return x, true
	case float64, int, int64:
		return ground.Text(x), true
	}
	return "", false
}

func sortedArgs(args map[string]any) []string {
	out := make([]string, 0, len(args))
	for k := range args {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// callerHolds reports whether a record the caller owns holds v, in the seed
// or as the setup adds it, and the caller's words point at such a record of
// its table as one they have (the destination of "the same flights as your
// current reservation"): the agent reads it by looking the caller's records
// up, a path the reference need not take. A value of a record the caller
// never points at (their other policy's subscriber, on a new policy) is not
// theirs to give by saying nothing.
func (p *Prover) callerHolds(sc *scenario.Scenario, v string) bool {
	if p.c.Caller == nil || sc.CallerID == nil {
		return false
	}
	caller := ground.Text(sc.CallerID)
	added := addedRows(sc.Setup)
	holds := func(table string, row map[string]any) bool {
		vals := map[string]bool{}
		ground.AddValues(vals, row)
		if !vals[v] {
			return false
		}
		owner, owned := p.ownerOf(table, row, added, caller)
		return owned && owner == caller && pointsAtOwn(sc, table)
	}
	for table, rows := range added {
		for _, row := range rows {
			if holds(table, row) {
				return true
			}
		}
	}
	for _, t := range p.c.Tables {
		if !p.g.OwnedTable(t.Name) {
			continue
		}
		for _, row := range p.g.Rows(t.Name) {
			if holds(t.Name, row) {
				return true
			}
		}
	}
	return false
}

// unknowable says why a value a solution's state-changing call sends is
// one no agent could know ("" when it is not): free text (an argument that
// names no record and has no enum: a new e-mail address, a description), or
// a record of reference data no caller owns (a promo code, a voucher), that
// the caller never says, no earlier answer shows and the contract's own
// text never mentions. Free text an answer shows counts as shown only when
// no record holds it or the record the call names does: a look-up reading
// out another visit's reason does not make it this booking's. Only the
// caller can hand such a value, so a reference that sends another reads it
// from the setup it was written from, and its checks fail every right agent. The keys of a caller's own
// records are record-named's to judge (ownedKey). changes says c is a
// solution's state-changing call; no other is judged.
func (p *Prover) unknowable(sc *scenario.Scenario, c scenario.Call, changes bool, name, table, col string, bound bool, said, shown string) string {
	v, ok := c.Args[name].(string)
	t := p.c.Tool(c.Tool)
	if !ok || !changes || v == "" || refPattern.MatchString(v) || bound && p.ownedKey(table, col) || t == nil ||
		t.LogOnlyParam(name) || len(t.Enum(name)) > 0 {
		return ""
	}
	if saysText(sc, said, v) || strings.Contains(p.told, v) {
		return ""
	}
	if strings.Contains(shown, v) {
		// Text an answer shows as a value of some other record (another
		// visit's reason, read out by a look-up) is not the caller's to
		// give by saying nothing; the record the call names keeps its own.
		if bound || !p.heldWhere(sc, v, func(string, map[string]any) bool { return true }) || p.heldByNamed(sc, c.Tool, c.Args, name) {
			return ""
		}
		return fmt.Sprintf("%s %q names no record and is text only the caller can give; an earlier answer shows it, but as a value of another record, which the caller never points at: hand it to the caller in the instruction", name, v)
	}
	if bound && !p.g.OwnedTable(table) {
		return fmt.Sprintf("%s %q is a %s record only the caller could name, yet the caller never says it, no earlier answer shows it and the contract never mentions it: hand it to the caller in the instruction", name, v, table)
	}
	return fmt.Sprintf("%s %q names no record and is text only the caller can give, yet the caller never says it and no earlier answer shows it: hand it to the caller in the instruction", name, v)
}

// unknowableWithin is unknowable for the text inside a list or object
// argument (a passenger's date of birth in a booking's passengers): each
// text its schema leaves free (no enum) that the caller never says, the
// contract never mentions, no earlier answer shows, no setup makes and no
// record the caller points at as their own holds.
func (p *Prover) unknowableWithin(sc *scenario.Scenario, c scenario.Call, name, said, shown string, setup map[string]bool) []string {
	t := p.c.Tool(c.Tool)
	if _, _, bound := p.c.RefOf(c.Tool, name); t == nil || t.LogOnlyParam(name) || bound {
		return nil // a list of records is record-named's and unreachable-record's
	}
	var out []string
	var walk func(v any, schema map[string]any, at string)
	walk = func(v any, schema map[string]any, at string) {
		switch x := v.(type) {
		case map[string]any:
			props, _ := schema["properties"].(map[string]any)
			for _, k := range sortedArgs(x) {
				sub, _ := props[k].(map[string]any)
				walk(x[k], sub, at+"."+k)
			}
		case []any:
			items, _ := schema["items"].(map[string]any)
			for j, e := range x {
				walk(e, items, fmt.Sprintf("%s[%d]", at, j))
			}
		case string:
			if x == "" || refPattern.MatchString(x) || schema["enum"] != nil || setup[x] ||
				saysText(sc, said, x) || strings.Contains(p.told, x) || strings.Contains(shown, x) || p.callerHolds(sc, x) {
				return
			}
			out = append(out, fmt.Sprintf("%s %q is text only the caller can give, yet the caller never says it, no earlier answer shows it and no setup makes it: hand it to the caller in the instruction", at, x))
		}
	}
	switch c.Args[name].(type) {
	case map[string]any, []any:
		walk(c.Args[name], t.Param(name), name)
	}
	return out
}

// saysText reports whether the caller says free text v: said (the
// instruction and opening in lower case) holds it, or v is a date they say
// in words ("May 20" for 2024-05-20).
func saysText(sc *scenario.Scenario, said, v string) bool {
	return strings.Contains(said, strings.ToLower(v)) || saysDate(sc.Instruction, v) || saysDate(sc.Persona.Opening, v)
}

// ownWords say a record is one the caller already has, not a new one.
const ownWords = `current|existing|other|old|previous|same|earlier|last|original|present`

// pointsAtOwn reports whether the instruction or the opening names a record
// of table as one the caller has: its noun (the table name's last word,
// singular or plural) within two words after one of ownWords ("your current
// reservation", "my other policy").
func pointsAtOwn(sc *scenario.Scenario, table string) bool {
	words := strings.FieldsFunc(strings.ToLower(table), func(r rune) bool { return !unicode.IsLetter(r) })
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	nouns := regexp.QuoteMeta(last) + "|" + regexp.QuoteMeta(ground.Singular(last))
	re, err := regexp.Compile(`(?i)\b(` + ownWords + `)(\W+\w+){0,2}?\W+(` + nouns + `)\b`)
	if err != nil {
		return false
	}
	return re.MatchString(sc.Instruction) || re.MatchString(sc.Persona.Opening)
}

// ownedKey reports a column that names a record of a table the caller's
// records are in (its key, a unique column, a reference to another row):
// record-named and unreachable-record judge those. Another column of such a
// table (a new policy's subscriber) is a value like free text: the caller gives
// it, or an answer shows it.
func (p *Prover) ownedKey(table, col string) bool {
	t := p.c.Table(table)
	if t == nil || !p.g.OwnedTable(table) {
		return false
	}
	c := t.Column(col)
	return c == nil || c.References != "" || slices.Contains(t.PrimaryKey, col) || t.IsUnique(col)
}
