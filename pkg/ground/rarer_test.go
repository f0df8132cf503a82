package ground

import (
	"context"
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// rareRatings answers rides' rate_trip ok only on a trip completed after
// since and not rated yet, as its handler does within a week of the
// world's now; every other tool is refused.
type rareRatings struct {
	g     *Graph
	since string
	calls int
}

func (f *rareRatings) Rehearse(_ context.Context, _ []scenario.Statement, calls []scenario.Call) ([]Answer, error) {
	var out []Answer
	for _, c := range calls {
		f.calls++
		a := Answer{Refused: true, Error: "Error: no", Read: []string{"trip_id"}}
		if c.Tool == "rate_trip" {
			t := f.g.Find("trips", "trip_id", c.Args["trip_id"])
			if t != nil && t["status"] == "completed" && Text(t["completed_at"]) >= f.since && t["rider_stars"] == nil {
				a = Answer{OK: true, Result: []byte(`{}`)}
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// TestDiscoverFindsRareRows: a tool that answers ok only on rows few of its
// table hold (9 of rides' 187 trips) is grounded all the same: no case of
// the sample answers, so the table's other rows are tried as they stand.
func TestDiscoverFindsRareRows(t *testing.T) {
	c := exampleContract(t, "rides")
	g := New(c)
	rare := 0
	for _, r := range g.Rows("trips") {
		if r["status"] == "completed" && Text(r["completed_at"]) >= "2026-05-07T18:45:00-05:00" && r["rider_stars"] == nil {
			rare++
		}
	}
	if rare == 0 || rare > len(g.Rows("trips"))/10 {
		t.Fatalf("%d of %d trips can be rated: the seed no longer makes them rare", rare, len(g.Rows("trips")))
	}
	fw := &rareRatings{g: g, since: "2026-05-07T18:45:00-05:00"}
	gr, err := g.Discover(context.Background(), fw)
	if err != nil {
		t.Fatal(err)
	}
	if why, never := gr.Unanswered["rate_trip"]; never {
		t.Fatalf("rate_trip never answered ok (%s) though %d trips can be rated", why, rare)
	}
	if b, _ := gr.Bindings.Of("rate_trip", "trip_id"); b.Ref() != "trips.trip_id" || !b.Confirmed {
		t.Errorf("rate_trip.trip_id bound %+v, want trips.trip_id confirmed", b)
	}
}
