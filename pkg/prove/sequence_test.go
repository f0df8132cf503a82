package prove_test

import (
	"testing"

	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestRowWrittenIgnoresSequenceKeys: testdata/points keys its notes by a
// sequence, which a rolled-back copy does not give back, and the world as
// it was before the conversation is read from a copy with sequences of its
// own. A note the setup adds takes another key there than on the copy the
// conversation is played on (the counterfactual copies draw keys too), so
// row_written on notes, which the act never writes, held on every path:
// on the second proof at the latest. It must fail, and row_written on the
// members the act changes must hold.
func TestRowWrittenIgnoresSequenceKeys(t *testing.T) {
	e, _ := fixtureEngine(t, "points")
	scn := func(table string) *scenario.Scenario {
		return &scenario.Scenario{
			Name: "add-points-" + table, UseCase: "add-points", Branch: "add points, " + table, Kind: "happy", Expects: scenario.OutcomeSucceed,
			Tests:       "passes when the checks hold",
			Persona:     scenario.Persona{Name: "Bo Lind", Opening: "Hello, it is about my points."},
			CallerID:    "M-2",
			Instruction: "Bo Lind wants 50 points added to member M-2. He can confirm who he is with email bo@example.org.",
			MaxTurns:    12,
			Setup: []scenario.Statement{
				{SQL: "INSERT INTO members (member_id, email, points) VALUES ($1, $2, $3)", Args: []any{"M-2", "bo@example.org", 10}},
				{SQL: "INSERT INTO notes (member_id, body) VALUES ($1, $2)", Args: []any{"M-2", "prefers email"}},
			},
			Solution: []scenario.Call{
				call("find_member", map[string]any{"email": "bo@example.org"}),
				call("add_points", map[string]any{"member_id": "M-2", "points": 50}),
			},
			SubGoals: []scenario.SubGoalRef{
				goal("called", map[string]any{"tool": "add_points", "args": map[string]any{"member_id": "M-2", "points": 50}}),
				goal(prove.RowWritten, map[string]any{"tables": []any{table}}),
			},
		}
	}
	for round := range 2 {
		v := prove1(t, e.Prover, scn("notes"))
		failed := false
		for _, r := range v.Refusals {
			failed = failed || r.Code == prove.CodeCheckFailed && r.SubGoal == prove.RowWritten
		}
		if v.Kept || !failed {
			t.Errorf("proof %d: row_written on notes, which the act never writes: kept %v, refusals %v; want %s", round+1, v.Kept, v.Refusals, prove.CodeCheckFailed)
		}
		for _, r := range prove1(t, e.Prover, scn("members")).Refusals {
			if r.SubGoal == prove.RowWritten {
				t.Errorf("proof %d: row_written on members, which the act changes: %v", round+1, r)
			}
		}
	}
}
