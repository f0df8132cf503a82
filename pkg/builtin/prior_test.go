package builtin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestActAlreadyDoneHoldsTheActsValues: guardian-line refuses a card whose
// member number is already on file, and the plan deals that refusal with
// the card the act once added in the case's setup. Each case fills its act
// with a member number of its own, so the card in its setup must hold that
// number (else the world adds the card and the refusal is groundless), and
// a key of its own (else two scenarios of a run hand out one record). Two
// cases of the level are composed, proved and kept, and their setup cards
// differ.
func TestActAlreadyDoneHoldsTheActsValues(t *testing.T) {
	ctx := context.Background()
	c, e, pl := planned(t, filepath.Join("..", "..", "testdata", "contracts", "guardian-line"), 60)
	p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
	for _, b := range pl.Buckets {
		if b.Spec.Refusal != "handlers/add_card.star:6" || len(b.Spec.Templates) < 2 {
			continue
		}
		keys := map[string]bool{}
		for k := range 2 {
			sc, ok := p.compose(brief.Bucket{Bucket: b}, k, b.Spec.Templates[k])
			if !ok {
				t.Fatalf("%s: case %d not composed", b.ID, k)
			}
			v, err := e.Prover.Prove(ctx, &sc)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Kept {
				t.Errorf("%s: refused %v", sc.Name, v.Refusals)
			}
			act := sc.Tempting[len(sc.Tempting)-1]
			found := false
			for _, st := range sc.Setup {
				if strings.HasPrefix(st.SQL, "INSERT INTO cards ") && len(st.Args) == 4 && st.Args[3] == act.Args["member_number"] && st.Args[2] == act.Args["payer"] {
					keys[ground.Text(st.Args[0])], found = true, true
				}
			}
			if !found {
				t.Errorf("%s: no card in the setup holds the act's payer and member number %v", sc.Name, act.Args)
			}
		}
		if len(keys) != 2 {
			t.Errorf("%s: the two cases' setup cards have keys %v, want two different", b.ID, keys)
		}
		return
	}
	t.Fatal("no bucket deals the member number already on file")
}

// planned is the contract in dir, its engine on the test database and its
// plan for asked scenarios, derived as a run derives it.
func planned(t *testing.T, dir string, asked int) (*contract.Contract, *engine.Engine, *plan.Plan) {
	t.Helper()
	c, probs, err := contract.Load(dir)
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	ctx := context.Background()
	e, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	// Read from the plan cache make test names, when a test of this run has
	// derived the contract already: these tests are of the writing.
	pl, err := plan.Derive(ctx, c, probe.Rehearser(e.World), plan.Options{Asked: asked, Rules: e.Prover, Mutants: probe.Mutants(e.World, c), Cache: plan.EnvCache(os.Getenv)})
	if err != nil {
		t.Fatal(err)
	}
	return c, e, pl
}

// TestAGuardianCalls: on guardian-line a child's booking passes
// verify_guardian after the patient is identified, so the one who calls is
// the guardian: the persona bears the name that check takes, and the
// instruction has them identify the patient, not themselves.
func TestAGuardianCalls(t *testing.T) {
	c, _, pl := planned(t, filepath.Join("..", "..", "testdata", "contracts", "guardian-line"), 60)
	p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
	n := 0
	for _, b := range pl.Buckets {
		if b.Outcome != "succeed" || !slices.Contains(b.Spec.Gated, "verify_guardian") {
			continue
		}
		sc, ok := p.compose(brief.Bucket{Bucket: b}, 0, b.Spec.Templates[0])
		if !ok {
			t.Fatalf("%s: case 0 not composed", b.ID)
		}
		for _, call := range sc.Solution {
			if call.Tool != "verify_guardian" {
				continue
			}
			n++
			want := fmt.Sprintf("%s %s", call.Args["guardian_first_name"], call.Args["guardian_last_name"])
			if sc.Persona.Name != want || !strings.HasPrefix(sc.Instruction, want+" contacts support about ") {
				t.Errorf("%s: the caller is %q (%q), want the guardian %s", sc.Name, sc.Persona.Name, sc.Instruction, want)
			}
			if !strings.Contains(sc.Instruction, "can confirm the patient with ") {
				t.Errorf("%s: the guardian is asked to confirm who they are with the patient's details: %q", sc.Name, sc.Instruction)
			}
		}
	}
	if n == 0 {
		t.Fatal("no success verifies a guardian")
	}
}
