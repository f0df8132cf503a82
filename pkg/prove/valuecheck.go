package prove

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// A success whose caller asks for a value (a limit of 250, a class code, a
// pair of dates, a yes) is about that value: an agent that carries the act
// out with another one has not done what was asked. So for each value the
// caller asks for that a state-changing call of the solution sends, the
// solution is played again with another value the world takes in its place
// (another enum value, a neighbouring number, the next day, another row's
// value of the reference column it names, the code one character on); when
// the world carries it out, no rule fails and every check still holds, the
// checks cannot tell the asked value from another (value-unchecked).
// Arguments that name the caller's own records are not varied here: which
// record is asked about is record-named's and unstated-choice's to read.
// Free text (a reason, a note) is not varied either: a right agent may
// word it otherwise.

// maxValueRuns bounds the other values a proof plays for this gate.
const maxValueRuns = 6

// valueUnchecked sets pr.unchecked (and pr.otherValue) to the first asked
// value no check tells apart from another.
func (pr *proof) valueUnchecked(ctx context.Context) error {
	return pr.variedUnchecked(ctx, pr.otherValues, maxValueRuns, func(i int, r world.CallResult, n string, nv any) (*Refusal, Counterfactual) {
		return &Refusal{Gate: GateNotVacuous, Code: CodeValueUnchecked, Step: i + 1, Arg: n,
			Message: fmt.Sprintf("solution step %d (%s) sends %s %s, which the caller asks for; with %s %s the world carries the solution out, no rule fails and every check still holds: no check tells the value asked for from another, so an agent that sets the wrong one passes; check the value the act leaves (a check of the record's field, or called with %s in its args)", i+1, r.Tool, n, js(r.Args[n]), n, js(nv), n)}, OtherValue
	})
}

// variedUnchecked plays the solution with each argument of a state-changing
// call that answered ok set, in turn, to each of others' values (at most max
// plays), and sets pr.unchecked (the refusal refuse makes) and
// pr.otherValue to the first play the world carries out with no rule
// failed and every check holding: nothing tells the value sent from that
// one.
func (pr *proof) variedUnchecked(ctx context.Context, others func(world.CallResult, string) []any, max int,
	refuse func(step int, r world.CallResult, arg string, other any) (*Refusal, Counterfactual)) error {
	isRule := pr.ruleIndexes()
	setup := pr.setup(ctx)
	runs := 0
	for i, r := range pr.results {
		if !r.OK || !pr.p.stateChanging(r) {
			continue
		}
		for _, n := range slices.Sorted(maps.Keys(r.Args)) {
			for _, nv := range others(r, n) {
				if runs >= max {
					return nil
				}
				runs++
				alt := pr.solutionCalls()
				alt[i].Args = maps.Clone(alt[i].Args)
				alt[i].Args[n] = nv
				v, err := pr.playVariant(ctx, setup, alt, isRule)
				if err != nil {
					return err
				}
				if !v.ran {
					continue // the world or a rule says the value matters
				}
				if v.failed != "" {
					break // a check sees this value
				}
				ref, cf := refuse(i, r, n, nv)
				pr.unchecked = ref
				pr.otherValue = &Run{Gate: GateNotVacuous, Counterfactual: cf, Calls: steps(v.played), Checks: v.res,
					Note: fmt.Sprintf("step %d with %s %s in place of %s: every check holds", i+1, n, js(nv), js(r.Args[n]))}
				return nil
			}
		}
	}
	return nil
}

// variant is the solution played with some call's arguments changed, and
// what the checks said after it.
type variant struct {
	played []world.CallResult
	res    []CheckResult
	// ran: the world carried every call out and no rule (named, or one the
	// contract's prohibitions read) fails.
	ran bool
	// failed is the first other check that fails, as "name: why" ("" when
	// every one holds).
	failed string
}

// playVariant plays calls after setup on a copy of their own and reads the
// scenario's checks and the contract's prohibitions there; isRule marks the
// checks that are rules' (ruleIndexes).
func (pr *proof) playVariant(ctx context.Context, setup func(*world.Copy) error, calls []scenario.Call, isRule map[int]bool) (variant, error) {
	var v variant
	err := pr.p.w.Pair(ctx, setup, func(cp *world.Copy, before *world.Before) error {
		v = variant{played: playSegments(ctx, cp, segment{calls, true})}
		for _, s := range v.played {
			if s.Crash && infrastructure(s.Err) {
				return s.Err
			}
			if !s.OK {
				return nil
			}
		}
		view := cp.View(pr.sc.CallerID, func() script.WorldView { return before.View() })
		var err error
		if v.res, err = pr.evalRefs(ctx, view, v.played, false, slices.Concat(pr.checks, pr.prohibited)); err != nil {
			return err
		}
		for _, c := range v.res {
			switch {
			case c.Held || c.Broken:
			case c.Index < 0 || isRule[c.Index]:
				v.failed = ""
				return nil // a rule forbids it
			case v.failed == "":
				v.failed = c.Name + ": " + c.Why
			}
		}
		v.ran = true
		return nil
	})
	return v, err
}

// solutionCalls are the solution's calls as played (references resolved),
// a copy the caller may change.
func (pr *proof) solutionCalls() []scenario.Call {
	calls := make([]scenario.Call, len(pr.results))
	for j, r := range pr.results {
		calls[j] = scenario.Call{Tool: r.Tool, Args: r.Args}
	}
	return calls
}

// ruleIndexes marks the places in sub_goals of the checks of the rules the
// scenario names.
func (pr *proof) ruleIndexes() map[int]bool {
	out := map[int]bool{}
	for _, c := range pr.ruleRefs() {
		out[c.index] = true
	}
	return out
}

// OtherValue is a success's solution with a value the caller asks for
// replaced by another the world takes (valueUnchecked).
const OtherValue Counterfactual = "other-value"

// maxOtherValues bounds the other values tried for one argument.
const maxOtherValues = 2

// otherValues are the values tried in place of argument n of a
// state-changing call, when the caller asks for the one it sends: none for
// an argument that is log-only, names a record of someone's, is free text
// or a composite, or whose value the caller never asks for.
func (pr *proof) otherValues(r world.CallResult, n string) []any {
	t := pr.p.c.Tool(r.Tool)
	if t == nil || t.LogOnlyParam(n) {
		return nil
	}
	v := r.Args[n]
	list, isList := v.([]any)
	if isList && len(list) != 1 {
		return nil
	}
	one := v
	if isList {
		one = list[0]
	}
	wrap := func(x any) any {
		if isList {
			return []any{x}
		}
		return x
	}
	if b, ok := one.(bool); ok {
		if !pr.saysBool(n, b) {
			return nil
		}
		return []any{wrap(!b)}
	}
	text, ok := scalarArg(one)
	if !ok || text == "" || !pr.stated(text) || !pr.wanted(text) {
		return nil
	}
	table, col, ref := pr.p.c.RefOf(t.Name, n)
	if ref && (pr.p.g.OwnedTable(table) || pr.p.c.Caller != nil && table == pr.p.c.Caller.Table) {
		return nil
	}
	schema := t.Param(n)
	_, isStr := one.(string)
	var cands []string
	switch enum := t.Enum(n); {
	case len(enum) > 0:
		for _, e := range enum {
			cands = append(cands, ground.Text(e))
		}
	case ref:
		for _, row := range pr.p.g.Rows(table) {
			cands = append(cands, ground.Text(row[col]))
		}
	case isNumber(text) && !isStr:
		cands = otherNumbers(one, schema)
	case isoDate.MatchString(text):
		if d, err := time.Parse(time.DateOnly, text); err == nil {
			cands = []string{d.AddDate(0, 0, 1).Format(time.DateOnly), d.AddDate(0, 0, -1).Format(time.DateOnly)}
		}
	default:
		// A code (a country, a seat, digits sent as a string such as a
		// card's last four) is varied one character on; free text is not.
		if c := codeNext(text, schema); c != "" {
			cands = []string{c}
		}
	}
	var out []any
	seen := map[string]bool{text: true}
	for _, c := range cands {
		if seen[c] || c == "" {
			continue
		}
		seen[c] = true
		var nv any = c
		if !isStr {
			nv = retype(c, one)
		}
		out = append(out, wrap(nv))
		if len(out) >= maxOtherValues {
			break
		}
	}
	return out
}

// code is a short identifier: letters and digits, no space, at most eight;
// spacedCode is one written in groups that each hold a digit (a postcode
// "NR28 5FQ", a phone "07996 016155" or "(614) 555-0142"), which no right
// agent words otherwise, unlike "198 Albert Street".
var (
	code       = regexp.MustCompile(`^[A-Za-z0-9]{1,8}$`)
	spacedCode = regexp.MustCompile(`^\(?[A-Za-z]*[0-9][A-Za-z0-9]*\)?([ -]\(?[A-Za-z]*[0-9][A-Za-z0-9]*\)?)+$`)
)

// CodeLike reports whether text is a code the gates vary one character on
// (a postcode, a phone number, a short code): an outcome that rests on such
// a value rests on what the caller says, so a writer has them say it. A
// calendar day is no code: the gates try other days of their own.
func CodeLike(text string, schema map[string]any) bool {
	return !isoDate.MatchString(text) && codeNext(text, schema) != ""
}

// codeNext is a code with its last letter or digit moved one on (TH → TI,
// 12B → 12C, NR28 5FQ → NR28 5FR), within the argument's pattern when it has
// one; "" for text that is no code, or when the pattern refuses the other.
func codeNext(s string, schema map[string]any) string {
	if !code.MatchString(s) && (len(s) > 16 || !spacedCode.MatchString(s)) {
		return ""
	}
	b := []byte(s)
	last := b[len(b)-1]
	switch {
	case last == '9':
		last = '0'
	case last == 'z':
		last = 'a'
	case last == 'Z':
		last = 'A'
	default:
		last++
	}
	b[len(b)-1] = last
	other := string(b)
	if p, ok := schema["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil || !re.MatchString(other) {
			return ""
		}
	}
	return other
}

// A success's act on one of the caller's records is about that record: an
// agent that carries the act out on another record of theirs (pays 1 on
// another of their charges) has not done what was asked. So each argument of
// a state-changing call of the solution that names a record of the caller's
// (a row of a table owned through foreign keys up to the caller) is varied to
// another record of the same table the caller owns; when the world carries
// the solution out, no rule fails and every check still holds, the checks
// cannot tell the record asked about from another (record-unchecked). A
// check that pins the record (a state check of the row, `called` with the
// argument) fails there and answers it; so does a world that refuses the act
// on the other record. The caller's own records are the others tried: one
// of someone else's is for the rules (own records only) to forbid.

// maxRecordRuns bounds the other records a proof plays for this gate.
const maxRecordRuns = 4

// recordUnchecked sets pr.unchecked (and pr.otherValue) to the first record
// argument no check tells apart from another record of the caller's.
func (pr *proof) recordUnchecked(ctx context.Context) error {
	return pr.variedUnchecked(ctx, pr.otherRecords, maxRecordRuns, func(i int, r world.CallResult, n string, nv any) (*Refusal, Counterfactual) {
		return &Refusal{Gate: GateNotVacuous, Code: CodeRecordUnchecked, Step: i + 1, Arg: n,
			Message: fmt.Sprintf("solution step %d (%s) acts on %s %s; on %s %s, another record of the caller's, the world carries the solution out, no rule fails and every check still holds: no check tells the record asked about from another, so an agent that acts on the wrong one passes; check the record the act is on (a check of its row, or called with %s in its args)", i+1, r.Tool, n, js(r.Args[n]), n, js(nv), n)}, OtherRecord
	})
}

// OtherRecord is a success's solution with the record its act names
// replaced by another of the caller's (recordUnchecked).
const OtherRecord Counterfactual = "other-record"

// otherRecords are the caller's other records argument n of a call could
// name in its place: the key values of the rows of the table it names (by
// its schema or name, or by the one-column key its text is) that belong to
// the scenario's caller, in the setup and the seed. None for the caller's
// own row, a table nobody owns, or a composite value.
func (pr *proof) otherRecords(r world.CallResult, n string) []any {
	t := pr.p.c.Tool(r.Tool)
	cl := pr.p.c.Caller
	if t == nil || cl == nil || t.LogOnlyParam(n) {
		return nil
	}
	text, ok := scalarArg(r.Args[n])
	if !ok || text == "" {
		return nil
	}
	added := pr.setupRows()
	table, col, ref := pr.p.c.RefOf(t.Name, n)
	if !ref {
		table, col, ref = pr.keyHolding(r.Args[n])
	}
	if !ref {
		table, col, ref = pr.ownColumnHolding(text)
	}
	if !ref || table == cl.Table || !pr.p.g.OwnedTable(table) {
		return nil
	}
	if slices.IndexFunc(pr.recordArgs(t), func(ra [3]string) bool { return ra[0] == n }) > 0 {
		// What the act is about, not what it acts with (the card that
		// pays): which card pays is value-unchecked's and the
		// contract's checks' to read, as record-named reads it.
		return nil
	}
	seen := map[string]bool{text: true}
	var out []any
	for _, row := range slices.Concat(added[table], pr.p.g.Rows(table)) {
		c := ground.Text(row[col])
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		if !pr.callersRow(table, row) {
			continue
		}
		var nv any = c
		if _, isStr := r.Args[n].(string); !isStr {
			nv = retype(c, r.Args[n])
		}
		out = append(out, nv)
	}
	return out
}

// ownColumnHolding is the record a code names when its argument is bound to
// no column and its text is no table's key (a copy's barcode, which names
// the caller's loan of it): the first column of an owned table, other than
// one that points at the caller, whose value in a row of the caller's is v.
// Only a code is read so (three characters or more, a digit, no space, not
// a date): a status or an amount in a row names nothing.
func (pr *proof) ownColumnHolding(v string) (table, col string, ok bool) {
	if len(v) < 3 || !strings.ContainsAny(v, "0123456789") || strings.ContainsAny(v, " \t") || isoDate.MatchString(v) || isNumber(v) {
		return "", "", false
	}
	cl := pr.p.c.Caller
	for _, t := range pr.p.c.Tables {
		if t.Name == cl.Table || !pr.p.g.OwnedTable(t.Name) {
			continue
		}
		toCaller := map[string]bool{}
		for _, fk := range pr.p.g.FKs(t.Name) {
			if fk.RefTable == cl.Table {
				toCaller[fk.Column] = true
			}
		}
		for _, row := range slices.Concat(pr.setupRows()[t.Name], pr.p.g.Rows(t.Name)) {
			for _, c := range t.Columns {
				if toCaller[c.Name] || ground.Text(row[c.Name]) != v || !pr.callersRow(t.Name, row) {
					continue
				}
				return t.Name, c.Name, true
			}
		}
	}
	return "", "", false
}
