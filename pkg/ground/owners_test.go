package ground

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// recipientOnly answers redirect ok only when its customer is the parcel's
// recipient in the seed, as the fixture's handler does.
type recipientOnly struct{ g *Graph }

func (f recipientOnly) Rehearse(_ context.Context, _ []scenario.Statement, calls []scenario.Call) ([]Answer, error) {
	var out []Answer
	for _, c := range calls {
		a := Answer{Refused: true, Error: "Error: only the recipient may redirect a parcel", Read: []string{"parcel_id", "customer_id"}}
		if p := f.g.Find("parcels", "parcel_id", c.Args["parcel_id"]); p != nil && Text(p["recipient_id"]) == Text(c.Args["customer_id"]) {
			a = Answer{OK: true, Result: []byte(`{}`), Read: []string{"parcel_id", "customer_id", "town"}}
		}
		out = append(out, a)
	}
	return out, nil
}

// A row with two columns naming a caller (a parcel's sender and recipient)
// belongs to each in turn: grounding plays its cases for both, so an act
// only the second may do is found, and a case taken through the second
// mints that person as the caller and leaves the first as the seed holds it.
func TestRecordOfTwoOwners(t *testing.T) {
	g := New(load(t, filepath.Join("testdata", "two-owners")))
	if got := g.OwnerRoles("parcels"); !slices.Equal(got, []string{"sender_id", "recipient_id"}) {
		t.Fatalf("OwnerRoles(parcels) = %v", got)
	}
	if got := g.OwnerRoles("customers"); got != nil {
		t.Errorf("OwnerRoles(customers) = %v, want none", got)
	}
	p := g.Find("parcels", "parcel_id", "P1")
	if o := g.OwnerAs("parcels", p, "recipient_id"); Text(o["customer_id"]) != "C2" {
		t.Errorf("recipient of P1 = %v, want C2", o)
	}
	if o := g.OwnerAs("parcels", p, ""); Text(o["customer_id"]) != "C1" {
		t.Errorf("first owner of P1 = %v, want its sender C1", o)
	}

	gr, err := g.Discover(context.Background(), recipientOnly{g})
	if err != nil {
		t.Fatal(err)
	}
	if why, never := gr.Unanswered["redirect"]; never {
		t.Fatalf("redirect never answered ok (%s), though each parcel's recipient may redirect it", why)
	}

	// The cases a tool is rehearsed on are each owner's in turn.
	tool := g.C.Tool("redirect")
	assign := map[string]Binding{}
	for _, name := range tool.ParamNames() {
		if bd, ok := gr.Bindings.Of("redirect", name); ok {
			assign[name] = bd
		}
	}
	roles := map[string]bool{}
	for _, b := range (&search{g: g, t: tool}).casesFor(assign) {
		switch Text(b.Caller["customer_id"]) {
		case Text(b.Target["sender_id"]):
			roles["sender"] = true
		case Text(b.Target["recipient_id"]):
			roles["recipient"] = true
		}
	}
	if !roles["sender"] || !roles["recipient"] {
		t.Errorf("rehearsal cases are played for %v, want both the sender and the recipient", roles)
	}

	s, b, err := g.CaseAs("parcels", p, nil, Person{First: "Ann", Last: "Lee", Number: 7001}, "recipient_id")
	if err != nil {
		t.Fatal(err)
	}
	if s.Caller == nil || s.Target == nil {
		t.Fatalf("no caller or target minted: %+v", s)
	}
	if Text(s.Target["recipient_id"]) != Text(s.Caller["customer_id"]) {
		t.Errorf("minted parcel's recipient %v is not the minted caller %v", s.Target["recipient_id"], s.Caller["customer_id"])
	}
	if Text(s.Target["sender_id"]) != "C1" {
		t.Errorf("minted parcel's sender %v, want the seed's C1", s.Target["sender_id"])
	}
	if Text(b.Caller["customer_id"]) != Text(s.Caller["customer_id"]) {
		t.Errorf("the case's caller %v is not the minted one %v", b.Caller["customer_id"], s.Caller["customer_id"])
	}
	// The default stays the first owner.
	s, _, err = g.Case("parcels", p, nil, Person{First: "Bo", Last: "Ng", Number: 7002})
	if err != nil {
		t.Fatal(err)
	}
	if Text(s.Target["sender_id"]) != Text(s.Caller["customer_id"]) || Text(s.Target["recipient_id"]) != "C2" {
		t.Errorf("default case: sender %v recipient %v caller %v", s.Target["sender_id"], s.Target["recipient_id"], s.Caller["customer_id"])
	}
}

// An argument its author marks `x-ref: false` whose schema writes its
// values (a pattern) keeps that binding when its tool never answers ok for
// another reason; were it unbound, the hint would ask for a schema to write
// it from, not for the x-ref it already has.
func TestDeclinedArgumentOfAnUnansweredTool(t *testing.T) {
	g := New(load(t, filepath.Join("testdata", "two-owners")))
	gr, err := g.Discover(context.Background(), recipientOnly{g})
	if err != nil {
		t.Fatal(err)
	}
	if _, never := gr.Unanswered["pay_fee"]; !never {
		t.Fatal("pay_fee answered ok, though its rehearsal always refuses")
	}
	if b, _ := gr.Bindings.Of("pay_fee", "card_last4"); b.How != FromPattern {
		t.Errorf("pay_fee.card_last4 bound %+v, want written from its pattern", b)
	}
	b := Binding{Tool: "pay_fee", Param: "card_last4", How: Unbound}
	if hint := XRefHint(g.C, b); !strings.Contains(hint, "has `x-ref: false`") || strings.Contains(hint, "or `x-ref: false` when") {
		t.Errorf("hint for an argument already marked x-ref: false: %s", hint)
	}
}
