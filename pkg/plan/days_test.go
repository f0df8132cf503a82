package plan

import (
	"testing"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestPlanDealsTheDaysACallerAsksFor: a handler refuses a day the caller
// names by the world's clock (a car from last week, one too far ahead, a
// visit on a weekend or today) or by the case's own record (an incident
// before the policy began). No record's state reaches those branches, only
// the day asked; the plan deals a level for each, whose cases ask for a day
// (ground.SwapDay) that the world refuses there.
func TestPlanDealsTheDaysACallerAsksFor(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	p, _ := deriveTestdata(t, "insurance-claims")
	dealt := map[string]bool{}
	for _, b := range p.Buckets {
		for _, ch := range b.Spec.Choices {
			if ch.Swap == ground.SwapDay {
				dealt[b.Spec.Refusal] = true
				if b.Outcome != "refuse" && b.Outcome != "escalate" {
					t.Errorf("bucket %s asks for a day and expects %s", b.ID, b.Outcome)
				}
			}
		}
	}
	for _, at := range []string{
		"handlers/request_courtesy_car.star:11", // a car from the past
		"handlers/request_courtesy_car.star:14", // more than 30 days ahead
		"lib/visits.star:5",                     // a weekend
		"lib/visits.star:7",                     // not from tomorrow
		"handlers/file_claim.star:14",           // before the policy began
	} {
		if !dealt[at] {
			t.Errorf("no level asks for a day refused at %s; dealt: %v", at, dealt)
		}
	}
}
