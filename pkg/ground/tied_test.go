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
