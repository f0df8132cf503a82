package ground

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
)

func retail(t *testing.T) *contract.Contract {
	t.Helper()
	c, probs, err := contract.Load(filepath.Join("..", "..", "examples", "retail"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	return c
}

func TestMintCopiesTheRecordAndItsOwner(t *testing.T) {
	c := retail(t)
	g := New(c)
	orders := g.Rows("orders")
	if len(orders) == 0 {
		t.Fatal("no orders in the seed")
	}
	target := orders[0]
	s, err := g.Mint("orders", target, Person{First: "Mei", Last: "Tanaka", Number: 7123})
	if err != nil {
		t.Fatal(err)
	}
	pk := g.PK("orders")
	if Text(s.Target[pk]) == Text(target[pk]) {
		t.Fatalf("minted order kept the old key %v", target[pk])
	}
	if !strings.Contains(Text(s.Target[pk]), "7123") {
		t.Errorf("minted key %v does not carry the scenario's number", s.Target[pk])
	}
	if s.Caller == nil {
		t.Fatal("no caller minted")
	}
	cl := c.Caller
	if got := Text(s.Target[fkTo(g, "orders", cl.Table)]); got != Text(s.Caller[cl.Key]) {
		t.Errorf("minted order points at %q, not the minted caller %q", got, Text(s.Caller[cl.Key]))
	}
	joined := ""
	for _, v := range s.Caller {
		joined += Text(v) + " "
	}
	if !strings.Contains(joined, "Mei") || !strings.Contains(joined, "Tanaka") {
		t.Errorf("caller not renamed: %v", s.Caller)
	}
	// Parents are inserted before children.
	first := strings.Fields(s.Statements[0].SQL)[2]
	if first != cl.Table {
		t.Errorf("first insert is into %s, want the caller table %s", first, cl.Table)
	}
	for _, code := range s.Codes {
		for _, tb := range c.Tables {
			if g.Find(tb.Name, g.PK(tb.Name), code) != nil {
				t.Errorf("minted code %s already exists in %s", code, tb.Name)
			}
		}
	}
}

func fkTo(g *Graph, table, parent string) string {
	for _, fk := range g.FKs(table) {
		if fk.RefTable == parent {
			return fk.Column
		}
	}
	return ""
}

func TestFillUsesTheCasesRecords(t *testing.T) {
	c := retail(t)
	g := New(c)
	target := g.Rows("orders")[0]
	b := g.Bind("orders", target)
	for i := range c.Tools {
		tl := &c.Tools[i]
		args, ok := g.Fill(tl, b)
		if !ok {
			continue
		}
		for name, v := range args {
			if tb, col, isRef := g.Ref(tl, name); isRef && tb == "orders" {
				if Text(v) != Text(target[col]) {
					t.Errorf("%s.%s = %v, want the case's order %v", tl.Name, name, v, target[col])
				}
			}
		}
	}
}

func TestMintValueKeepsShape(t *testing.T) {
	for _, tc := range []struct {
		old  any
		want string
	}{
		{"#W1001", "#W7123"},
		{"ord-9", "ord-7123"},
		{"plain", "plain-7123"},
	} {
		if got := Text(mintValue(tc.old, 7123, 0)); got != tc.want {
			t.Errorf("mintValue(%v) = %s, want %s", tc.old, got, tc.want)
		}
	}
	if got := Text(mintValue("#W1001", 17123, 0)); got != "#W7123" {
		t.Errorf("a longer number is cut to the code's width: got %s", got)
	}
	if a, b := Text(mintValue("paypal_0623", 7000, 1)), Text(mintValue("paypal_0623", 8000, 1)); a == b {
		t.Errorf("extra rows of two scenarios share a fixed-width code %s", a)
	}
	if got := Text(mintValue("ITEM-000123", 7123, 2)); got != "ITEM-071232" {
		t.Errorf("extra rows append their index: got %s", got)
	}
	if v, ok := mintValue(int64(5), 7123, 2).(int64); !ok || v < 900_000_000 {
		t.Errorf("integer keys move out of the seed's range, got %v", v)
	}
}
