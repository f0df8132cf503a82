package builtin

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestCallerIsHandedWhatTheReferenceSends: on the examples, the first case
// of every inbound bucket identifies the caller once, with details the
// caller is handed; a refusal's or an escalation's caller names every record
// and code inside what the act picks (which flight, who travels, which card)
// but no amount inside it, which is the world's to work out; and a look-up
// before the act asks for what the act sends under the same name (a search
// on the date of the flight booked).
func TestCallerIsHandedWhatTheReferenceSends(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	for _, ex := range []string{"retail", "airline", "telecom", "clinic-reminders"} {
		t.Run(ex, func(t *testing.T) {
			c, _, pl := planned(t, filepath.Join("..", "..", "examples", ex), 60)
			p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
			composed := 0
			for _, b := range pl.Buckets {
				if b.Spec.Answer != "" || b.Outcome == scenario.OutcomeAsk {
					continue
				}
				var sc scenario.Scenario
				ok := false
				for _, key := range b.Spec.Templates {
					if sc, ok = p.compose(brief.Bucket{Bucket: b}, 0, key); ok {
						break
					}
				}
				if !ok {
					continue
				}
				composed++
				said := sc.Instruction + " " + sc.Persona.Opening
				idents := 0
				for _, call := range sc.Solution {
					if !c.Identifies(call.Tool) {
						continue
					}
					idents++
					for n, v := range call.Args {
						if !strings.Contains(said, ground.Text(v)) {
							t.Errorf("%s: %s identifies the caller by %s %v, which the caller is never handed: %s", sc.Name, call.Tool, n, v, said)
						}
					}
				}
				if idents > max(1, len(b.Spec.Gated)) {
					t.Errorf("%s: the solution identifies the caller %d times: %v", sc.Name, idents, sc.Solution)
				}
				if sc.Expects != scenario.OutcomeSucceed && len(sc.Tempting) > 0 {
					act := sc.Tempting[len(sc.Tempting)-1]
					for n, v := range act.Args {
						if !hasObject(v) {
							continue
						}
						for _, leaf := range leavesOf(v) {
							if !isNumber(leaf) && !strings.Contains(said, ground.Text(leaf)) {
								t.Errorf("%s: the act picks %s %v, which the caller never names: %s", sc.Name, n, leaf, said)
							}
						}
					}
				}
				act := sc.Solution[len(sc.Solution)-1]
				if sc.Expects != scenario.OutcomeSucceed && len(sc.Tempting) > 0 {
					act = sc.Tempting[len(sc.Tempting)-1]
				}
				for _, call := range sc.Solution {
					if !slices.Contains(b.Spec.Lookups, call.Tool) {
						continue
					}
					for n, v := range call.Args {
						if _, _, ref := c.RefOf(call.Tool, n); ref {
							continue
						}
						if w, ok := valueNamed(map[string]any(act.Args), n); ok && fmt.Sprint(w) != fmt.Sprint(v) {
							t.Errorf("%s: look-up %s asks for %s %v where the act sends %v", sc.Name, call.Tool, n, v, w)
						}
					}
				}
			}
			if composed == 0 {
				t.Fatal("no bucket composed")
			}
		})
	}
}

// leavesOf are the values inside lists and objects.
func leavesOf(v any) []any {
	switch x := v.(type) {
	case []any:
		var out []any
		for _, e := range x {
			out = append(out, leavesOf(e)...)
		}
		return out
	case map[string]any:
		var out []any
		for _, e := range x {
			out = append(out, leavesOf(e)...)
		}
		return out
	}
	return []any{v}
}
