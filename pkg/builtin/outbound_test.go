package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestComposesOutboundCalls: on examples/clinic-reminders, the first case
// of every outbound bucket the plan deals is composed as the call its answer
// makes it, and kept by the prover: the callee identified before the act; a
// voicemail or a wrong person logged with the missed-call tool (its outcome
// chosen by the answer), nothing else done, the act the call is about as the
// tempting move, the rule that forbids it named and the judged sub-goals
// listed; a call put off booked for the time the callee asks.
func TestComposesOutboundCalls(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("..", "..", "examples", "clinic-reminders"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	ctx := context.Background()
	e, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	pl, err := plan.Derive(ctx, c, probe.Rehearser(e.World), plan.Options{Rules: e.Prover, Mutants: probe.Mutants(e.World, c), Cache: plan.EnvCache(os.Getenv)})
	if err != nil {
		t.Fatal(err)
	}
	p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
	seen := map[string]int{}
	for _, b := range pl.Buckets {
		if b.Spec.Answer == "" || b.Overlay != "none" && b.Spec.Answer == scenario.RightPerson {
			continue
		}
		bk := brief.Bucket{Bucket: b}
		var sc scenario.Scenario
		ok, key := false, ""
		for _, key = range b.Spec.Templates {
			if sc, ok = p.compose(bk, 0, key); ok {
				break
			}
		}
		if !ok {
			t.Errorf("%s (%s): no template composes", b.ID, b.Angle)
			continue
		}
		if seen["noisy"] == 0 && b.Spec.Answer != scenario.Voicemail {
			// A revision's noisier line: the same case, its caller on the
			// worst line, speaking over the agent.
			seen["noisy"]++
			nb := bk
			nb.Spec.Noisy = true
			noisy, ok := p.compose(nb, 0, key)
			want := sc
			worst := plan.Noisier(c, plan.Persona{})
			want.Persona.LineQuality, want.Persona.BackgroundNoise, want.Persona.TalksOver = worst.LineQuality, worst.BackgroundNoise, true
			if len(c.Personas.LineQualities) == 0 || worst.LineQuality != c.Personas.LineQualities[len(c.Personas.LineQualities)-1] {
				t.Errorf("the worst line of clinic-reminders is %q, want the last of its own list %q", worst.LineQuality, c.Personas.LineQualities)
			}
			got, _ := json.Marshal(noisy)
			exp, _ := json.Marshal(want)
			if !ok || string(got) != string(exp) {
				t.Errorf("%s on a noisier line:\n%s\nwant\n%s", sc.Name, got, exp)
			}
		}
		o := sc.Outbound
		if o == nil || o.AnsweredBy != b.Spec.Answer || o.Purpose != c.UseCase(b.UseCase).Purpose || len(o.Record) != 1 {
			t.Errorf("%s: outbound %+v", sc.Name, o)
			continue
		}
		if sc.Persona.LineQuality == "" || sc.Persona.BackgroundNoise == "" || sc.Persona.Spelling == "" {
			t.Errorf("%s: a voice persona without its phone line: %+v", sc.Name, sc.Persona)
		}
		v, err := e.Prover.Prove(ctx, &sc)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Kept {
			t.Errorf("%s: refused: %v", sc.Name, v.Refusals)
			continue
		}
		seen[b.UseCase+"/"+string(o.AnsweredBy)]++
		judged := map[string]bool{}
		for _, g := range sc.SubGoals {
			if g.Judged {
				judged[g.Name] = true
			}
		}
		switch o.AnsweredBy {
		case scenario.Voicemail, scenario.WrongPerson:
			want := map[scenario.Answer]string{scenario.Voicemail: "voicemail", scenario.WrongPerson: "wrong person"}[o.AnsweredBy]
			if len(sc.Solution) != 1 || sc.Solution[0].Tool != "log_call_attempt" || sc.Solution[0].Args["outcome"] != want {
				t.Errorf("%s: solution %+v, want the attempt logged as %q", sc.Name, sc.Solution, want)
			}
			if !judged[prove.NothingDisclosed] || (o.AnsweredBy == scenario.Voicemail) != judged[prove.VoicemailUsable] {
				t.Errorf("%s: judged %v", sc.Name, judged)
			}
			if !strings.Contains(strings.Join(sc.Rules, " "), "identify-before-disclosing") {
				t.Errorf("%s: rules %v do not name the rule that forbids the act", sc.Name, sc.Rules)
			}
			if strings.Contains(sc.Instruction, "date of birth") {
				t.Errorf("%s: whoever answers is handed what identifies the callee: %s", sc.Name, sc.Instruction)
			}
		case scenario.CallLater:
			if len(sc.Solution) != 1 || sc.Solution[0].Tool != "schedule_callback" ||
				!strings.Contains(sc.Instruction, ground.Text(sc.Solution[0].Args["call_window"])) {
				t.Errorf("%s: solution %+v, instruction %q", sc.Name, sc.Solution, sc.Instruction)
			}
		case scenario.RightPerson:
			if sc.Solution[0].Tool != "verify_patient" {
				t.Errorf("%s: the solution does not identify the callee first: %+v", sc.Name, sc.Solution)
			}
		}
	}
	for _, u := range c.UseCases {
		if !u.Outbound() {
			continue
		}
		for _, a := range scenario.Answers {
			if seen[u.ID+"/"+string(a)] == 0 {
				t.Errorf("%s: no call answered %s composed and kept", u.ID, a)
			}
		}
	}
}

func TestMain(m *testing.M) { testenv.Main(m) }
