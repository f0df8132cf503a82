package ground

import (
	"testing"
)

// TestXRefFalseBindsNoColumn: `x-ref: false` is the author's word that an
// argument names no record, so no column is tried for it, however alike
// its name (rate_trip's stars and trips.rider_stars): a number is written
// from its bounds, text is free text. Without it, both are left for
// Discover to try columns on.
func TestXRefFalseBindsNoColumn(t *testing.T) {
	c := exampleContract(t, "rides")
	for _, p := range []string{"stars", "comment"} {
		if b, _ := New(c).Declared().Of("rate_trip", p); b.How != Unbound {
			t.Fatalf("rate_trip.%s without an x-ref is declared %s, want it left to Discover", p, b.How)
		}
	}
	tool := c.Tool("rate_trip")
	for _, p := range []string{"stars", "comment"} {
		tool.Param(p)["x-ref"] = false
	}
	bs := New(c).Declared()
	for p, want := range map[string]How{"stars": FromPattern, "comment": FreeText} {
		b, ok := bs.Of("rate_trip", p)
		if !ok || b.How != want || b.Table != "" {
			t.Errorf("rate_trip.%s with x-ref false: %+v, want %s and no column", p, b, want)
		}
	}
}
