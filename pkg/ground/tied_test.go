package ground

import (
	"path/filepath"
	"testing"
)

// TestCaseCallerTiedThroughALink: an account no caller owns is reached by
// its members (a table keyed by account and person). A case about it is
// played for one of its members, whatever caller template the plan gives,
// and the minted caller is a member of that account, not of the
// template's; an account tied to no one by such a table (only a visit, a
// record with a key of its own, names it) keeps the template.
func TestCaseCallerTiedThroughALink(t *testing.T) {
	g := New(load(t, filepath.Join("testdata", "members")))
	a2 := g.Find("accounts", "account_no", "A2")
	if !g.Shared("accounts", a2) {
		t.Fatal("an account belongs to nobody by its own keys")
	}
	p1 := g.Find("people", "person_id", "P1") // a member of A1
	b := g.SeedCase("accounts", a2, p1)
	if Text(b.Caller["person_id"]) != "P3" {
		t.Errorf("seed case of A2 is played for %v, want its member P3", b.Caller["person_id"])
	}
	s, mb, err := g.Case("accounts", a2, p1, Person{First: "Ana", Last: "Ortiz", Number: 7001, Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	caller := Text(mb.Caller["person_id"])
	var on []string
	for _, r := range s.Minted["members"] {
		if Text(r["person_id"]) == caller {
			on = append(on, Text(r["account_no"]))
		}
	}
	if len(on) != 1 || on[0] != "A2" {
		t.Errorf("minted caller %s is a member of %v, want [A2]", caller, on)
	}
	// A template who is a member already stays.
	p2 := g.Find("people", "person_id", "P2")
	if got := g.TiedCaller("accounts", g.Find("accounts", "account_no", "A1"), p2); Text(got["person_id"]) != "P2" {
		t.Errorf("TiedCaller(A1, P2) = %v, want P2", got["person_id"])
	}
	if got := g.TiedCaller("accounts", g.Find("accounts", "account_no", "A3"), p1); Text(got["person_id"]) != "P1" {
		t.Errorf("TiedCaller(A3, P1) = %v, want the template P1: a visit ties no one", got["person_id"])
	}
}

// TestCouncilLineCallersOnTheirRecords: council-line's accounts and
// properties are no one's by their own keys; its members table ties
// people to accounts, and a person's home to a property. A case about an
// account is played for one of its members, and one about a property for a
// resident on its open account, whatever template the plan gives (a member
// of another account): a caller not on the record was refused before the
// act's own branches (a missed bin's report window) were reached, and read
// an account that was not theirs.
func TestCouncilLineCallersOnTheirRecords(t *testing.T) {
	g := New(load(t, filepath.Join("..", "..", "testdata", "contracts", "council-line")))
	template := g.Rows("people")[0]
	member := func(acct, person any) bool {
		for _, m := range g.Where("account_members", "account_no", acct) {
			if Text(m["person_id"]) == Text(person) {
				return true
			}
		}
		return false
	}
	for _, a := range g.Rows("tax_accounts") {
		if len(g.Where("account_members", "account_no", a["account_no"])) == 0 {
			continue
		}
		if c := g.SeedCase("tax_accounts", a, template).Caller; !member(a["account_no"], c["person_id"]) {
			t.Errorf("a case of account %v is played for %v, who is not on it", a["account_no"], c["person_id"])
		}
	}
	for _, p := range g.Rows("properties") {
		c := g.SeedCase("properties", p, template).Caller
		occupant := false
		for _, a := range g.Where("tax_accounts", "property_ref", p["property_ref"]) {
			occupant = occupant || a["closed_on"] == nil && member(a["account_no"], c["person_id"])
		}
		if !occupant {
			t.Errorf("a case of property %v is played for %v, who is not on its open account", p["property_ref"], c["person_id"])
		}
	}
}
