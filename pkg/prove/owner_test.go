package prove_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestRuleAboutSomeoneElseOnTheLine: pharmacy-line's rule verify-caregiver
// has a check that fails whenever anything about the patient is read
// before a caregiver is verified for them, whoever calls. A patient who
// identified themself and orders their own refill breaks nothing that
// rule is about, so the check binds none of their scenarios; a caregiver's
// request that leaves out the verification the use case offers, or a
// patient's that leaves out identifying themself, is still refused, and so
// is a caregiver's second request made as if they were the patient.
func TestRuleAboutSomeoneElseOnTheLine(t *testing.T) {
	ctx := context.Background()
	c, err := contract.LoadValid(filepath.Join("..", "..", "testdata", "contracts", "pharmacy-line"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	load := func(name string) *scenario.Scenario {
		b, err := os.ReadFile(filepath.Join("testdata", "owner", name))
		if err != nil {
			t.Fatal(err)
		}
		var sc scenario.Scenario
		if err := json.Unmarshal(b, &sc); err != nil {
			t.Fatal(err)
		}
		return &sc
	}
	without := func(sc *scenario.Scenario, tool string) *scenario.Scenario {
		sc.Solution = slices.DeleteFunc(sc.Solution, func(c scenario.Call) bool { return c.Tool == tool })
		return sc
	}
	for _, tc := range []struct {
		name string
		sc   *scenario.Scenario
		kept bool
	}{
		{"the patient orders their own refill", load("refill-self.json"), true},
		{"a caregiver, verified, orders the patient's refill", load("refill-caregiver.json"), true},
		{"a caregiver, never verified", without(load("refill-caregiver.json"), "verify_caregiver"), false},
		{"the patient, never identified", without(load("refill-self.json"), "find_patient_by_phone_dob"), false},
		{"a caregiver, verified, then asking as if the patient", load("caregiver-then-own.json"), false},
	} {
		v, err := e.Prover.Prove(ctx, tc.sc)
		if err != nil {
			t.Fatal(err)
		}
		if v.Kept != tc.kept {
			t.Errorf("%s: kept %v, want %v: %v", tc.name, v.Kept, tc.kept, v.Refusals)
		}
	}
}
