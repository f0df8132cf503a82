package prove

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// unsaidDetails is the grounding gate's check of the details a solution's
// checks take about a person (CodeValueNotInWorld): a name, phone number or
// e-mail address that a call changing nothing passes (a guardian verified by
// name after the patient), that the caller never says, no earlier answer
// shows and the contract never mentions. An agent could only guess it. When
// the world checks it (the same call, with that detail misspelt, is
// refused), no right agent gets past that call, and a reference that passes
// it was written from the setup: its scenario cannot be passed. A detail the
// world does not check is the agent's to leave out or get wrong.
// (unknowable judges what a state-changing call sends.)
func (pr *proof) unsaidDetails(ctx context.Context) ([]Refusal, error) {
	p, sc := pr.p, pr.sc
	said := strings.ToLower(sc.Instruction + "\n" + sc.Persona.Opening)
	var people map[string]bool // read once a value is unsaid
	calls := pr.solutionCalls()
	shown := ""
	for i, r := range pr.results {
		if i > 0 {
			shown += string(pr.results[i-1].Result) + "\n"
		}
		t := p.c.Tool(r.Tool)
		if !r.OK || t == nil || p.stateChanging(r) {
			continue
		}
		for _, name := range sortedArgs(r.Args) {
			v, ok := r.Args[name].(string)
			if !ok || v == "" || t.LogOnlyParam(name) || len(t.Enum(name)) > 0 {
				continue
			}
			if strings.Contains(said, strings.ToLower(v)) || strings.Contains(shown, v) || strings.Contains(p.told, v) {
				continue
			}
			if people == nil {
				people = pr.personValues()
			}
			if !people[v] {
				continue
			}
			checked, err := pr.refusedWith(ctx, calls[:i+1], name, misspelt(v))
			if err != nil {
				return nil, err
			}
			if checked {
				return []Refusal{{Gate: GateGrounding, Code: CodeValueNotInWorld, Message: fmt.Sprintf(
					"solution step %d (%s): %s %q is a person's detail the world checks (misspelt, the call is refused), yet the caller never says it and no earlier answer shows it: no agent gets past this call; hand it to the caller in the instruction",
					i+1, r.Tool, name, v)}}, nil
			}
		}
	}
	return nil, nil
}

// personValues are the values the world after setup holds in a column that
// names or reaches a person (a first name, a phone number): the seed's and
// those the setup's inserts add.
func (pr *proof) personValues() map[string]bool {
	out := maps.Clone(pr.p.people)
	for _, r := range insertedRows(pr.sc.Setup) {
		for col, v := range r.row {
			if s, ok := v.(string); ok && s != "" && pr.p.g.Renamed(r.table, col) != "" {
				out[s] = true
			}
		}
	}
	return out
}

// refusedWith plays calls after the request's setup, the last with its
// argument name set to v, and reports whether the world refused that call
// (not its schema: a value the schema turns away says nothing of a check).
func (pr *proof) refusedWith(ctx context.Context, calls []scenario.Call, name string, v any) (bool, error) {
	last := calls[len(calls)-1]
	args := make(map[string]any, len(last.Args))
	for k, a := range last.Args {
		args[k] = a
	}
	args[name] = v
	calls = append(calls[:len(calls)-1:len(calls)-1], scenario.Call{Tool: last.Tool, Args: args})
	setup := pr.setup(ctx)
	refused := false
	err := pr.p.w.Copy(ctx, func(cp *world.Copy) error {
		if err := setup(cp); err != nil {
			return err
		}
		res := play(ctx, cp, calls)
		r := res[len(res)-1]
		if r.Crash && infrastructure(r.Err) {
			return r.Err
		}
		refused = r.Refused && !r.Invalid && allAnswered(res[:len(res)-1])
		return nil
	})
	return refused, err
}

// allAnswered reports whether every result answered ok.
func allAnswered(rs []world.CallResult) bool {
	for _, r := range rs {
		if !r.OK {
			return false
		}
	}
	return true
}

// misspelt is v with its last letter changed (Rosa, Rosb), or, without a
// letter, its last digit: the same kind of value, never the same one.
func misspelt(v string) string {
	b := []byte(v)
	for i := len(b) - 1; i >= 0; i-- {
		switch c := b[i]; {
		case c >= 'a' && c <= 'y', c >= 'A' && c <= 'Y':
			b[i] = c + 1
			return string(b)
		case c == 'z', c == 'Z':
			b[i] = c - 1
			return string(b)
		}
	}
	for i := len(b) - 1; i >= 0; i-- {
		if c := b[i]; c >= '0' && c <= '9' {
			b[i] = '0' + (c-'0'+1)%10
			return string(b)
		}
	}
	return v + "x"
}
