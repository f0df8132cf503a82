package suite

// What a benchmark task makes of a scenario the same way in both benchmark
// exports (pkg/taubench, pkg/tau2): one conversation read as one request,
// the wrong move played after the reference calls, the outputs as the
// benchmarks match them.

import (
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// AsOneRequest is a conversation of several requests read as a benchmark
// task holds one: every request's solution in the order the caller makes
// them (each request's step references renumbered past the steps before
// it), their outputs, checks and rules together, and one request the agent
// must not carry out (refuse, ask about, hand over), when there is one,
// with its expects, tempting move and missing calls: the hold-th of them
// (from 0; Holds counts them). A task's wrong move is then played after
// every request's reference calls: the benchmarks grade the state a
// conversation ends in, not when a call came. A conversation with two such
// requests has two wrong moves, and a task scores one: an exporter reads
// it once per hold and keeps the first reading whose wrong move the
// benchmark can see. ends are the steps of the flat solution that settle a
// request (each request's last).
func AsOneRequest(sc *scenario.Scenario, hold int) (flat *scenario.Scenario, ends []int) {
	if len(sc.Then) == 0 {
		return sc, []int{len(sc.Solution) - 1}
	}
	reqs := sc.Requests()
	one := *reqs[0]
	one.Solution, one.Outputs, one.SubGoals, one.Rules = nil, nil, nil, nil
	one.Expects, one.Tempting, one.Missing, one.Computed = scenario.OutcomeSucceed, nil, nil, nil
	held := 0 // requests not to be carried out, so far
	for _, r := range reqs {
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
		if held == hold {
			one.UseCase, one.Branch = r.UseCase, r.Branch
			one.Expects, one.Tempting, one.Missing, one.Tests = r.Expects, r.Tempting, r.Missing, r.Tests
		}
		held++
	}
	return &one, ends
}

// FirstScored reads sc as one request once per request not to be carried
// out (AsOneRequest, in order) and returns the first reading read scores:
// no refusal. None scored, it returns the first reading's refusal.
func FirstScored[T, R any](sc *scenario.Scenario, read func(one *scenario.Scenario, ends []int) (T, *R, error)) (T, *R, error) {
	var first *R
	for hold := range Holds(sc) {
		one, ends := AsOneRequest(sc, hold)
		t, why, err := read(one, ends)
		if err != nil || why == nil {
			return t, why, err
		}
		if first == nil {
			first = why
		}
	}
	var zero T
	return zero, first, nil
}

// Holds is how many requests of a conversation are not to be carried out:
// the readings AsOneRequest gives of it (at least one).
func Holds(sc *scenario.Scenario) int {
	n := 0
	for _, r := range sc.Requests() {
		if r.Expects != scenario.OutcomeSucceed {
			n++
		}
	}
	return max(n, 1)
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
