// Package taubenchtest plays sessions of tool calls through τ-bench's own
// tools, for the tests that hold a port of one of its domains to the
// benchmark (a converter's fidelity test).
package taubenchtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Published is what the benchmark's tools answered to one session: each
// call's answer ("Error: …" for an exception) and the documents the session
// named, as they stood afterwards (null when absent), by collection and key.
type Published struct {
	Name    string                                `json:"name"`
	Answers []any                                 `json:"answers"`
	Docs    map[string]map[string]json.RawMessage `json:"docs"`
}

// Play plays sessions (each {"name", "calls": [{"tool", "args"}], "docs":
// [[collection, key], …]}, as JSON encodes them) through the tools of τ-bench's
// domain (airline, retail) in the checkout TAU_BENCH_DIR names, one answer
// per session. It skips the test without a checkout or python3.
func Play(t *testing.T, domain string, sessions any) []Published {
	t.Helper()
	root, py := Checkout(t), Python(t)
	b, err := json.Marshal(map[string]any{"sessions": sessions})
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "sessions.json")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, here, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(here), "..", "testdata", "tau_bench_tools.py")
	raw, err := exec.Command(py, script, root, domain, in).Output()
	if err != nil {
		t.Fatalf("the published tools: %v", err)
	}
	var out []Published
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("the published tools' answers: %v", err)
	}
	return out
}

// Checkout is the τ-bench checkout TAU_BENCH_DIR names (the folder holding
// tau_bench/); it skips the test without one.
func Checkout(t testing.TB) string {
	t.Helper()
	root := os.Getenv("TAU_BENCH_DIR")
	if root == "" {
		t.Skip("TAU_BENCH_DIR not set")
	}
	return root
}

// Python is the python3 that runs the benchmark's code; it skips the test
// without one.
func Python(t testing.TB) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	return py
}
