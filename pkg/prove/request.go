package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// A scenario is about what the caller asks, and its reference is that
// request carried out, nothing more:
//
//   - the records the solution names are the ones the caller names, or
//     ones an earlier answer of the solution shows (the caller's orders a
//     look-up lists); a record the setup made is no record the agent knows
//     of until an answer shows it, and where the caller names a record of a
//     table, the solution writes to no other of that table (record-named);
//   - every write traces to the request: the use case's act, once per record
//     the caller asks about, and the tools its requires chain needs
//     (unrequested-change, act-once); a callee who asks to be called back
//     gets the callback and nothing else (call-later);
//   - no check demands more: with the writes that do not trace to the
//     request dropped, every check still holds (check-unasked);
//   - a refusal's act is the request carried out right: an argument the
//     caller never gives is one the world or the answers give, and a refusal
//     that rests on another value of it, or on an argument the schema does
//     not require and the act goes through without, refuses nothing the
//     caller asked (tempting-faithful);
//   - a success's act changes only what the caller asks to change: a column
//     of the record it names set away from what it holds, to a value the
//     caller never states, is a change nobody asked for when the world,
//     with the record's own value kept, ends otherwise (unasked-value: a
//     flight change that also downgrades the cabin). What the world computes
//     from the request (a price, a status, a timestamp) is no argument and
//     is not read here.

// Asked-only is the solution without the writes the request does not ask
// for: the run check-unasked reads.
const AskedOnly Counterfactual = "asked-only"

// KeptValue is a success's solution with one value a call sets on its
// record, which the caller never states, replaced by the value the record
// holds before the call: the run unasked-value reads.
const KeptValue Counterfactual = "kept-value"

// unnamedRecord says which record a solution call is about that the caller
// does not name ("" when every one is named or shown): each value of every
// argument that names a caller's record (recordArgs: the reservation, and
// the card that pays for it) is handed to the caller, or shown by an
// earlier answer of the solution; no call, besides, acts on or reads a
// record of a table where the caller names another one.
func (pr *proof) unnamedRecord() string {
	return pr.unnamedOn(pr.results, 0, "solution")
}

// unnamedTempting is unnamedRecord for a refusal's act (the last tempting call), played
// after the solution's look-ups: the act a refusal is about must be the
// caller's request, on the records the caller asks about. A record only the
// setup makes (another parcel of theirs, someone else's card) is refused by
// the world for its own state, which says nothing of what the caller asked.
func (pr *proof) unnamedTempting() string {
	if pr.sc.Expects == scenario.OutcomeSucceed || len(pr.tempted) == 0 {
		return ""
	}
	// The act alone: the look-ups before it only show records (an ask's
	// tempting path may read what its missing step unlocks).
	return pr.unnamedOn(pr.tempted, len(pr.tempted)-1, "tempting")
}

// unnamedOn reads the calls of results from `from` on (those before it only
// show records) for unnamedRecord; label names the list ("tempting": its
// act, the last call).
func (pr *proof) unnamedOn(results []world.CallResult, from int, label string) string {
	sc := pr.sc
	seen := map[string]bool{}
	var purpose map[string]any
	if ob := sc.Outbound; ob != nil && pr.p.c.UseCase(sc.UseCase) != nil {
		ground.AddValues(seen, sc.CallerID)
		purpose = pr.p.recordNames(sc, true)
		for _, v := range purpose {
			ground.AddValues(seen, v)
		}
	}
	for i, r := range results {
		t := pr.p.c.Tool(r.Tool)
		if t == nil || i < from {
			if r.OK {
				leaves(seen, r.Result)
			}
			continue
		}
		writes := pr.p.stateChanging(r) || label == "tempting"
		ras := pr.recordArgs(t)
		if label == "tempting" && len(ras) > 1 {
			// What the act is about, not what it acts with (the card that
			// pays, which the world may refuse as the case's own point).
			ras = ras[:1]
		}
		for _, ra := range ras {
			n, table, col := ra[0], ra[1], ra[2]
			if r.Args[n] == nil {
				continue
			}
			vals := map[string]bool{}
			ground.AddValues(vals, r.Args[n])
			for _, v := range slices.Sorted(maps.Keys(vals)) {
				if v == "" {
					continue
				}
				if handed(sc, v) {
					// A record the caller only mentions ("they also
					// mention K2000361") beside the one they ask about is
					// not what a refusal is of.
					if label == "tempting" && !pr.wanted(v) {
						if other := pr.namedOther(table, col, n, v, results[:i], true); other != "" {
							return fmt.Sprintf("%s (%s) acts on %s %q, which the caller only mentions (no sentence of theirs that names it asks for anything), while they ask about %s %q (a %s row): the refusal must be of the act the caller asks for, on the record they ask about", stepName(label, i), r.Tool, n, v, col, other, table)
						}
					}
					continue
				}
				if purpose != nil && seen[v] && (v == ground.Text(sc.CallerID) || namesRecord(scenario.Call{Args: map[string]any{n: v}}, purpose)) {
					continue
				}
				if other := pr.namedOther(table, col, n, v, results[:i], false); other != "" {
					verb := "reads"
					if writes {
						verb = "acts on"
					}
					return fmt.Sprintf("%s (%s) %s %s %q (a %s row), but the caller names %s %q and never this one: the %s must act on the records the caller asks about", stepName(label, i), r.Tool, verb, n, v, table, col, other, label)
				}
				if !seen[v] {
					return fmt.Sprintf("%s (%s) names %s %q (a %s row), which the caller never names (instruction, opening) and no earlier answer of the %s shows: the setup making a record does not tell the agent of it, so no agent would make that call", stepName(label, i), r.Tool, n, v, table, label)
				}
			}
		}
		if r.OK {
			leaves(seen, r.Result)
		}
	}
	return ""
}

// stepName is how a refusal names call i of label's list.
func stepName(label string, i int) string {
	if label == "tempting" {
		return "the tempting act"
	}
	return fmt.Sprintf("%s step %d", label, i+1)
}

// recordArg is the argument that names the record a tool is about: the
// first of recordArgs. "" when it has none.
func (pr *proof) recordArg(t *contract.Tool) (name, table, col string) {
	if ras := pr.recordArgs(t); len(ras) > 0 {
		return ras[0][0], ras[0][1], ras[0][2]
	}
	return "", "", ""
}

// recordArgs are the arguments that name a row of a caller's table other
// than the caller's own (the reservation, and the card that pays), in the
// order the contract writes them: each {name, table, column}.
func (pr *proof) recordArgs(t *contract.Tool) [][3]string {
	cl := pr.p.c.Caller
	var out [][3]string
	for _, n := range t.ParamNames() {
		if t.LogOnlyParam(n) {
			continue
		}
		tb, c, ok := pr.p.c.RefOf(t.Name, n)
		if !ok || !pr.p.g.OwnedTable(tb) || cl != nil && tb == cl.Table {
			continue
		}
		out = append(out, [3]string{n, tb, c})
	}
	return out
}

// namedOther is a value of table.column other than v that the caller names
// (instruction, opening): a record the setup makes, an earlier answer shows
// under that name, or the world's seed holds; with asked, only one named in
// a sentence of wanting (wanted). "" when there is none.
func (pr *proof) namedOther(table, col, arg, v string, path []world.CallResult, asked bool) string {
	typed, _ := created(pr.sc.Setup)
	known := knownRecords(typed, path, table, col, arg)
	for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
		for _, w := range tokens(text) {
			w = trimToken(w)
			if w == "" || w == v {
				continue
			}
			if (known[w] || pr.p.g.Find(table, col, w) != nil) && (!asked || pr.wanted(w)) {
				return w
			}
		}
	}
	return ""
}

// knownRecords are the values of table.column the setup creates (typed, as
// created gives them) and the answers on path that answered ok show under
// that column's name or argument arg's.
func knownRecords(typed map[string]map[string]bool, path []world.CallResult, table, col, arg string) map[string]bool {
	known := map[string]bool{}
	for x := range typed[table+"."+col] {
		known[x] = true
	}
	for _, r := range path {
		if r.OK {
			keyedValues(known, r.Result, col, arg, strings.TrimSuffix(arg, "s"))
		}
	}
	return known
}

// write is one state-changing call of the solution that the world carried
// out: its place, and the caller's records it names (table:value).
type write struct {
	i       int
	records []string
}

// asksEach reports whether the caller's words ask for tool's act on each
// of vals, the records of one table its calls name. It is read only where
// nothing else tells a record the caller asks about from one they mention
// (the acts take the same values: cancel both orders, for the same reason),
// and only a sentence that ties the act to exactly those records counts:
//
//   - it says the act (a word that begins with the tool's verb, the first
//     word of its name: "cancel" for cancel_pending_order), followed within
//     two words by a quantifier (both, two, three, four, each) whose count,
//     where it has one, is the number of records;
//   - it names every one of vals and no other record of their table
//     (other reports one);
//   - it has no word that narrows or withholds the act (not, only, but,
//     keep, except, one, ...);
//   - what the quantifier counts is the records: a record, or words nouns
//     holds (the record's kind: "both pending orders"), after glue ("the",
//     "of", "their"); "cancel both the wi-fi hotspots on R1 and R2" counts
//     hotspots, not reservations.
//
// A count that merely describes ("about her two orders, she wants to cancel
// #W1"), a verb far from it ("cancel the older of the two") or a sentence
// about another record is no tie: the second act is then not the request.
func asksEach(texts []string, tool string, vals []string, other func(w string) bool, nouns map[string]bool) bool {
	verb := toolVerb(tool)
	if len(verb) < 3 || len(vals) < 2 {
		return false
	}
	for _, text := range texts {
		for _, s := range sentence.Split(text, -1) {
			if tiesAct(s, verb, vals, other, nouns) {
				return true
			}
		}
	}
	return false
}

// sentence splits text where a sentence or a clause of its own ends.
var sentence = regexp.MustCompile(`[.!?;:]+(\s+|$)|\n`)

// restrictive are words that narrow or withhold an act a sentence asks for.
var restrictive = regexp.MustCompile(`(?i)(^|[^\pL])(not|no|never|none|only|just|except|excluding|but|keep|keeping|leave|leaving|without|instead|rather|neither|nor|either|one|other|another|unless|later)([^\pL]|$)|n['’]t([^\pL]|$)`)

// counts are the quantifiers that ask for an act on several records, with
// the number of records each says (0: as many as are named).
var counts = map[string]int{"both": 2, "two": 2, "three": 3, "four": 4, "each": 0}

// tiesAct reports one sentence that asks for the act verb on exactly vals
// (asksEach).
func tiesAct(s, verb string, vals []string, other func(w string) bool, nouns map[string]bool) bool {
	if restrictive.MatchString(s) {
		return false
	}
	sc := &scenario.Scenario{Instruction: s}
	for _, v := range vals {
		if !handed(sc, v) {
			return false
		}
	}
	var words []string
	for _, w := range tokens(s) {
		if w = trimToken(w); w == "" {
			continue
		}
		if !slices.Contains(vals, w) && other(w) {
			return false
		}
		words = append(words, w)
	}
	for i, w := range words {
		if !strings.HasPrefix(strings.ToLower(w), verb) {
			continue
		}
		for j := i + 1; j < len(words) && j <= i+3; j++ {
			if slices.Contains(vals, words[j]) {
				break
			}
			if n, ok := counts[strings.ToLower(words[j])]; ok {
				if (n == 0 || n == len(vals)) && countsRecords(words[j+1:], vals, nouns) {
					return true
				}
				break
			}
		}
	}
	return false
}

// countsOther reports whether the act's verb in sentence s is followed, within
// two words, by a quantifier that counts something other than the records
// ("change both the wi-fi hotspots on RR1 and RR2").
func countsOther(s, verb, v string, nouns map[string]bool) bool {
	var words []string
	for _, w := range tokens(s) {
		if w = trimToken(w); w != "" {
			words = append(words, w)
		}
	}
	for i, w := range words {
		if !strings.HasPrefix(strings.ToLower(w), verb) {
			continue
		}
		for j := i + 1; j < len(words) && j <= i+2; j++ {
			if _, ok := counts[strings.ToLower(words[j])]; ok {
				return !countsRecords(words[j+1:], []string{v}, nouns)
			}
		}
	}
	return false
}

// countGlue are the words that may stand between a quantifier and the
// records it counts.
var countGlue = map[string]bool{"the": true, "of": true, "these": true, "those": true, "their": true, "his": true,
	"her": true, "my": true, "our": true, "its": true, "them": true, "and": true}

// countsRecords reports whether what a quantifier counts is the records:
// the words after it, glue aside, are one of vals or words of the records'
// kind (nouns, compared without a plural s) before any other word.
func countsRecords(after, vals []string, nouns map[string]bool) bool {
	kind := false
	for _, w := range after {
		if slices.Contains(vals, w) {
			return true
		}
		w = strings.ToLower(w)
		switch {
		case nouns[strings.TrimSuffix(w, "s")]:
			kind = true
		case countGlue[w] && !kind:
		default:
			return kind
		}
	}
	return true
}

// recordNouns are the words a caller may count a tool's records by: the
// words of their tables' names, of the tool's name and description, and of
// the text of each use case that lists it, of four letters or more, without
// a plural s.
func (p *Prover) recordNouns(tool string, tables ...string) map[string]bool {
	out := map[string]bool{}
	add := func(s string) {
		for _, w := range contract.NameWords(s) {
			for _, f := range strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) {
				if len(f) > 3 && !countGlue[f] {
					out[strings.TrimSuffix(f, "s")] = true
				}
			}
		}
	}
	for _, t := range tables {
		add(t)
	}
	add(tool)
	if t := p.c.Tool(tool); t != nil {
		add(t.Description)
	}
	for _, u := range p.c.UseCases {
		if slices.Contains(u.Tools, tool) {
			add(u.Text)
		}
	}
	return out
}

// requestTools are the tools whose writes the request may make (nil: any,
// when the use case does not list its tools): the use case's tools (its act
// among them), every tool of its requires chain, the tools that identify the caller, the
// hand-overs, and an outbound call's missed-call and call-back tools.
func (pr *proof) requestTools() map[string]bool {
	c := pr.p.c
	u := c.UseCase(pr.sc.UseCase)
	out := map[string]bool{}
	if u == nil {
		return nil
	}
	// A use case that does not list its tools is matched to them by its
	// words when it is planned; the prover does not guess them.
	tools := u.Tools
	if len(tools) == 0 {
		return nil
	}
	// Every tool the use case is served by may act (a contract lists them
	// in any order: the act, then an audit it asks for).
	acts := append(slices.Clone(tools), u.MissedCall, u.CallLater)
	var visit func(name string)
	visit = func(name string) {
		if name == "" || out[name] {
			return
		}
		out[name] = true
		if t := c.Tool(name); t != nil {
			for _, req := range t.Requires {
				for _, n := range req.AnyOf {
					visit(n)
				}
			}
		}
	}
	for _, a := range acts {
		visit(a)
	}
	if c.Caller != nil {
		for _, n := range c.Caller.From {
			visit(n)
		}
	}
	for i := range c.Tools {
		if c.Tools[i].EndsConversation {
			out[c.Tools[i].Name] = true
		}
	}
	return out
}

// recordsOf are the records a call is about (table:value): the values of
// its record argument (recordArg). Other records it names (the payment
// method a refund goes to) are how it acts, not what it acts on.
func (pr *proof) recordsOf(r world.CallResult) []string {
	t := pr.p.c.Tool(r.Tool)
	if t == nil {
		return nil
	}
	n, table, _ := pr.recordArg(t)
	if n == "" {
		return nil
	}
	set := map[string]bool{}
	vals := map[string]bool{}
	ground.AddValues(vals, r.Args[n])
	for x := range vals {
		if x != "" {
			set[table+":"+x] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// unrequested reads the solution's writes against the request and, when one
// does not trace to it, plays the solution without those writes: a check
// that then fails demands what the caller never asked (check-unasked);
// otherwise the first such write is refused for what it is. It sets
// pr.unasked.
func (pr *proof) unrequested(ctx context.Context) error {
	sc := pr.sc
	pr.unasked = nil
	allowed := pr.requestTools()
	u := pr.p.c.UseCase(sc.UseCase)
	type extra struct {
		code Code
		msg  string
	}
	var dropped []string
	extras := map[int]extra{}
	var writes []write
	var redone []int // writes a later act on their record redid as asked
	callLater := sc.Outbound != nil && sc.Outbound.AnsweredBy == scenario.CallLater && u != nil
	for i, r := range pr.results {
		if !r.OK || !pr.p.stateChanging(r) {
			continue
		}
		t := pr.p.c.Tool(r.Tool)
		if t == nil {
			continue
		}
		if callLater && r.Tool != u.CallLater {
			extras[i] = extra{CodeCallLater, fmt.Sprintf("solution step %d (%s) writes to the world on a call answered call-later: a callee who asks to be called back gets the callback (%s) and nothing more; the rest waits for that call", i+1, r.Tool, u.CallLater)}
			continue
		}
		if t.EndsConversation {
			continue
		}
		if allowed != nil && !allowed[r.Tool] {
			extras[i] = extra{CodeUnrequestedChange, fmt.Sprintf("solution step %d (%s) changes the world with a tool that is neither use case %s's act nor in its requires chain: nothing the caller asks for needs it", i+1, r.Tool, sc.UseCase)}
			continue
		}
		w := write{i: i, records: pr.recordsOf(r)}
		for _, e := range writes {
			prev := pr.results[e.i]
			if prev.Tool != r.Tool {
				// Another tool's write: on the records the request is
				// about, or the caller's own, or one its requires chain
				// joins to this one (pay the bill, then lift the line).
				if pr.chained(prev.Tool, r.Tool) {
					continue
				}
				for _, x := range w.records {
					_, v, _ := strings.Cut(x, ":")
					if !slices.Contains(e.records, x) && !handed(sc, v) && !pr.askedRecord(writes, x) {
						extras[i] = extra{CodeUnrequestedChange, fmt.Sprintf("solution step %d (%s) changes %s, a record the caller never names and the request's act (step %d, %s) is not about: nothing the caller asks for needs it", i+1, r.Tool, v, e.i+1, prev.Tool)}
						break
					}
				}
				if _, ok := extras[i]; ok {
					break
				}
				continue
			}
			same := len(w.records) == 0 && len(e.records) == 0
			for _, x := range w.records {
				same = same || slices.Contains(e.records, x)
			}
			recArg, _, _ := pr.recordArg(t)
			targets := valuesOf(w.records)
			if same && len(w.records) == 0 {
				// An act on no record of the caller's (a booking of a
				// shared slot) is about the rows its arguments point at:
				// two on other rows are two acts, each to be asked for.
				if n := pr.pointedApart(t, prev, r); n != "" {
					vals := map[string]bool{}
					ground.AddValues(vals, r.Args[n])
					same, recArg, targets = false, n, slices.Sorted(maps.Keys(vals))
				}
			}
			switch {
			case sameJSON(prev.Args, r.Args):
				// Nothing in the second call is the caller's: it asks the
				// world for what it already did.
				extras[i] = extra{CodeActOnce, fmt.Sprintf("solution step %d (%s) repeats step %d with the same arguments: an act made again with nothing of its own is not the request (a caller who wants it twice gives each its own values)", i+1, r.Tool, e.i+1)}
			case same && pr.redoneAsAsked(prev, r):
				// The first act was the mistake and this one the request:
				// the first is what the caller never asked for.
				extras[e.i] = extra{CodeActOnce, fmt.Sprintf("solution step %d (%s) acts on the record with %s, which the caller never asks for, and step %d acts on it again as asked: an act made otherwise and then redone is not the request", e.i+1, prev.Tool, strings.Join(differing(r.Args, prev.Args), ", "), i+1)}
				redone = append(redone, e.i)
			case same && !pr.statedApart(prev, r, ""):
				extras[i] = extra{CodeActOnce, fmt.Sprintf("solution step %d (%s) acts again on the record step %d acted on, with values the caller never gives: a second act that redoes or undoes the first is not the request", i+1, r.Tool, e.i+1)}
			case same:
				// Values of its own, stated: each must be asked for in a
				// sentence that asks for the act, not only mentioned.
				for _, v := range differing(prev.Args, r.Args) {
					if !pr.askedOn(r.Tool, v) {
						extras[i] = extra{CodeActOnce, fmt.Sprintf("solution step %d (%s) acts again, as step %d did, with %s, which the caller mentions but never asks the act with: a second act the caller does not ask for is not the request", i+1, r.Tool, e.i+1, v)}
						break
					}
				}
			case !same:
				// Each record named, and each act given its own stated
				// values (two orders, each with its reason); where the acts
				// take the same values, only the instruction's words tell
				// a record asked about from one mentioned.
				// In a conversation of several requests the words speak for
				// the whole of it (two requests, "both" orders): a second
				// record acted on with the same values is a request of its
				// own (requests.go), never this one's by words.
				asked := pr.statedApart(prev, r, recArg) || pr.request == 0 && pr.asksEachOf(r.Tool, recArg, writes, w)
				for _, v := range targets {
					if !handed(sc, v) || !asked || !pr.askedOn(r.Tool, v) {
						extras[i] = extra{CodeUnrequestedChange, fmt.Sprintf("solution step %d (%s) does the act again, on %s, and the caller's words never tie the act to it: a caller asks for an act on more than one record by naming each and giving each act its own values, or by one sentence that says the act, a count of the records (both, two, each) and names each of them, with nothing that narrows it; a second act on another record is not the request", i+1, r.Tool, v)}
						break
					}
				}
			}
			if _, ok := extras[i]; ok {
				break
			}
		}
		if _, ok := extras[i]; !ok {
			writes = append(writes, w)
		}
		writes = slices.DeleteFunc(writes, func(x write) bool { return slices.Contains(redone, x.i) })
	}
	if len(extras) == 0 {
		return nil
	}
	first := slices.Min(slices.Collect(maps.Keys(extras)))
	pr.unasked = []Refusal{{Gate: GateOutcome, Code: extras[first].code, Message: extras[first].msg}}
	var calls []scenario.Call
	for i, r := range pr.results {
		if _, drop := extras[i]; !drop {
			calls = append(calls, scenario.Call{Tool: r.Tool, Args: r.Args})
		} else {
			dropped = append(dropped, fmt.Sprintf("step %d (%s)", i+1, r.Tool))
		}
	}
	run, results, err := pr.counterfactual(ctx, AskedOnly, segment{calls, true})
	if err != nil {
		return err
	}
	run.Gate = GateOutcome
	pr.askedOnly = run
	for _, r := range results {
		if !r.OK {
			return nil // the rest needs what was dropped: the write's own code says it
		}
	}
	held := map[int]bool{}
	for _, c := range pr.solution.Checks {
		held[c.Index] = c.Held
	}
	for _, c := range run.Checks {
		if held[c.Index] && !c.Held && !c.Broken {
			pr.unasked = []Refusal{{Gate: GateOutcome, Code: CodeCheckUnasked, SubGoal: c.Name, Message: fmt.Sprintf("sub-goal %s fails when the solution does only what the caller asks (%s dropped: %s): %s; it demands a change the instruction never asks for, so a right agent would fail it", c.Name, strings.Join(dropped, ", "), extras[first].msg, c.Why)}}
			run.Note = "the solution without the writes the caller never asks for: " + c.Name + " fails"
			return nil
		}
	}
	run.Note = "the solution without the writes the caller never asks for: every check still holds"
	return nil
}

// askedOn reports whether the caller's words ask for tool's act on the
// record v names, where the act is made on more than one record: a
// sentence that names v asks for the act (a word of wanting before one of
// the act's words: the first word of the tool's name, or of the text of a
// use case listing it), and none that names v withholds it. A record only
// mentioned ("they also have R10090", "they want to keep #W9994999", "they
// do not want to cancel APT-59901") is not one the caller asks the act on,
// whatever values the instruction states beside it.
func (pr *proof) askedOn(tool, v string) bool {
	words := []string{toolVerb(tool)}
	for _, u := range pr.p.c.UseCases {
		if f := strings.Fields(strings.ToLower(u.Text)); len(f) > 0 && slices.Contains(u.Tools, tool) {
			words = append(words, strings.Trim(f[0], ",.;:"))
		}
	}
	asked := false
	var tables []string
	if t := pr.p.c.Tool(tool); t != nil {
		for _, p := range t.ParamNames() {
			if tb, _, ok := pr.p.c.RefOf(tool, p); ok {
				tables = append(tables, tb)
			}
		}
	}
	nouns := pr.p.recordNouns(tool, tables...)
	for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
		for _, s := range fullStop.Split(text, -1) {
			if !handedIn(v, s) {
				continue
			}
			if retracts(s, v) {
				return false
			}
			if wantedBefore(s) {
				continue // what they wanted last week is no request now
			}
			for _, w := range words {
				if len(w) < 3 {
					continue
				}
				switch withholds(s, w) {
				case 1:
					asked = asked || !countsOther(s, w, v, nouns)
				case -1:
					return false
				}
			}
		}
	}
	return asked
}

// retraction are the words by which a caller takes a request back, or
// holds on to a record: "changed their mind about R10090", "today they are
// keeping #W9994999", "decided against cancelling it".
var retraction = regexp.MustCompile(`(?i)\bchang(e|es|ed|ing)\s+(their|his|her|my|our)\s+minds?\b|\b(keep|keeps|keeping|kept)\b|\bdecided?\s+(against|not)\b|\brather\s+not\b`)

// pastWant marks a sentence that tells what the caller wanted before, not
// what they ask for now ("last week they wanted to cancel both").
var pastWant = regexp.MustCompile(`(?i)\b(last\s+(week|month|year|time)|yesterday|earlier|previously|originally|at\s+first|used\s+to)\b`)

// wantedBefore reports whether a sentence tells what the caller wanted
// before: a past time (pastWant) and a wish in the past tense ("last week
// they wanted to cancel both"; not "they want the class their friend booked
// last month").
func wantedBefore(s string) bool {
	if !pastWant.MatchString(s) {
		return false
	}
	for _, w := range tokens(s) {
		switch strings.ToLower(trimToken(w)) {
		case "wanted", "asked", "requested", "wished", "needed":
			return true
		}
	}
	return false
}

// retracts reports whether a clause of sentence s that names v takes the
// request on it back.
func retracts(s, v string) bool {
	for _, part := range clause.Split(s, -1) {
		if handedIn(v, part) && retraction.MatchString(part) {
			return true
		}
	}
	return false
}

// redoneAsAsked reports a second act b on the record a acted on whose
// differing values the caller asks for, where a's differ from them and are
// never said: a was the mistake, b the request.
func (pr *proof) redoneAsAsked(a, b world.CallResult) bool {
	later, earlier := differing(a.Args, b.Args), differing(b.Args, a.Args)
	if len(later) == 0 || len(earlier) == 0 {
		return false
	}
	for _, v := range later {
		if !pr.stated(v) || !pr.wanted(v) {
			return false
		}
	}
	for _, v := range earlier {
		if pr.stated(v) {
			return false
		}
	}
	return true
}

// differing are the values of b's arguments (at any depth) where b's
// argument differs from a's, as text, in sorted order.
func differing(a, b map[string]any) []string {
	set := map[string]bool{}
	for n, v := range b {
		if !sameJSON(a[n], v) {
			ground.AddValues(set, v)
		}
	}
	delete(set, "")
	return slices.Sorted(maps.Keys(set))
}

// fullStop ends a sentence; a colon or a semicolon does not ("wants to
// cancel both: #W1 and #W2").
var fullStop = regexp.MustCompile(`[.!?]+(\s+|$)|\n`)

// asksEachOf reports whether the caller's words ask for tool's act on each
// row its writes so far and w name by argument arg (asksEach): one table's
// rows, no other of which the caller names beside them.
func (pr *proof) asksEachOf(tool, arg string, writes []write, w write) bool {
	table, col, ok := pr.p.c.RefOf(tool, arg)
	if !ok {
		return false
	}
	set := map[string]bool{}
	for _, e := range append(slices.Clone(writes), w) {
		if pr.results[e.i].Tool == tool {
			ground.AddValues(set, pr.results[e.i].Args[arg])
		}
	}
	delete(set, "")
	vals := slices.Sorted(maps.Keys(set))
	typed, _ := created(pr.sc.Setup)
	other := func(x string) bool {
		return typed[table+"."+col][x] || pr.p.g.Find(table, col, x) != nil
	}
	return asksEach([]string{pr.sc.Instruction, pr.sc.Persona.Opening}, tool, vals, other, pr.p.recordNouns(tool, table))
}

// pointedApart is the first argument of tool t, naming a row of a table
// other than the caller's, on which calls a and b differ ("" when none):
// what two acts on no record of the caller's are about.
func (pr *proof) pointedApart(t *contract.Tool, a, b world.CallResult) string {
	cl := pr.p.c.Caller
	for _, n := range t.ParamNames() {
		tb, _, ok := pr.p.c.RefOf(t.Name, n)
		if !ok || t.LogOnlyParam(n) || cl != nil && tb == cl.Table || sameJSON(a.Args[n], b.Args[n]) {
			continue
		}
		return n
	}
	return ""
}

// valuesOf are the values of records (table:value).
func valuesOf(records []string) []string {
	out := make([]string, len(records))
	for i, x := range records {
		_, out[i], _ = strings.Cut(x, ":")
	}
	return out
}

// chained reports two tools one of which requires the other, at any depth.
func (pr *proof) chained(a, b string) bool {
	return pr.requiresTool(a, b, map[string]bool{}) || pr.requiresTool(b, a, map[string]bool{})
}

func (pr *proof) requiresTool(from, to string, seen map[string]bool) bool {
	if seen[from] {
		return false
	}
	seen[from] = true
	t := pr.p.c.Tool(from)
	if t == nil {
		return false
	}
	for _, req := range t.Requires {
		for _, n := range req.AnyOf {
			if n == to || pr.requiresTool(n, to, seen) {
				return true
			}
		}
	}
	return false
}

// askedRecord reports a record some write of the request already acted on.
func (pr *proof) askedRecord(writes []write, x string) bool {
	for _, w := range writes {
		if slices.Contains(w.records, x) {
			return true
		}
	}
	return false
}

// statedApart reports two calls of one tool that differ in an argument
// other than skip, every differing value of both handed to the caller: the
// caller gives each act its own values (two items of one order by their
// ids, two orders each with its reason). Read over values the caller
// states, not over words that ask.
func (pr *proof) statedApart(a, b world.CallResult, skip string) bool {
	differ := false
	for _, n := range slices.Sorted(maps.Keys(mergeKeys(a.Args, b.Args))) {
		if n == skip || sameJSON(a.Args[n], b.Args[n]) {
			continue
		}
		differ = true
		vals := map[string]bool{}
		ground.AddValues(vals, a.Args[n])
		ground.AddValues(vals, b.Args[n])
		for x := range vals {
			if x != "" && !handed(pr.sc, x) {
				return false
			}
		}
	}
	return differ
}

// mergeKeys is the union of two argument maps' keys.
func mergeKeys(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// droppedOptional are the call's arguments with one its schema does not
// require left out, for each such argument the call gives (an
// information-only one aside).
func (pr *proof) droppedOptional(call world.CallResult) []faithfulAlt {
	var out []faithfulAlt
	for _, n := range pr.optionalGiven(call) {
		args := maps.Clone(call.Args)
		delete(args, n)
		out = append(out, faithfulAlt{args, fmt.Sprintf("the world refuses %s with %s %s, an argument its schema does not require, and carries it out without it, no rule the scenario names failing: an agent that leaves out what the request does not need does what the caller asks", call.Tool, n, js(call.Args[n]))})
	}
	return out
}

// optionalGiven are the arguments the call gives that its tool's schema
// does not require (an information-only one aside).
func (pr *proof) optionalGiven(call world.CallResult) []string {
	t := pr.p.c.Tool(call.Tool)
	if t == nil {
		return nil
	}
	req := t.Required()
	var out []string
	for _, n := range slices.Sorted(maps.Keys(call.Args)) {
		if !slices.Contains(req, n) && !t.LogOnlyParam(n) && call.Args[n] != nil {
			out = append(out, n)
		}
	}
	return out
}

// shownOmitted are the call's arguments with one its schema offers and the
// call leaves out given a value an earlier answer on path shows for it
// (under its own name, or the column it names): the guardian id a
// guardian's verification answers with, which a booking for the child
// needs.
func (pr *proof) shownOmitted(call world.CallResult, path []world.CallResult) []faithfulAlt {
	t := pr.p.c.Tool(call.Tool)
	if t == nil {
		return nil
	}
	var out []faithfulAlt
	for _, n := range t.ParamNames() {
		if _, given := call.Args[n]; given || t.LogOnlyParam(n) {
			continue
		}
		keys := []string{n, strings.TrimSuffix(n, "s")}
		if _, col, ref := pr.p.c.RefOf(t.Name, n); ref {
			keys = append(keys, col)
		}
		seen := map[string]bool{}
		for _, r := range path {
			if !r.OK {
				continue
			}
			eachKeyed(r.Result, func(k string, v any) {
				if !slices.Contains(keys, k) || seen[ground.Text(v)] || len(out) >= maxAlternatives {
					return
				}
				seen[ground.Text(v)] = true
				args := maps.Clone(call.Args)
				args[n] = v
				out = append(out, faithfulAlt{args, fmt.Sprintf("the world refuses %s without %s, and carries it out with %s %s, which an earlier answer shows, no rule the scenario names failing: a right agent passes what the world hands it", call.Tool, n, n, js(v))})
			})
		}
	}
	return out
}

// faithfulAlt is the act with what the case gives in place of what it
// sends; why says so, for the refusal's reader, when the world carries it
// out.
type faithfulAlt struct {
	args map[string]any
	why  string
}

// faithfulAlternatives are the act's arguments with one value the caller
// never gives replaced by a value the path shows for it: a number an earlier
// answer gives under a key that shares a word with the value's own (the
// amount the bill says), or that the world's refusal of the act names (the
// total it charges); or, for an argument whose value is another argument's
// too (a flight from JFK to JFK), a value the caller hands that the act
// leaves out. A value handed to the caller, for one argument only, is stated.
func (pr *proof) faithfulAlternatives(call world.CallResult, path []world.CallResult) []faithfulAlt {
	t := pr.p.c.Tool(call.Tool)
	if t == nil {
		return nil
	}
	used := map[string]int{}
	for n, v := range call.Args {
		if s, ok := scalarText(v); ok && !t.LogOnlyParam(n) {
			used[s]++
		}
	}
	var out []faithfulAlt
	add := func(label, was, now string, args map[string]any) bool {
		out = append(out, faithfulAlt{args, fmt.Sprintf("the world refuses %s with %s %s, which the caller never gives for it (instruction, opening), and carries it out with %s %s, the value the case gives there, no rule the scenario names failing", call.Tool, label, was, label, now)})
		return len(out) >= maxAlternatives
	}
	for _, n := range slices.Sorted(maps.Keys(call.Args)) {
		if t.LogOnlyParam(n) {
			continue
		}
		for _, lf := range numberLeaves(n, n, call.Args[n], nil) {
			one := ground.Text(lf.v)
			if handed(pr.sc, one) {
				continue
			}
			set := map[string]bool{}
			for _, r := range path {
				if r.OK {
					wordKeyedNumbers(set, r.Result, lf.key)
				}
			}
			for _, m := range numeral.FindAllString(call.Error, -1) {
				set[m] = true
			}
			for _, c := range slices.Sorted(maps.Keys(set)) {
				if c == one {
					continue
				}
				args := maps.Clone(call.Args)
				args[n] = replaceAt(call.Args[n], lf.at, retype(c, lf.v))
				if add(lf.label, one, c, args) {
					return out
				}
			}
		}
		one, ok := scalarText(call.Args[n])
		if !ok || one == "" || used[one] < 2 {
			continue
		}
		set := map[string]bool{}
		for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
			for _, w := range tokens(text) {
				if w = trimToken(w); w != "" && used[w] == 0 && sameShape(w, one) {
					set[w] = true
				}
			}
		}
		for _, c := range slices.Sorted(maps.Keys(set)) {
			args := maps.Clone(call.Args)
			args[n] = retype(c, call.Args[n])
			if add(n, one, c, args) {
				return out
			}
		}
	}
	return out
}

// numeral matches a number written in text.
var numeral = regexp.MustCompile(`-?[0-9]+(\.[0-9]+)?`)

// leaf is a number inside an argument: where it is (at: map keys and list
// indexes), the key it is under, and a label for a sentence.
type leaf struct {
	at         []any
	key, label string
	v          any
}

// numberLeaves are the numbers of an argument's value v, at any depth: key
// is the key v is under, root the argument's name.
func numberLeaves(root, key string, v any, at []any) []leaf {
	switch x := v.(type) {
	case map[string]any:
		var out []leaf
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, numberLeaves(root, k, x[k], append(slices.Clone(at), k))...)
		}
		return out
	case []any:
		var out []leaf
		for i, e := range x {
			out = append(out, numberLeaves(root, key, e, append(slices.Clone(at), i))...)
		}
		return out
	}
	if _, ok := number(v); !ok {
		return nil
	}
	label := root
	for _, a := range at {
		switch y := a.(type) {
		case int:
			label += fmt.Sprintf("[%d]", y)
		case string:
			label += "." + y
		}
	}
	return []leaf{{at: at, key: key, label: label, v: v}}
}

// replaceAt is v with the value at path set to nv (v itself is not changed).
func replaceAt(v any, at []any, nv any) any {
	if len(at) == 0 {
		return nv
	}
	switch x := v.(type) {
	case map[string]any:
		k, _ := at[0].(string)
		out := maps.Clone(x)
		out[k] = replaceAt(x[k], at[1:], nv)
		return out
	case []any:
		i, _ := at[0].(int)
		out := slices.Clone(x)
		if i < len(out) {
			out[i] = replaceAt(x[i], at[1:], nv)
		}
		return out
	}
	return v
}

// scalarText is v as text when it is a scalar.
func scalarText(v any) (string, bool) {
	switch v.(type) {
	case map[string]any, []any, nil:
		return "", false
	}
	return ground.Text(v), true
}

// sameShape reports two words written alike: the same length, letters where
// letters are and digits where digits are, the same case (JFK and LAX).
func sameShape(a, b string) bool {
	ra, rb := []rune(a), []rune(b)
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if class(ra[i]) != class(rb[i]) {
			return false
		}
	}
	return true
}

func class(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return 1
	case r >= 'A' && r <= 'Z':
		return 2
	case r >= 'a' && r <= 'z':
		return 3
	}
	return 4
}

// wordKeyedNumbers adds to set the numbers of a JSON document found under a
// key that shares a word (three letters or more) with arg: "amount" and
// "amount_due".
func wordKeyedNumbers(set map[string]bool, raw json.RawMessage, arg string) {
	want := map[string]bool{}
	for _, w := range strings.Split(arg, "_") {
		if len(w) >= 3 {
			want[strings.ToLower(w)] = true
		}
	}
	eachKeyed(raw, func(k string, e any) {
		if _, ok := number(e); !ok {
			return
		}
		for _, w := range strings.Split(strings.ToLower(k), "_") {
			if want[w] {
				set[ground.Text(e)] = true
			}
		}
	})
}

// callLaterOnly refuses, without a database, a call answered call-later
// whose solution calls a tool that changes state or hands over other than
// the use case's call-back tool.
func (p *Prover) callLaterOnly(sc *scenario.Scenario, u *contract.UseCase) []Refusal {
	if sc.Outbound == nil || sc.Outbound.AnsweredBy != scenario.CallLater || u == nil || u.CallLater == "" {
		return nil
	}
	var rs []Refusal
	for i, c := range sc.Solution {
		t := p.c.Tool(c.Tool)
		if t == nil || c.Tool == u.CallLater {
			continue
		}
		if (t.ChangesState != nil && *t.ChangesState) || t.EndsConversation {
			rs = append(rs, Refusal{Gate: GateStatic, Code: CodeCallLater, Message: fmt.Sprintf("solution step %d calls %s on a call answered call-later: a callee who asks to be called back gets the callback (%s) and the identification booking it needs, nothing more", i+1, c.Tool, u.CallLater)})
		}
	}
	return rs
}

// unaskedValue reads, for a success, each value a state-changing call sets
// on the record it names (its setting) that the caller never states: when
// the record held another value before the call, the solution is played
// again with that value kept, and a world that then ends otherwise shows
// the value changes what the caller never asked to change. A kept value
// the world refuses is one the act needs changed: which one is the
// caller's choice (unstated-choice), not this gate's. It sets
// pr.unaskedVal and pr.keptValue.
func (pr *proof) unaskedValue(ctx context.Context) error {
	type candidate struct {
		i   int // solution step
		st  setting
		col string
		v   any
	}
	var cands []candidate
	for i, r := range pr.results {
		if !r.OK || !pr.p.stateChanging(r) {
			continue
		}
		for _, st := range pr.p.settings(r) {
			for k, col := range st.cols {
				// An empty value is none to state: a cleared field (an
				// address without a second line) is read with the values
				// the caller states beside it.
				if v := ground.Text(st.vals[k]); v != "" && !pr.statedOf(r.Tool, v) {
					cands = append(cands, candidate{i, st, col, st.vals[k]})
				}
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	calls := pr.solutionCalls()
	setup := pr.setup(ctx)
	// One run reads what each record holds before its call, and the world
	// the solution ends in.
	held := make([]any, len(cands))
	var end world.Snapshot
	err := pr.p.w.Pair(ctx, setup, func(cp *world.Copy, _ *world.Before) error {
		clear(held)
		for j, c := range calls {
			for k, cd := range cands {
				if cd.i != j {
					continue
				}
				row, err := cd.st.record(ctx, cp)
				if err != nil {
					return err
				}
				if was := row[cd.col]; was != nil && ground.Text(was) != ground.Text(cd.v) {
					held[k] = was
				}
			}
			if r := cp.Call(ctx, c.Tool, c.Args); r.Crash && infrastructure(r.Err) {
				return r.Err
			}
		}
		var err error
		end, err = cp.Snapshot(ctx)
		return err
	})
	if err != nil {
		return err
	}
	runs := 0
	for k, cd := range cands {
		if held[k] == nil {
			continue
		}
		if runs >= maxChoiceRuns {
			return nil
		}
		runs++
		alt := slices.Clone(calls)
		alt[cd.i].Args = maps.Clone(calls[cd.i].Args)
		alt[cd.i].Args[cd.col] = retype(ground.Text(held[k]), cd.v)
		var changed []string
		var results []world.CallResult
		err := pr.p.w.Pair(ctx, setup, func(cp *world.Copy, _ *world.Before) error {
			changed = nil
			results = playSegments(ctx, cp, segment{alt, true})
			for _, r := range results {
				if r.Crash && infrastructure(r.Err) {
					return r.Err
				}
				if !r.OK {
					return nil
				}
			}
			now, err := cp.Snapshot(ctx)
			if err != nil {
				return err
			}
			changed = world.ChangedTables(end, now)
			return nil
		})
		if err != nil {
			return err
		}
		if len(changed) == 0 {
			continue
		}
		r := pr.results[cd.i]
		pr.unaskedVal = fmt.Sprintf("solution step %d (%s) takes %s %s where %s %s's %s is %s, and the caller never asks for that value (instruction, opening); with %s %s kept, the world carries the solution out and ends otherwise (%s differ): the act changes what the caller never asked to change; hand the caller the value if they want it, or keep the record's own", cd.i+1, r.Tool, cd.col, js(cd.v), strings.TrimSuffix(cd.st.table, "s"), ground.Text(cd.st.key), cd.col, js(held[k]), cd.col, js(held[k]), strings.Join(changed, ", "))
		pr.keptValue = &Run{Gate: GateOutcome, Counterfactual: KeptValue, Calls: steps(results),
			Note: fmt.Sprintf("step %d with %s %s, as the record holds it: %s end otherwise", cd.i+1, cd.col, js(held[k]), strings.Join(changed, ", "))}
		return nil
	}
	return nil
}

// stated reports whether the caller states v (instruction, opening) as a
// value is said aloud: handed word for word, or written with other case and
// with underscores, hyphens and spaces for one another ("basic economy"
// states basic_economy; "basic" or "basiceconomy" do not). The use case's
// own text, which an instruction may quote to say what the case is about
// ("a reservation that is not basic economy"), states nothing.
func (pr *proof) stated(v string) bool {
	return statedIn(v, pr.callerWords()...)
}

// wanted reports whether the caller states v in a sentence with a word of
// wanting ("If asked, they want: reason …", "they would like it sent to
// …"), not only in one that mentions it ("their sister lives at …", "a
// neighbour once said …").
func (pr *proof) wanted(v string) bool {
	own := pr.ownText()
	for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
		for _, s := range fullStop.Split(text, -1) {
			// The use case's own text states nothing ("… the user no
			// longer needs or ordered by mistake"), but its words of
			// wanting ("a customer asks how much …") still ask.
			if own == nil && !statedIn(v, s) || own != nil && !statedIn(v, own.ReplaceAllString(s, " ")) {
				continue
			}
			if wantedBefore(s) {
				continue // what they wanted last week
			}
			var words []string
			for _, w := range tokens(s) {
				words = append(words, strings.ToLower(trimToken(w)))
			}
			for i, w := range words {
				if wanting[w] && !(i > 0 && someoneElse[strings.TrimSuffix(strings.TrimSuffix(words[i-1], "'s"), "s")]) {
					return true
				}
				// A callee rung about their record gives, when asked,
				// the choices the act takes (which card pays): theirs to
				// make, as an inbound caller's wish is.
				if pr.sc.Outbound != nil && (w == "give" || w == "gives") {
					return true
				}
			}
		}
	}
	return false
}

// someoneElse are the people other than the caller whose wishes the
// caller's words may report ("their friend wants a CMPT"): what they want
// is not the caller's request.
var someoneElse = map[string]bool{"friend": true, "brother": true, "sister": true, "neighbour": true, "neighbor": true,
	"colleague": true, "cousin": true, "boss": true, "roommate": true, "flatmate": true, "coworker": true, "co-worker": true}

// statedIn is stated over texts.
func statedIn(v string, texts ...string) bool {
	if handedIn(v, texts...) {
		return true
	}
	if isNumber(v) {
		return false // handed reads numbers as numbers
	}
	words := spokenWords(v)
	if len(words) == 0 {
		return false
	}
	return slices.ContainsFunc(texts, spokenPattern(words).MatchString)
}

// spokenPattern matches words as a caller says them: in any case, joined by
// spaces, underscores or hyphens.
func spokenPattern(words []string) *regexp.Regexp {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = regexp.QuoteMeta(w)
	}
	return regexp.MustCompile(`(?i)(^|[^\pL\pN_])` + strings.Join(q, `[\s_-]+`) + `($|[^\pL\pN_])`)
}

// statedOf is stated for a value tool sends: where v is one of a
// parameter's listed values, a longer one of them said ("basic economy")
// does not state v ("economy").
func (pr *proof) statedOf(tool, v string) bool {
	texts := pr.callerWords()
	t := pr.p.c.Tool(tool)
	if t == nil {
		return statedIn(v, texts...)
	}
	words := len(spokenWords(v))
	for _, n := range t.ParamNames() {
		list := t.Enum(n)
		if !slices.ContainsFunc(list, func(e any) bool { return ground.Text(e) == v }) {
			continue
		}
		texts = slices.Clone(texts)
		for _, e := range list {
			if w := spokenWords(ground.Text(e)); len(w) > words {
				re := spokenPattern(w)
				for i := range texts {
					texts[i] = re.ReplaceAllString(texts[i], " ")
				}
			}
		}
		break
	}
	return statedIn(v, texts...)
}

// spokenWords are v's words: the runs between underscores, hyphens and
// white space.
func spokenWords(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == '_' || r == '-' || unicode.IsSpace(r) })
}

// callerWords are the instruction and the opening without the use case's
// own text, which an instruction may carry ("at most 2 GB at the plan's
// price"): that is the contract's, the same for every caller, and states
// nothing the caller wants. Read once per proof; stated asks it often.
func (pr *proof) callerWords() []string {
	if pr.words == nil {
		pr.words = []string{pr.sc.Instruction, pr.sc.Persona.Opening}
		if re := pr.ownText(); re != nil {
			for i, text := range pr.words {
				pr.words[i] = re.ReplaceAllString(text, " ")
			}
		}
	}
	return pr.words
}

// ownText matches the use case's own text as an instruction may carry it;
// nil when the use case has none.
func (pr *proof) ownText() *regexp.Regexp {
	if !pr.ownRead {
		pr.ownRead = true
		if u := pr.p.c.UseCase(pr.sc.UseCase); u != nil {
			if own := strings.TrimSuffix(strings.TrimSpace(u.Text), "."); own != "" {
				pr.own = caseless(own)
			}
		}
	}
	return pr.own
}

// caseless matches text written as s, in any case.
func caseless(s string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)` + regexp.QuoteMeta(s))
}

// saidQuoted finds the values an instruction or opening puts in quotes; an
// empty pair ("") is a value too, so the quotes after it pair up as written.
var saidQuoted = regexp.MustCompile(`"([^"\n]*)"|“([^”\n]*)”`)

// unusedStated are the values the caller states in quotes
// (instruction, opening) that no call of the conversation sends, no answer
// shows and no misremembered fact names. A value the caller hands for the
// request that the reference never carries out is one a right agent would
// send: alternatives offers it in place of a value the caller never states,
// so checks that demand the reference's value instead are read as a choice
// the caller cannot make. Spoken lines ("they say: ...") are sentences, not
// values, and are left out (spoken).
func (pr *proof) unusedStated() []string {
	if !pr.unusedDone {
		pr.unused, pr.unusedDone = pr.findUnusedStated(), true
	}
	return pr.unused
}

func (pr *proof) findUnusedStated() []string {
	var vals []string
	for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
		for _, m := range saidQuoted.FindAllStringSubmatch(text, -1) {
			v := strings.TrimSpace(m[1] + m[2])
			if v != "" && spoken(v) {
				continue
			}
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	used := map[string]bool{}
	// A success's tempting calls are the wrong move, so only its solution
	// carries what the caller asks; elsewhere the tempting act is the
	// request carried out.
	carried := [][]scenario.Call{pr.sc.Solution}
	if pr.sc.Expects != scenario.OutcomeSucceed {
		carried = append(carried, pr.sc.Tempting, pr.sc.Missing)
	}
	for _, calls := range carried {
		for _, c := range calls {
			ground.AddValues(used, map[string]any(c.Args))
		}
	}
	// An answer that shows a value the caller states uses it, unless it is
	// a number: an amount an answer shows (a fare's wait-time charge) and
	// the caller asks for is still one a call must send.
	shown := map[string]bool{}
	for _, r := range slices.Concat(pr.results, pr.also) {
		ground.AddValues(used, map[string]any(r.Args))
		leaves(shown, r.Result)
	}
	for v := range shown {
		if !isNumber(v) && v != "" {
			used[v] = true
		}
	}
	for _, m := range pr.sc.Misremembered {
		used[m.Said], used[m.Actual] = true, true
	}
	// A text is used where a sent value holds it (a street inside an
	// address line); a number only where one is that number, not where its
	// digits sit inside an id ("1" in "L1082").
	// A text is said as it is sent, or as words ("direct debit" for
	// direct_debit, in any case).
	spokenForm := strings.NewReplacer("_", " ", "-", " ")
	in := func(v string) bool {
		num := isNumber(v)
		sv := strings.ToLower(spokenForm.Replace(v))
		for u := range used {
			if num && numberEqual(u, v) || !num && (strings.Contains(u, v) || strings.Contains(strings.ToLower(spokenForm.Replace(u)), sv)) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, v := range vals {
		if !used[v] && (v == "" || !in(v)) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// numberEqual reports whether a and b are texts of the same number.
func numberEqual(a, b string) bool {
	x, ok1 := parseAmount(a)
	y, ok2 := parseAmount(b)
	return ok1 && ok2 && x == y
}

// spoken reports quoted text that reads as a line someone says rather than a
// value: more than twelve words, or a sentence's punctuation (a full stop,
// a question or an exclamation at its end, a colon or full stop before
// more words). An e-mail address or an amount is a value.
func spoken(v string) bool {
	return len(strings.Fields(v)) > 12 || strings.ContainsAny(v[len(v)-1:], ".!?") ||
		strings.Contains(v, ": ") || strings.Contains(v, ". ")
}

// isNumber reports text that reads as a JSON number ("12.50").
func isNumber(s string) bool {
	var f float64
	return json.Unmarshal([]byte(s), &f) == nil
}
