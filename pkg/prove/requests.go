package prove

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// A conversation may carry several requests (a scenario's Then): cancel one
// order, then change another's address; one granted, one refused. Each is
// proved as a single-request scenario would be, by every gate, starting
// where a right agent has left the world by then: after setup and the
// solutions of the requests before it, played as calls. Then the whole:
//
//   - every request is one the caller asks for: the records it is about
//     are ones the caller names (instruction, opening), or, for a request
//     about no record, a value of its act is one the caller states
//     (request-unasked); an answer that shows a record is no request for it,
//     and without this a write nobody asked for could pass as a request of
//     its own;
//   - no two requests are one request: the same use case about the same
//     records, or the same write made twice (duplicate-request);
//   - with every solution played in order, what each request's checks
//     settle still holds at the end of the conversation, over its whole
//     call log (request-undone): a later request that undoes an earlier one,
//     or whose calls an earlier one's checks forbid, fails a right agent.
//
// Every write traces to one request: each request's writes are read against
// its own use case and records (unrequested-change, act-once, record-named,
// unasked-value), and a request whose checks a write before it already
// settled is vacuous.

// MaxRequests bounds the requests of one conversation: each is a proof of
// its own.
const MaxRequests = 4

// Whole is every request's solution played in order after setup, with each
// request's checks read at the end over the whole call log.
const Whole Counterfactual = "whole"

// priorRefused is a call of an earlier request's solution that the world
// refused when played before a later request.
type priorRefused struct {
	request, step int
	tool, err     string
}

func (e *priorRefused) Error() string {
	return fmt.Sprintf("request %d's solution step %d (%s) was refused when played before a later request: %s", e.request, e.step, e.tool, e.err)
}

// setup is what every run of this request starts from: the scenario's
// setup, then the solutions of the requests before it.
func (pr *proof) setup(ctx context.Context) func(cp *world.Copy) error {
	return func(cp *world.Copy) error {
		if err := applySetup(ctx, cp, pr.sc.Setup); err != nil {
			return err
		}
		for k, calls := range pr.prior {
			for i, r := range play(ctx, cp, calls) {
				switch {
				case r.Crash && infrastructure(r.Err):
					return r.Err
				case !r.OK:
					return &priorRefused{k + 1, i + 1, r.Tool, r.Error}
				}
			}
		}
		return nil
	}
}

// proveRequests proves a scenario with further requests: each request in
// order, then the whole conversation.
func (p *Prover) proveRequests(ctx context.Context, sc *scenario.Scenario) (Verdict, error) {
	var v Verdict
	reqs := sc.Requests()
	if rs := p.requestsStatic(sc, reqs); len(rs) > 0 {
		v.Refusals = rs
		return v, nil
	}
	for k, r := range reqs {
		if rs := p.static(r); len(rs) > 0 {
			v.Refusals = tagged(rs, k, r)
			return v, nil
		}
	}
	prs := make([]*proof, len(reqs))
	for k, r := range reqs {
		prs[k] = &proof{p: p, sc: r, checks: p.settledChecks(r), request: k + 1}
		for _, e := range reqs[:k] {
			prs[k].prior = append(prs[k].prior, e.Solution)
		}
	}
	whole, results, err := p.wholeRun(ctx, sc, prs)
	if err != nil {
		return v, err
	}
	for k, pr := range prs {
		for j, rs := range results {
			if j != k {
				pr.also = append(pr.also, rs...)
			}
		}
		rs, err := p.gates(ctx, pr)
		v.Runs = append(v.Runs, pr.runs()...)
		if err != nil {
			return v, fmt.Errorf("request %d: %w", k+1, err)
		}
		if len(rs) > 0 {
			v.Refusals = tagged(rs, k, reqs[k])
			return v, nil
		}
	}
	rs := p.requestsWhole(prs, whole)
	if whole != nil {
		v.Runs = append(v.Runs, *whole)
	}
	if len(rs) > 0 {
		v.Refusals = rs
		return v, nil
	}
	v.Kept = true
	v.Codes = p.codes(sc)
	return v, nil
}

// runs is the request's trace, each run marked with the request.
func (pr *proof) runs() []Run {
	out := pr.trace()
	for i := range out {
		out[i].Request = pr.request
	}
	return out
}

// tagged says which request each refusal is about.
func tagged(rs []Refusal, k int, r *scenario.Scenario) []Refusal {
	out := make([]Refusal, len(rs))
	for i, x := range rs {
		x.Message = fmt.Sprintf("request %d (%s): %s", k+1, r.UseCase, x.Message)
		x.Request = k + 1
		out[i] = x
	}
	return out
}

// requestsStatic refuses, without a database, what a conversation of
// several requests may not be: an outbound call (it is about its purpose
// record), more than MaxRequests requests, or a request after a hand-over.
func (p *Prover) requestsStatic(sc *scenario.Scenario, reqs []*scenario.Scenario) []Refusal {
	switch {
	case sc.Outbound != nil:
		return []Refusal{{Gate: GateStatic, Code: CodeBadThen, Message: "an outbound call carries one request, about its purpose record: it has no further requests (then)"}}
	case len(reqs) > MaxRequests:
		return []Refusal{{Gate: GateStatic, Code: CodeBadThen, Message: fmt.Sprintf("%d requests in one conversation; at most %d", len(reqs), MaxRequests)}}
	}
	if msg := turnsShort(sc.MaxTurns, reqs); msg != "" && sc.MaxTurns > 0 {
		return []Refusal{{Gate: GateStatic, Code: CodeTurnsShort, Message: msg}}
	}
	for k, r := range reqs[:len(reqs)-1] {
		for i, c := range r.Solution {
			if t := p.c.Tool(c.Tool); t != nil && t.EndsConversation {
				return []Refusal{{Gate: GateStatic, Code: CodeBadThen, Message: fmt.Sprintf("request %d's solution step %d (%s) ends the conversation, and request %d follows it: a hand-over is the conversation's last request", k+1, i+1, c.Tool, k+2)}}
			}
		}
	}
	return nil
}

// wholeRun plays every request's solution in order after setup (each its
// own list, so "$N.field" points into it) and reads every request's checks
// at the end, over the world as after setup and the whole call log. It
// returns the run (nil when a call was not answered ok: the request's own
// proof says why) and each request's results.
func (p *Prover) wholeRun(ctx context.Context, sc *scenario.Scenario, prs []*proof) (*Run, [][]world.CallResult, error) {
	var run *Run
	var per [][]world.CallResult
	err := p.w.Pair(ctx, func(cp *world.Copy) error { return applySetup(ctx, cp, sc.Setup) }, func(cp *world.Copy, before *world.Before) error {
		run, per = nil, nil
		var all []world.CallResult
		ok := true
		for _, pr := range prs {
			rs := play(ctx, cp, pr.sc.Solution)
			for _, r := range rs {
				if r.Crash && infrastructure(r.Err) {
					return r.Err
				}
				ok = ok && r.OK
			}
			per = append(per, rs)
			all = append(all, rs...)
		}
		if !ok {
			return nil
		}
		view := cp.View(sc.CallerID, func() script.WorldView { return before.View() })
		run = &Run{Gate: GateOutcome, Counterfactual: Whole, Calls: steps(all)}
		for k, pr := range prs {
			checks, err := pr.evalChecks(ctx, view, all, false)
			if err != nil {
				return err
			}
			for _, c := range checks {
				c.Name = fmt.Sprintf("%s (request %d)", c.Name, k+1)
				run.Checks = append(run.Checks, c)
			}
		}
		return nil
	})
	var se *scenario.SetupError
	switch {
	case errors.As(err, &se) && !infrastructure(se.Err):
		return nil, nil, nil // request 1's ready gate refuses the setup
	case err != nil:
		return nil, nil, err
	}
	return run, per, nil
}

// about are the records a request is about (table:value): those its writes
// name for a success (its look-ups' when it writes nothing), those its act
// names otherwise.
func (pr *proof) about() []string {
	var calls []world.CallResult
	switch {
	case pr.sc.Expects != scenario.OutcomeSucceed && len(pr.tempted) > 0:
		calls = pr.tempted[len(pr.tempted)-1:]
	default:
		for _, r := range pr.results {
			if r.OK && pr.p.stateChanging(r) {
				calls = append(calls, r)
			}
		}
		if len(calls) == 0 {
			calls = pr.results
		}
	}
	set := map[string]bool{}
	for _, r := range calls {
		for _, x := range pr.recordsOf(r) {
			set[x] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// requestAct is the request's act as played: a success's first write (for a
// success that writes nothing, its last call answered ok: the look-up it
// asks for, such as a term's enrolments), otherwise the tempting act (nil
// when there is none).
func (pr *proof) requestAct() *world.CallResult {
	if pr.sc.Expects != scenario.OutcomeSucceed {
		if len(pr.tempted) > 0 {
			return &pr.tempted[len(pr.tempted)-1]
		}
		return nil
	}
	for i, r := range pr.results {
		if r.OK && pr.p.stateChanging(r) {
			return &pr.results[i]
		}
	}
	for i := len(pr.results) - 1; i >= 0; i-- {
		if pr.results[i].OK {
			return &pr.results[i]
		}
	}
	return nil
}

// requestsWhole runs the whole-conversation gates once every request is
// proved on its own.
func (p *Prover) requestsWhole(prs []*proof, whole *Run) []Refusal {
	for k, pr := range prs {
		about := pr.about()
		if len(about) > 0 {
			for _, x := range about {
				if _, v, _ := strings.Cut(x, ":"); !handed(pr.sc, v) {
					return []Refusal{{Gate: GateGrounding, Code: CodeRequestUnasked, Message: fmt.Sprintf("request %d (%s) is about %s, which the caller never names (instruction, opening): an answer showing a record is no request for it; each request of a conversation names the records it is about", k+1, pr.sc.UseCase, v), Request: k + 1}}
				}
			}
			continue
		}
		if !pr.statesSome() {
			return []Refusal{{Gate: GateGrounding, Code: CodeRequestUnasked, Message: fmt.Sprintf("request %d (%s) is about no record the caller names and its act takes no value the caller states (instruction, opening): nothing the caller says asks for it", k+1, pr.sc.UseCase), Request: k + 1}}
		}
	}
	for k, pr := range prs {
		for j, e := range prs[:k] {
			if msg := sameRequest(e, pr); msg != "" {
				return []Refusal{{Gate: GateOutcome, Code: CodeDuplicateRequest, Message: fmt.Sprintf("requests %d and %d %s: one request, made twice, is not two requests", j+1, k+1, msg)}}
			}
		}
	}
	if whole == nil {
		return nil
	}
	at := 0
	for k, pr := range prs {
		n := len(pr.checks)
		for _, c := range whole.Checks[at : at+n] {
			if !c.Held {
				whole.Note = c.Name + " fails at the end of the conversation"
				return []Refusal{{Gate: GateOutcome, Code: CodeRequestUndone, Message: fmt.Sprintf("request %d (%s): sub-goal %s holds after its own solution but not at the end of the conversation, every request's solution played in order: %s; a later request undoes it, or does what it forbids, so a right agent would fail it", k+1, pr.sc.UseCase, strings.TrimSuffix(c.Name, fmt.Sprintf(" (request %d)", k+1)), c.Why), SubGoal: c.Name, Request: k + 1}}
			}
		}
		at += n
	}
	whole.Note = "every request's checks hold at the end of the conversation"
	return nil
}

// statesSome reports a request whose act takes a value the caller states.
func (pr *proof) statesSome() bool {
	act := pr.requestAct()
	if act == nil {
		return false
	}
	t := pr.p.c.Tool(act.Tool)
	for n, v := range act.Args {
		if t != nil && t.LogOnlyParam(n) {
			continue
		}
		vals := map[string]bool{}
		ground.AddValues(vals, v)
		for x := range vals {
			if x != "" && pr.stated(x) {
				return true
			}
		}
	}
	return false
}

// sameRequest says how two requests are one ("" when they are not): the
// same use case about the same records (or both about none), or a write of
// the later one the earlier one already made, argument for argument.
func sameRequest(a, b *proof) string {
	if a.sc.UseCase == b.sc.UseCase {
		x, y := a.about(), b.about()
		if len(x) == 0 && len(y) == 0 {
			return fmt.Sprintf("are both %s, about no record", a.sc.UseCase)
		}
		for _, r := range y {
			if slices.Contains(x, r) {
				_, v, _ := strings.Cut(r, ":")
				return fmt.Sprintf("are both %s about %s", a.sc.UseCase, v)
			}
		}
	}
	for _, w := range b.results {
		if !w.OK || !b.p.stateChanging(w) {
			continue
		}
		for _, e := range a.results {
			if e.OK && e.Tool == w.Tool && sameJSON(e.Args, w.Args) {
				return fmt.Sprintf("both make %s with %s", w.Tool, js(w.Args))
			}
		}
	}
	return ""
}
