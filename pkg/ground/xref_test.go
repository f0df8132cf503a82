package ground

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
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

// TestEnumOfKeysNamesARecord: an enum that lists exactly the values of a
// key column (library-line's pickup branch: the codes of branches) names a
// row of that table, as an x-ref would; an enum that lists only some of
// them, or values no key holds, stays a plain choice.
func TestEnumOfKeysNamesARecord(t *testing.T) {
	c, err := contract.LoadValid(filepath.Join("..", "..", "testdata", "contracts", "library-line"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := New(c).Declared().Of("reserve_title", "pickupBranch")
	if b.How != ByEnum || b.Ref() != "branches.code" {
		t.Fatalf("reserve_title.pickupBranch is declared %+v, want the enum bound to branches.code", b)
	}
	if _, _, ok := New(c).RecordParam(New(c).Declared(), c.Tool("reserve_title"), "pickupBranch"); !ok {
		t.Error("the pickup branch is not taken as a record argument")
	}
	for _, enum := range [][]any{{"CEN", "NOR"}, {"CEN", "NOR", "RIV", "EAST"}} {
		c.Tool("reserve_title").Param("pickupBranch")["enum"] = enum
		if b, _ := New(c).Declared().Of("reserve_title", "pickupBranch"); b.How != ByEnum || b.Table != "" {
			t.Errorf("enum %v (not the branches' codes) is declared %+v, want a plain enum", enum, b)
		}
	}
}

// TestXRefFalseTriesNoColumnOfMoments: a date-time argument the author says
// names no record (`x-ref: false`) is offered moments from the clock before
// any column, however alike (slots.starts_at for a callback time): a column
// comes only for the cases the clock's moments do not answer.
func TestXRefFalseTriesNoColumnOfMoments(t *testing.T) {
	c := guardianLine(t)
	c.Tools = append(c.Tools, contract.Tool{Name: "call_me_back", ParamOrder: []string{"starts_at"},
		Params: map[string]any{"type": "object", "required": []any{"starts_at"}, "properties": map[string]any{
			"starts_at": map[string]any{"type": "string", "format": "date-time", "x-ref": false},
		}}})
	g := New(c)
	s := &search{g: g, t: c.Tool("call_me_back")}
	alts := s.alternatives(g.Declared(), []string{"starts_at"})["starts_at"]
	clock, column := 0, false
	for _, a := range alts {
		column = column || a.Table != ""
		if a.How == FromClock && column {
			t.Errorf("x-ref false, yet a column is tried before the clock's %v", a.Picks)
		}
		if a.How == FromClock {
			clock++
			if _, err := time.Parse(time.RFC3339, Text(a.Picks[0])); err != nil {
				t.Errorf("a moment from the clock %v: %v", a.Picks[0], err)
			}
		}
	}
	if clock == 0 {
		t.Errorf("no moment from the clock among %+v", alts)
	}
}

// TestXRefFalseStillFindsItsColumn: an argument that names no record by
// the author's word (`x-ref: false`: a postcode's outward half) whose
// pattern's values answer no case is filled from the column whose values'
// beginnings it fits, and still names no record.
func TestXRefFalseStillFindsItsColumn(t *testing.T) {
	c, err := contract.LoadValid(filepath.Join("..", "..", "testdata", "contracts", "card-services"))
	if err != nil {
		t.Fatal(err)
	}
	g := New(c)
	tool := c.Tool("verifyByPhone")
	s := &search{g: g, t: tool}
	var cols []string
	for _, a := range s.alternatives(g.Declared(), []string{"postcodeOutward"})["postcodeOutward"] {
		if a.Table != "" {
			cols = append(cols, a.Ref())
		}
	}
	if !slices.Contains(cols, "customers.postcode") {
		t.Fatalf("postcodeOutward (x-ref false) is offered columns %v, want customers.postcode among them", cols)
	}
	// Even bound to a unique column whose values it fits no end of (the
	// phone), it names no record.
	bs := Bindings{{Tool: tool.Name, Param: "postcodeOutward", Table: "customers", Column: "phone", How: ByLikeness}}
	if _, _, ok := g.RecordParam(bs, tool, "postcodeOutward"); ok {
		t.Error("an argument with x-ref false, bound to a column, is taken to name a record")
	}
}

// TestEndOfTakesABeginningWhereNoEndingFits: the outward half of a postcode
// is the beginning of the stored postcode; the last four digits are its
// ending where both would fit.
func TestEndOfTakesABeginningWhereNoEndingFits(t *testing.T) {
	for _, tc := range []struct{ v, pattern, want string }{
		{"SW1A 1AA", "^[A-Z]{1,2}[0-9][A-Z0-9]?$", "SW1A"},
		{"12345678", "^[0-9]{4}$", "5678"},
		{"K2354500", "^[0-9]{4}$", "4500"},
	} {
		got, ok := endOf(tc.v, map[string]any{"pattern": tc.pattern})
		if !ok || got != tc.want {
			t.Errorf("endOf(%q, %s) = %q %v, want %q", tc.v, tc.pattern, got, ok, tc.want)
		}
	}
	if _, ok := endOf("4500", map[string]any{"pattern": "^[0-9]{4}$"}); ok {
		t.Error("a value that fits whole is cut")
	}
}
