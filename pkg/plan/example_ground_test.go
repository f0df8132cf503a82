package plan

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/contractgen"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/probe"
)

// TestDescriptionExampleGrounds: the generated contract of seed 6 names a
// policy by an argument called reference, which shares no word with
// policies.policy_id; its description ("The policy id, such as PL-1318")
// gives an example that only that column's values look like. Grounding
// binds it there and the tool answers ok; before, the search spent its
// budget on appointments, plans and invoices and never did.
func TestDescriptionExampleGrounds(t *testing.T) {
	gr := groundGenerated(t, 6)
	if why, never := gr.Unanswered["add_policy_item"]; never {
		t.Fatalf("add_policy_item never answered ok: %s", why)
	}
	if b, _ := gr.Bindings.Of("add_policy_item", "reference"); b.Ref() != "policies.policy_id" || !b.Confirmed {
		t.Errorf("add_policy_item.reference bound %+v, want policies.policy_id confirmed", b)
	}
}

// TestFreeArgumentIsNoColumnsCopy: the generated contract of seed 4 adds a
// line to a shipment with a label of the caller's choosing. Its name is
// also a column of tiers, a table nothing else of the call names; the act
// writes with a label of its own just as well, so the label is free, not a
// copy of a tier's. Before, it was bound to tiers.label for the likeness.
func TestFreeArgumentIsNoColumnsCopy(t *testing.T) {
	gr := groundGenerated(t, 4)
	if why, never := gr.Unanswered["append_shipment_line"]; never {
		t.Fatalf("append_shipment_line never answered ok: %s", why)
	}
	if b, _ := gr.Bindings.Of("append_shipment_line", "label"); b.Table != "" || b.How != ground.FreeText {
		t.Errorf("append_shipment_line.label bound %+v (%s), want free text", b, b.Ref())
	}
}

// groundGenerated grounds the generated contract of seed in its world.
func groundGenerated(t *testing.T, seed int64) ground.Grounding {
	t.Helper()
	dir := t.TempDir()
	if _, err := contractgen.Generate(seed, contractgen.Options{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	c, e := openContract(t, dir)
	gr, err := ground.New(c).Discover(context.Background(), probe.Rehearser(e.World))
	if err != nil {
		t.Fatal(err)
	}
	return gr
}

// TestFactDateIsNoClockDay: rides identifies a rider by phone and the date
// of their last completed trip ("such as 2026-05-12": a day, by its
// example). Yesterday, counted from the world's clock, was that date for one
// rider, and no other: the day is grounded in the trips' completion, which
// answers ok for rider after rider, not in the clock.
func TestFactDateIsNoClockDay(t *testing.T) {
	c, e := openContract(t, filepath.Join("..", "..", "examples", "rides"))
	gr, err := ground.New(c).Discover(context.Background(), probe.Rehearser(e.World))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := gr.Bindings.Of("verify_rider_by_last_trip", "last_trip_date"); b.Ref() != "trips.completed_at" || !b.Confirmed {
		t.Errorf("verify_rider_by_last_trip.last_trip_date bound %+v (%s), want trips.completed_at confirmed", b, b.Found())
	}
}
