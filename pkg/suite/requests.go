package suite

import (
	"fmt"
	"slices"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// asOneRequest is a conversation of several requests read as a benchmark
// task holds one: every request's solution in the order the caller makes
// them (each request's step references renumbered past the steps before
// it), their outputs, checks and rules together, and the one request the
// agent must not carry out (refuse, ask about, hand over), when there is
// one, with its expects, tempting move and missing calls. A task's wrong
// move is then played after every request's reference calls: the
// benchmarks grade the state a conversation ends in, not when a call came.
// ends are the steps of the flat solution that settle a request (each
// request's last). why says what keeps a conversation from one task: two
// requests the agent must not carry out are two wrong moves, and a task
// holds one.
func asOneRequest(sc *scenario.Scenario) (flat *scenario.Scenario, ends []int, why string) {
	if len(sc.Then) == 0 {
		return sc, []int{len(sc.Solution) - 1}, ""
	}
	reqs := sc.Requests()
	one := *reqs[0]
	one.Solution, one.Outputs, one.SubGoals, one.Rules = nil, nil, nil, nil
	one.Expects, one.Tempting, one.Missing, one.Computed = scenario.OutcomeSucceed, nil, nil, nil
	held := 0 // the request not carried out, counted from 1
	for k, r := range reqs {
		one.Solution = append(one.Solution, shiftRefs(r.Solution, len(one.Solution))...)
		if len(r.Solution) > 0 {
			ends = append(ends, len(one.Solution)-1)
		}
		one.Outputs = append(one.Outputs, r.Outputs...)
		one.SubGoals = append(one.SubGoals, r.SubGoals...)
		for _, id := range r.Rules {
			if !slices.Contains(one.Rules, id) {
				one.Rules = append(one.Rules, id)
			}
		}
		if r.Expects == scenario.OutcomeSucceed {
			continue
		}
		if held > 0 {
			return nil, nil, fmt.Sprintf("requests %d and %d of the conversation are both not to be carried out (%s, %s): two wrong moves, and a task holds one", held, k+1, reqs[held-1].Expects, r.Expects)
		}
		held = k + 1
		one.UseCase, one.Branch = r.UseCase, r.Branch
		one.Expects, one.Tempting, one.Missing, one.Tests = r.Expects, r.Tempting, r.Missing, r.Tests
	}
	return &one, ends, ""
}
