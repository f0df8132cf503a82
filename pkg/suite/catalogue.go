package suite

import (
	"encoding/json"
	"errors"
	"os"

	"github.com/suitegen/suitegen/pkg/contract"
)

// BadSubGoal is a run sub-goal of a catalogue that cannot be compiled again:
// written before sources were kept, or no longer parsing.
type BadSubGoal struct {
	Name string
	Err  error
}

// RunSubGoals are the sub-goals a run added (catalogue.json entries of origin
// "run"), parsed from the source the catalogue keeps. A file that does not
// read as a catalogue is a *CorruptError.
// Entries that cannot be compiled come back in bad, for the caller to refuse
// (proving one scenario) or leave out (re-proving a suite, where a scenario
// naming one is then stale).
func RunSubGoals(path string) (goals []contract.SubGoal, bad []BadSubGoal, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var entries []SubGoalInfo
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, nil, &CorruptError{File: path, Err: err}
	}
	for _, g := range entries {
		if g.Origin != "run" {
			continue
		}
		if g.Source == "" {
			bad = append(bad, BadSubGoal{g.Name, errors.New("no source (a catalogue written before sources were kept)")})
			continue
		}
		sg, probs := contract.ParseSubGoal("subgoals/"+g.Name+".star", g.Source)
		if len(probs) > 0 {
			bad = append(bad, BadSubGoal{g.Name, probs})
			continue
		}
		goals = append(goals, sg)
	}
	return goals, bad, nil
}
