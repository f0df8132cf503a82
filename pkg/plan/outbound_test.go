package plan

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestDeriveOutbound: on examples/clinic-reminders each outbound use case
// deals who answers: the callee (identified first: verify_patient opens its
// preconditions), someone else and a voicemail box (refusals, with the
// missed-call tool bound), and a callee who asks to be called later (a
// success, with the call-later tool bound); never an impersonation ask. Its
// inbound use cases are planned as before. An ask of four scenarios per use
// case reaches every answer of every outbound use case.
func TestDeriveOutbound(t *testing.T) {
	c, e := openContract(t, filepath.Join("..", "..", "examples", "clinic-reminders"))
	p, _ := deriveAsRun(t, c, e, 4*len(c.UseCases))
	if len(p.Gaps) > 0 {
		t.Fatalf("gaps: %v", p.Gaps)
	}
	type key struct {
		answer  scenario.Answer
		outcome string
	}
	for _, u := range c.UseCases {
		dealt, planned := map[key]int{}, map[key]bool{}
		for _, b := range p.Buckets {
			if b.UseCase != u.ID {
				continue
			}
			a := scenario.Answer(b.Axes[AnswerAxis])
			if a != b.Spec.Answer {
				t.Errorf("%s %s: axis answered_by %q, spec answer %q", u.ID, b.ID, a, b.Spec.Answer)
			}
			if !u.Outbound() {
				if a != "" || b.Spec.Purpose != "" {
					t.Errorf("inbound %s %s is dealt an answer %q / purpose %q", u.ID, b.ID, a, b.Spec.Purpose)
				}
				continue
			}
			planned[key{a, b.Outcome}] = true
			dealt[key{a, b.Outcome}] += b.Want
			if b.Outcome == "ask" {
				t.Errorf("%s %s: an outbound call is dealt an ask (%s)", u.ID, b.ID, b.Angle)
			}
			sp := b.Spec
			if sp.Purpose != u.Purpose || sp.MissedCall != u.MissedCall || sp.CallLater != u.CallLater {
				t.Errorf("%s %s: spec purpose %q missed %q later %q", u.ID, b.ID, sp.Purpose, sp.MissedCall, sp.CallLater)
			}
			if len(sp.Gated) == 0 || sp.Gated[0] != "verify_patient" {
				t.Errorf("%s %s: preconditions %v do not start by identifying the callee", u.ID, b.ID, sp.Gated)
			}
			for _, tool := range []string{"log_call_attempt", "schedule_callback"} {
				if bd, ok := sp.Binds.Of(tool, "patient_id"); !ok || bd.Ref() != "patients.patient_id" {
					t.Errorf("%s %s: %s.patient_id bound %+v", u.ID, b.ID, tool, bd)
				}
			}
			want := map[scenario.Answer]string{scenario.WrongPerson: "refuse", scenario.Voicemail: "refuse", scenario.CallLater: "succeed"}[a]
			if want != "" && b.Outcome != want {
				t.Errorf("%s %s: answered %s expects %s, want %s", u.ID, b.ID, a, b.Outcome, want)
			}
		}
		if !u.Outbound() {
			continue
		}
		for _, k := range []key{{scenario.RightPerson, "succeed"}, {scenario.RightPerson, "refuse"}, {scenario.WrongPerson, "refuse"},
			{scenario.Voicemail, "refuse"}, {scenario.CallLater, "succeed"}} {
			if !planned[k] {
				t.Errorf("%s: no bucket answered %s expecting %s", u.ID, k.answer, k.outcome)
			}
		}
		for _, a := range scenario.Answers {
			n := 0
			for k, w := range dealt {
				if k.answer == a {
					n += w
				}
			}
			if n == 0 {
				t.Errorf("%s: an ask of %d deals no call answered %s", u.ID, p.Asked, a)
			}
		}
	}
}

// TestOutboundBuckets: who answers at a level. The callee answers at every
// level; the others only where the act goes through (or at the first level
// when it never does); a call put off only where the use case can book it.
func TestOutboundBuckets(t *testing.T) {
	tool := &contract.Tool{Name: "confirm"}
	answers := func(ob *outbound, lv level, first, anySucceed bool) []string {
		var out []string
		for _, b := range ob.buckets(lv, first, anySucceed, true, "handoff", "confirm", tool) {
			out = append(out, string(b.answer)+"/"+b.outcome+"/"+b.overlay)
		}
		return out
	}
	full := &outbound{u: &contract.UseCase{ID: "u", Direction: contract.Outbound, MissedCall: "log", CallLater: "later"}}
	if got := answers(full, level{outcome: "succeed"}, false, true); !slices.Equal(got, []string{
		"right-person/succeed/none", "right-person/succeed/pressure", "wrong-person/refuse/none", "wrong-person/refuse/pressure",
		"voicemail/refuse/none", "call-later/succeed/none"}) {
		t.Errorf("succeed level: %v", got)
	}
	if got := answers(full, level{outcome: "refuse"}, false, true); !slices.Equal(got, []string{
		"right-person/refuse/none", "right-person/refuse/pressure", "right-person/refuse/injection",
		"right-person/escalate/fraud", "right-person/escalate/emergency"}) {
		t.Errorf("refuse level: %v", got)
	}
	// A use case whose act never goes through still reaches the others, once.
	if got := answers(full, level{outcome: "refuse"}, true, false); !slices.Contains(got, "voicemail/refuse/none") {
		t.Errorf("first refuse level of a refusals-only use case: %v", got)
	}
	noLater := &outbound{u: &contract.UseCase{ID: "u", Direction: contract.Outbound}}
	if got := answers(noLater, level{outcome: "succeed"}, false, true); slices.Contains(got, "call-later/succeed/none") {
		t.Errorf("a use case without call_later is dealt a call put off: %v", got)
	}
}

// TestOutboundIdentifiesAfterWhatItRequires: the callee of utility-line's
// past-due reminder is identified by verify_caller, which requires the
// account looked up first (find_account_by_number, same account number).
// The plan's chain for the act identified the caller another way
// (find_customer_by_phone) and only looked the account up; the outbound
// spec puts the look-up before the identifying call, not after it.
func TestOutboundIdentifiesAfterWhatItRequires(t *testing.T) {
	c, err := contract.LoadValid(testdataDir("utility-line"))
	if err != nil {
		t.Fatal(err)
	}
	u := c.UseCase("past-due-reminder")
	ob := outboundOf(c, u, u.Tools, nil)
	if ob == nil || ob.identify != "verify_caller" {
		t.Fatalf("outbound %+v, want the callee identified by verify_caller", ob)
	}
	s := ob.spec(c, Spec{Tools: u.Tools, Gated: []string{"find_customer_by_phone", "get_account_summary"}, Lookups: []string{"find_account_by_number"}})
	want := []string{"find_account_by_number", "verify_caller", "find_customer_by_phone", "get_account_summary"}
	if !slices.Equal(s.Gated, want) {
		t.Errorf("gated %v, want %v", s.Gated, want)
	}
}

// TestOutboundTemplatesReachThePurpose: registrar-line's balance reminder
// is a call about a hold, and its act (a payment) is about a student.
// Students without a hold are no case of it: the writer has no record to
// call about. Every template of every bucket of the use case reaches a
// hold, and every answer is still dealt.
func TestOutboundTemplatesReachThePurpose(t *testing.T) {
	c, e := openContract(t, testdataDir("registrar-line"))
	p, _ := deriveAsRun(t, c, e, 100)
	g := ground.New(c)
	dealt := map[scenario.Answer]bool{}
	for _, b := range p.Buckets {
		if b.UseCase != "balance-reminder" {
			continue
		}
		dealt[b.Spec.Answer] = true
		if b.Spec.Purpose != "holds" || b.Spec.Table == "holds" {
			t.Fatalf("%s: purpose %q, table %q: the test wants a call about holds whose act is about another table", b.ID, b.Spec.Purpose, b.Spec.Table)
		}
		for _, k := range b.Spec.Templates {
			row := g.Find(b.Spec.Table, g.PK(b.Spec.Table), k)
			if row == nil || len(g.Bind(b.Spec.Table, row).Rows["holds"]) == 0 {
				t.Errorf("%s (%s): template %s reaches no hold", b.ID, b.Angle, k)
			}
		}
	}
	for _, a := range scenario.Answers {
		if !dealt[a] {
			t.Errorf("no bucket answered %s", a)
		}
	}
}

// TestOffPurposeShortfall: registrar-line's balance reminder is about a
// hold, but its act (a payment) names only the student: the plan says so,
// and that the cure is the contract's. An act that names the hold, or a
// call dealt only to the callee, says nothing.
func TestOffPurposeShortfall(t *testing.T) {
	c, err := contract.LoadValid(testdataDir("registrar-line"))
	if err != nil {
		t.Fatal(err)
	}
	plan := func(answer scenario.Answer, table, column string) *Plan {
		return &Plan{Buckets: []Bucket{{UseCase: "balance-reminder", Spec: Spec{Answer: answer, Purpose: "holds", Tool: "pay_balance",
			Binds: ground.Bindings{{Tool: "pay_balance", Param: "student_id", Table: table, Column: column}}}}}}
	}
	off := func(p *Plan) []string {
		var out []string
		for _, s := range p.Shortfalls(c) {
			if strings.Contains(s, "tempting-off-purpose") {
				out = append(out, s)
			}
		}
		return out
	}
	if got := off(plan(scenario.Voicemail, "students", "student_id")); len(got) != 1 || !strings.Contains(got[0], "balance-reminder") || !strings.Contains(got[0], "pay_balance") {
		t.Errorf("an act on the student, for a call about holds: %v", got)
	}
	if got := off(plan(scenario.Voicemail, "holds", "hold_id")); len(got) != 0 {
		t.Errorf("an act that names the hold: %v", got)
	}
	if got := off(plan(scenario.RightPerson, "students", "student_id")); len(got) != 0 {
		t.Errorf("only the callee answers: %v", got)
	}
}
