package ground

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// caregiverWorld answers pharmacy-line's request_refill as its handler does
// on whom it is for: a patient's own prescription, and, when a caregiver's
// id is given, only for a caregiver whose authorization for that patient is
// current. A patient asking for themself leaves the id out. Every other
// tool is refused.
type caregiverWorld struct {
	g     *Graph
	today string
}

func (f *caregiverWorld) Rehearse(_ context.Context, _ []scenario.Statement, calls []scenario.Call) ([]Answer, error) {
	var out []Answer
	for _, c := range calls {
		a := Answer{Refused: true, Error: "Error: no", Read: []string{"patient_id"}}
		if c.Tool == "request_refill" {
			a = f.refill(c.Args)
		}
		out = append(out, a)
	}
	return out, nil
}

func (f *caregiverWorld) refill(args map[string]any) Answer {
	a := Answer{Refused: true, Read: []string{"patient_id", "caregiver_id", "rx_number"}}
	pid := Text(args["patient_id"])
	if cg, given := args["caregiver_id"]; given {
		current := false
		for _, auth := range f.g.Where("caregiver_authorizations", "caregiver_id", cg) {
			current = current || Text(auth["patient_id"]) == pid && auth["revoked_on"] == nil && Text(auth["expires_on"]) >= f.today
		}
		if !current {
			a.Error = fmt.Sprintf("Error: %s has no authorization on file to act for this patient", Text(cg))
			return a
		}
	}
	rx := f.g.Find("prescriptions", "rx_number", args["rx_number"])
	if rx == nil || Text(rx["patient_id"]) != pid {
		a.Error = fmt.Sprintf("Error: prescription %s is not on this patient's record", Text(args["rx_number"]))
		return a
	}
	return Answer{OK: true, Wrote: true, Result: []byte(`{}`)}
}

// TestOptionalRecordIsNoFreshValue: an act's optional argument that names
// a record (the caregiver calling for the patient) is not taken for one that
// takes fresh values because the act answered ok without it: a fresh value
// left out was never tried.
func TestOptionalRecordIsNoFreshValue(t *testing.T) {
	c, err := contract.LoadValid(filepath.Join("..", "..", "testdata", "contracts", "pharmacy-line"))
	if err != nil {
		t.Fatal(err)
	}
	g := New(c)
	gr, err := g.Discover(context.Background(), &caregiverWorld{g: g, today: g.today()})
	if err != nil {
		t.Fatal(err)
	}
	if why, never := gr.Unanswered["request_refill"]; never {
		t.Fatalf("request_refill never answered ok: %s", why)
	}
	if b, _ := gr.Bindings.Of("request_refill", "caregiver_id"); b.How == Fresh || b.Table != "caregivers" || b.Column != "caregiver_id" {
		t.Errorf("request_refill.caregiver_id bound %+v, want the caregivers.caregiver_id of a record, not a fresh value", b)
	}
}
