package suite

import (
	"reflect"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestOutboundReport: who answered is counted per use case, and every
// answer an outbound use case should show but does not is named; the phone
// fields are counted per value.
func TestOutboundReport(t *testing.T) {
	c := &contract.Contract{UseCases: []contract.UseCase{
		{ID: "confirm", Direction: contract.Outbound, Purpose: "appointments", CallLater: "schedule_callback"},
		{ID: "remind", Direction: contract.Outbound, Purpose: "statements"},
		{ID: "inbound", Direction: contract.Inbound},
	}}
	call := func(uc string, answer scenario.Answer, p scenario.Persona) scenario.Scenario {
		return scenario.Scenario{UseCase: uc, Persona: p, Outbound: &scenario.Outbound{Purpose: "x", AnsweredBy: answer}}
	}
	loud := scenario.Persona{LineQuality: "Weak mobile signal", BackgroundNoise: "Street traffic", Spelling: "Groups digits in pairs", TalksOver: true}
	quiet := scenario.Persona{LineQuality: "Clear line", BackgroundNoise: "Quiet room", Spelling: "Groups digits in pairs"}
	scs := []scenario.Scenario{
		call("confirm", scenario.RightPerson, loud), call("confirm", scenario.RightPerson, quiet),
		call("confirm", scenario.Voicemail, quiet), call("confirm", scenario.WrongPerson, loud),
		call("remind", scenario.RightPerson, quiet),
		{UseCase: "inbound"},
	}
	o := outbound(c, scs)
	want := &Outbound{
		Scenarios:  5,
		AnsweredBy: map[string]int{"right-person": 3, "voicemail": 1, "wrong-person": 1},
		ByUseCase: map[string]map[string]int{
			"confirm": {"right-person": 2, "voicemail": 1, "wrong-person": 1},
			"remind":  {"right-person": 1},
		},
		// remind names no call_later tool: it is not expected to call later.
		Missing: []string{"confirm/call-later", "remind/wrong-person", "remind/voicemail"},
	}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("outbound:\n got %+v\nwant %+v", o, want)
	}
	if o := outbound(&contract.Contract{UseCases: []contract.UseCase{{ID: "inbound", Direction: contract.Inbound}}}, scs[5:]); o != nil {
		t.Errorf("an inbound contract reports outbound calls: %+v", o)
	}

	ps := phoneSpread(scs)
	wantPS := &PhoneSpread{Scenarios: 5,
		LineQuality:     map[string]int{"Weak mobile signal": 2, "Clear line": 3},
		BackgroundNoise: map[string]int{"Street traffic": 2, "Quiet room": 3},
		Spelling:        map[string]int{"Groups digits in pairs": 5},
		TalksOver:       2}
	if !reflect.DeepEqual(ps, wantPS) {
		t.Errorf("phone spread:\n got %+v\nwant %+v", ps, wantPS)
	}
	if ps := phoneSpread(scs[5:]); ps != nil {
		t.Errorf("no phone fields, yet a spread: %+v", ps)
	}
}
