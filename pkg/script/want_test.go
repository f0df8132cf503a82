package script

import (
	"context"
	"errors"
	"testing"
)

// A refusal whose branch compares a number of the call's with one the
// handler computed carries both; one decided by the call alone, or by the
// world alone, carries none.
func TestRefusalCarriesWant(t *testing.T) {
	p := compile(t, Options{}, map[string]string{
		// The total is summed from rows and another argument; paid from a
		// list of the call's.
		"book": `
def handle(args, db):
    total = 0
    for r in db.query("SELECT price FROM t"):
        total += r["price"] * args["seats"]
    paid = 0
    for p in args["payments"]:
        paid += p["amount"]
    if paid != total:
        refuse("total is %s, paid %s" % (total, paid))
    return "ok"
`,
		// A tolerance: the difference is the noted operation.
		"pay": `
def handle(args, db):
    c = db.one("SELECT price FROM t")
    if abs(float(args["amount"]) - c["price"]) > 0.005:
        refuse("the amount due is %s" % c["price"])
    return "ok"
`,
		// The call alone decides: nothing computed to learn.
		"limit": `
def handle(args, db):
    c = db.one("SELECT price FROM t")
    if args["amount"] > 1000:
        refuse("too much")
    if args["amount"] > c["price"] * 2:
        refuse("more than twice the price")
    if c["price"] > 10:
        refuse("too dear")
    return "ok"
`,
	}, map[string]string{})
	db := &fakeDB{rows: []Row{{Columns: []string{"price"}, Values: []any{int64(61)}}}}
	want := func(tool string, args map[string]any) *Want {
		t.Helper()
		_, err := p.Handle(context.Background(), tool, args, db)
		var ref *Refusal
		if !errors.As(err, &ref) {
			t.Fatalf("%s: want a refusal, got %v", tool, err)
		}
		return ref.Want
	}
	w := want("book", map[string]any{"seats": int64(2), "payments": []any{map[string]any{"amount": int64(58)}}})
	if w == nil || w.Arg != int64(58) || w.Value != int64(122) {
		t.Errorf("book: want {58 122}, got %+v", w)
	}
	w = want("pay", map[string]any{"amount": "12.5"})
	if w == nil || w.Arg != 12.5 || w.Value != int64(61) {
		t.Errorf("pay: want {12.5 61}, got %+v", w)
	}
	if w := want("limit", map[string]any{"amount": int64(2000)}); w != nil {
		t.Errorf("limit (the call's own bound): want none, got %+v", w)
	}
	if w := want("limit", map[string]any{"amount": int64(500)}); w != nil {
		t.Errorf("limit (an order against the world's number): want none, got %+v", w)
	}
	if w := want("limit", map[string]any{"amount": int64(5)}); w != nil {
		t.Errorf("limit (the world's own bound): want none, got %+v", w)
	}
	// The right numbers go through, and the noted operations keep their
	// meaning.
	if _, err := p.Handle(context.Background(), "book", map[string]any{"seats": int64(2), "payments": []any{map[string]any{"amount": int64(122)}}}, db); err != nil {
		t.Errorf("book with 122: %v", err)
	}
	if _, err := p.Handle(context.Background(), "pay", map[string]any{"amount": "61.00"}, db); err != nil {
		t.Errorf("pay with 61.00: %v", err)
	}
}
