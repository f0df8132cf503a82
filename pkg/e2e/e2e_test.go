// Package e2e runs suitegen end to end against real servers: the embedded
// NATS JetStream and a real PostgreSQL, with the builtin model.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Why a test runs in make test's pass without the race detector
// (testenv.OutsideRace): the race pass runs the in-process pipeline on
// retail (TestRetailSuite, TestDeterministic, the budget tests) and a
// portfolio (TestPortfolioFailureIsolation).
// Each such test also calls t.Parallel, right after (scripts/outsiderace
// finds them by that direct call), and so does each test of the race pass
// that runs a pipeline: every one has servers, databases and state dirs of
// its own, and one after another they would be either pass's end.
const (
	inBinaries  = "the roles run as binaries built without the race detector; an in-process reference run is what the race pass runs"
	wholeSuites = "whole suites planned and proved, the pipeline the race pass runs on retail"
)

func examples(t testing.TB, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// runSuite runs `suitegen run` in-process on servers of the test's own.
func runSuite(t *testing.T, dir string, n, writers int) (string, run.Result) {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: n, Writers: writers, Out: out, Seed: 7,
		NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t), Rounds: 1})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return out, res[0]
}

func loadSuite(t *testing.T, out string) []*scenario.Scenario {
	t.Helper()
	var scs []*scenario.Scenario
	paths, _ := filepath.Glob(filepath.Join(out, "scenarios", "*", "scenario.json"))
	sort.Strings(paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		scs = append(scs, sc)
	}
	return scs
}

// TestRetailSuite writes a suite and re-proves every scenario in it from disk.
func TestRetailSuite(t *testing.T) {
	t.Parallel()
	dir := examples(t, "retail")
	out, res := runSuite(t, dir, 40, 4)
	scs := loadSuite(t, out)
	if len(scs) != 40 || res.Proved != 40 {
		t.Fatalf("asked 40, wrote %d (report says %d)", len(scs), res.Proved)
	}
	for _, f := range []string{"index.json", "catalogue.json", "report.json", "review.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	e, err := engine.Open(ctx, pool, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	names, branches := map[string]bool{}, map[string]bool{}
	for _, sc := range scs {
		if v, err := e.Prover.Prove(ctx, sc); err != nil || !v.Kept {
			t.Errorf("%s is in the suite but does not prove: %v %v", sc.Name, err, v.Refusals)
		}
		if names[sc.Name] || branches[sc.UseCase+"|"+sc.Branch] {
			t.Errorf("%s: duplicate name or (use_case, branch)", sc.Name)
		}
		names[sc.Name], branches[sc.UseCase+"|"+sc.Branch] = true, true
	}
	// A vacuous variant of a kept scenario is refused: its checks are the
	// built-in "called" on a tool it never calls.
	bad := *scs[0]
	bad.Name = "vacuous-copy"
	bad.Branch = "vacuous copy"
	bad.SubGoals = []scenario.SubGoalRef{{Name: "not_called", Params: map[string]any{"tool": "no_such_tool", "args": map[string]any{}}}}
	bad.Expects, bad.Tempting = "succeed", nil
	if v, err := e.Prover.Prove(ctx, &bad); err != nil || v.Kept {
		t.Error("a scenario whose only check holds whatever the agent does was kept")
	}
}

// TestDeterministic: the saved scenarios are byte-identical whatever the
// number of writers.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	dir := examples(t, "retail")
	one, _ := runSuite(t, dir, 24, 1)
	many, _ := runSuite(t, dir, 24, 6)
	a, b := tree(t, filepath.Join(one, "scenarios")), tree(t, filepath.Join(many, "scenarios"))
	if len(a) != 24 {
		t.Fatalf("wrote %d scenarios, want 24", len(a))
	}
	for name, body := range a {
		if !bytes.Equal(body, b[name]) {
			t.Errorf("%s differs between 1 and 6 writers", name)
		}
	}
	if len(a) != len(b) {
		t.Errorf("1 writer wrote %d files, 6 writers %d", len(a), len(b))
	}
}

func tree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRidesSuiteShape checks what a suite must be as a whole (the pipeline's
// criteria) at a size make test affords.
func TestRidesSuiteShape(t *testing.T) {
	testenv.OutsideRace(t, wholeSuites)
	t.Parallel()
	dir := examples(t, "rides")
	out, _ := runSuite(t, dir, 120, 4)
	scs := loadSuite(t, out)
	if len(scs) != 120 {
		t.Fatalf("asked 120, wrote %d", len(scs))
	}
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, pers, accents, outcomes, ucs, tools := map[string]bool{}, map[string]int{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, sc := range scs {
		names[sc.Persona.Name] = true
		pers[sc.Persona.Personality]++
		accents[sc.Persona.Accent] = true
		outcomes[sc.Expects] = true
		ucs[sc.UseCase] = true
		for _, call := range append(append([]scenario.Call{}, sc.Solution...), sc.Tempting...) {
			tools[call.Tool] = true
		}
	}
	if float64(len(names)) < 0.9*float64(len(scs)) {
		t.Errorf("%d distinct caller names of %d", len(names), len(scs))
	}
	for p, n := range pers {
		if float64(n) > 0.25*float64(len(scs)) {
			t.Errorf("personality %q on %d of %d callers", p, n, len(scs))
		}
	}
	if len(accents) < 4 {
		t.Errorf("%d accents", len(accents))
	}
	for _, o := range scenario.Outcomes {
		if !outcomes[o] {
			t.Errorf("no scenario expects %s", o)
		}
	}
	var missing []string
	for _, u := range c.UseCases {
		if !ucs[u.ID] {
			missing = append(missing, u.ID)
		}
	}
	if len(missing) > 0 {
		t.Errorf("use cases without a scenario: %s", strings.Join(missing, ", "))
	}
	for _, tl := range c.Tools {
		if len(tl.Requires) > 0 && !tools[tl.Name] {
			t.Errorf("precondition-gated tool %s appears in no scenario", tl.Name)
		}
	}
}

// TestMoreThanSupported: asking for more than the agent supports ends with
// what it supports, the blocked buckets with their reasons in report.json,
// and an error that says so (a non-zero exit from the CLI).
func TestMoreThanSupported(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := run.Run(ctx, run.Config{Dirs: []string{examples(t, "retail")}, Asked: 400, Writers: 4, Out: out, Seed: 7,
		MaxWant: 1, NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t)})
	var short *planner.ShortError
	if !errors.As(err, &short) {
		t.Fatalf("want a ShortError, got %v", err)
	}
	got := len(loadSuite(t, out))
	if got == 0 || got >= 400 || short.Proved != got || res[0].Proved != got {
		t.Fatalf("wrote %d, error says %d, result %d", got, short.Proved, res[0].Proved)
	}
	if !strings.Contains(err.Error(), "of 400 scenarios proved") {
		t.Errorf("the error does not say how many of the ask were proved: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Count   int `json:"count"`
		Blocked []struct {
			Bucket, Reason string
		} `json:"blocked"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Count != got {
		t.Errorf("report counts %d, suite has %d", rep.Count, got)
	}
	for _, bl := range rep.Blocked {
		if bl.Reason == "" {
			t.Errorf("blocked bucket %s has no reason", bl.Bucket)
		}
	}
}
