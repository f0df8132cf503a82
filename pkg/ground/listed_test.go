package ground

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
)

// listWorld is a world whose unique columns are held to lists: a permit per
// parking bay (bays 1-4, two taken) and a tier table whose codes are all in
// use. withCaller names customers as the caller table.
func listWorld(t *testing.T, withCaller bool) *Graph {
	t.Helper()
	tables, probs := contract.ParseSchemaSQL(`
CREATE TABLE tiers (
    code  text PRIMARY KEY CHECK (code IN ('basic', 'plus')),
    label text NOT NULL
);
CREATE TABLE customers (
    customer_id text PRIMARY KEY CHECK (customer_id ~ '^C[0-9]{3}$'),
    name        text NOT NULL,
    tier        text NOT NULL REFERENCES tiers (code)
);
CREATE TABLE permits (
    permit_no   text PRIMARY KEY CHECK (permit_no ~ '^P[0-9]{4}$'),
    customer_id text NOT NULL REFERENCES customers (customer_id),
    bay         integer NOT NULL UNIQUE CHECK (bay IN (1, 2, 3, 4))
);`)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	c := &contract.Contract{Tables: tables, Seeds: []contract.SeedTable{
		{Table: "tiers", Rows: []map[string]any{{"code": "basic", "label": "Basic"}, {"code": "plus", "label": "Plus"}}},
		{Table: "customers", Rows: []map[string]any{
			{"customer_id": "C100", "name": "Ada Byron", "tier": "basic"},
			{"customer_id": "C200", "name": "Bo Chen", "tier": "plus"},
		}},
		{Table: "permits", Rows: []map[string]any{
			{"permit_no": "P1000", "customer_id": "C100", "bay": int64(1)},
			{"permit_no": "P2000", "customer_id": "C200", "bay": int64(2)},
		}},
	}}
	if withCaller {
		c.Caller = &contract.Caller{Table: "customers", Key: "customer_id"}
	}
	return New(c)
}

// A copied row whose only unique column is held to a list takes a listed
// value no row holds, of the column's type; once the list has none left for
// a scenario, minting says so instead of inserting a row that collides.
func TestMintTakesAnotherListedValue(t *testing.T) {
	g := listWorld(t, true)
	target := g.Find("customers", "customer_id", "C100")
	s, err := g.Mint("customers", target, Person{First: "Mei", Last: "Tanaka", Number: 7001, Index: 0})
	if err != nil {
		t.Fatal(err)
	}
	permits := s.Minted["permits"]
	if len(permits) != 1 {
		t.Fatalf("permits copied: %v", permits)
	}
	for _, p := range permits {
		bay, ok := p["bay"].(int64)
		if !ok || !slices.Contains([]int64{3, 4}, bay) {
			t.Errorf("copied permit's bay is %#v, want 3 or 4 (free, listed, an integer)", p["bay"])
		}
	}
	// The next scenario's slots are past the two free bays.
	_, err = g.Mint("customers", target, Person{First: "Ana", Last: "Ortiz", Number: 7002, Index: 1, Strides: map[string]int{"customers": 2, "permits": 2}})
	if !errors.Is(err, ErrCodeSpace) || !strings.Contains(err.Error(), "permits.bay is held to (1, 2, 3, 4)") {
		t.Errorf("minting past the free bays: %v, want ErrCodeSpace naming the list", err)
	}
}

// A table keyed by a list whose values the seed rows all hold is a catalog:
// minting one of its rows fails plainly (no key is left), and in a world
// without callers, where every other case is a copy, a case about one of its
// rows shares the row.
func TestListKeyedTableIsShared(t *testing.T) {
	for _, withCaller := range []bool{false, true} {
		g := listWorld(t, withCaller)
		row := g.Find("tiers", "code", "plus")
		if _, err := g.Mint("tiers", row, Person{First: "A", Last: "B", Number: 7000}); !errors.Is(err, ErrCodeSpace) {
			t.Errorf("caller %v: minting a tier: %v, want ErrCodeSpace", withCaller, err)
		}
		if !g.Shared("tiers", row) {
			t.Errorf("caller %v: tiers not shared", withCaller)
		}
		s, b, err := g.Case("tiers", row, nil, Person{First: "A", Last: "B", Number: 7000})
		if err != nil {
			t.Fatalf("caller %v: %v", withCaller, err)
		}
		if len(s.Statements) != 0 || Text(b.Target["code"]) != "plus" {
			t.Errorf("caller %v: case about a tier inserts %v, target %v", withCaller, s.Statements, b.Target)
		}
	}
	// Without callers, a table with room in its list is still copied.
	g := listWorld(t, false)
	if g.Shared("permits", g.Find("permits", "permit_no", "P1000")) {
		t.Error("permits shared in a world without callers")
	}
}

// Of a table no parent groups (a catalog of tiers), a sibling of the case's
// row is another row of the table: a move to another tier names one.
func TestSiblingOfACatalogRow(t *testing.T) {
	g := listWorld(t, true)
	b := g.Bind("customers", g.Find("customers", "customer_id", "C100"))
	if cur := b.Pick("tiers"); cur == nil || Text(cur["code"]) != "basic" {
		t.Fatalf("the case's tier: %v", cur)
	}
	if r := g.related("tiers", b); r == nil || Text(r["code"]) != "plus" {
		t.Errorf("sibling tier %v, want plus", r)
	}
}
