package suite

// What a benchmark task makes of a scenario the same way in both benchmark
// exports (pkg/taubench, pkg/tau2): one conversation read as one request,
// the wrong move played after the reference calls, the outputs as the
// benchmarks match them.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// AsOneRequest is a conversation of several requests read as a benchmark
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
func AsOneRequest(sc *scenario.Scenario) (flat *scenario.Scenario, ends []int, why string) {
	if len(sc.Then) == 0 {
		return sc, []int{len(sc.Solution) - 1}, ""
	}
	reqs := sc.Requests()
	one := *reqs[0]
	one.Solution, one.Outputs, one.SubGoals, one.Rules = nil, nil, nil, nil
	one.Expects, one.Tempting, one.Missing, one.Computed = scenario.OutcomeSucceed, nil, nil, nil
	held := 0 // the request not carried out, counted from 1
	for k, r := range reqs {
		one.Solution = append(one.Solution, ShiftRefs(r.Solution, len(one.Solution))...)
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

// ShiftRefs renumbers the references of calls played after n other calls.
func ShiftRefs(calls []scenario.Call, n int) []scenario.Call {
	out := make([]scenario.Call, len(calls))
	for i, c := range calls {
		out[i] = scenario.Call{Tool: c.Tool, Args: scenario.RenumberRefs(c.Args, func(k int) (int, bool) {
			return k + n, true
		})}
	}
	return out
}

// CallNames is the tools of calls, comma-separated: how a refusal names a
// wrong move.
func CallNames(calls []scenario.Call) string {
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Tool
	}
	return strings.Join(names, ", ")
}

// Communicate is the outputs as both benchmarks match them: they look for
// each string, lower-cased, in the agent's messages lower-cased with commas
// removed, so a comma in an output could never match.
func Communicate(outputs []string) []string {
	var out []string
	for _, o := range outputs {
		if s := strings.ReplaceAll(o, ",", ""); strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// Clip is s cut to n bytes, marked when cut: an error quoted in a refusal's
// reason.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
