package builtin

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// subGoals picks the contract's code-settled checks that can have teeth for
// this outcome, when the case can fill their parameters:
//
//   - succeed: checks of what the act does (named by its verbs: a
//     cancellation is seen by order_cancelled), a look-up check when the act
//     is a retrieval, and parameterless rule checks (identity before account
//     data) that the solution without its preconditions breaks;
//   - refuse: look-up checks of the record (the world leaves it unchanged,
//     so a check that it is unchanged would tell nothing apart);
//   - ask: checks that the record or the caller is left alone (the tempting
//     act would go through), and parameterless rule checks;
//   - escalate: checks of the handoff.
//
// What the gates still find vacuous is dropped when they say so.
func (p *policy) subGoals(bk brief.Bucket, solution, tempting []scenario.Call, b ground.Bound) (refs []scenario.SubGoalRef, seen bool) {
	vals := p.values(bk, solution, tempting, b)
	act := p.c.Tool(bk.Spec.Tool)
	cell := plan.ToolCell(p.c, act)
	retrieve := cell.Operation == "retrieve"
	object := strings.TrimSuffix(cell.Object, "s")
	nouns := map[string]bool{}
	for _, t := range p.c.Tables {
		for _, w := range plan.Words(t.Name) {
			nouns[strings.TrimSuffix(w, "s")] = true
		}
	}
	verbs, objects := toolWords(bk.Spec.Tool, nouns)
	handoff, _ := toolWords(bk.Spec.Handoff, nouns)
	mine := map[string]bool{strings.TrimSuffix(bk.Spec.Table, "s"): true}
	if cl := p.c.Caller; cl != nil {
		mine[strings.TrimSuffix(cl.Table, "s")] = true
	}
	identity := p.identityChecks()
	// A rule about identifying the caller before account data has teeth
	// only where a call names the caller's records: a look-up of a product
	// or a plan is nobody's account data, and the check would hold on every
	// run.
	binds := p.binds(bk.Spec)
	account := p.accountData(solution, binds)
	if bk.Outcome == scenario.OutcomeAsk {
		account = p.accountData(tempting, binds)
	}
	// An ask's check that a record is left alone tells the tempting act
	// apart only when the act writes that record: the tables its name
	// names (cancel_pending_order: orders), else the case's and the
	// caller's.
	_, actObjects := toolWords(bk.Spec.Tool, nouns)
	// Whether the solution reads the record itself: only then can a check
	// that it was looked up hold.
	looksUp := false
	for _, c := range solution {
		if t := p.c.Tool(c.Tool); t != nil {
			if cc := plan.ToolCell(p.c, t); cc.Operation == "retrieve" && strings.TrimSuffix(cc.Object, "s") == object {
				looksUp = true
			}
		}
	}
	type cand struct {
		ref   scenario.SubGoalRef
		score int
		// aside: where the use case keeps some of the act's arguments
		// (Binding.Keep), a check of what the act does that takes one of
		// them, or none it changes (an argument neither kept nor bound
		// to a table's rows: a choice, a list): a check of a flight
		// change, or of the bags, where the case changes the cabin.
		aside bool
	}
	var cs []cand
	kept, changes := map[string]bool{}, map[string]bool{}
	keeps := false
	for _, bd := range binds.For(bk.Spec.Tool) {
		kept[bd.Param], changes[bd.Param] = bd.Keep, !bd.Keep && bd.Table == ""
		keeps = keeps || bd.Keep
	}
	aside := func(sg contract.SubGoal) bool {
		about := false
		for n := range sg.Params {
			if kept[n] {
				return true
			}
			about = about || changes[n]
		}
		return !about
	}
	for _, sg := range p.c.SubGoals {
		if sg.Judged {
			continue
		}
		params, ok := fillParams(sg, vals)
		if !ok {
			continue
		}
		words := plan.Words(sg.Name)
		leaveAlone, lookup, about := false, false, false
		for _, w := range words {
			switch w {
			case "unchanged", "not", "untouched", "kept", "no":
				leaveAlone = true
			case "looked", "lookup", "viewed":
				lookup = strings.Contains(sg.Name, object)
			}
			about = about || mine[strings.TrimSuffix(w, "s")]
		}
		if len(actObjects) > 0 {
			about = overlap(words, actObjects) > 0
		}
		// What the check names of the act: its verbs count double.
		does, hands := 2*overlap(words, verbs)+overlap(words, objects), overlap(words, handoff)
		score := 0
		switch bk.Outcome {
		case scenario.OutcomeSucceed:
			switch {
			case leaveAlone || lookup:
				if retrieve && lookup {
					score = 3
				}
			case does > 0 && !retrieve:
				// The check that names the most of what the act does:
				// a fee waiver is seen by cancellation_fee_waived, not by
				// trip_cancelled.
				score = 10 + does
			case identity[sg.Name] && p.gated(solution) && account:
				score = 1
			}
		case scenario.OutcomeRefuse:
			if lookup && !leaveAlone && looksUp {
				score = 2
			}
		case scenario.OutcomeAsk:
			switch {
			case leaveAlone && about && hands == 0 && !retrieve:
				score = 3
			case identity[sg.Name] && account:
				score = 1
			}
		case scenario.OutcomeEscalate:
			if hands > 0 && !leaveAlone {
				score = 3
			}
		}
		if score > 0 {
			cs = append(cs, cand{scenario.SubGoalRef{Name: sg.Name, Params: params}, score, keeps && score > 10 && aside(sg)})
		}
	}
	if slices.ContainsFunc(cs, func(c cand) bool { return c.score > 10 && !c.aside }) {
		// A check of what the act does that takes nothing the case keeps
		// is the one about the case.
		cs = slices.DeleteFunc(cs, func(c cand) bool { return c.aside })
	}
	if id, ok := strings.CutPrefix(bk.Spec.Refusal, plan.RuleRefusal); ok && (bk.Outcome == scenario.OutcomeRefuse || bk.Outcome == scenario.OutcomeEscalate) {
		// The world would carry the act out; the rule is what says no, so
		// its check is what the case is about.
		if r := p.c.Rule(id); r != nil && r.Check != "" {
			if sg := p.c.SubGoal(r.Check); sg != nil {
				if params, ok := fillParams(*sg, vals); ok {
					cs = append(cs, cand{ref: scenario.SubGoalRef{Name: sg.Name, Params: params}, score: 20})
				}
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].ref.Name < cs[j].ref.Name
	})
	for i := 0; i < len(cs) && i < 3; i++ {
		if cs[i].score > 10 && cs[i].score < cs[0].score {
			continue
		}
		refs = append(refs, cs[i].ref)
		seen = seen || cs[i].score >= 3
	}
	return refs, seen
}

// accountData reports a call, other than one that identifies the caller,
// that names a record of a table someone owns (the caller's own rows and
// what hangs off them).
func (p *policy) accountData(calls []scenario.Call, binds ground.Bindings) bool {
	cl := p.c.Caller
	for _, c := range calls {
		t := p.c.Tool(c.Tool)
		if t == nil || cl != nil && slices.Contains(cl.From, c.Tool) {
			continue
		}
		for k := range c.Args {
			if tb, _, ok := p.g.RecordParam(binds, t, k); ok && p.g.OwnedTable(tb) {
				return true
			}
		}
	}
	return false
}

// identityChecks are the checks of rules about identifying the caller
// first, when they take no params: a solution without its preconditions
// breaks them, so in a success or an ask they have teeth.
func (p *policy) identityChecks() map[string]bool {
	return p.identityRules(func(sg *contract.SubGoal) bool { return len(sg.Params) == 0 })
}

// identityRules are the checks of rules about identifying the caller first
// (the rule's text shares a word with the tools that identify the caller)
// whose sub-goal keep accepts.
func (p *policy) identityRules(keep func(*contract.SubGoal) bool) map[string]bool {
	out := map[string]bool{}
	cl := p.c.Caller
	if cl == nil {
		return out
	}
	var words []string
	for _, t := range cl.From {
		for _, w := range plan.Words(t) {
			if len(w) > 3 {
				words = append(words, w)
			}
		}
	}
	for _, r := range p.c.Rules {
		if sg := p.c.SubGoal(r.Check); sg != nil && keep(sg) && overlap(plan.Words(r.Text), words) > 0 {
			out[r.Check] = true
		}
	}
	return out
}

// values are what a case can fill a check's parameters from: its caller and
// target rows, then its calls' arguments, and the target's key under every
// parameter name a tool uses for it ("order_id").
func (p *policy) values(bk brief.Bucket, solution, tempting []scenario.Call, b ground.Bound) map[string]any {
	vals := map[string]any{}
	for _, r := range []ground.Row{b.Caller, b.Target} {
		for k, v := range r {
			vals[k] = v
		}
	}
	for _, calls := range [][]scenario.Call{tempting, solution} {
		for _, c := range calls {
			for k, v := range c.Args {
				vals[k] = v
			}
		}
	}
	if pk := p.g.PK(bk.Spec.Table); pk != "" {
		for _, c := range append(append([]scenario.Call{}, solution...), tempting...) {
			t := p.c.Tool(c.Tool)
			for k, v := range c.Args {
				if tb, _, ok := p.g.RecordParam(p.binds(bk.Spec), t, k); ok && tb == bk.Spec.Table {
					vals[k] = v
				}
			}
		}
	}
	return vals
}

func fillParams(sg contract.SubGoal, vals map[string]any) (map[string]any, bool) {
	params := map[string]any{}
	for name, typ := range sg.Params {
		v, have := vals[name]
		if !have || v == nil {
			return nil, false
		}
		if typ == "string" {
			v = ground.Text(v)
		}
		params[name] = v
	}
	return params, true
}

// toolWords splits a tool's name into what it does and what it does it to
// (the nouns of the domain's tables): "cancel_pending_order" -> [cancel,
// pending], [order]; "report_lost_item" -> [], [report, lost, item].
func toolWords(tool string, nouns map[string]bool) (verbs, objects []string) {
	for _, w := range plan.Words(tool) {
		switch {
		case len(w) <= 2 || generic[w]:
		case nouns[strings.TrimSuffix(w, "s")]:
			objects = append(objects, w)
		default:
			verbs = append(verbs, w)
		}
	}
	return verbs, objects
}

// overlap counts the words akin to one of those.
func overlap(words, those []string) int {
	n := 0
	for _, w := range words {
		for _, v := range those {
			if akin(w, v) {
				n++
				break
			}
		}
	}
	return n
}

// akin reports two forms of one word: the shorter (three letters or more)
// begins the longer ("add", "added"), or they share their first five
// letters ("cancel", "cancellation") or four of five or more ("apply",
// "applied").
func akin(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) >= 3 && strings.HasPrefix(b, a) {
		return true
	}
	n := 0
	for n < len(a) && a[n] == b[n] {
		n++
	}
	return n >= 5 || (n >= 4 && len(a) >= 5)
}

// generic words say nothing about what a tool does.
var generic = map[string]bool{"get": true, "details": true, "info": true, "by": true, "the": true, "for": true, "and": true}

// fallback adds the built-in checks that settle this outcome, if not present:
// for a success, that its calls kept their preconditions (and, when no check
// of the contract speaks for the act, that it was called); otherwise that
// the act was never attempted (and, for an escalation without a handoff
// check, that the handoff was made).
func (p *policy) fallback(sc *scenario.Scenario, bk brief.Bucket, except map[string]bool) bool {
	have := map[string]bool{}
	settled := 0
	for _, s := range sc.SubGoals {
		have[s.Name] = true
		if sg := p.c.SubGoal(s.Name); sg == nil || !sg.Judged {
			settled++
		}
	}
	var add []scenario.SubGoalRef
	switch bk.Outcome {
	case scenario.OutcomeSucceed:
		if settled == 0 {
			last := sc.Solution[len(sc.Solution)-1]
			add = append(add, scenario.SubGoalRef{Name: "called", Params: map[string]any{"tool": last.Tool, "args": keyArgs(p.g, p.binds(bk.Spec), last)}})
		}
		if p.gated(sc.Solution) {
			add = append(add, scenario.SubGoalRef{Name: "requires_kept"})
		}
	default:
		if len(sc.Tempting) > 0 {
			t := sc.Tempting[len(sc.Tempting)-1]
			add = append(add, scenario.SubGoalRef{Name: "not_called", Params: map[string]any{"tool": t.Tool, "args": keyArgs(p.g, p.binds(bk.Spec), t)}})
		}
		if bk.Outcome == scenario.OutcomeEscalate && settled == 0 && len(sc.Solution) > 0 {
			last := sc.Solution[len(sc.Solution)-1]
			add = append(add, scenario.SubGoalRef{Name: "called", Params: map[string]any{"tool": last.Tool, "args": map[string]any{}}})
		}
	}
	changed := false
	for _, a := range add {
		if !have[a.Name] && !except[a.Name] {
			sc.SubGoals = append(sc.SubGoals, a)
			changed = true
		}
	}
	return changed
}

// effectChecks adds row_written over the tables the solution's last
// state-changing call may write (by its handler's SQL), and reports whether
// it added it.
func (p *policy) effectChecks(sc *scenario.Scenario) bool {
	if slices.ContainsFunc(sc.SubGoals, func(s scenario.SubGoalRef) bool { return s.Name == prove.RowWritten }) {
		return false
	}
	for i := len(sc.Solution) - 1; i >= 0; i-- {
		t := p.c.Tool(sc.Solution[i].Tool)
		if t == nil {
			continue
		}
		if ws := p.c.Writes(t); len(ws) > 0 {
			tables := make([]any, len(ws))
			for k, w := range ws {
				tables[k] = w
			}
			sc.SubGoals = append(sc.SubGoals, scenario.SubGoalRef{Name: prove.RowWritten, Params: map[string]any{"tables": tables}})
			return true
		}
	}
	return false
}

// gated reports calls of which some come after what they require.
func (p *policy) gated(calls []scenario.Call) bool {
	for i, c := range calls {
		t := p.c.Tool(c.Tool)
		if t == nil {
			continue
		}
		for _, req := range t.Requires {
			for _, e := range calls[:i] {
				for _, name := range req.AnyOf {
					if e.Tool == name {
						return true
					}
				}
			}
		}
	}
	return false
}

// keyArgs keeps the arguments of a call that name records.
func keyArgs(g *ground.Graph, bs ground.Bindings, c scenario.Call) map[string]any {
	out := map[string]any{}
	t := g.C.Tool(c.Tool)
	if t == nil {
		return out
	}
	for k, v := range c.Args {
		if _, _, ok := g.RecordParam(bs, t, k); ok {
			out[k] = v
		}
	}
	return out
}

// settle finishes a scenario's words from its checks: the judged sub-goals
// that fit the outcome (marked judged), the rules whose checks it carries,
// and a tests line that says only what the checks assert.
func (p *policy) settle(sc *scenario.Scenario) {
	var kept []scenario.SubGoalRef
	for _, s := range sc.SubGoals {
		if !p.judged(s.Name) {
			s.Judged = false
			kept = append(kept, s)
		}
	}
	sc.SubGoals = kept
	names := map[string]bool{}
	for _, s := range sc.SubGoals {
		names[s.Name] = true
	}
	sc.Rules = nil
	for _, r := range p.c.Rules {
		if r.Check != "" && names[r.Check] {
			sc.Rules = append(sc.Rules, r.ID)
		}
	}
	var asserted []string
	for _, s := range sc.SubGoals {
		asserted = append(asserted, p.phrase(s))
	}
	var judged []string
	for _, sg := range p.c.SubGoals {
		if !sg.Judged || len(sg.Params) > 0 {
			continue
		}
		refusal := false
		for _, w := range plan.Words(sg.Name + " " + sg.What) {
			refusal = refusal || akin(w, "refuse")
		}
		if refusal && sc.Expects == scenario.OutcomeSucceed || !prove.JudgedAbout(&sg, sc) {
			continue
		}
		sc.SubGoals = append(sc.SubGoals, scenario.SubGoalRef{Name: sg.Name, Judged: true})
		judged = append(judged, lowerFirst(strings.TrimSuffix(sg.What, ".")))
	}
	if sc.Outbound != nil {
		// What a call the callee did not take needs judged: nothing said
		// to the wrong ears, a message that can be acted on.
		for _, name := range outboundJudged(sc.Outbound.AnsweredBy) {
			if slices.ContainsFunc(sc.SubGoals, func(r scenario.SubGoalRef) bool { return r.Name == name }) {
				continue
			}
			sc.SubGoals = append(sc.SubGoals, scenario.SubGoalRef{Name: name, Judged: true})
			judged = append(judged, lowerFirst(strings.TrimSuffix(p.judgedWhat(name), ".")))
		}
	}
	sc.Tests = "passes when " + strings.Join(asserted, "; ")
	if len(judged) > 0 {
		sc.Tests += "; judged later: " + strings.Join(judged, "; ")
	}
}

// judged reports a sub-goal graded later by a model: the contract's judged
// ones, and the outbound built-ins where the contract has none of that name.
func (p *policy) judged(name string) bool {
	if sg := p.c.SubGoal(name); sg != nil {
		return sg.Judged
	}
	for _, b := range prove.OutboundBuiltins {
		if b.Name == name {
			return true
		}
	}
	return false
}

// phrase says what one code-settled check asserts.
func (p *policy) phrase(s scenario.SubGoalRef) string {
	tool, _ := s.Params["tool"].(string)
	args, _ := s.Params["args"].(map[string]any)
	on := ""
	if len(args) > 0 {
		on = " on " + describe(args)
	}
	tool = strings.ReplaceAll(tool, "_", " ")
	switch s.Name {
	case "called":
		return fmt.Sprintf("the agent calls %s%s and the world answers ok", tool, on)
	case "not_called":
		return fmt.Sprintf("the agent never attempts %s%s", tool, on)
	case "requires_kept":
		return "every call comes after the calls it requires"
	case prove.RowWritten:
		var names []string
		if ts, ok := s.Params["tables"].([]any); ok {
			for _, t := range ts {
				names = append(names, strings.ReplaceAll(ground.Text(t), "_", " "))
			}
		}
		return fmt.Sprintf("the conversation leaves %s changed", strings.Join(names, " or "))
	}
	sg := p.c.SubGoal(s.Name)
	if sg == nil {
		return s.Name
	}
	text := lowerFirst(strings.TrimSuffix(sg.What, "."))
	var ids []string
	for k, v := range s.Params {
		if strings.HasSuffix(k, "_id") {
			ids = append(ids, ground.Text(v))
		}
	}
	sort.Strings(ids)
	if len(ids) > 0 {
		text += " (" + strings.Join(ids, ", ") + ")"
	}
	return text
}

// correct changes a refused scenario as the gates' reasons say; false when
// nothing more can be done with this record (the outcome itself is not
// grounded, or nothing was left to change).
func (p *policy) correct(sc *scenario.Scenario, bk brief.Bucket, rs []brief.Refusal) bool {
	if oneRequest(sc, rs) {
		return true
	}
	changed := false
	drop := map[string]bool{}
	for _, r := range rs {
		switch {
		case r.SubGoal != "" && (r.Code == prove.CodeCheckFailed || r.Code == prove.CodeCheckBroken ||
			r.Code == prove.CodeBadParams || r.Code == prove.CodeVacuousCheck):
			drop[r.SubGoal] = true
		case r.Code == prove.CodeVacuous && len(sc.Solution) > 0:
			// Doing nothing passes: at least say the act must be made.
			last := sc.Solution[len(sc.Solution)-1]
			if !slices.ContainsFunc(sc.SubGoals, func(s scenario.SubGoalRef) bool { return s.Name == "called" }) {
				sc.SubGoals = append(sc.SubGoals, scenario.SubGoalRef{Name: "called", Params: map[string]any{"tool": last.Tool, "args": keyArgs(p.g, p.binds(bk.Spec), last)}})
				changed = true
			}
		case r.Code == prove.CodeEffectUnseen || r.Code == prove.CodeMissedCallUnchecked:
			// The contract's checks read only the call log (or rows the
			// seed already holds): check the tables the act (or the
			// missed call's log) writes.
			if p.effectChecks(sc) {
				changed = true
			}
		case r.Code == prove.CodeTemptingPasses || r.Code == prove.CodeNoSettledCheck:
			if p.fallback(sc, bk, nil) {
				changed = true
			}
		case r.Code == prove.CodeOutputNotInResults:
			if len(sc.Outputs) > 0 {
				sc.Outputs = nil
				changed = true
			}
		case r.Code == prove.CodeRuleBroken:
			if p.smallerAmount(sc) {
				changed = true
			}
		case r.Code == prove.CodeValueUnchecked || r.Code == prove.CodeRecordUnchecked:
			// The step counts in the request the refusal names: a later
			// request's checks are its own.
			view, then := sc, -1
			if r.Request > 1 && r.Request-2 < len(sc.Then) {
				view, then = sc.Requests()[r.Request-1], r.Request-2
			}
			fixed := p.checkValue(view, bk, r.Step-1, r.Arg)
			// The gate names one value a round; an act that takes several
			// (two days, a room, a head count) would use up the rounds one
			// value at a time. Check at once every other value of the step
			// that the caller asks for.
			fixed = p.checkAsked(view, bk, r.Step-1) || fixed
			if fixed {
				changed = true
				if then >= 0 {
					sc.Then[then].SubGoals = view.SubGoals
				}
			}
		case r.Gate == prove.GateOutcome:
			// The record does not ground the outcome: no check can fix it.
			return false
		}
	}
	if len(drop) > 0 {
		var kept []scenario.SubGoalRef
		for _, s := range sc.SubGoals {
			if !drop[s.Name] {
				kept = append(kept, s)
			}
		}
		sc.SubGoals = kept
		changed = true
		p.fallback(sc, bk, drop)
	}
	if changed {
		p.settle(sc)
	}
	return changed
}

// fromEffect gives each of the contract's checks the values the rehearsed
// act left: a param named like a column the act changed (or wrote in a row
// it added) takes the value that row holds after it, where the row is the
// check's own (its other params name it: the card whose limit it reads).
// A check filled from the case's rows before the act reads the old value
// (a limit of 1000 where the caller asks for 250), fails, and is dropped,
// leaving the value unchecked. diff is a rehearsal's, as the answer holds it.
func (p *policy) fromEffect(refs []scenario.SubGoalRef, diff any) {
	raw, err := json.Marshal(diff)
	if err != nil || diff == nil {
		return
	}
	var d world.StateDiff
	if json.Unmarshal(raw, &d) != nil {
		return
	}
	// Each row the act added or changed: the values it wrote, and the
	// whole row as it stands after (what names it).
	type written struct{ wrote, row map[string]any }
	var rows []written
	for _, t := range d.Tables {
		for _, r := range t.Added {
			rows = append(rows, written{r, r})
		}
		for _, ch := range t.Changed {
			wrote := map[string]any{}
			for _, c := range ch.Columns {
				wrote[c] = ch.After[c]
			}
			rows = append(rows, written{wrote, ch.After})
		}
	}
	for j, ref := range refs {
		if sg := p.c.SubGoal(ref.Name); sg == nil || sg.Judged || len(ref.Params) < 2 {
			continue
		}
		var params map[string]any
		for name, v := range ref.Params {
			// A row of the check's that holds the value as sent (the
			// charge to the card the caller picked) says the act wrote
			// it so: another row it wrote beside (the refund of the old
			// card) does not make it wrong. An amount booked with the
			// other sign (a payment posted as a credit of -40) is the
			// amount sent: the check states it as the caller does.
			if slices.ContainsFunc(rows, func(w written) bool {
				nv, wrote := w.wrote[name]
				return wrote && (ground.Text(nv) == ground.Text(v) || negated(nv, v)) && namesRow(w.row, ref.Params, name)
			}) {
				continue
			}
			for _, w := range rows {
				nv, wrote := w.wrote[name]
				if !wrote || ground.Text(nv) == ground.Text(v) || !namesRow(w.row, ref.Params, name) {
					continue
				}
				if params == nil {
					params = maps.Clone(ref.Params)
				}
				if _, isStr := v.(string); isStr {
					nv = ground.Text(nv)
				}
				params[name] = nv
				break
			}
		}
		if params != nil {
			refs[j].Params = params
		}
	}
}

// negated reports two non-zero numbers of one magnitude and opposite signs.
func negated(a, b any) bool {
	x, errA := strconv.ParseFloat(ground.Text(a), 64)
	y, errB := strconv.ParseFloat(ground.Text(b), 64)
	return errA == nil && errB == nil && x != 0 && x == -y
}

// namesRow reports whether a param of a check other than skip names row:
// the row holds its value.
func namesRow(row, params map[string]any, skip string) bool {
	for k, v := range params {
		if w, ok := row[k]; ok && k != skip && ground.Text(w) == ground.Text(v) {
			return true
		}
	}
	return false
}

// checkValue makes the check that the act was called also check the value
// the caller asks for: argument arg of solution step i joins the args of the
// `called` check of its tool (one is added when there is none).
func (p *policy) checkValue(sc *scenario.Scenario, bk brief.Bucket, i int, arg string) bool {
	if i < 0 || i >= len(sc.Solution) {
		return false
	}
	c := sc.Solution[i]
	v, ok := c.Args[arg]
	if !ok {
		return false
	}
	for j, s := range sc.SubGoals {
		if s.Name != "called" || s.Params["tool"] != c.Tool {
			continue
		}
		args, _ := s.Params["args"].(map[string]any)
		if !within(args, c.Args, arg) {
			continue // a check of the same tool on another record
		}
		if w, has := args[arg]; has && ground.Text(w) == ground.Text(v) {
			return false
		}
		// The params may be shared with a memoised draft: write new maps.
		args = maps.Clone(args)
		if args == nil {
			args = map[string]any{}
		}
		args[arg] = v
		params := maps.Clone(s.Params)
		params["args"] = args
		sc.SubGoals[j].Params = params
		return true
	}
	args := keyArgs(p.g, p.binds(bk.Spec), c)
	args[arg] = v
	sc.SubGoals = append(sc.SubGoals, scenario.SubGoalRef{Name: "called", Params: map[string]any{"tool": c.Tool, "args": args}})
	return true
}

// checkAsked joins to the `called` check of solution step i each checkable
// value of it the instruction has the caller ask for (quoted, as words says
// it). A string the gates vary as a code (prove.CodeLike: a short name such
// as a new surname) counts too: the gate names one value a round, and a
// case whose act takes three would spend every submission on them.
func (p *policy) checkAsked(sc *scenario.Scenario, bk brief.Bucket, i int) bool {
	if i < 0 || i >= len(sc.Solution) {
		return false
	}
	c := sc.Solution[i]
	t := p.c.Tool(c.Tool)
	if t == nil {
		return false
	}
	binds := p.binds(bk.Spec)
	changed := false
	for _, k := range sortedKeys(c.Args) {
		s, isStr := c.Args[k].(string)
		asCode := isStr && prove.CodeLike(s, t.Param(k))
		if asCode {
			if _, _, ref := p.g.RecordParam(binds, t, k); ref || t.LogOnlyParam(k) {
				asCode = false
			}
		}
		if !asCode && !p.checkable(binds, t, k, c.Args[k]) {
			continue
		}
		v := ground.Text(c.Args[k])
		if !strings.Contains(sc.Instruction, fmt.Sprintf("%q", v)) && !strings.Contains(sc.Instruction, fmt.Sprintf("%q", strings.ReplaceAll(v, "_", " "))) {
			continue
		}
		if p.checkValue(sc, bk, i, k) {
			changed = true
		}
	}
	return changed
}

// checkable reports an argument whose value a check of the call may hold
// the act to: an enumerated choice, an amount, a yes or no, a value its
// schema writes (a day, a code). Records are record-named's to read, free
// text a right agent may word otherwise, and log-only arguments are no
// one's to check.
func (p *policy) checkable(binds ground.Bindings, t *contract.Tool, k string, v any) bool {
	if _, _, ref := p.g.RecordParam(binds, t, k); ref || t.LogOnlyParam(k) {
		return false
	}
	return len(t.Enum(k)) > 0 || isNumber(v) || written(t, k)
}

// checkKept makes the check that a successful act was called also check
// each value of it the use case keeps (Binding.Keep: the cabin of a flight
// change), where checkable: the checks of what the act does are about what
// it changes, and an agent that changes the kept value too would pass them.
func (p *policy) checkKept(sc *scenario.Scenario, bk brief.Bucket) bool {
	i := slices.IndexFunc(sc.Solution, func(c scenario.Call) bool { return c.Tool == bk.Spec.Tool })
	if i < 0 {
		return false
	}
	t := p.c.Tool(bk.Spec.Tool)
	binds := p.binds(bk.Spec)
	changed := false
	for _, bd := range binds.For(t.Name) {
		if v, sent := sc.Solution[i].Args[bd.Param]; bd.Keep && sent && p.checkable(binds, t, bd.Param, v) && p.checkValue(sc, bk, i, bd.Param) {
			changed = true
		}
	}
	return changed
}

// within reports whether every arg but skip holds in args as the call sends it.
func within(args, sent map[string]any, skip string) bool {
	for k, w := range args {
		if k != skip && ground.Text(w) != ground.Text(sent[k]) {
			return false
		}
	}
	return true
}

// smallerAmount asks for one unit of every free amount (a number that names
// no record and is no enumerated value) a state-changing solution call
// takes, where a rule broke: an amount read off the world ("425" gigabytes)
// may be over a limit the rules set. The instruction and the sub-goals say
// the new amount.
func (p *policy) smallerAmount(sc *scenario.Scenario) bool {
	changed := false
	for i, c := range sc.Solution {
		t := p.c.Tool(c.Tool)
		if t == nil || t.ChangesState == nil || !*t.ChangesState {
			continue
		}
		for k, v := range c.Args {
			if _, _, ref := p.c.RefOf(t.Name, k); ref || len(t.Enum(k)) > 0 || !isNumber(v) || ground.Text(v) == "1" {
				continue
			}
			old := ground.Text(v)
			var one any = json.Number("1")
			switch v.(type) {
			case float64:
				one = float64(1)
			case int:
				one = 1
			case int64:
				one = int64(1)
			}
			sc.Solution[i].Args[k] = one
			sc.Instruction = strings.ReplaceAll(sc.Instruction, fmt.Sprintf("%q", old), `"1"`)
			for _, sg := range sc.SubGoals {
				if w, ok := sg.Params[k]; ok && ground.Text(w) == old {
					sg.Params[k] = one
				}
			}
			changed = true
		}
	}
	if changed {
		sc.Outputs = nil
	}
	return changed
}
