package plan

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestPlanGivesToARecordTheRuleAllows: testdata/household's act gives
// points to any other member, a rule allows it only within the giver's
// household (same postal code), and no household's two members share a
// tier, the parent by which a sibling of the giver is picked. Every
// sibling broke the rule, so the use case had no success. The plan now
// gives each success a recipient most like the giver (a member at their
// postal code), and keeps a sibling that breaks the rule as the rule's
// refusal.
func TestPlanGivesToARecordTheRuleAllows(t *testing.T) {
	c, e := openContract(t, filepath.Join("testdata", "household"))
	p, _ := deriveAsRun(t, c, e, 0)
	g := ground.New(c)
	for _, gap := range p.EveryCaseBreaks {
		t.Errorf("every case breaks a rule: %s: %s", gap.UseCase, gap.Reason)
	}
	var succeeds, refuses int
	for _, b := range p.Buckets {
		if b.UseCase != "give-points" || b.Overlay != "none" {
			continue
		}
		switch {
		case b.Outcome == "succeed":
			succeeds++
			for _, k := range b.Spec.Templates {
				giver := g.Find("members", "id", k)
				bd := g.SeedCaseAs("members", giver, giver, "")
				ch := b.Spec.Choices[k]
				if ch.Swap != ground.SwapAkin {
					t.Errorf("bucket %s: template %s chooses %+v, want swap %q", b.ID, k, ch, ground.SwapAkin)
				}
				ch.Apply(&bd)
				args, ok := g.Fill(c.Tool("give_points"), bd, b.Spec.Binds)
				if !ok {
					t.Fatalf("bucket %s: give_points of %s not filled", b.ID, k)
				}
				to := g.Find("members", "member_number", args["to_member_number"])
				if to == nil || to["postal_code"] != giver["postal_code"] || to["id"] == giver["id"] {
					t.Errorf("bucket %s: %s (postal code %v) gives to %v, not a member of their household", b.ID, k, giver["postal_code"], to)
				}
			}
		case b.Spec.Refusal == RuleRefusal+"household-only":
			refuses++
		}
	}
	if succeeds == 0 || refuses == 0 {
		t.Errorf("give-points: %d success buckets and %d refusals on rule household-only, want both", succeeds, refuses)
	}
}

// spendRehearser refuses the act at "spent" once the setup lowers the
// balance of the member needs names (and, with both, also raises the
// other's), answering ok to the calls before it.
type spendRehearser struct{ needs []string }

func (r spendRehearser) Rehearse(_ context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, error) {
	ans := make([]ground.Answer, len(calls))
	for i := range ans {
		ans[i].OK = true
	}
	held := 0
	for _, st := range setup {
		if slices.Contains(r.needs, ground.Text(st.Args[1])) {
			held++
		}
	}
	if held == len(r.needs) {
		ans[len(ans)-1] = ground.Answer{Refused: true, Branch: "spent"}
	}
	return ans, nil
}

// TestAgainKeepsOnlyTheCallersWrites: an act done already is held as the
// writes it made, and a write on another caller's record (the points a
// gift credited to its recipient) would be a setup reaching past the case:
// it is left out when the act is still refused without it, and kept when
// the refusal needs it.
func TestAgainKeepsOnlyTheCallersWrites(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("testdata", "household"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	g := ground.New(c)
	writes := []scenario.Statement{
		{SQL: "UPDATE members SET points = $1 WHERE id = $2", Args: []any{0, "P01"}},
		{SQL: "UPDATE members SET points = $1 WHERE id = $2", Args: []any{9000, "P02"}},
	}
	calls := []scenario.Call{{Tool: "verify_member"}, {Tool: "give_points"}}
	caller := g.Find("members", "id", "P01")
	sv := &solver{g: g, r: spendRehearser{needs: []string{"P01"}}}
	own, err := sv.ownWrites(context.Background(), writes, calls, caller, "spent")
	if err != nil {
		t.Fatal(err)
	}
	if len(own) != 1 || ground.Text(own[0].Args[1]) != "P01" {
		t.Errorf("writes held: %v, want only the caller's", own)
	}
	sv.r = spendRehearser{needs: []string{"P01", "P02"}}
	if all, err := sv.ownWrites(context.Background(), writes, calls, caller, "spent"); err != nil || len(all) != 2 {
		t.Errorf("a refusal that needs the other's write too: %v %v, want both writes", all, err)
	}
}
