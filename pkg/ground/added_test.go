package ground

import (
	"reflect"
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestAddedHoldsTheValuesTheRefusalTurnsOn: a claim the act once filed is
// already open for the incident the caller asks about again. The caller
// states what the row holds: its day (written from a format, bound to no
// column) and type (from a list), and the policy bound to the column that
// holds it; not a value the row holds only in another argument's column,
// nor one no added row holds.
func TestAddedHoldsTheValuesTheRefusalTurnsOn(t *testing.T) {
	st := scenario.Statement{
		SQL:  "INSERT INTO claims (claim_id, policy_number, incident_date, incident_type, description, status) VALUES ($1, $2, $3, $4, $5, $6)",
		Args: []any{"CLM-000101", "HP-000001", "2026-02-21", "fire", "Kitchen fire", "open"},
	}
	act := scenario.Call{Tool: "file_claim", Args: map[string]any{
		"policy_number": "HP-000001",
		"incident_date": "2026-02-21",
		"incident_type": "fire",
		"description":   "A new description",
		"reference":     "CLM-000101", // bound to another column than the one holding it
	}}
	binds := Bindings{
		{Tool: "file_claim", Param: "policy_number", Table: "claims", Column: "policy_number", How: ByXRef},
		{Tool: "file_claim", Param: "incident_date", How: FromPattern},
		{Tool: "file_claim", Param: "incident_type", How: ByEnum},
		{Tool: "file_claim", Param: "description", Table: "claims", Column: "description"},
		{Tool: "file_claim", Param: "reference", Table: "claims", Column: "description"},
	}
	got := AddedHolds([]scenario.Statement{st}, act, binds)
	want := map[string]bool{"policy_number": true, "incident_date": true, "incident_type": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AddedHolds = %v, want %v", got, want)
	}
	// A statement that adds no row of the act's (an update) holds nothing.
	upd := scenario.Statement{SQL: "UPDATE claims SET status = $1 WHERE claim_id = $2", Args: []any{"open", "CLM-000101"}}
	if got := AddedHolds([]scenario.Statement{upd}, act, binds); len(got) != 0 {
		t.Errorf("AddedHolds of an update = %v, want none", got)
	}
}
