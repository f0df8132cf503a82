package cli

import (
	"fmt"

	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/suite"
)

// runProver returns e's prover with the sub-goals a run added (catalogue.json
// entries of origin "run", with their source) compiled over the contract's;
// one that cannot be compiled again is an error naming it.
func runProver(e *engine.Engine, path string) (*prove.Prover, error) {
	added, bad, err := suite.RunSubGoals(path)
	if err != nil {
		return nil, fmt.Errorf("--catalogue: %w", err)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("--catalogue %s: run sub-goal %s: %w", path, bad[0].Name, bad[0].Err)
	}
	p, skipped, err := e.WithSubGoals(added)
	if err != nil {
		return nil, fmt.Errorf("--catalogue %s: %w", path, err)
	}
	if len(skipped) > 0 {
		return nil, fmt.Errorf("--catalogue %s: run sub-goal %s: %w", path, skipped[0].Name, skipped[0].Err)
	}
	return p, nil
}
