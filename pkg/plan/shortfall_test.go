package plan

import (
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
)

// A gated tool no scenario calls is asked to be listed in a use case only
// when no use case lists it; one a use case lists is unnamed because that
// use case has no bucket, and the shortfall says so.
func TestShortfallOfUnnamedGatedTools(t *testing.T) {
	gate := []contract.Requirement{{AnyOf: []string{"identify"}}}
	c := &contract.Contract{
		Tools: []contract.Tool{{Name: "identify"}, {Name: "read", Requires: gate}, {Name: "pay", Requires: gate}, {Name: "orphan", Requires: gate}},
		UseCases: []contract.UseCase{
			{ID: "reading", Tools: []string{"identify", "read"}},
			{ID: "paying", Tools: []string{"identify", "pay"}},
		},
	}
	p := &Plan{Buckets: []Bucket{{ID: "b1", UseCase: "reading", Outcome: "succeed", Want: 1, Spec: Spec{Tool: "read", Gated: []string{"identify"}}}}}
	got := strings.Join(p.Shortfalls(c), "\n")
	if !strings.Contains(got, "[orphan] (list them in a use case's tools)") {
		t.Errorf("an unlisted gated tool is not asked to be listed:\n%s", got)
	}
	if strings.Contains(got, "pay orphan") || strings.Contains(got, "[pay] (list them") {
		t.Errorf("a tool a use case lists is asked to be listed:\n%s", got)
	}
	if !strings.Contains(got, "[pay]; the use cases that list them have no bucket that calls them: [paying]") {
		t.Errorf("the shortfall does not name the use case that lists pay:\n%s", got)
	}
}
