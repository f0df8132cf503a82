package adequacy

import (
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestNamesReadsEveryRequest: a rule mutant's candidates are the scenarios
// some request of which names the rule and lists its check, the second
// request as much as the first; a rule named by one request and a check
// listed by another is no test of it.
func TestNamesReadsEveryRequest(t *testing.T) {
	sc := &scenario.Scenario{UseCase: "book", Expects: "succeed",
		Then: []scenario.Request{{UseCase: "cancel", Expects: "refuse", Rules: []string{"no-late-cancel"},
			SubGoals: []scenario.SubGoalRef{{Name: "cancel_in_time"}}}}}
	if !names(sc, "no-late-cancel", "cancel_in_time") {
		t.Error("request 2 names the rule and lists its check: the scenario tests it")
	}
	split := &scenario.Scenario{UseCase: "book", Expects: "succeed", Rules: []string{"no-late-cancel"},
		Then: []scenario.Request{{UseCase: "cancel", Expects: "refuse", SubGoals: []scenario.SubGoalRef{{Name: "cancel_in_time"}}}}}
	if names(split, "no-late-cancel", "cancel_in_time") {
		t.Error("the rule named by request 1 and its check listed by request 2: no request tests it")
	}
}
