package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportTauBench: a task list in τ-bench's shape becomes a suite of the
// ported airline contract. The task the prover keeps is written as a run
// writes (check re-proves it, export reads it), and every other task is
// reported with the gate and code that refused it: the import's own codes
// for what cannot be one scenario, the prover's for the rest. A task of
// several acts is a conversation of several requests, each proved (task 1's
// second request skips the look-up its act requires). Task 5 changes to
// flights only a search shows, which its actions never list: the import
// finds the searches by playing them and puts them before the act.
func TestImportTauBench(t *testing.T) {
	t.Parallel() // the package's long runs, each on servers of its own
	out := t.TempDir()
	code, stdout := dispatch(t, "import", filepath.Join("testdata", "import", "airline", "tasks_test.py"),
		"--format", "tau-bench", "--contract", filepath.Join("..", "..", "examples", "airline"), "--out", out, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	var rep ImportReport
	if err := json.Unmarshal([]byte(stdout[strings.Index(stdout, "{"):]), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	want := []struct {
		kept       bool
		gate, code string
	}{
		{true, "", ""},
		{false, "static", "requires-unmet"},
		{false, "import", "no-act"},
		{false, "grounding", "output-not-in-results"},
		{false, "import", "several-acts"},
		{true, "", ""},
	}
	if rep.Tasks != len(want) || len(rep.Results) != len(want) || rep.Kept != 2 || rep.Refused != 4 {
		t.Fatalf("report %+v", rep)
	}
	for i, w := range want {
		r := rep.Results[i]
		if r.Kept != w.kept || r.Gate != w.gate || r.Code != w.code {
			t.Errorf("task %d: kept %v %s/%s (%s), want kept %v %s/%s", i, r.Kept, r.Gate, r.Code, r.Reason, w.kept, w.gate, w.code)
		}
	}
	if r := rep.Results[1]; !strings.HasPrefix(r.Reason, "request 2 (compensation): ") {
		t.Errorf("task 1 is refused for its second request: %+v", r)
	}
	if r := rep.Results[0]; r.Scenario != "tau-bench-airline-0" || r.UseCase != "cancel-reservation" || r.Line != 6 {
		t.Errorf("kept task: %+v", r)
	}
	if code, s := dispatch(t, "check", out, "--contract", filepath.Join("..", "..", "examples", "airline")); code != ExitOK || !strings.Contains(s, "0 of 2 scenario(s) stale") {
		t.Errorf("check on the imported suite: exit %d:\n%s", code, s)
	}
	b, err := os.ReadFile(filepath.Join(out, "scenarios", "tau-bench-airline-5", "scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Solution []struct {
			Tool string
			Args map[string]any
		}
	}
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	var searches []string
	for _, c := range sc.Solution {
		if strings.HasPrefix(c.Tool, "search_") {
			searches = append(searches, fmt.Sprintf("%v→%v %v", c.Args["origin"], c.Args["destination"], c.Args["date"]))
		}
	}
	if want := []string{"DTW→JFK 2024-05-17", "JFK→DTW 2024-05-19"}; !slices.Equal(searches, want) {
		t.Errorf("task 5's searches %v, want %v:\n%s", searches, want, b)
	}
	code, s := dispatch(t, "export", out, "--format", "jsonl")
	if code != ExitOK || !strings.Contains(s, `"caller_id":"olivia_gonzalez_2305"`) || !strings.Contains(s, `"tool":"get_user_details"`) {
		t.Errorf("export of the imported suite: exit %d:\n%s", code, s)
	}
}

// TestImportRefusesBadSource: a task file the parser does not accept stops
// the import before any server starts, naming the line and column.
func TestImportRefusesBadSource(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "tasks.py")
	if err := os.WriteFile(bad, []byte("TASKS = [\n    Task(user_id=os.environ['X']),\n]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := dispatch(t, "import", bad, "--format", "tau-bench", "--contract", filepath.Join("..", "..", "examples", "airline"))
	if code == ExitOK || !strings.Contains(out, bad+":2:18: name os is not a literal") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}
