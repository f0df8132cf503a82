package suite

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead: whatever index.json and scenario file a suite holds, Read
// returns the suite or a *NotSuiteError or *CorruptError, never panics.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"run":"r","agent":"a","count":1,"scenarios":[{"name":"s","use_case":"u","branch":"b","bucket":"b0"}]}`),
		[]byte(`{"name":"s","use_case":"u","branch":"b","kind":"happy","expects":"succeed","tests":"","persona":{"name":"n","personality":"","accent":"","style":"","location":"","opening":""},"instruction":"","solution":[],"sub_goals":[],"max_turns":8,"provenance":{"contract_sha256":"","world_sha256":"","model":"","seed":0}}`))
	f.Add([]byte(`{"agent":"a","scenarios":[{"name":"../x"}]}`), []byte(`{}`))
	f.Add([]byte(`{"agent":"a","scenarios":[{"name":"s"}]}`), []byte(`{"name":"s","max_turns":"many"}`))
	f.Add([]byte(`not json`), []byte(``))
	f.Fuzz(func(t *testing.T, index, body []byte) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "scenarios", "s"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "index.json"), index, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(File(dir, "s"), body, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := Read(dir)
		if err == nil {
			for _, sc := range w.Scenarios {
				if sc.Name == "" || sc.UseCase == "" || sc.Branch == "" {
					t.Fatalf("read a scenario without name, use case or branch: %+v", sc)
				}
			}
			return
		}
		var ns *NotSuiteError
		var ce *CorruptError
		if !errors.As(err, &ns) && !errors.As(err, &ce) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
	})
}

// TestReadNamesFileAndField: a corrupt scenario file is named with its field.
func TestReadNamesFileAndField(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(dir); !errors.Is(err, ErrNotSuite) {
		t.Fatalf("an empty dir: %v", err)
	}
	os.MkdirAll(filepath.Join(dir, "scenarios", "s"), 0o755)
	os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"agent":"a","scenarios":[{"name":"s","use_case":"u","branch":"b","bucket":""}]}`), 0o644)
	for body, field := range map[string]string{
		`{"name":"s","use_case":"u","branch":"b","max_turns":"many"}`: "max_turns",
		`{"name":"s","use_case":"u","branch":"b","colour":"red"}`:     "colour",
		`{"name":"s","use_case":"","branch":"b"}`:                     "use_case",
		`{"name":"t","use_case":"u","branch":"b"}`:                    "name",
	} {
		os.WriteFile(File(dir, "s"), []byte(body), 0o644)
		_, err := Read(dir)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Field != field || ce.File != File(dir, "s") {
			t.Errorf("%s: %v, want field %s of %s", body, err, field, File(dir, "s"))
		}
	}
}
