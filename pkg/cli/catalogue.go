package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/suite"
)

// runProver returns e's prover with the sub-goals a run added (catalogue.json
// entries of origin "run", with their source) compiled over the contract's.
func runProver(e *engine.Engine, path string) (*prove.Prover, error) {
	added, err := runSubGoals(path)
	if err != nil {
		return nil, err
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

// runSubGoals are the sub-goals a run added, read from its catalogue.json.
func runSubGoals(path string) ([]contract.SubGoal, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--catalogue: %w", err)
	}
	var entries []suite.SubGoalInfo
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, fmt.Errorf("--catalogue %s: %w", path, err)
	}
	var added []contract.SubGoal
	for _, g := range entries {
		if g.Origin != "run" {
			continue
		}
		if g.Source == "" {
			return nil, fmt.Errorf("--catalogue %s: run sub-goal %s has no source (a catalogue written before sources were kept)", path, g.Name)
		}
		sg, probs := contract.ParseSubGoal("subgoals/"+g.Name+".star", g.Source)
		if len(probs) > 0 {
			return nil, fmt.Errorf("--catalogue %s: run sub-goal %s: %w", path, g.Name, probs)
		}
		added = append(added, sg)
	}
	return added, nil
}
