package ground

import (
	"reflect"
	"testing"
)

// TestFillArraysOfObjects: an argument that is a list of objects is filled
// with the case's rows of a table holding the objects' fields: the flights
// and passengers of the reservation the case is about, in order.
func TestFillArraysOfObjects(t *testing.T) {
	c := exampleContract(t, "airline")
	g := New(c)
	target := g.Find("reservations", "reservation_id", "4WQ150")
	if target == nil {
		t.Fatal("no reservation 4WQ150 in the seed")
	}
	b := g.Bind("reservations", target)

	args, ok := g.Fill(c.Tool("update_reservation_flights"), b, g.Declared())
	if !ok {
		t.Fatalf("update_reservation_flights not filled: %v", args)
	}
	want := []any{
		map[string]any{"flight_number": "HAT170", "date": "2024-05-22"},
		map[string]any{"flight_number": "HAT022", "date": "2024-05-26"},
	}
	if !reflect.DeepEqual(args["flights"], want) {
		t.Errorf("flights = %v, want the reservation's own %v", args["flights"], want)
	}

	args, ok = g.Fill(c.Tool("update_reservation_passengers"), b, g.Declared())
	if !ok {
		t.Fatalf("update_reservation_passengers not filled: %v", args)
	}
	pax, _ := args["passengers"].([]any)
	if len(pax) != 3 || pax[0].(map[string]any)["first_name"] != "Chen" {
		t.Errorf("passengers = %v, want the reservation's three, Chen first", args["passengers"])
	}

	// A user bound alone has no rows of its own to book: related rows
	// stand in.
	u := g.Find("users", "user_id", "chen_jackson_3290")
	ub := Bound{Table: "users", Target: u, Caller: u, Rows: map[string][]Row{"users": {u}}}
	if args, ok := g.Fill(c.Tool("book_reservation"), ub, g.Declared()); !ok {
		t.Errorf("book_reservation not filled from related rows: %v", args)
	} else if pax, _ := args["passengers"].([]any); len(pax) != 1 || pax[0].(map[string]any)["last_name"] != "Jackson" {
		t.Errorf("book_reservation passengers = %v, want the user", args["passengers"])
	}
}
