package prove

import (
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestHandOffThatRecordsIsNoAct: pharmacy-line's transfer_to_pharmacist
// ends the conversation and records the consult it hands over (it changes
// state). An escalation of a use case that does not list it ends with it:
// that is the handing over, not an act off the use case. The same call
// anywhere else in a solution, or in a scenario that is no escalation, is
// still a change the use case is not about.
func TestHandOffThatRecordsIsNoAct(t *testing.T) {
	c, err := contract.LoadValid(filepath.Join("..", "..", "testdata", "contracts", "pharmacy-line"))
	if err != nil {
		t.Fatal(err)
	}
	p := &Prover{c: c}
	find := scenario.Call{Tool: "find_patient_by_name_dob", Args: map[string]any{}}
	handoff := scenario.Call{Tool: "transfer_to_pharmacist", Args: map[string]any{}}
	status := scenario.Call{Tool: "check_refill_status", Args: map[string]any{}}
	act := scenario.Call{Tool: "cancel_refill", Args: map[string]any{}}
	for _, tc := range []struct {
		name     string
		expects  string
		solution []scenario.Call
		off      bool
	}{
		{"escalation ends with it", scenario.OutcomeEscalate, []scenario.Call{find, handoff}, false},
		{"escalation goes on after it", scenario.OutcomeEscalate, []scenario.Call{find, handoff, status}, true},
		{"a refusal hands over", scenario.OutcomeRefuse, []scenario.Call{find, handoff}, true},
	} {
		sc := &scenario.Scenario{UseCase: "cancel-refill", Expects: tc.expects, Solution: tc.solution, Tempting: []scenario.Call{find, act}}
		if got := len(p.offUseCase(sc)) > 0; got != tc.off {
			t.Errorf("%s: refused as off the use case %v, want %v: %v", tc.name, got, tc.off, p.offUseCase(sc))
		}
	}
}
