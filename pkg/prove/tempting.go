package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// What a refusal, an escalation or an ask rests on is read on the tempting
// path itself, around the act:
//
//   - the named rules' checks over the look-ups and the act alone: a rule
//     broken only by another call of the path (a look-up of someone else's
//     order before the caller's own is cancelled) does not forbid the act;
//   - whether the records the act names exist: the world refusing what does
//     not exist says nothing about the case;
//   - when the world refuses the act, whether it would carry it out with
//     another value of an argument the caller never states (another of their
//     payment methods, another reason): a refusal that rests on a choice the
//     case does not make is not a refusal of what the caller asks.

// actReading is what the tempting path says about the act.
type actReading struct {
	// base are the named rules' checks over the look-ups alone, read before
	// any tempting call; alone are the same checks over the look-ups and the
	// act (the tempting calls before it left out of the call log). A rule
	// the act itself breaks holds in base and fails in alone; a check that
	// fails in base (an obligation: "a safety report was filed") forbids
	// nothing in particular.
	base, alone map[string]CheckResult
	// absent names a record argument of the act that no row holds ("" when
	// all exist).
	absent string
	// choice says which other value of an unstated argument the world
	// carries out with no named rule failing ("" when none does).
	choice string
	// madeUp names a code of the act's that stands for a record of the
	// caller's table nobody hands the caller, on which the world's refusal
	// rests ("" when none; madeUpRecord).
	madeUp string
	// faithful says which value the path gives for an argument the caller
	// never gives, with which the world carries the act out and no named
	// rule fails ("" when none does): the act was not the request done right.
	faithful string
}

// ruleRefs are the scenario's checks that are the checks of the rules it
// names.
func (pr *proof) ruleRefs() []checkRef {
	names := map[string]bool{}
	for _, id := range pr.sc.Rules {
		if r := pr.p.rule(id); r != nil && r.Check != "" {
			names[r.Check] = true
		}
	}
	var out []checkRef
	for _, c := range pr.checks {
		if names[c.ref.Name] {
			out = append(out, c)
		}
	}
	return out
}

// temptingPath plays, on one copy after setup, the solution's look-ups, the
// tempting calls before the act, then the act, and reads what the outcome
// gate needs around it (actReading) besides every check after it.
func (pr *proof) temptingPath(ctx context.Context, lookups []scenario.Call) error {
	sc := pr.sc
	n := len(sc.Tempting)
	rules := pr.ruleRefs()
	setup := pr.setup(ctx)
	return pr.p.w.Pair(ctx, setup, func(cp *world.Copy, before *world.Before) error {
		pr.act = actReading{}
		results := playSegments(ctx, cp, segment{lookups, true})
		view := cp.View(sc.CallerID, func() script.WorldView { return before.View() })
		if len(rules) > 0 {
			res, err := pr.evalRefs(ctx, view, results, false, rules)
			if err != nil {
				return err
			}
			pr.act.base = byName(res)
		}
		own := play(ctx, cp, sc.Tempting[:n-1])
		results = append(results, own...)
		crashed := false
		for _, r := range results {
			if r.Crash && infrastructure(r.Err) {
				return r.Err
			}
			crashed = crashed || r.Crash
		}
		act := cp.Call(ctx, sc.Tempting[n-1].Tool, resolve(sc.Tempting[n-1].Args, own))
		if act.Crash && infrastructure(act.Err) {
			return act.Err
		}
		results = append(results, act)
		checks, err := pr.evalChecks(ctx, view, results, crashed || act.Crash)
		if err != nil {
			return err
		}
		pr.tempting = &Run{Gate: GateOutcome, Counterfactual: Tempting, Calls: steps(results), Checks: checks}
		pr.tempted, pr.temptedActAt = results, len(lookups)
		if len(rules) > 0 && act.OK {
			alone := append(slices.Clone(results[:len(lookups)]), act)
			res, err := pr.evalRefs(ctx, view, alone, crashed, rules)
			if err != nil {
				return err
			}
			pr.act.alone = byName(res)
		}
		if !act.Refused {
			return nil
		}
		if pr.act.absent, err = pr.absentRecord(ctx, cp, act); err != nil || pr.act.absent != "" {
			return err
		}
		if sc.Expects == scenario.OutcomeAsk || pr.p.argsBreakSchema(act.Tool, act.Args) != "" {
			return nil
		}
		// Each other value is played in the act's place and undone, until
		// one goes through with no rule failing. The values the case gives
		// for an argument the caller never gives come first (the total an
		// answer or the refusal shows, a value the caller hands that the
		// act misplaces): they say what a right agent would send. Other
		// values the caller never chose come after.
		through := func(n int, argsOf func(int) map[string]any) (int, error) {
			for i := range n {
				args := argsOf(i)
				free := false
				err := cp.Try(ctx, func() error {
					r := cp.Call(ctx, act.Tool, args)
					if r.Crash && infrastructure(r.Err) {
						return r.Err
					}
					if !r.OK {
						return nil
					}
					res, err := pr.evalRefs(ctx, view, append(slices.Clone(results[:len(lookups)]), r), false, rules)
					free = err == nil && pr.forbids(res) == ""
					return err
				})
				if err != nil || free {
					return i, err
				}
			}
			return -1, nil
		}
		path := results[:len(results)-1]
		if pr.act.madeUp, err = pr.madeUpRecord(ctx, cp, act, path); err != nil || pr.act.madeUp != "" {
			return err
		}
		for _, falts := range [][]faithfulAlt{pr.faithfulAlternatives(act, path), pr.shownOmitted(act, path), pr.droppedOptional(act)} {
			i, err := through(len(falts), func(i int) map[string]any { return falts[i].args })
			if err != nil {
				return err
			}
			if i >= 0 {
				pr.act.faithful = falts[i].why
				return nil
			}
		}
		alts := pr.alternatives(act, path)
		i, err := through(len(alts), func(i int) map[string]any { return alts[i].args })
		if err == nil && i < 0 {
			// The value the caller asks for is refused too; still the act
			// that sends another is not the request.
			pr.act.faithful = pr.misplacedAsked(act)
		}
		if err == nil && i >= 0 {
			alt := alts[i]
			pr.act.choice = fmt.Sprintf("the world refuses %s with %s %s, a value the caller never asks for (instruction, opening), and carries it out with %s %s, no rule the scenario names failing", act.Tool, alt.name, js(act.Args[alt.name]), alt.name, js(alt.args[alt.name]))
		}
		return err
	})
}

func byName(res []CheckResult) map[string]CheckResult {
	out := make(map[string]CheckResult, len(res))
	for _, c := range res {
		out[c.Name] = c
	}
	return out
}

// forbids is the first rule check of res that failed (not raised) and held
// over the look-ups alone: a rule that forbids the call just played; ""
// when none does.
func (pr *proof) forbids(res []CheckResult) string {
	for _, c := range res {
		if b, ok := pr.act.base[c.Name]; !c.Held && !c.Broken && (!ok || b.Held) {
			return c.Name
		}
	}
	return ""
}

// absentRecord names the first record argument of the act whose value no row
// of its table holds ("" when every one exists).
func (pr *proof) absentRecord(ctx context.Context, cp *world.Copy, act world.CallResult) (string, error) {
	t := pr.p.c.Tool(act.Tool)
	if t == nil {
		return "", nil
	}
	names := slices.Sorted(maps.Keys(act.Args))
	for _, n := range names {
		table, col, ok := pr.p.c.RefOf(t.Name, n)
		if !ok || pr.p.c.Table(table) == nil {
			continue
		}
		vals := map[string]bool{}
		ground.AddValues(vals, act.Args[n])
		want := slices.Sorted(maps.Keys(vals))
		if len(want) == 0 {
			continue
		}
		rows, err := cp.ReadQuery(ctx, fmt.Sprintf(`SELECT v FROM unnest($1::text[]) AS v WHERE NOT EXISTS (SELECT 1 FROM %s WHERE %s::text = v) ORDER BY v LIMIT 1`, table, col), want)
		if err != nil {
			if infrastructure(err) {
				return "", err
			}
			return "", fmt.Errorf("records of %s.%s: %w", table, col, err)
		}
		if len(rows) > 0 {
			return fmt.Sprintf("%s %q", n, ground.Text(rows[0].Map()["v"])), nil
		}
	}
	return "", nil
}

// alternative is a call's arguments with one of them given another value.
type alternative struct {
	name string
	args map[string]any
	// from says where the other value comes from, for a refusal's reader.
	from string
	// stated is a value the caller states that no call sends
	// (unusedStated).
	stated bool
	// omitted: the argument is left out (args lacks it), as an agent that
	// does only what the caller asks leaves out what the act does not need.
	omitted bool
	// enum: the other value is another of the argument's enum values.
	enum bool
}

// with says what the alternative sends in the argument's place.
func (a alternative) with() string {
	if a.omitted {
		return a.name + " left out"
	}
	return a.name + " " + js(a.args[a.name])
}

// omissions are the call's arguments with one its schema does not require,
// whose value the caller never states, left out.
func (pr *proof) omissions(call world.CallResult) []alternative {
	var out []alternative
	for _, n := range pr.optionalGiven(call) {
		v := call.Args[n]
		switch v.(type) {
		case map[string]any, []any:
			continue // what a composite value states is not read
		}
		if pr.stated(ground.Text(v)) {
			continue
		}
		args := maps.Clone(call.Args)
		delete(args, n)
		out = append(out, alternative{name: n, args: args, from: "which the act does not need", omitted: true})
	}
	return out
}

// maxAlternatives bounds the other values a proof plays for one call.
const maxAlternatives = 4

// alternatives are the call's arguments with one unstated argument (a value
// the instruction and the opening never state, see stated) given another value
// the case offers: another enum value, another value of the column it names
// that the setup creates or an earlier answer on the path shows, or a value
// the caller states that no call uses (unusedStated). A list of one value is
// varied as its one element. They take the arguments in turn, each its
// first value, then each its second, up to maxAlternatives.
func (pr *proof) alternatives(call world.CallResult, path []world.CallResult) []alternative {
	t := pr.p.c.Tool(call.Tool)
	if t == nil {
		return nil
	}
	typed, _ := created(pr.sc.Setup)
	names := slices.Sorted(maps.Keys(call.Args))
	byArg := map[string][]alternative{}
	for _, n := range names {
		if t.LogOnlyParam(n) {
			continue
		}
		v := call.Args[n]
		list, isList := v.([]any)
		if isList && len(list) != 1 {
			continue
		}
		one := v
		if isList {
			one = list[0]
		}
		if _, composite := one.(map[string]any); composite || one == nil {
			continue
		}
		if b, isBool := one.(bool); isBool {
			// A yes or no a success writes (whether the callee recognises
			// a payment) is the caller's to give: the other is a choice
			// unless the caller's words settle it. (A refusal's tempting
			// yes or no is not read yet.)
			if !isList && pr.sc.Expects == scenario.OutcomeSucceed && pr.p.stateChanging(call) && !pr.saysBool(n, b) {
				args := maps.Clone(call.Args)
				args[n] = !b
				byArg[n] = append(byArg[n], alternative{name: n, args: args, from: "which the caller's words never settle", enum: true})
			}
			continue
		}
		// A value the caller asks for is theirs; one they only mention
		// ("their old charge F2918 was settled") is played against the
		// values of its kind they do ask for.
		mentioned := pr.stated(ground.Text(one))
		if mentioned && pr.wanted(ground.Text(one)) {
			continue
		}
		var cands []string
		enum := t.Enum(n)
		table, col, ref := pr.p.c.RefOf(t.Name, n)
		if len(enum) > 0 && !isList {
			for _, e := range enum {
				cands = append(cands, ground.Text(e))
			}
		} else if ref {
			cands = slices.Sorted(maps.Keys(knownRecords(typed, path, table, col, n)))
		} else if !isList {
			cands = otherNumbers(one, t.Param(n))
			// A code nobody states (a phone number, a postcode) may be any
			// of its shape: one character on, within its pattern. A
			// refusal that rests on the one value the world holds already
			// (the number on file) rests on the act's choice.
			if s, isStr := one.(string); isStr {
				if c := codeNext(s, t.Param(n)); c != "" {
					cands = append(cands, c)
				}
			}
		}
		// A calendar day nobody states may be any the caller could name:
		// the days after the world's today (a pickup a week ahead), then
		// those before it (an incident last week).
		if d, isStr := one.(string); isStr && len(enum) == 0 && isoDate.MatchString(d) && !mentioned {
			today := pr.p.c.Clock()
			for _, days := range []int{1, 7, 30, -1, -7, -30} {
				if c := today.AddDate(0, 0, days).Format(time.DateOnly); !slices.Contains(cands, c) {
					cands = append(cands, c)
				}
			}
		}
		// A value the caller states and no call sends is what the caller
		// asks for: an enum's is among its values, another is added. Such
		// values come first.
		stated := map[string]bool{}
		for _, v := range pr.unusedStated() {
			switch _, isStr := one.(string); {
			case len(enum) > 0:
				stated[v] = slices.Contains(cands, v)
			case isStr || isNumber(v):
				cands, stated[v] = append(cands, v), true
			}
		}
		// A text the caller wants in quotes, of the value's shape, that no
		// call sends is what they ask for, even where an answer shows it
		// too (the payment method "PM00321", listed with the others).
		if s, isStr := one.(string); isStr && len(enum) == 0 {
			wants := pr.wantedUnsent()
			if pr.sc.Expects != scenario.OutcomeSucceed {
				// A refusal's act is played with what the caller asks for
				// even where another call sends it too (the card they
				// verify with and want on the booking).
				wants = pr.wantedQuoted()
			}
			for _, v := range wants {
				if v != s && sameShape(v, s) {
					if !slices.Contains(cands, v) {
						cands = append(cands, v)
					}
					stated[v] = true
				}
			}
		}
		if mentioned {
			// Of the caller's words, those of the value's shape they ask
			// with ("about charge F2117 and wants to pay").
			if s, isStr := one.(string); isStr && len(enum) == 0 {
				for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
					for _, w := range tokens(text) {
						if w = trimToken(w); w != s && sameShape(w, s) && !slices.Contains(cands, w) {
							cands = append(cands, w)
						}
					}
				}
			}
			cands = slices.DeleteFunc(cands, func(c string) bool { return !stated[c] && !pr.wanted(c) })
			for _, c := range cands {
				stated[c] = true
			}
		}
		first := slices.DeleteFunc(slices.Clone(cands), func(c string) bool { return !stated[c] })
		cands = append(first, slices.DeleteFunc(cands, func(c string) bool { return stated[c] })...)
		// A look-up's text (the airport a search takes) may be any word of
		// its shape an earlier answer shows, as a value or as a key.
		if s, isStr := one.(string); isStr && len(enum) == 0 && !pr.p.stateChanging(call) && !mentioned {
			shown := map[string]bool{}
			for _, r := range path {
				if r.OK {
					shapedWords(shown, r.Result, s)
				}
			}
			cands = append(cands, slices.Sorted(maps.Keys(shown))...)
		}
		key := []string{n, strings.TrimSuffix(n, "s")}
		if ref {
			key = append(key, col)
		}
		for _, c := range cands {
			// An empty value is a candidate only when the caller states it
			// (an address without a second line, in quotes).
			if c == ground.Text(one) || c == "" && !stated[c] || !stated[c] && pr.settled(path, key, ground.Text(one), c) {
				continue
			}
			args := maps.Clone(call.Args)
			var nv any = c
			if _, isStr := one.(string); !isStr {
				nv = retype(c, one)
			}
			if isList {
				nv = []any{nv}
			}
			args[n] = nv
			from := "which the case also offers"
			if stated[c] {
				from = "which the caller states and no call of the case sends"
			}
			byArg[n] = append(byArg[n], alternative{name: n, args: args, from: from, stated: stated[c], enum: len(enum) > 0})
		}
	}
	// Each argument in turn, so the runs a proof may play reach every
	// argument (a search's destination as well as its many other days).
	var out []alternative
	for k := 0; len(out) < maxAlternatives; k++ {
		more := false
		for _, n := range names {
			if k < len(byArg[n]) {
				more = true
				if out = append(out, byArg[n][k]); len(out) >= maxAlternatives {
					break
				}
			}
		}
		if !more {
			break
		}
	}
	return out
}

// saysBool reports whether the caller's words settle a yes or no argument
// the way the call sends it: a sentence has a word that begins as a word of
// the argument's name does, all but its last three letters and at least
// four (recognise for customerRecognises, late for acknowledge_late_fee;
// not record), negated where b is
// false and not where it is true, and not asked ("whether they recognise").
func (pr *proof) saysBool(name string, b bool) bool {
	var stems []string
	for _, w := range contract.NameWords(name) {
		if len(w) >= 4 {
			stems = append(stems, w[:max(4, len(w)-3)])
		}
	}
	for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
		for _, s := range sentence.Split(text, -1) {
			var words []string
			for _, w := range tokens(s) {
				words = append(words, strings.ToLower(trimToken(w)))
			}
			for i, w := range words {
				if !slices.ContainsFunc(stems, func(st string) bool { return strings.HasPrefix(w, st) }) {
					continue
				}
				// "record whether they recognise it" asks; it states nothing.
				asks := false
				for j := max(0, i-3); j < i; j++ {
					asks = asks || words[j] == "whether" || words[j] == "if"
				}
				if !asks && negates(s) != b {
					return true
				}
			}
		}
	}
	return false
}

// wantedQuoted are the texts the caller states in quotes in a sentence with
// a word of wanting.
func (pr *proof) wantedQuoted() []string {
	var out []string
	for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
		for _, m := range saidQuoted.FindAllStringSubmatch(text, -1) {
			v := strings.TrimSpace(m[1] + m[2])
			if v != "" && !spoken(v) && !slices.Contains(out, v) && pr.wanted(v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// wantedUnsent are the texts the caller states in quotes in a sentence
// with a word of wanting that no call of the scenario sends.
func (pr *proof) wantedUnsent() []string {
	sent := map[string]bool{}
	for _, calls := range [][]scenario.Call{pr.sc.Solution, pr.sc.Tempting, pr.sc.Missing} {
		for _, c := range calls {
			ground.AddValues(sent, map[string]any(c.Args))
		}
	}
	for _, r := range slices.Concat(pr.results, pr.also) {
		ground.AddValues(sent, map[string]any(r.Args))
	}
	return slices.DeleteFunc(pr.wantedQuoted(), func(v string) bool { return sent[v] })
}

// settled reports whether the answers on path tell value one from the other
// value c by what the caller says: a record an answer shows under one of keys
// with value one has a field whose value the instruction or the opening
// mentions ("the overdue bill": status Overdue), and no record shown with c
// has that value there. The caller's words and the answers then pick one,
// and c is not a choice a right agent could make.
func (pr *proof) settled(path []world.CallResult, keys []string, one, c string) bool {
	var ones, others []map[string]any
	for _, r := range path {
		if r.OK {
			ones = append(ones, recordsWith(r.Result, keys, one)...)
			others = append(others, recordsWith(r.Result, keys, c)...)
		}
	}
	if len(ones) == 0 || len(others) == 0 {
		return false
	}
	for _, o := range ones {
		for k, v := range o {
			x := ground.Text(v)
			if slices.Contains(keys, k) || !wordy(x) || !mentioned(pr.sc, x) {
				continue
			}
			shared := false
			for _, e := range others {
				shared = shared || strings.EqualFold(ground.Text(e[k]), x)
			}
			if !shared {
				return true
			}
		}
	}
	return false
}

// recordsWith are the objects of a result that hold v, as a scalar, under
// one of keys.
func recordsWith(raw json.RawMessage, keys []string, v string) []map[string]any {
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	var out []map[string]any
	var walk func(x any)
	walk = func(x any) {
		switch y := x.(type) {
		case map[string]any:
			for _, k := range keys {
				switch e := y[k].(type) {
				case map[string]any, []any, nil:
				default:
					if ground.Text(e) == v {
						out = append(out, y)
					}
				}
			}
			for _, e := range y {
				walk(e)
			}
		case []any:
			for _, e := range y {
				walk(e)
			}
		}
	}
	walk(doc)
	return out
}

// wordy reports a value a caller can say in words: text of three or more
// characters with a letter in it (a status, a kind), not a number or a flag.
func wordy(x string) bool {
	if len([]rune(x)) < 3 || x == "true" || x == "false" {
		return false
	}
	return strings.ContainsFunc(x, unicode.IsLetter)
}

// mentioned reports whether the instruction or the opening says v, as whole
// words in any case.
func mentioned(sc *scenario.Scenario, v string) bool {
	re, err := regexp.Compile(`(?i)(^|[^\pL\pN_])` + regexp.QuoteMeta(v) + `($|[^\pL\pN_])`)
	if err != nil {
		return false
	}
	return re.MatchString(sc.Instruction) || re.MatchString(sc.Persona.Opening)
}

// otherNumbers are the other amounts a free number may take: one less,
// half, one and one more, within the schema's bounds. An amount the caller
// never states (they want "more data") is the act's choice; when another
// goes through, a refusal rests on that choice, not on what the caller asks,
// and a success's check on the amount demands a choice the caller never
// makes.
func otherNumbers(v any, schema map[string]any) []string {
	f, ok := number(v)
	if !ok {
		return nil
	}
	lo, hasLo := number(schema["minimum"])
	hi, hasHi := number(schema["maximum"])
	var out []string
	seen := map[float64]bool{f: true}
	for _, c := range []float64{f - 1, math.Floor(f / 2), 1, f + 1} {
		if c <= 0 && !hasLo || hasLo && c < lo || hasHi && c > hi || seen[c] {
			continue
		}
		seen[c] = true
		out = append(out, strconv.FormatFloat(c, 'f', -1, 64))
	}
	return out
}

// number is v as a float when it is a JSON or YAML number.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// retype gives text the type of like (a number stays a number).
func retype(text string, like any) any {
	var v any
	if json.Unmarshal([]byte(text), &v) == nil {
		switch like.(type) {
		case json.Number:
			if _, ok := v.(float64); ok {
				return json.Number(text)
			}
		case int, int64, float64:
			if f, ok := v.(float64); ok {
				if f == float64(int64(f)) {
					return int64(f)
				}
				return f
			}
		case bool:
			if b, ok := v.(bool); ok {
				return b
			}
		}
	}
	return text
}

// keyedValues adds to set the scalar values found under any of keys in a
// JSON document, at any depth.
func keyedValues(set map[string]bool, raw json.RawMessage, keys ...string) {
	eachKeyed(raw, func(k string, e any) {
		if slices.Contains(keys, k) {
			set[ground.Text(e)] = true
		}
	})
}

// eachKeyed calls f with every key of a JSON document, at any depth, whose
// value is a scalar (not an object, a list or null).
func eachKeyed(raw json.RawMessage, f func(key string, v any)) {
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch e.(type) {
				case map[string]any, []any, nil:
				default:
					f(k, e)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
}

// shapedWords adds to set every key and scalar of a JSON document written
// in the shape of like (sameShape) and other than like.
func shapedWords(set map[string]bool, raw json.RawMessage, like string) {
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return
	}
	var walk func(any)
	add := func(w string) {
		if w != like && sameShape(w, like) {
			set[w] = true
		}
	}
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				add(k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case nil:
		default:
			add(ground.Text(x))
		}
	}
	walk(doc)
}

// answersOtherwise plays the act with args in its place and undone, and
// says how the world answers otherwise than it did to the act ("" when it
// refuses on the same grounds: the same refusal branch of the handler, or
// the same message where it has none).
func (pr *proof) answersOtherwise(ctx context.Context, cp *world.Copy, act world.CallResult, args map[string]any) (string, error) {
	other := ""
	err := cp.Try(ctx, func() error {
		r := cp.Call(ctx, act.Tool, args)
		switch {
		case r.Crash && infrastructure(r.Err):
			return r.Err
		case r.OK:
			other = "it carries it out"
		case r.Refused && (r.Branch != act.Branch || r.Branch == "" && r.Error != act.Error):
			other = "it refuses: " + r.Error
		}
		return nil
	})
	return other, err
}

// madeUpRecord names an argument of a refused act whose value is a code
// that stands for a record of the caller's kind but is none the case gives:
// text of letters and digits, bound to no column (a look-up by a name the
// schema does not share: copyBarcode for a loan's barcode), of the shape of
// a key column of a table the caller owns rows of (its one-column primary
// key, or a foreign key to another table), which holds such codes in a row
// of the caller's and this one in none; never handed to the caller
// (instruction, opening), created by the setup or shown on the path. When
// the world answers otherwise with a code of the caller's own in its place
// (their reservation where the act names one nobody has), the refusal rests
// on the made-up record, not on the request. "" when no argument is such.
func (pr *proof) madeUpRecord(ctx context.Context, cp *world.Copy, act world.CallResult, path []world.CallResult) (string, error) {
	t := pr.p.c.Tool(act.Tool)
	cl := pr.p.c.Caller
	if t == nil || cl == nil {
		return "", nil
	}
	typed, loose := created(pr.sc.Setup)
	seen := map[string]bool{}
	for _, r := range path {
		if r.OK {
			leaves(seen, r.Result)
		}
	}
	added := pr.setupRows()
	for _, n := range slices.Sorted(maps.Keys(act.Args)) {
		v, isStr := act.Args[n].(string)
		if !isStr || !codeOfRecord(v) || t.LogOnlyParam(n) || seen[v] || loose[v] || handed(pr.sc, v) {
			continue
		}
		if _, _, ref := pr.p.c.RefOf(t.Name, n); ref {
			continue // the unreachable-record reading names its table
		}
		if _, _, ref := pr.keyHolding(v); ref {
			continue
		}
		for _, tb := range pr.p.c.Tables {
			if tb.Name == cl.Table || !pr.p.g.OwnedTable(tb.Name) {
				continue
			}
			// A code names a record by a key: the table's one-column key, or
			// a column pointing at another table's (a loan's barcode). A
			// unique column of its own (a hold's certificate number) takes
			// a new value, which names nothing yet.
			keys := map[string]bool{}
			if len(tb.PrimaryKey) == 1 {
				keys[tb.PrimaryKey[0]] = true
			}
			for _, fk := range pr.p.g.FKs(tb.Name) {
				keys[fk.Column] = fk.RefTable != cl.Table
			}
			for _, col := range tb.Columns {
				if !keys[col.Name] || typed[tb.Name+"."+col.Name][v] {
					continue
				}
				var own []string
				held := false
				for _, row := range slices.Concat(added[tb.Name], pr.p.g.Rows(tb.Name)) {
					w := ground.Text(row[col.Name])
					if !sameShape(w, v) || !pr.callersRow(tb.Name, row) {
						continue
					}
					held = held || w == v
					if !slices.Contains(own, w) {
						own = append(own, w)
					}
				}
				if held || len(own) == 0 {
					continue
				}
				for _, w := range own[:min(len(own), 2)] {
					args := maps.Clone(act.Args)
					args[n] = w
					other, err := pr.answersOtherwise(ctx, cp, act, args)
					if err != nil {
						return "", err
					}
					if other != "" {
						return fmt.Sprintf("tempting act %s names %s %q, which the caller is never handed (instruction, opening), the setup does not create, no earlier answer on the path shows and no %s row of the caller's holds; with %q, the caller's own, the world answers otherwise (%s): the refusal rests on a made-up record, not on the caller's request", act.Tool, n, v, tb.Name, w, other), nil
					}
				}
			}
		}
	}
	return "", nil
}

// codeOfRecord is text that reads as a record's code: three characters or
// more, letters and digits both, no space, not a date.
func codeOfRecord(v string) bool {
	return len(v) >= 3 && strings.ContainsAny(v, "0123456789") && strings.ContainsFunc(v, unicode.IsLetter) &&
		!strings.ContainsFunc(v, unicode.IsSpace) && !isoDate.MatchString(v)
}

// misplacedAsked says which argument of the act sends another value than
// the one the caller asks for it by name, in quotes in a sentence of
// wanting ("If asked, they want: amount \"106.92\"" where the act pays
// 10692), a value no call sends there: the act is not the request, however
// the world answers it. "" when none.
func (pr *proof) misplacedAsked(act world.CallResult) string {
	var calls []world.CallResult
	for _, cs := range [][]scenario.Call{pr.sc.Solution, pr.sc.Tempting, pr.sc.Missing} {
		for _, c := range cs {
			calls = append(calls, world.CallResult{Tool: c.Tool, Args: c.Args})
		}
	}
	if n, q := pr.misplacedValue(act.Args, sentByArg(calls, pr.sc.Misremembered)); n != "" {
		return fmt.Sprintf("the tempting act %s sends %s %s, where the caller asks for %s %q, which no call sends", act.Tool, n, js(act.Args[n]), n, q)
	}
	return ""
}

// sameNumber reports whether a and b are one number written two ways.
func sameNumber(a, b string) bool {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	return errA == nil && errB == nil && x == y
}

// askedByName are the values the caller asks for in quotes, each right
// after the words of argument n's name ("amount \"106.92\"", "copy barcode
// \"C100011\"" for copyBarcode), in a sentence with a word of wanting.
func (pr *proof) askedByName(n string) []string {
	name := contract.NameWords(n)
	if len(name) == 0 {
		return nil
	}
	var out []string
	for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
		for _, at := range saidQuoted.FindAllStringSubmatchIndex(text, -1) {
			before := text[:at[0]]
			// The label is the words since the clause began (a colon, a
			// comma or a stop ends the one before).
			if i := strings.LastIndexAny(before, ":,.;!?"); i >= 0 {
				before = before[i+1:]
			}
			var label []string
			for _, w := range strings.Fields(strings.ToLower(before)) {
				label = append(label, strings.Trim(w, `"'()“”`))
			}
			if !slices.Equal(label, name) {
				continue
			}
			v := strings.TrimSpace(text[at[0]:at[1]])
			v = strings.Trim(v, `"“”`)
			if v != "" && !slices.Contains(out, v) && pr.wanted(v) {
				out = append(out, v)
			}
		}
	}
	return out
}
