package ground

import (
	"math"
	"path/filepath"
	"testing"
)

// TestNeighboursDifferInOneTrait: of a table no one owns, the rows a case
// may name instead of its own each differ from it in one trait, of the
// table (a slot's mode) or of a parent (its provider's status), and are
// otherwise as like it as the world has: an open slot stays open and, where
// the world holds one, in the future like its own.
func TestNeighboursDifferInOneTrait(t *testing.T) {
	c := load(t, filepath.Join("..", "..", "testdata", "contracts", "clinic-voice"))
	g := New(c)
	var open Row
	for _, r := range g.Rows("appointment_slots") {
		p := g.Find("providers", "id", r["provider_id"])
		if r["status"] == "open" && r["mode"] == "in_person" && p["status"] == "active" && Text(r["start_at"]) > "2026-04" {
			open = r
			break
		}
	}
	if open == nil {
		t.Fatal("the seed has no open in-person slot of an active provider")
	}
	got := g.Neighbours("appointment_slots", open)
	if len(got) == 0 || len(got) > neighbourRows {
		t.Fatalf("%d neighbours", len(got))
	}
	seen := map[string]bool{}
	for _, i := range got {
		r := g.Rows("appointment_slots")[i]
		p := g.Find("providers", "id", r["provider_id"])
		if Text(r["id"]) == Text(open["id"]) {
			t.Fatalf("the case's own row %v is its own neighbour", r["id"])
		}
		switch {
		case r["mode"] == "telehealth" && r["status"] == "open" && p["status"] == "active":
			seen["video"] = true
		case r["mode"] == "in_person" && r["status"] == "open" && p["status"] == "on_leave":
			seen["on leave"] = true
			if Text(r["start_at"]) < "2026" {
				t.Errorf("slot %v of a provider on leave starts %v, in another year than the case's own (%v), though the seed has later ones", r["id"], r["start_at"], open["start_at"])
			}
		case r["mode"] == "in_person" && r["status"] == "booked" && p["status"] == "active":
			seen["booked"] = true
		}
	}
	for _, w := range []string{"video", "on leave", "booked"} {
		if !seen[w] {
			t.Errorf("no neighbour differs from an open in-person slot of an active provider by being %s", w)
		}
	}
	// The same rows on every call: a case names one by its place.
	if again := g.Neighbours("appointment_slots", open); len(again) != len(got) || again[0] != got[0] {
		t.Fatalf("neighbours changed between calls: %v then %v", got, again)
	}
}

// TestStatedValues: an argument the case asks to take a value of its own
// choosing takes it (an amount several times over, whatever form the
// column writes it in); any other argument keeps its value.
func TestStatedValues(t *testing.T) {
	amount := Binding{Table: "trips", Column: "fare", How: ByLikeness}
	more := Bound{Outside: "trips", Swap: SwapMore, Other: 1}
	for _, tc := range []struct {
		v    any
		typ  string
		want any
	}{
		{12.34, "number", 123.4},
		{"9.99", "number", 99.9},
		{int64(3), "integer", int64(30)},
		{"n/a", "number", "n/a"},
	} {
		if got := more.more(amount, tc.v, tc.typ); got != tc.want {
			t.Errorf("%v (%s) ten times over: %v, want %v", tc.v, tc.typ, got, tc.want)
		}
	}
	if got := (Bound{Outside: "riders", Swap: SwapMore, Other: 1}).more(amount, 5.0, "number"); got != 5.0 {
		t.Errorf("an amount of another table was asked over: %v", got)
	}
	if !more.Stated(amount) || (Bound{Outside: "trips", Swap: SwapTaken}).Stated(amount) {
		t.Error("Stated: an amount is the caller's under SwapMore only")
	}
	free := Binding{How: FreeText}
	if !(Bound{Table: "trips", Outside: "trips", Swap: SwapMore}).Stated(free) || (Bound{Table: "riders", Outside: "trips", Swap: SwapMore}).Stated(free) {
		t.Error("Stated: a number no column grounds is the caller's under SwapMore on the case's own table only")
	}
	email := Binding{Table: "riders", Column: "email", How: Fresh}
	if !(Bound{Outside: "riders", Swap: SwapTaken}).Stated(email) || (Bound{Outside: "riders"}).Stated(email) {
		t.Error("Stated: a fresh value is the caller's under SwapTaken only")
	}
}

// TestAmountAskedOver: under SwapMore an amount is the case's own value
// asked over, from its column or, where no column grounds it, from the
// value the argument would otherwise take; never another record's.
func TestAmountAskedOver(t *testing.T) {
	c := load(t, filepath.Join("..", "..", "examples", "rides"))
	g := New(c)
	tool := c.Tool("refund_fare")
	trip := g.Rows("trips")[0]
	b := g.SeedCase("trips", trip, nil)
	bound := Binding{Table: "fare_items", Column: "amount", How: ByLikeness, Source: FromCase}
	free := Binding{How: FreeText}
	for _, bd := range []Binding{bound, free} {
		own, ok := g.Value(tool, "amount", bd, b)
		if !ok {
			t.Fatalf("%+v: no amount for the case", bd)
		}
		more := b
		more.Outside, more.Swap, more.Other = "fare_items", SwapMore, 1
		if bd.Table == "" {
			more.Outside = b.Table
		}
		got, ok := g.Value(tool, "amount", bd, more)
		o, _ := asFloat(own)
		if f, isNum := asFloat(got); !ok || !isNum || math.Abs(f-o*10) > 0.01 {
			t.Errorf("%+v: asked ten times over %v, got %v (%v)", bd, own, got, ok)
		}
	}
}

// TestPastAsksNearTheRecord: under SwapPast a number is asked a fifth
// above or below the value the case's record holds, within the schema's
// bounds, and not at all where they leave no room on that side.
func TestPastAsksNearTheRecord(t *testing.T) {
	bounds := map[string]any{"minimum": 50, "maximum": 1700}
	for _, tc := range []struct {
		held  float64
		below bool
		typ   string
		want  any
		ok    bool
	}{
		{1500, false, "number", 1700.0, true}, // a fifth above is 1800, over the maximum
		{1000, false, "number", 1200.0, true},
		{1000, true, "integer", int64(800), true},
		{60, true, "number", 50.0, true}, // a fifth below is 48, under the minimum
		{50, true, "number", nil, false}, // nothing below the minimum
		{1700, false, "number", nil, false},
		{0, false, "integer", int64(50), true}, // a step of one, clamped up to the minimum: still above
	} {
		got, ok := Past(tc.held, tc.below, tc.typ, bounds)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("Past(%v, below=%v, %s) = %v %v, want %v %v", tc.held, tc.below, tc.typ, got, ok, tc.want, tc.ok)
		}
	}
	if got, ok := Past(7, false, "integer", map[string]any{}); !ok || got != int64(8) {
		t.Errorf("Past(7, above) without bounds = %v %v, want 8", got, ok)
	}
}
