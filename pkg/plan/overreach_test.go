package plan

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestSettingsKeepToTheCallersRecords: testdata/permits' property H1 is
// no one's; its permit RP500001 is its other resident P2's, and P1 asks for a
// permit for their car V1. A case of H1 played
// for P1 never sets RP500001 (the prover refuses a setup that changes another
// caller's rows, setup-overreach), while one played for P2 may; a permit
// the plan adds at H1 is held by the case's caller, not by the holder of
// the seed permit it copies.
func TestSettingsKeepToTheCallersRecords(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("testdata", "permits"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	g := ground.New(c)
	sv := &solver{g: g, bs: ground.Bindings{{Tool: "apply_permit", Param: "registration", Table: "vehicles", Column: "registration"}}}
	h1 := g.Find("properties", "property_ref", "H1")
	act := scenario.Call{Tool: "apply_permit", Args: map[string]any{"property_ref": "H1", "registration": "V1", "zone": "A"}}
	p1, p2 := g.Find("people", "person_id", "P1"), g.Find("people", "person_id", "P2")
	setsPermits := func(ps []push) bool {
		return slices.ContainsFunc(ps, func(p push) bool { return strings.Contains(p.stmt.SQL, "UPDATE permits") })
	}
	if ps := sv.pushes("apply_permit", "properties", h1, act, true, p1); setsPermits(ps) {
		t.Errorf("a case of H1 for P1 sets P2's permit RP500001")
	}
	if ps := sv.pushes("apply_permit", "properties", h1, act, true, p2); !setsPermits(ps) {
		t.Errorf("a case of H1 for P2 sets no permit: the holder's own permit is theirs to set")
	}
	adds := sv.adds(sv.ours(sv.reach("apply_permit", "properties", h1, act), p1), p1)
	n := 0
	for _, p := range adds {
		if !strings.Contains(p.stmt.SQL, "INSERT INTO permits") {
			continue
		}
		n++
		held := map[string]bool{}
		ground.AddValues(held, p.stmt.Args)
		if !held["P1"] || held["P2"] || held["P3"] {
			t.Errorf("%s: %s %v, want held by the caller P1", p.what, p.stmt.SQL, p.stmt.Args)
		}
	}
	if n == 0 {
		t.Errorf("no permit added at H1")
	}
}
