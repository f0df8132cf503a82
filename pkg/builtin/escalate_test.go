package builtin

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestEscalateMakesTheRulesLookUps: where a rule, not the world, makes the
// act wrong, the rule's check reads what the look-ups establish (whose
// record it is, a proxy's verification and the scope of their release): an
// escalation makes the look-ups a refusal of the same rule makes, then hands
// off, so the tempting act after them breaks the rule. With only the
// caller's identification the check may see nothing to fail on.
func TestEscalateMakesTheRulesLookUps(t *testing.T) {
	for _, dir := range []string{filepath.Join("..", "..", "examples", "retail"), filepath.Join("..", "..", "testdata", "contracts", "insurance-claims")} {
		t.Run(filepath.Base(dir), func(t *testing.T) { escalateLooksUp(t, dir) })
	}
}

func escalateLooksUp(t *testing.T, dir string) {
	c, _, pl := planned(t, dir, 100)
	p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
	tools := func(calls []scenario.Call) []string {
		var out []string
		for _, c := range calls {
			out = append(out, c.Tool)
		}
		return out
	}
	refused := map[string][]string{} // rule refusal -> a refusal's solution
	for _, b := range pl.Buckets {
		if b.Outcome == scenario.OutcomeRefuse && strings.HasPrefix(b.Spec.Refusal, plan.RuleRefusal) {
			if sc, ok := p.compose(brief.Bucket{Bucket: b}, 0, b.Spec.Templates[0]); ok {
				refused[b.UseCase+" "+b.Spec.Refusal] = tools(sc.Solution)
			}
		}
	}
	n := 0
	for _, b := range pl.Buckets {
		want, ok := refused[b.UseCase+" "+b.Spec.Refusal]
		if b.Outcome != scenario.OutcomeEscalate || !ok {
			continue
		}
		sc, ok := p.compose(brief.Bucket{Bucket: b}, 0, b.Spec.Templates[0])
		if !ok {
			t.Errorf("%s (%s): does not compose", b.ID, b.Angle)
			continue
		}
		n++
		got := tools(sc.Solution)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s (%s): solution %v lacks %s, which the refusal of the same rule calls (%v)", b.ID, b.Angle, got, w, want)
			}
		}
		if got[len(got)-1] != b.Spec.Handoff {
			t.Errorf("%s: solution %v does not end with the handoff %s", b.ID, got, b.Spec.Handoff)
		}
	}
	if n == 0 {
		t.Fatal("no escalation of a rule's refusal was planned")
	}
}

// TestInstructionsCarryNoNoise: a use case written as the caller's question
// is the contract's text, not quoted as the caller's words (they ask about
// what the act tells); and the level of a column the plan set the case's
// record at is said only where a tool of the case reads that column (a
// student's card brand is nothing to a waitlist request; their standing,
// which the handler refuses a graduate on, is).
func TestInstructionsCarryNoNoise(t *testing.T) {
	c, _, pl := planned(t, filepath.Join("..", "..", "testdata", "contracts", "registrar-line"), 100)
	p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
	questions, levels, said := 0, 0, 0
	for _, b := range pl.Buckets {
		u := c.UseCase(b.UseCase)
		sc, ok := p.compose(brief.Bucket{Bucket: b}, 0, b.Spec.Templates[0])
		if u == nil || !ok {
			continue
		}
		if strings.HasSuffix(strings.TrimSpace(u.Text), "?") {
			questions++
			if strings.Contains(sc.Instruction, strings.TrimSuffix(strings.TrimSpace(u.Text), "?")) {
				t.Errorf("%s: the use case's question is quoted: %q", b.ID, sc.Instruction)
			}
		}
		if b.Spec.Column == "" {
			continue
		}
		levels++
		stated := strings.Contains(sc.Instruction, "As far as they know, its "+strings.ReplaceAll(b.Spec.Column, "_", " "))
		if stated {
			said++
		}
		if b.Spec.Column == "card_brand" && stated {
			t.Errorf("%s (%s): a column no tool of the case reads is stated: %q", b.ID, b.Angle, sc.Instruction)
		}
		if b.Spec.Column == "standing" && !stated {
			t.Errorf("%s (%s): the standing the act turns on is not stated: %q", b.ID, b.Angle, sc.Instruction)
		}
	}
	if questions == 0 || levels == 0 || said == 0 {
		t.Fatalf("%d question cases, %d cases at a level (%d stated): the contract no longer exercises this", questions, levels, said)
	}
}
