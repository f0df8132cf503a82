package seedfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: columns in the row's order, nulls left out, one line per row,
// and an empty table written empty.
func TestWrite(t *testing.T) {
	out := t.TempDir()
	seed := map[string][]Row{"users": {
		{{"user_id", "u1"}, {"name", "Ann"}, {"nick", nil}, {"age", 40}},
		{{"user_id", "u2"}, {"age", 2.5}, {"name", "Bo"}},
	}}
	if err := Write(out, "CREATE TABLE users ();\n", []string{"users", "orders"}, seed); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, "seed", "users.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"user_id":"u1","name":"Ann","age":40}` + "\n" + `{"user_id":"u2","age":2.5,"name":"Bo"}` + "\n"
	if string(got) != want {
		t.Errorf("users.jsonl:\n%s\nwant:\n%s", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(out, "seed", "orders.jsonl")); err != nil || len(b) != 0 {
		t.Errorf("orders.jsonl: %q, %v; want it empty", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "schema.sql")); string(b) != "CREATE TABLE users ();\n" {
		t.Errorf("schema.sql: %q", b)
	}
	if _, err := (Row{{1, "x"}}).MarshalJSON(); err == nil {
		t.Error("a column named by a number was written")
	}
}
