package builtin

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestSuccessStatesAndChecksWhatIsAsked: on testdata/late-stay, the plain
// success of each use case is kept within the writer's three rounds of
// corrections. The callee of an outbound call says the time of arrival the
// act records (a value the act's pattern writes, which no row holds), so it
// is grounded; and a move that takes four values the caller asks for (two
// days, a room, a head count) has all of them checked once the gate names
// the first, rather than one a round.
func TestSuccessStatesAndChecksWhatIsAsked(t *testing.T) {
	c, e, pl := planned(t, filepath.Join("testdata", "late-stay"), 40)
	p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
	ctx := context.Background()
	kept := map[string]bool{}
	for _, b := range pl.Buckets {
		if b.Outcome != scenario.OutcomeSucceed || b.Overlay != "none" || b.Spec.Answer != "" && b.Spec.Answer != scenario.RightPerson {
			continue
		}
		bk := brief.Bucket{Bucket: b}
		var sc scenario.Scenario
		ok := false
		for _, key := range b.Spec.Templates {
			if sc, ok = p.compose(bk, 0, key); ok {
				break
			}
		}
		if !ok {
			t.Errorf("%s (%s): no template composes", b.ID, b.Angle)
			continue
		}
		act := sc.Solution[len(sc.Solution)-1]
		if b.Spec.Answer == scenario.RightPerson && !strings.Contains(sc.Instruction, `"`+ground.Text(act.Args["eta"])+`"`) {
			t.Errorf("%s: the callee is not handed the time of arrival %v: %s", sc.Name, act.Args["eta"], sc.Instruction)
		}
		for round := 0; round < 3; round++ {
			v, err := e.Prover.Prove(ctx, &sc)
			if err != nil {
				t.Fatal(err)
			}
			if v.Kept {
				kept[b.UseCase] = true
				break
			}
			if round == 2 || !p.correct(&sc, bk, v.Refusals) {
				t.Errorf("%s: refused after %d round(s): %v\n%s", sc.Name, round+1, v.Refusals, sc.Instruction)
				break
			}
		}
	}
	for _, u := range []string{"move-stay", "confirm-arrival"} {
		if !kept[u] {
			t.Errorf("no success of %s kept", u)
		}
	}
}
