package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/queue/jetstream"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// binaries builds the four commands once per test binary.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func binaries(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "suitegen-bin-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", binDir+"/", "../../cmd/...")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binDir
}

type proc struct {
	cmd *exec.Cmd
	out *bytes.Buffer
	mu  *sync.Mutex
}

type lockedBuffer struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// spawn starts one of the built binaries, its output captured.
func spawn(t *testing.T, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{out: &bytes.Buffer{}, mu: &sync.Mutex{}}
	p.cmd = exec.Command(filepath.Join(binaries(t), bin), args...)
	p.cmd.Env = append(os.Environ(), env...)
	w := lockedBuffer{p.mu, p.out}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return p
}

// start spawns a process the test waits for itself; cleanup kills it if not.
func start(t *testing.T, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := spawn(t, env, bin, args...)
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func (p *proc) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not finish within %s:\n%s", p.cmd.Path, within, p.output())
		return nil
	}
}

// TestSeparateProcesses runs planner, three writer processes and reviewer as
// separate OS processes against one Postgres and one NATS, SIGKILLs a writer
// mid-run, and checks the suite equals the in-process run's, byte for byte.
// The roles move the run through its lifecycle themselves: the planner hands
// it over reviewing (exit 0), the reviewer ends it done (exit 0), and a
// reviewer started again (a retried Job) deals nothing and writes the same
// suite.
func TestSeparateProcesses(t *testing.T) {
	testenv.OutsideRace(t, inBinaries)
	t.Parallel()
	dir := examples(t, "retail")
	const n = 30
	natsURL := testenv.NATS(t)
	// The killed writer's slice comes back after the ack wait; the others
	// hold theirs with heartbeats however long they take.
	const ackWait = 5 * time.Second
	precreateQueue(t, queue.Config{URL: natsURL, AckWait: ackWait})
	dbURL := testenv.PostgresURL(t)
	env := []string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + dbURL, "SUITEGEN_ACK_WAIT=" + ackWait.String()}
	led := ledgerAt(t, dbURL)
	var writers []*proc
	for i := 0; i < 3; i++ {
		writers = append(writers, start(t, env, "writer", "--id", fmt.Sprintf("w%d", i+1), "--drain-timeout", "5s"))
	}
	planner := start(t, env, "planner", dir, "--run", "dist-1", "--scenarios", fmt.Sprint(n), "--seed", "7")
	// Kill one writer as soon as it has journalled something of its own.
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		deadline := time.Now().Add(testenv.Patience)
		for time.Now().Before(deadline) {
			if strings.Contains(writers[0].output(), "slice written") || strings.Contains(writers[0].output(), "dist-1") {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = writers[0].cmd.Process.Signal(syscall.SIGKILL)
	}()
	if err := planner.wait(t, testenv.Patience); err != nil {
		t.Fatalf("planner: %v\n%s", err, planner.output())
	}
	<-killed
	if st := runState(t, led, "dist-1"); st != ledger.RunReviewing {
		t.Fatalf("after the planner the run is %s, want reviewing", st)
	}
	// The reviewer reads the plan the planner derived, not one of its own.
	if _, err := led.Plan(t.Context(), "dist-1"); err != nil {
		t.Errorf("the planner stored no plan with its run: %v", err)
	}
	out := t.TempDir()
	rev := start(t, env, "reviewer", "--run", "dist-1", "--out", out)
	if err := rev.wait(t, testenv.Patience); err != nil {
		t.Fatalf("reviewer: %v\n%s", err, rev.output())
	}
	if st := runState(t, led, "dist-1"); st != ledger.RunDone {
		t.Fatalf("after the reviewer the run is %s, want done", st)
	}
	dealt := sliceCount(t, led, "dist-1")
	again := t.TempDir()
	rev2 := start(t, env, "reviewer", "--run", "dist-1", "--out", again)
	if err := rev2.wait(t, testenv.Patience); err != nil {
		t.Fatalf("a reviewer started again on a done run: %v\n%s", err, rev2.output())
	}
	if got := sliceCount(t, led, "dist-1"); got != dealt {
		t.Errorf("a reviewer started again dealt %d slices more", got-dealt)
	}
	if a, b := tree(t, out), tree(t, again); len(a) != len(b) {
		t.Errorf("the second reviewer wrote %d files, the first %d", len(b), len(a))
	} else {
		for name, body := range a {
			if !bytes.Equal(body, b[name]) {
				t.Errorf("%s differs between the first reviewer and the second", name)
			}
		}
	}
	for _, w := range writers[1:] {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		if err := w.wait(t, testenv.Patience); err != nil {
			t.Errorf("writer did not drain cleanly on SIGTERM: %v\n%s", err, w.output())
		}
	}
	got := tree(t, filepath.Join(out, "scenarios"))
	if len(got) != n {
		t.Fatalf("distributed run wrote %d scenarios, want %d\nplanner:\n%s", len(got), n, planner.output())
	}
	want, _ := runSuite(t, dir, n, 4)
	ref := tree(t, filepath.Join(want, "scenarios"))
	for name, body := range ref {
		if !bytes.Equal(body, got[name]) {
			t.Errorf("%s differs between the distributed and the in-process run", name)
		}
	}
	// The reviewer's report says which refusal branches the kept scenarios
	// reach, as the in-process run's does.
	if a, b := handlerBranches(t, out), handlerBranches(t, want); a == "" || a != b {
		t.Errorf("coverage.handler_branches: distributed %s, in-process %s", a, b)
	}
}

// handlerBranches is report.json's coverage.handler_branches as written
// ("" when absent).
func handlerBranches(t *testing.T, out string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Coverage struct {
			HandlerBranches json.RawMessage `json:"handler_branches"`
		} `json:"coverage"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return string(rep.Coverage.HandlerBranches)
}

// precreateQueue creates the stream and the shared consumer before processes
// start: nats-server v2.15 has a data race of its own when one server creates
// the same consumer for several connections at once, and this test's server
// runs in the (race-detecting) test process. Production servers are not built
// with the race detector; the writers find the consumer and leave it be.
func precreateQueue(t *testing.T, cfg queue.Config) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.Patience)
	defer cancel()
	q, err := jetstream.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
}

// TestSigtermLeavesNothing: `suitegen run` on the embedded stack, stopped
// with SIGTERM mid-run, exits leaving no postgres behind, keeps what it
// proved, and the next run on the same state directory works.
func TestSigtermLeavesNothing(t *testing.T) {
	testenv.OutsideRace(t, inBinaries)
	t.Parallel()
	// A state dir the server's user may enter, so its cluster stays in it
	// (and pgrep below finds what runs on it).
	state, out := testenv.ServerDir(t), t.TempDir()
	// Long enough to be interrupted; small enough that the slices it leaves
	// on the queue, which the next run writes into its ledger, do not
	// outlast that run's wait.
	p := start(t, nil, "suitegen", "run", examples(t, "rides"), "--scenarios", "600", "--writers", "2",
		"--state-dir", state, "--out", out)
	deadline := time.Now().Add(testenv.Patience)
	for !strings.Contains(p.output(), "slice written") {
		if time.Now().After(deadline) {
			t.Fatalf("no slice written within %s:\n%s", testenv.Patience, p.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t, testenv.Patience); err == nil {
		t.Fatalf("an interrupted run exited 0:\n%s", p.output())
	}
	if !strings.Contains(p.output(), "resume with --run") {
		t.Errorf("the interrupted run does not say how to resume:\n%s", p.output())
	}
	if left, _ := exec.Command("pgrep", "-f", state).Output(); len(bytes.TrimSpace(left)) > 0 {
		t.Fatalf("processes left behind after SIGTERM: %s", left)
	}
	if kept, _ := filepath.Glob(filepath.Join(out, "scenarios", "*")); len(kept) == 0 {
		t.Errorf("the interrupted run wrote none of what it had proved")
	}
	again := start(t, nil, "suitegen", "run", examples(t, "retail"), "--scenarios", "5", "--state-dir", state, "--out", t.TempDir())
	if err := again.wait(t, testenv.Patience); err != nil {
		t.Fatalf("the next run on the same state dir failed: %v\n%s", err, again.output())
	}
}
