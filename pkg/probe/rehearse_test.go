package probe

import (
	"reflect"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// statementsOf writes a diff back as statements keyed by primary key:
// removals, changes, then additions without the columns the database
// fills; a diff it cannot say with them gives none.
func TestStatementsOfDiff(t *testing.T) {
	c := &contract.Contract{Tables: []contract.Table{
		{Name: "bills", PrimaryKey: []string{"bill_id"}, Columns: []contract.Column{{Name: "bill_id"}, {Name: "status"}, {Name: "amount"}}},
		{Name: "callbacks", PrimaryKey: []string{"id"}, Columns: []contract.Column{{Name: "id", Default: "identity"}, {Name: "patient_id"}, {Name: "due"}}},
		{Name: "log", Columns: []contract.Column{{Name: "line"}}},
	}}
	d := world.StateDiff{Tables: []world.TableDiff{
		{Table: "bills", Changed: []world.RowChange{{Key: map[string]any{"bill_id": "B1"}, Columns: []string{"status"},
			Before: map[string]any{"bill_id": "B1", "status": "Issued", "amount": 5.0}, After: map[string]any{"bill_id": "B1", "status": "Awaiting Payment", "amount": 5.0}}},
			Removed: []map[string]any{{"bill_id": "B2", "status": "Issued"}}},
		{Table: "callbacks", Added: []map[string]any{{"id": 7.0, "patient_id": "P-1", "due": "2026-03-11T09:00:00Z"}}},
	}}
	want := []scenario.Statement{
		{SQL: "DELETE FROM bills WHERE bill_id = $1", Args: []any{"B2"}},
		{SQL: "UPDATE bills SET status = $1 WHERE bill_id = $2", Args: []any{"Awaiting Payment", "B1"}},
		{SQL: "INSERT INTO callbacks (patient_id, due) VALUES ($1, $2)", Args: []any{"P-1", "2026-03-11T09:00:00Z"}},
	}
	if got := statementsOf(c, d); !reflect.DeepEqual(got, want) {
		t.Fatalf("statements:\n%v\nwant\n%v", got, want)
	}
	for name, d := range map[string]world.StateDiff{
		"a table without a key": {Tables: []world.TableDiff{{Table: "log", Added: []map[string]any{{"line": "x"}}}}},
		"a key changed": {Tables: []world.TableDiff{{Table: "bills", Changed: []world.RowChange{{Columns: []string{"bill_id"},
			Before: map[string]any{"bill_id": "B1"}, After: map[string]any{"bill_id": "B9"}}}}}},
	} {
		if got := statementsOf(c, d); got != nil {
			t.Errorf("%s: %v, want none", name, got)
		}
	}
}
