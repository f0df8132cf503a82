package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// TestGenerated fails when a committed dashboard file is not what gen writes:
// run `go run ./deploy/grafana/gen` from the repository root after editing.
func TestGenerated(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 {
		t.Fatalf("gen writes %d files, want the dashboard twice and the rules twice", len(files))
	}
	for out, want := range files {
		got, err := os.ReadFile("../../../" + out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go run ./deploy/grafana/gen` from the repository root", out)
		}
	}
}

func TestPanelsUnique(t *testing.T) {
	b, err := Dashboard()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			ID      int    `json:"id"`
			Type    string `json:"type"`
			Title   string `json:"title"`
			GridPos struct{ H, W, X, Y int }
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			}
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	ids, titles := map[int]bool{}, map[string]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] || titles[p.Title] {
			t.Errorf("panel %d %q: duplicate id or title", p.ID, p.Title)
		}
		ids[p.ID], titles[p.Title] = true, true
		if p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %q overflows the grid: %+v", p.Title, p.GridPos)
		}
		if p.Type != "row" && len(p.Targets) == 0 {
			t.Errorf("panel %q has no targets", p.Title)
		}
	}
}
