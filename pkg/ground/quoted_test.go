package ground

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// quotingWorld answers two tools of utility-line as their handlers do, in
// the words a handler refuses with, quoting the value it refuses: a medical
// hold needs a certificate no hold has used, on an account with no hold yet;
// service starts today or later, on a day no account of the seed starts or
// stops on (the crews are booked). Every other tool is refused.
type quotingWorld struct {
	g      *Graph
	today  string
	booked map[string]bool
}

func (f *quotingWorld) Rehearse(_ context.Context, _ []scenario.Statement, calls []scenario.Call) ([]Answer, error) {
	var out []Answer
	for _, c := range calls {
		a := Answer{Refused: true, Error: "Error: no", Read: []string{"account_number", "customer_id"}}
		switch c.Tool {
		case "request_medical_hold":
			a.Read = []string{"account_number", "customer_id", "certificate_number", "physician_name", "patient_name"}
			cert, acct := Text(c.Args["certificate_number"]), Text(c.Args["account_number"])
			switch {
			case f.g.Find("accounts", "account_number", acct) == nil:
				a.Error = fmt.Sprintf("Error: there is no account %s", acct)
			case f.g.Find("medical_holds", "certificate_number", cert) != nil:
				a.Error = fmt.Sprintf("Error: certificate %s was already used", cert)
			case f.g.Find("medical_holds", "account_number", acct) != nil:
				a.Error = fmt.Sprintf("Error: account %s already had a medical hold", acct)
			default:
				a = Answer{OK: true, Wrote: true, Result: []byte(`{}`)}
			}
		case "start_service":
			a.Read = []string{"customer_id", "start_date"}
			switch day := Text(c.Args["start_date"]); {
			case day < f.today:
				a.Error = fmt.Sprintf("Error: service cannot start on a past date (%s)", day)
			case f.booked[day]:
				a.Error = fmt.Sprintf("Error: every crew is booked on %s", day)
			default:
				a = Answer{OK: true, Wrote: true, Result: []byte(`{}`)}
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// TestDiscoverTriesWhatTheRefusalQuotes: a refusal that quotes an argument's
// value says what to change. A start date the world calls past is tried as
// a day counted from the world's clock; a certificate it calls used is tried
// as a new one, and that new one is kept while the accounts no hold was put
// on yet are sought (the sample reaches accounts that already have one). A
// refusal that quotes only the case's own record moves on to the next case.
func TestDiscoverTriesWhatTheRefusalQuotes(t *testing.T) {
	c, err := contract.LoadValid(filepath.Join("..", "..", "testdata", "contracts", "utility-line"))
	if err != nil {
		t.Fatal(err)
	}
	g := New(c)
	w := &quotingWorld{g: g, today: g.today(), booked: map[string]bool{}}
	for _, r := range g.Rows("accounts") {
		for _, col := range []string{"opened_on", "stop_date"} {
			if r[col] != nil {
				w.booked[Text(r[col])] = true
			}
		}
	}
	gr, err := g.Discover(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"request_medical_hold", "start_service"} {
		if why, never := gr.Unanswered[tool]; never {
			t.Errorf("%s never answered ok: %s", tool, why)
		}
	}
	if b, _ := gr.Bindings.Of("start_service", "start_date"); b.How != FromClock || !b.Confirmed || len(b.Picks) != 1 || Text(b.Picks[0]) < g.today() {
		t.Errorf("start_service.start_date bound %+v, want a day from the clock, today or later, confirmed", b)
	}
	if b, _ := gr.Bindings.Of("request_medical_hold", "certificate_number"); b.How != Fresh || !b.Confirmed {
		t.Errorf("request_medical_hold.certificate_number bound %+v, want a fresh value, confirmed", b)
	}
}
