package ground

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
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
		case "transfer_service":
			a = f.move(c.Args)
		case "stop_service":
			a.Read = []string{"account_number", "customer_id", "stop_date"}
			switch day := Text(c.Args["stop_date"]); {
			case f.g.Find("accounts", "account_number", Text(c.Args["account_number"])) == nil:
				a.Error = "Error: there is no such account"
			case day < f.today:
				a.Error = fmt.Sprintf("Error: service cannot stop on a past date (%s)", day)
			default:
				a = Answer{OK: true, Wrote: true, Result: []byte(`{}`)}
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// move answers transfer_service as its handler does: a move date after
// today, no day the crews are booked, and a new address that is one of the world's premises (street,
// unit and ZIP of one row) where nobody's service is on.
func (f *quotingWorld) move(args map[string]any) Answer {
	a := Answer{Refused: true, Read: []string{"account_number", "customer_id", "move_date"}}
	acct := f.g.Find("accounts", "account_number", Text(args["account_number"]))
	day := Text(args["move_date"])
	switch {
	case acct == nil:
		a.Error = fmt.Sprintf("Error: there is no account %s", Text(args["account_number"]))
		return a
	case day <= f.today:
		a.Error = fmt.Sprintf("Error: the move date must be after today (%s)", f.today)
		return a
	case f.booked[day]:
		a.Error = fmt.Sprintf("Error: every crew is booked on %s", day)
		return a
	}
	a.Read = append(a.Read, "new_street", "new_unit", "new_zip")
	street, unit, zip := Text(args["new_street"]), Text(args["new_unit"]), Text(args["new_zip"])
	var premise Row
	for _, p := range f.g.Rows("premises") {
		if Text(p["street"]) == street && Text(p["unit"]) == unit && Text(p["zip"]) == zip {
			premise = p
		}
	}
	switch {
	case premise == nil:
		a.Error = fmt.Sprintf("Error: we have no service address %s %s in %s", street, unit, zip)
	case Text(premise["premise_id"]) == Text(acct["premise_id"]):
		a.Error = fmt.Sprintf("Error: that is the address account %s already serves", Text(acct["account_number"]))
	case f.occupied(Text(premise["premise_id"])):
		a.Error = fmt.Sprintf("Error: service at %s is still on under another account", street)
	default:
		return Answer{OK: true, Wrote: true, Result: []byte(`{}`)}
	}
	return a
}

// occupied reports whether an account of the seed is open at a premise.
func (f *quotingWorld) occupied(premise string) bool {
	for _, r := range f.g.Rows("accounts") {
		if Text(r["premise_id"]) == premise && Text(r["status"]) != "closed" && Text(r["status"]) != "final" {
			return true
		}
	}
	return false
}

// TestDiscoverTriesWhatTheRefusalQuotes: a refusal that quotes an argument's
// value says what to change. A start date the world calls past is tried as
// a day counted from the world's clock; a certificate it calls used is tried
// as a new one, and that new one is kept while the accounts no hold was put
// on yet are sought (the sample reaches accounts that already have one). A
// refusal that quotes only the case's own record moves on to the next case.
// A day the world takes from a column and from the clock alike is the
// caller's, from the clock. A new address whose street, unit and ZIP the refusal quotes is taken
// from one row, played over the rows until one is vacant.
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
	for _, tool := range []string{"request_medical_hold", "start_service", "transfer_service", "stop_service"} {
		if why, never := gr.Unanswered[tool]; never {
			t.Errorf("%s never answered ok: %s", tool, why)
		}
	}
	if b, _ := gr.Bindings.Of("start_service", "start_date"); b.How != FromClock || !b.Confirmed || len(b.Picks) != 1 || Text(b.Picks[0]) < g.today() {
		t.Errorf("start_service.start_date bound %+v, want a day from the clock, today or later, confirmed", b)
	}
	for _, day := range []string{"transfer_service.move_date", "stop_service.stop_date"} {
		tool, p, _ := strings.Cut(day, ".")
		if b, _ := gr.Bindings.Of(tool, p); b.How != FromClock || !b.Confirmed {
			t.Errorf("%s bound %+v, want a day from the clock, confirmed", day, b)
		}
	}
	var row []string
	for _, p := range []string{"new_street", "new_unit", "new_zip"} {
		b, _ := gr.Bindings.Of("transfer_service", p)
		if b.Source != FromShared || len(b.Picks) != 1 || b.Table != "premises" {
			t.Fatalf("transfer_service.%s bound %+v, want one shared premise", p, b)
		}
		row = append(row, Text(b.Picks[0]))
	}
	vacant := false
	for _, p := range g.Rows("premises") {
		if Text(p["street"]) == row[0] && Text(p["unit"]) == row[1] && Text(p["zip"]) == row[2] {
			vacant = !w.occupied(Text(p["premise_id"]))
		}
	}
	if !vacant {
		t.Errorf("transfer_service's new address %q is no vacant premise of the world", row)
	}
	if b, _ := gr.Bindings.Of("request_medical_hold", "certificate_number"); b.How != Fresh || !b.Confirmed {
		t.Errorf("request_medical_hold.certificate_number bound %+v, want a fresh value, confirmed", b)
	}
}
