package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestTemplateReuse: asked for more than twice the distinct rows a plan
// has, with no other flag, the run delivers the whole ask from templates
// that each serve up to three times, every scenario under a name of its
// own and with no code shared.
func TestTemplateReuse(t *testing.T) {
	testenv.OutsideRace(t, wholeSuites)
	t.Parallel()
	dir := examples(t, "telecom")
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(context.Background(), testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	// Derived as the run derives it, so the run reads this plan back from
	// the plan cache make test names.
	p, err := plan.Derive(context.Background(), c, probe.Rehearser(e.World), plan.Options{Asked: 1, Rules: e.Prover, Mutants: probe.Mutants(e.World, c), Cache: plan.EnvCache(os.Getenv)})
	if err != nil {
		t.Fatal(err)
	}
	asked := 2*p.Capacity + 1
	if p.Most > 0 && asked > p.Most {
		t.Fatalf("the contract holds %d distinct scenarios of %d rows: no template can serve a third time", p.Most, p.Capacity)
	}
	out, res := runSuite(t, dir, asked, 3)
	scs := loadSuite(t, out)
	if res.Proved != asked || len(scs) != asked {
		t.Fatalf("asked %d, proved %d, wrote %d", asked, res.Proved, len(scs))
	}
	names := map[string]bool{}
	for _, sc := range scs {
		names[sc.Name] = true
	}
	if len(names) != asked {
		t.Errorf("%d distinct names among %d scenarios", len(names), asked)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Refusals map[string]map[string]int `json:"refusals"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if n := rep.Refusals[string(prove.GateSuite)][string(prove.CodeDuplicateCode)]; n > 0 {
		t.Errorf("%d submissions shared a minted code", n)
	}
	t.Logf("%d scenarios from %d template rows; refusals %v", asked, p.Capacity, rep.Refusals)
}
