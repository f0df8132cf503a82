// Package probe proves a world before any scenario is written: every tool
// argument is grounded by rehearsal (ground.Discover), then a valid call is
// answered (refused is fine, a crash is not, and a call the params schema
// refused before the handler ran is not an answer); a bogus record id and a
// missing required argument are refused; an unknown tool is refused; every
// handler reads every argument it is given; every enum value that names a
// record exists; declared sequences leave the state they claim.
package probe

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/world"
)

// Score is one probe's result.
type Score struct {
	Probe    string   `json:"probe"`
	Passed   int      `json:"passed"`
	Total    int      `json:"total"`
	Failures []string `json:"failures,omitempty"`
	// always marks a probe that has something to check on any contract
	// (its tools, an unknown tool): checking nothing is then a fault.
	always bool
}

// Value is passed/total. A probe that checked nothing (no enum names a
// record, no sequence is declared) is unscored, scored false: it proved
// nothing, so it is neither a pass nor a fail.
func (s Score) Value() (v float64, scored bool) {
	if s.Total == 0 {
		return 0, false
	}
	return float64(s.Passed) / float64(s.Total), true
}

// Held is true when the probe scored 1, or checked nothing and need not
// have.
func (s Score) Held() bool {
	v, scored := s.Value()
	if !scored {
		return !s.always
	}
	return v == 1
}

func (s *Score) check(ok bool, format string, a ...any) {
	s.Total++
	if ok {
		s.Passed++
	} else {
		s.Failures = append(s.Failures, fmt.Sprintf(format, a...))
	}
}

// Report is every probe's score, and the grounding they ran on.
type Report struct {
	Scores    []Score          `json:"scores"`
	Grounding ground.Grounding `json:"grounding"`
}

// OK is true when every probe held: each that checked something scored 1,
// and none that has something to check on any contract checked nothing.
func (r Report) OK() bool {
	for _, s := range r.Scores {
		if !s.Held() {
			return false
		}
	}
	return true
}

// probeCases is how many cases a tool is called on before it counts as
// never answered.
const probeCases = 8

// prober holds what the probes share.
type prober struct {
	c  *contract.Contract
	w  *world.World
	g  *ground.Graph
	bs ground.Bindings
	// base is, per tool, the arguments of its first answered call (those
	// of an ok answer when there was one): the bogus-record and
	// missing-argument probes vary them.
	base map[string]map[string]any
}

// Run grounds the contract's tools in the world, then runs every probe.
func Run(ctx context.Context, c *contract.Contract, w *world.World) (Report, error) {
	g := ground.New(c)
	gr, err := g.Discover(ctx, Rehearser(w))
	if err != nil {
		return Report{}, err
	}
	p := &prober{c: c, w: w, g: g, bs: gr.Bindings, base: map[string]map[string]any{}}
	valid, reads := p.answered(ctx)
	seqs, err := p.sequences(ctx)
	if err != nil {
		return Report{}, err
	}
	return Report{Grounding: gr, Scores: []Score{
		valid, p.bogus(ctx), p.missing(ctx), p.unknownTool(ctx), reads, p.enums(), seqs,
	}}, nil
}

func call(ctx context.Context, w *world.World, tool string, args map[string]any) world.CallResult {
	var r world.CallResult
	err := w.Copy(ctx, func(cp *world.Copy) error { r = cp.Call(ctx, tool, args); return nil })
	if err != nil {
		r.Crash, r.Error = true, err.Error()
	}
	return r
}

func verdict(r world.CallResult) string {
	switch {
	case r.Crash:
		return "crash"
	case r.Invalid:
		return "refused by its params schema"
	case r.Refused:
		return "refused"
	case r.OK:
		return "ok"
	}
	return "unanswered"
}

// nothing reports an empty answer: null, "", [] or {}.
func nothing(result json.RawMessage) bool {
	var v any
	if json.Unmarshal(result, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func copyArgs(a map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
