package reviewer

import (
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestAssessCountsEveryRequest: what a conversation's second request
// exercises (a use case, an outcome, a rule, a gated tool) is covered, and
// two conversations alike in request 1 but not in request 2 are not the
// same test.
func TestAssessCountsEveryRequest(t *testing.T) {
	base, bs := varied()
	// Without the escalation, the second rule's bucket and the gated
	// tool's tempting call, four findings; each comes back covered once a
	// second request carries it.
	scs := slices.Clone(base)
	for i := range scs {
		if scs[i].Expects == "escalate" {
			scs[i].Expects = "refuse"
		}
		if scs[i].UseCase == "track-order" {
			scs[i].UseCase = "cancel-order"
		}
	}
	scs[0].Tempting = nil
	scs[2].SubGoals = nil // the second rule's check listed nowhere
	r := Assess(shop(), scs, bs)
	want := []Kind{GatedToolUntested, OutcomeMissing, RuleUntested, UseCaseMissing}
	if got := kinds(r); !slices.Equal(sortKinds(got), want) {
		t.Fatalf("findings %v, want %v", got, want)
	}
	scs[0].Then = []scenario.Request{{UseCase: "track-order", Expects: "escalate",
		Tempting: []scenario.Call{{Tool: "cancel_order"}}, Rules: []string{"no-refund-after-30-days"},
		SubGoals: []scenario.SubGoalRef{{Name: "no_late_refund"}}}}
	scs[1].Then = []scenario.Request{{UseCase: "track-order", Expects: "succeed"}} // off the ordinary path: s1 is edge
	if r := Assess(shop(), scs, bs); len(r.Findings) != 0 {
		t.Fatalf("findings %+v, want none: request 2 covers them", r.Findings)
	}

	// Same caller, same request 1, a different request 2: two tests.
	two := slices.Clone(base)
	dup := two[1]
	dup.Name = "s9"
	dup.Then = []scenario.Request{{UseCase: "cancel-order", Expects: "succeed", Solution: []scenario.Call{{Tool: "cancel_order"}}}}
	two[9] = dup
	two[9].Persona.Personality, two[9].Persona.Accent = base[9].Persona.Personality, base[9].Persona.Accent
	if r := Assess(shop(), two, bs); slices.Contains(kinds(r), SameTest) {
		t.Fatalf("findings %+v: a different second request is a different test", r.Findings)
	}
}

func sortKinds(ks []Kind) []Kind {
	out := slices.Clone(ks)
	slices.Sort(out)
	return out
}
