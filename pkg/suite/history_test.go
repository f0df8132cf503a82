package suite_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/suite"
)

// TestHistory: versions appended in two revisions read back in order, the
// old files as they were (compacted); a line that does not read is named.
func TestHistory(t *testing.T) {
	dir := t.TempDir()
	if vs, err := suite.ReadHistory(dir); err != nil || vs != nil {
		t.Fatalf("a suite never revised: %v %v", vs, err)
	}
	first := []suite.Version{{Name: "a", Ask: "harder", Run: "r1", Old: json.RawMessage("{\n  \"name\": \"a\", \"tests\": \"<x> & y\"\n}\n")}}
	second := []suite.Version{{Name: "b", Ask: "fresh", Run: "r2", Old: json.RawMessage(`{"name":"b"}`)}, {Name: "a", Ask: "fresh", Run: "r2", Old: json.RawMessage(`{"name":"a","v":2}`)}}
	for _, vs := range [][]suite.Version{first, second, nil} {
		if err := suite.AppendHistory(dir, vs); err != nil {
			t.Fatal(err)
		}
	}
	got, err := suite.ReadHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Name != "a" || got[1].Name != "b" || got[2].Run != "r2" || string(got[0].Old) != `{"name":"a","tests":"<x> & y"}` {
		t.Fatalf("history read back: %+v", got)
	}
	path := filepath.Join(dir, suite.HistoryFile)
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, "{\"name\": 3}\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *suite.CorruptError
	if _, err := suite.ReadHistory(dir); !errors.As(err, &ce) || ce.File != path+":4" {
		t.Fatalf("a bad line: %v", err)
	}
}

func FuzzReadHistory(f *testing.F) {
	f.Add([]byte(`{"name":"a","ask":"harder","run":"r","old":{"name":"a"}}` + "\n"))
	f.Add([]byte("{\"name\":\"\"}\n\n{"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, suite.HistoryFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		vs, err := suite.ReadHistory(dir)
		if err != nil {
			var ce *suite.CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("not a *CorruptError: %v", err)
			}
			return
		}
		for _, v := range vs {
			if v.Name == "" || !json.Valid(v.Old) {
				t.Fatalf("read a version with no name or no old file: %+v", v)
			}
		}
	})
}
