package ground

import (
	"path/filepath"
	"slices"
	"testing"
)

// An act that replaces a record's references (a booking's legs) with none
// of the case's other rows to take moves the last one to another row of
// the world: the same train on another day, still open like the one it
// replaces, no earlier than the leg before it. A list the use case asks no
// change of is left as it is, and an enum it asks no change of keeps the
// target's value.
func TestRenewMovesToAnotherRow(t *testing.T) {
	g := New(load(t, filepath.Join("testdata", "rebook")))
	tool := g.C.Tool("change_booking")
	legsOf := func(args map[string]any) []string {
		var out []string
		list, _ := args["legs"].([]any)
		for _, x := range list {
			m, _ := x.(map[string]any)
			out = append(out, Text(m["train_no"])+"@"+Text(m["day"]))
		}
		return out
	}
	caseOf := func(id string, ordinal int) Bound {
		target := g.Find("bookings", "booking_id", id)
		b := g.SeedCase("bookings", target, g.Find("travellers", "traveller_id", target["traveller_id"]))
		b.Ordinal = ordinal
		return b
	}

	b := caseOf("B1", 0)
	args, ok := g.Fill(tool, b, g.Declared())
	if !ok {
		t.Fatalf("Fill(change_booking) incomplete: %v", args)
	}
	if got := legsOf(args); !slices.Equal(got, []string{"R10@2024-05-10", "R20@2024-05-12"}) {
		t.Fatalf("filled legs = %v, want the booking's own", got)
	}
	// Of R20's other days only 05-14 is open and not before the first leg.
	if got := legsOf(g.Renew(tool, args, b, nil)); !slices.Equal(got, []string{"R10@2024-05-10", "R20@2024-05-14"}) {
		t.Errorf("renewed legs = %v, want the last moved to R20@2024-05-14", got)
	}

	open := []string{"R20@2024-05-02", "R20@2024-05-08", "R20@2024-05-12", "R20@2024-05-14"}
	seen := map[string]bool{}
	for o := range 8 {
		b := caseOf("B2", o)
		args, _ := g.Fill(tool, b, g.Declared())
		got := legsOf(g.Renew(tool, args, b, nil))
		if len(got) != 1 || !slices.Contains(open, got[0]) {
			t.Fatalf("ordinal %d: renewed legs = %v, want one of %v", o, got, open)
		}
		seen[got[0]] = true
	}
	if len(seen) < 2 {
		t.Errorf("the ordinal chose among no other departures: %v", seen)
	}

	var kept Bindings
	for _, bd := range g.Declared().For(tool.Name) {
		bd.Keep = bd.Param == "legs" || bd.Param == "class"
		kept = append(kept, bd)
	}
	for o := range 4 {
		b := caseOf("B1", o)
		args, _ := g.Fill(tool, b, kept)
		if got := legsOf(g.Renew(tool, args, b, kept)); !slices.Equal(got, []string{"R10@2024-05-10", "R20@2024-05-12"}) {
			t.Errorf("ordinal %d: kept legs renewed to %v", o, got)
		}
		if args["class"] != "first" {
			t.Errorf("ordinal %d: kept class = %v, want the booking's first", o, args["class"])
		}
	}
}

// A use case that keeps an act's list (a class change keeps the legs) is
// about its other choices: an enum that holds the target's own value takes
// another, whatever the case's ordinal; with nothing kept, or a choice the
// plan settled, the value filled stays.
func TestRenewChangesTheEnumNotKept(t *testing.T) {
	g := New(load(t, filepath.Join("testdata", "rebook")))
	tool := g.C.Tool("change_booking")
	bs := func(keep bool, picks ...any) Bindings {
		var out Bindings
		for _, bd := range g.Declared().For(tool.Name) {
			bd.Keep = keep && bd.Param == "legs"
			if bd.Param == "class" {
				bd.Picks = picks
			}
			out = append(out, bd)
		}
		return out
	}
	for _, id := range []string{"B1", "B2"} {
		target := g.Find("bookings", "booking_id", id)
		own := Text(target["class"])
		for o := range 4 {
			b := g.SeedCase("bookings", target, g.Find("travellers", "traveller_id", target["traveller_id"]))
			b.Ordinal = o
			args := map[string]any{"booking_id": id, "class": own, "legs": []any{}}
			if got := Text(g.Renew(tool, args, b, bs(true))["class"]); got == own {
				t.Errorf("%s ordinal %d: class %s, the booking's own, kept where the legs are", id, o, got)
			}
			if got := Text(g.Renew(tool, args, b, bs(false))["class"]); got != own {
				t.Errorf("%s ordinal %d: class %s with nothing kept, want %s as filled", id, o, got, own)
			}
			if got := Text(g.Renew(tool, args, b, bs(true, own))["class"]); got != own {
				t.Errorf("%s ordinal %d: class %s where the plan settled %s", id, o, got, own)
			}
		}
	}
}
