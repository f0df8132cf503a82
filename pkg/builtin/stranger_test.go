package builtin

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestRuleRefusalOnSomeoneElsesRecord: on examples/retail, a refusal a rule
// makes of a request about another customer's order (change its address,
// swap its items) is written right the first time: its reference solution
// never names that order, not even to look it up, the tempting path does,
// and the prover keeps the case. A reference that read the order broke the
// very rule the case is about, and every template of the bucket was
// refused.
func TestRuleRefusalOnSomeoneElsesRecord(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	ctx := context.Background()
	c, e, pl := planned(t, filepath.Join("..", "..", "examples", "retail"), 200)
	p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
	n := 0
	for _, b := range pl.Buckets {
		if !strings.HasPrefix(b.Spec.Refusal, plan.RuleRefusal) || b.Want == 0 {
			continue
		}
		key := b.Spec.Templates[0]
		ch := b.Spec.Choices[key]
		if ch.Swap != ground.SwapStranger || ch.Outside != b.Spec.Table {
			continue
		}
		n++
		sc, ok := p.compose(brief.Bucket{Bucket: b}, 0, key)
		if !ok {
			t.Errorf("%s (%s): not composed", b.ID, b.UseCase)
			continue
		}
		other := ""
		if len(sc.Tempting) > 0 {
			other = ground.Text(sc.Tempting[len(sc.Tempting)-1].Args[p.g.PK(b.Spec.Table)])
		}
		for _, call := range sc.Solution {
			for _, v := range call.Args {
				if other != "" && ground.Text(v) == other {
					t.Errorf("%s (%s): the reference calls %s on %s, someone else's", b.ID, b.UseCase, call.Tool, other)
				}
			}
		}
		v, err := e.Prover.Prove(ctx, &sc)
		if err != nil {
			t.Fatal(err)
		}
		if !v.Kept {
			t.Errorf("%s (%s): refused: %v", b.ID, b.UseCase, v.Refusals)
		}
	}
	if n == 0 {
		t.Fatal("no rule refusal about someone else's record")
	}
}
