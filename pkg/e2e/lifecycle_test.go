package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/cli"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// ledgerAt is the ledger at a database URL, closed with the test.
func ledgerAt(t *testing.T, url string) *ledger.Store {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return ledger.New(pool)
}

func runState(t *testing.T, l *ledger.Store, id string) ledger.RunState {
	t.Helper()
	r, err := l.Run(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r.State
}

func sliceCount(t *testing.T, l *ledger.Store, id string) int {
	t.Helper()
	ss, err := l.Slices(context.Background(), id, -1)
	if err != nil {
		t.Fatal(err)
	}
	return len(ss)
}

// exitCode is a finished process's exit code (0 for a nil error).
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("not an exit: %v", err)
	return -1
}

// TestDistributedShortRun: a run asked for more than the contract holds
// ends failed, and the Jobs say so: the planner exits 1 (a retry changes
// nothing), the reviewer writes what was proved and exits 1, and a planner
// or reviewer started again deals nothing more.
func TestDistributedShortRun(t *testing.T) {
	testenv.OutsideRace(t, inBinaries)
	t.Parallel()
	dir := examples(t, "retail")
	const asked, runID = 400, "short-1"
	natsURL := testenv.NATS(t)
	precreateQueue(t, queue.Config{URL: natsURL})
	dbURL := testenv.PostgresURL(t)
	env := []string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + dbURL}
	led := ledgerAt(t, dbURL)
	var writers []*proc
	for i := range 2 {
		writers = append(writers, start(t, env, "writer", "--id", fmt.Sprintf("sw%d", i+1), "--drain-timeout", "5s"))
	}
	plannerArgs := []string{dir, "--run", runID, "--scenarios", fmt.Sprint(asked), "--max-want", "1", "--seed", "7"}
	planner := start(t, env, "planner", plannerArgs...)
	if code := exitCode(t, planner.wait(t, testenv.Patience)); code != cli.ExitFail {
		t.Fatalf("the planner of a short run exited %d, want %d:\n%s", code, cli.ExitFail, planner.output())
	}
	if !strings.Contains(planner.output(), "the run is failed") {
		t.Errorf("the planner does not say the run failed:\n%s", planner.output())
	}
	r, err := led.Run(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != ledger.RunFailed || !strings.Contains(r.Message, fmt.Sprintf("of %d scenarios proved", asked)) || r.FinishedAt == nil {
		t.Fatalf("the run after its planner: %s %q (finished %v)", r.State, r.Message, r.FinishedAt)
	}
	dealt := sliceCount(t, led, runID)

	out := t.TempDir()
	for i := range 2 { // the second is a retried Job
		rev := start(t, env, "reviewer", "--run", runID, "--out", out)
		if code := exitCode(t, rev.wait(t, testenv.Patience)); code != cli.ExitFail {
			t.Fatalf("reviewer %d of a failed run exited %d, want %d:\n%s", i+1, code, cli.ExitFail, rev.output())
		}
	}
	again := start(t, env, "planner", plannerArgs...)
	if code := exitCode(t, again.wait(t, testenv.Patience)); code != cli.ExitFail {
		t.Fatalf("a planner started again on the failed run exited %d, want %d:\n%s", code, cli.ExitFail, again.output())
	}
	if got := sliceCount(t, led, runID); got != dealt {
		t.Errorf("%d slices were dealt after the run failed", got-dealt)
	}

	n, err := led.Count(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(tree(t, filepath.Join(out, "scenarios"))); got != n || n == 0 || n >= asked {
		t.Errorf("the suite holds %d scenarios, the ledger %d of %d asked", got, n, asked)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		State string `json:"state"`
		Count int    `json:"count"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.State != string(ledger.RunFailed) || rep.Count != n {
		t.Errorf("report.json: state %q, count %d; want failed, %d", rep.State, rep.Count, n)
	}
	for _, w := range writers {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		if err := w.wait(t, testenv.Patience); err != nil {
			t.Errorf("writer did not drain on SIGTERM: %v\n%s", err, w.output())
		}
	}
}

// TestLifecycleRehearsal rehearses the Jobs as a cluster runs them: a
// planner, three writers and a reviewer as separate processes, the queue on a
// 3-server NATS cluster with every slice on all three. A run the contract
// can serve ends done with exit 0 from planner and reviewer; a run asked for
// more than the contract holds ends failed with exit 1 from both; and a Job
// retried on either run (planner or reviewer started again) deals no slice.
func TestLifecycleRehearsal(t *testing.T) {
	testenv.OutsideRace(t, inBinaries)
	t.Parallel()
	dir := examples(t, "retail")
	natsURL, dbURL := testenv.NATSCluster(t, 3), testenv.PostgresURL(t)
	precreateQueue(t, queue.Config{URL: natsURL, Replicas: 3})
	env := []string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + dbURL, "SUITEGEN_QUEUE_REPLICAS=3"}
	led := ledgerAt(t, dbURL)
	var writers []*proc
	for i := range 3 {
		writers = append(writers, start(t, env, "writer", "--id", fmt.Sprintf("lw%d", i+1), "--drain-timeout", "5s"))
	}

	for _, tc := range []struct {
		name   string
		run    string
		asked  int
		extra  []string
		exit   int
		state  ledger.RunState
		proved func(n int) bool
	}{
		{"served", "rehearse-done", 12, nil, 0, ledger.RunDone, func(n int) bool { return n == 12 }},
		{"short", "rehearse-short", 400, []string{"--max-want", "1"}, cli.ExitFail, ledger.RunFailed, func(n int) bool { return n > 0 && n < 400 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{dir, "--run", tc.run, "--scenarios", fmt.Sprint(tc.asked), "--seed", "7"}, tc.extra...)
			planner := start(t, env, "planner", args...)
			if code := exitCode(t, planner.wait(t, testenv.Patience)); code != tc.exit {
				t.Fatalf("the planner exited %d, want %d:\n%s", code, tc.exit, planner.output())
			}
			want := ledger.RunReviewing
			if tc.exit != 0 {
				want = ledger.RunFailed
			}
			if st := runState(t, led, tc.run); st != want {
				t.Fatalf("after the planner the run is %s, want %s", st, want)
			}
			out := t.TempDir()
			rev := start(t, env, "reviewer", "--run", tc.run, "--out", out)
			if code := exitCode(t, rev.wait(t, testenv.Patience)); code != tc.exit {
				t.Fatalf("the reviewer exited %d, want %d:\n%s", code, tc.exit, rev.output())
			}
			if st := runState(t, led, tc.run); st != tc.state {
				t.Fatalf("after the reviewer the run is %s, want %s", st, tc.state)
			}
			dealt := sliceCount(t, led, tc.run)
			// Retried Jobs: each exits as the run stands and deals nothing.
			for _, role := range []string{"planner", "reviewer"} {
				var p *proc
				if role == "planner" {
					p = start(t, env, "planner", args...)
				} else {
					p = start(t, env, "reviewer", "--run", tc.run, "--out", t.TempDir())
				}
				if code := exitCode(t, p.wait(t, testenv.Patience)); code != tc.exit {
					t.Fatalf("a retried %s exited %d, want %d:\n%s", role, code, tc.exit, p.output())
				}
			}
			if got := sliceCount(t, led, tc.run); got != dealt {
				t.Errorf("retried Jobs dealt %d slices more", got-dealt)
			}
			if st := runState(t, led, tc.run); st != tc.state {
				t.Errorf("after the retries the run is %s, want %s", st, tc.state)
			}
			n, err := led.Count(context.Background(), tc.run)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(tree(t, filepath.Join(out, "scenarios"))); got != n || !tc.proved(n) {
				t.Errorf("the suite holds %d scenarios, the ledger %d of %d asked", got, n, tc.asked)
			}
		})
	}
	for _, w := range writers {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		if err := w.wait(t, testenv.Patience); err != nil {
			t.Errorf("writer did not drain on SIGTERM: %v\n%s", err, w.output())
		}
	}
}
