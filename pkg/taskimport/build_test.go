package taskimport

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
)

func airline(t *testing.T) *contract.Contract {
	t.Helper()
	c, err := contract.LoadValid(filepath.Join("..", "..", "examples", "airline"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func act(name string, kw map[string]any) Action { return Action{Name: name, Kwargs: kw} }

// TestBuildScenario: a task with one act becomes a succeeding scenario of
// the use case listing the act, with the look-ups the contract requires
// before it and the act's tables as the check.
func TestBuildScenario(t *testing.T) {
	c := airline(t)
	b := Build(c, Source{Format: FormatTauBench, Prefix: "tau-bench-airline"}, Task{
		ID: "7", UserID: "mia_li_3668", Instruction: "Your user id is mia_li_3668. Cancel ABC123.",
		Actions: []Action{act("cancel_reservation", map[string]any{"reservation_id": "ABC123"})},
		Outputs: []string{"cancelled"},
	})
	if b.Refusal != nil {
		t.Fatalf("refused: %v", b.Refusal)
	}
	sc := b.Scenario
	if sc.Name != "tau-bench-airline-7" || sc.UseCase != "cancel-reservation" || sc.Expects != scenario.OutcomeSucceed ||
		sc.CallerID != "mia_li_3668" || sc.Persona.Name != "Mia Li" || len(sc.Setup) != 0 ||
		!reflect.DeepEqual(sc.Outputs, []string{"cancelled"}) {
		t.Errorf("%+v", sc)
	}
	want := []scenario.Call{
		{Tool: "get_user_details", Args: map[string]any{"user_id": "mia_li_3668"}},
		{Tool: "get_reservation_details", Args: map[string]any{"reservation_id": "ABC123"}},
		{Tool: "cancel_reservation", Args: map[string]any{"reservation_id": "ABC123"}},
	}
	if !reflect.DeepEqual(sc.Solution, want) {
		t.Errorf("solution %+v", sc.Solution)
	}
	// The act is checked with the values the instruction states (the
	// reservation), and by the tables it writes.
	wantGoals := []scenario.SubGoalRef{
		{Name: "called", Params: map[string]any{"tool": "cancel_reservation", "args": map[string]any{"reservation_id": "ABC123"}}},
		{Name: prove.RowWritten, Params: map[string]any{"tables": []any{"reservations", "payment_history"}}},
	}
	if !reflect.DeepEqual(sc.SubGoals, wantGoals) {
		t.Errorf("sub-goals %+v, want %+v", sc.SubGoals, wantGoals)
	}
	// A look-up the task already makes is not made twice.
	b = Build(c, Source{Format: FormatTauBench, Prefix: "x"}, Task{ID: "8", UserID: "mia_li_3668", Instruction: "i",
		Actions: []Action{
			act("get_user_details", map[string]any{"user_id": "mia_li_3668"}),
			act("get_reservation_details", map[string]any{"reservation_id": "ABC123"}),
			act("cancel_reservation", map[string]any{"reservation_id": "ABC123"}),
		}})
	if b.Scenario == nil || !reflect.DeepEqual(b.Scenario.Solution, want) {
		t.Errorf("%+v", b)
	}
}

// TestBuildRefusals: what cannot be one scenario is refused with an
// import code, before the prover.
func TestBuildRefusals(t *testing.T) {
	c := airline(t)
	cancel := act("cancel_reservation", map[string]any{"reservation_id": "ABC123"})
	cert := act("send_certificate", map[string]any{"user_id": "u", "amount": 50})
	for _, tc := range []struct {
		task Task
		code prove.Code
	}{
		{Task{UserID: "u", Actions: []Action{cancel, cert, cancel, cert, cancel}}, SeveralActs},
		{Task{UserID: "u", Actions: []Action{act("get_user_details", map[string]any{"user_id": "u"})}}, NoAct},
		{Task{UserID: "u"}, NoAct},
		{Task{UserID: "u", Actions: []Action{cancel, act("transfer_to_human_agents", map[string]any{"summary": "s"})}}, Handoff},
		{Task{UserID: "u", Actions: []Action{act("list_all_product_types", nil)}}, UnknownAct},
		{Task{Actions: []Action{cancel}}, NoUser},
		{Task{UserID: "u", Actions: []Action{cancel}, UserActions: []Action{act("toggle_roaming", nil)}}, UserActions},
		{Task{UserID: "u", Actions: []Action{cancel}, InitialState: true}, InitialState},
	} {
		b := Build(c, Source{Format: FormatTau2Bench, Prefix: "p"}, tc.task)
		if b.Refusal == nil || b.Refusal.Gate != GateImport || b.Refusal.Code != tc.code || b.Scenario != nil {
			t.Errorf("%+v: got %+v, want import/%s", tc.task, b.Refusal, tc.code)
		}
	}
}

// TestBuildSeveralRequests: a task whose actions change state with several
// tools is one conversation of several requests, split where the act's tool
// changes; the look-ups between two acts are the later request's, each
// request has the look-ups its own act requires, and the outputs are the
// last request's.
func TestBuildSeveralRequests(t *testing.T) {
	c := airline(t)
	b := Build(c, Source{Format: FormatTauBench, Prefix: "x"}, Task{ID: "3", UserID: "mia_li_3668", Instruction: "i",
		Actions: []Action{
			act("cancel_reservation", map[string]any{"reservation_id": "ABC123"}),
			act("cancel_reservation", map[string]any{"reservation_id": "XYZ789"}),
			act("get_user_details", map[string]any{"user_id": "mia_li_3668"}),
			act("send_certificate", map[string]any{"user_id": "mia_li_3668", "amount": 50}),
		},
		Outputs: []string{"50"},
	})
	if b.Refusal != nil {
		t.Fatalf("refused: %v", b.Refusal)
	}
	sc := b.Scenario
	if len(sc.Then) != 1 || sc.UseCase != "cancel-reservation" || len(sc.Outputs) != 0 {
		t.Fatalf("%+v", sc)
	}
	var tools1 []string
	for _, call := range sc.Solution {
		tools1 = append(tools1, call.Tool)
	}
	if want := []string{"get_user_details", "get_reservation_details", "cancel_reservation", "get_reservation_details", "cancel_reservation"}; !reflect.DeepEqual(tools1, want) {
		t.Errorf("request 1: %v, want %v", tools1, want)
	}
	r := sc.Then[0]
	if r.UseCase != "compensation" || r.Expects != scenario.OutcomeSucceed || !reflect.DeepEqual(r.Outputs, []string{"50"}) ||
		len(r.SubGoals) == 0 || r.SubGoals[len(r.SubGoals)-1].Name != prove.RowWritten {
		t.Errorf("request 2: %+v", r)
	}
	if n := len(r.Solution); n < 2 || r.Solution[0].Tool != "get_user_details" || r.Solution[n-1].Tool != "send_certificate" {
		t.Errorf("request 2's solution: %+v", r.Solution)
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"0": "tau-bench-airline-0",
		"[mobile_data_issue]data_mode_off[PERSONA:None]": "tau-bench-airline-mobile-data-issue-data-mode-off-persona-none",
	} {
		if got := Name("tau-bench-airline", in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestSaid: a value is said as words of their own, with spaces, hyphens
// and underscores alike, and a number as a whole number.
func TestSaid(t *testing.T) {
	const in = "You want a one-way flight to SFO in economy and 3 checked bags; search for the cheapest."
	for v, want := range map[any]bool{
		"one_way": true, "SFO": true, "economy": true, "basic_economy": false, "SEA": false,
		float64(3): true, float64(30): false, json.Number("3"): true, "x": false,
	} {
		if got := said(in, v); got != want {
			t.Errorf("said(%v) = %v, want %v", v, got, want)
		}
	}
}
