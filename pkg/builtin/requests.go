package builtin

import (
	"reflect"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// thenWords joins a conversation's first request to its second in the
// instruction: the caller asks for both, in order.
const thenWords = " Once that is dealt with, in the same conversation: "

// composeRequests is compose, and on a bucket of two requests (plan.Next)
// the second request on the same caller and record: the second bucket's
// case composed at the first's index and template, which mints the same
// caller and record, so its setup is the first's. A second request that
// cannot be composed so, or whose bucket was not planned on the case's
// record, leaves the case one request.
func (p *policy) composeRequests(bk brief.Bucket, k int, key string) (scenario.Scenario, bool) {
	sc, ok := p.compose(bk, k, key)
	nx := bk.Spec.Next
	if !ok || nx == nil || !slices.Contains(nx.Spec.Templates, key) {
		return sc, ok
	}
	nb := bk
	nb.UseCase, nb.Angle, nb.Outcome, nb.Kind, nb.Overlay = nx.UseCase, nx.Angle, nx.Outcome, nx.Kind, "none"
	spec := nx.Spec
	spec.Base, spec.Sized, spec.Capacity, spec.TopUp, spec.Spans = bk.Spec.Base, bk.Spec.Sized, bk.Spec.Capacity, bk.Spec.TopUp, bk.Spec.Spans
	spec.Strides, spec.Callers, spec.Next = bk.Spec.Strides, bk.Spec.Callers, nil
	nb.Spec = spec
	two, ok := p.compose(nb, k, key)
	if !ok || !reflect.DeepEqual(sc.Setup, two.Setup) || !reflect.DeepEqual(sc.CallerID, two.CallerID) {
		return sc, true
	}
	sc.Then = []scenario.Request{{UseCase: two.UseCase, Branch: two.Branch, Expects: two.Expects, Tests: two.Tests,
		Solution: two.Solution, Tempting: two.Tempting, Missing: two.Missing, Outputs: two.Outputs,
		Computed: two.Computed, SubGoals: two.SubGoals, Rules: two.Rules}}
	sc.Instruction += thenWords + alsoAsks(two.Instruction, two.Persona.Name)
	sc.MaxTurns += two.MaxTurns
	return sc, true
}

// alsoAsks is a second request's instruction as the rest of the first's:
// the caller, already introduced, also asks.
func alsoAsks(text, name string) string {
	rest, ok := strings.CutPrefix(text, name+" contacts support about ")
	if !ok {
		return text
	}
	return "they also ask about " + strings.Replace(rest, " and wants to ", " and want to ", 1)
}

// oneRequest drops a conversation's second request where the prover
// refused the conversation for anything but its first request: the first
// request alone is the bucket's case, and is written rather than lost.
func oneRequest(sc *scenario.Scenario, rs []brief.Refusal) bool {
	if len(sc.Then) == 0 {
		return false
	}
	for _, r := range rs {
		if r.Request != 1 {
			sc.Then = nil
			if i := strings.Index(sc.Instruction, thenWords); i >= 0 {
				sc.Instruction = sc.Instruction[:i]
			}
			sc.MaxTurns = 8 + 4*len(sc.Solution)
			return true
		}
	}
	return false
}
