package reviewer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/ledger/ledgertest"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// scene is what a test writes of a run before the reviewer's turn, as the
// planner and the writers would; the Store and ledgertest's ledger both
// are one.
type scene interface {
	Ledger
	CreateRun(ctx context.Context, r ledger.Run) (bool, error)
	PutBuckets(ctx context.Context, run string, bs []ledger.Bucket) error
	Journal(ctx context.Context, run string, sc *scenario.Scenario, slice, writer string, codes []string) (ledger.JournalResult, error)
	Refuse(ctx context.Context, run, slice, bucket, gate, code, message string) error
}

var (
	_ scene = (*ledger.Store)(nil)
	_ scene = (*ledgertest.Ledger)(nil)
)

// record writes run id in state, asking for asked scenarios of the good
// suite's two buckets (each wanting asked/2, b1 blocked when blocked is
// set), with the first proved of its scenarios journalled, alternately in
// b0 and b1.
func record(t *testing.T, l scene, id string, state ledger.RunState, asked, proved int, blocked bool) {
	t.Helper()
	ctx := t.Context()
	if _, err := l.CreateRun(ctx, ledger.Run{ID: id, Agent: "shop", ContractSHA256: "c", WorldSHA256: "w", Model: "builtin",
		State: state, Asked: asked}); err != nil {
		t.Fatal(err)
	}
	scs, bs := varied()
	for i := range bs {
		bs[i].Want, bs[i].Done, bs[i].State, bs[i].Ord = asked/2, 0, ledger.BucketOpen, i
	}
	if blocked {
		bs[1].State = ledger.BucketBlocked
	}
	if err := l.PutBuckets(ctx, id, bs); err != nil {
		t.Fatal(err)
	}
	for i := range proved {
		credit(t, l, id, scs[i], fmt.Sprintf("b%d", i%2))
	}
}

// credit journals sc in bucket as a writer proving it would.
func credit(t *testing.T, l scene, run string, sc scenario.Scenario, bucket string) {
	t.Helper()
	sc.Bucket, sc.Branch = bucket, sc.Name
	if _, err := l.Journal(t.Context(), run, &sc, "s-"+sc.Name, "w", nil); err != nil {
		t.Fatalf("journal %s: %v", sc.Name, err)
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func config(l Ledger, run, out string) Config {
	return Config{Ledger: l, RunID: run, Contract: shop(), Out: out, Logger: quiet()}
}

// TestConcludeLeavesRunsNotItsOwn: a run the planner has not finished is
// not ready, a cancelled one is the planner's to resume, and a finished one
// is returned as it stands, with nothing moved.
func TestConcludeLeavesRunsNotItsOwn(t *testing.T) {
	l := ledgertest.New()
	for _, state := range []ledger.RunState{ledger.RunPlanned, ledger.RunWriting, ledger.RunCancelled, ledger.RunDone, ledger.RunFailed} {
		record(t, l, string(state), state, 4, 1, false)
	}
	for _, state := range []ledger.RunState{ledger.RunPlanned, ledger.RunWriting} {
		_, short, err := Conclude(t.Context(), config(l, string(state), t.TempDir()))
		if nr, ok := errors.AsType[*NotReadyError](err); !ok || nr.State != state || nr.Run != string(state) || short != nil {
			t.Errorf("%s: %v, short %v; want a *NotReadyError", state, err, short)
		}
	}
	if _, _, err := Conclude(t.Context(), config(l, "cancelled", t.TempDir())); !errors.Is(err, ErrCancelled) {
		t.Errorf("cancelled: %v, want ErrCancelled", err)
	}
	if err := l.UpdateRun("failed", func(r *ledger.Run) { r.Message = "blocked" }); err != nil {
		t.Fatal(err)
	}
	for _, state := range []ledger.RunState{ledger.RunDone, ledger.RunFailed} {
		run, short, err := Conclude(t.Context(), config(l, string(state), t.TempDir()))
		if err != nil || short != nil || run.State != state {
			t.Errorf("%s: %s, short %v, %v; want it as it stands", state, run.State, short, err)
		}
	}
	if n := l.Calls("MoveRun"); n != 0 {
		t.Errorf("%d moves of runs not the reviewer's", n)
	}
	if _, _, err := Conclude(t.Context(), config(l, "nobody", t.TempDir())); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("an unknown run: %v, want ErrNotFound", err)
	}
	if _, _, err := Conclude(t.Context(), Config{RunID: "done", Contract: shop(), Out: t.TempDir()}); err == nil {
		t.Error("concluded without a ledger")
	}
}

// TestConcludeReviewing: a reviewing run is done when the ledger holds its
// ask, and failed, saying by how much, when it does not.
func TestConcludeReviewing(t *testing.T) {
	for _, c := range []struct {
		name          string
		proved        int
		blocked       bool
		budget        int64
		state         ledger.RunState
		short, blocks int
		budgetStopped bool
	}{
		{"holds the ask", 4, false, 0, ledger.RunDone, 0, 0, false},
		{"short", 3, false, 0, ledger.RunFailed, 1, 0, false},
		{"short of a blocked bucket", 3, true, 0, ledger.RunFailed, 0, 1, false},
		{"short at its budget", 2, false, 1, ledger.RunFailed, 2, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := ledgertest.New()
			record(t, l, "r", ledger.RunReviewing, 4, c.proved, c.blocked)
			if c.budget > 0 {
				if err := l.UpdateRun("r", func(r *ledger.Run) { r.BudgetTokens = c.budget }); err != nil {
					t.Fatal(err)
				}
				if err := l.SpendCall(t.Context(), ledger.Call{Run: "r", Prompt: 10}); err != nil {
					t.Fatal(err)
				}
			}
			run, short, err := Conclude(t.Context(), config(l, "r", "out"))
			if err != nil {
				t.Fatal(err)
			}
			stored, err := l.Run(t.Context(), "r")
			if err != nil {
				t.Fatal(err)
			}
			if run.State != c.state || stored.State != c.state || stored.Message != run.Message || stored.FinishedAt == nil {
				t.Fatalf("returned %s %q, stored %s %q; want %s, finished", run.State, run.Message, stored.State, stored.Message, c.state)
			}
			if c.state == ledger.RunDone {
				if short != nil || run.Message != "" {
					t.Errorf("a done run: short %v, message %q", short, run.Message)
				}
				return
			}
			want := planner.ShortError{Agent: "shop", Proved: c.proved, Asked: 4, Blocked: c.blocks, Short: c.short,
				Budget: c.budgetStopped, Report: filepath.Join("out", "report.json")}
			if short == nil || *short != want || run.Message != short.Error() {
				t.Errorf("short %+v, message %q; want %+v", short, run.Message, want)
			}
		})
	}
}

// crediting deals gap rounds by journalling, in each, one more scenario
// of the good suite, as writers proving a gap slice would.
type crediting struct {
	t      *testing.T
	l      scene
	run    string
	next   int
	rounds int
}

func (d *crediting) GapRounds(context.Context) (int, error) { return d.rounds, nil }
func (d *crediting) Settle(context.Context) error           { return nil }
func (d *crediting) Gap(context.Context) (int, error) {
	scs, _ := varied()
	credit(d.t, d.l, d.run, scs[d.next], fmt.Sprintf("b%d", d.next%2))
	d.next++
	d.rounds++
	return 1, nil
}

// TestConcludeCountsAfterTheGapRounds: what the gap rounds journal counts
// toward the ask, and the rounds stop at their bound.
func TestConcludeCountsAfterTheGapRounds(t *testing.T) {
	l := ledgertest.New()
	record(t, l, "r", ledger.RunReviewing, 4, 2, false)
	d := &crediting{t: t, l: l, run: "r", next: 2}
	cfg := config(l, "r", t.TempDir())
	cfg.Dealer, cfg.Rounds = d, 2
	run, short, err := Conclude(t.Context(), cfg)
	if err != nil || short != nil || run.State != ledger.RunDone || d.rounds != 2 {
		t.Fatalf("%s, short %v, %v after %d rounds; want done after 2", run.State, short, err, d.rounds)
	}
}

// TestConcludeLedgerFaults: a ledger that fails under the reviewer stops
// it with the ledger's error, the run left reviewing for a retry.
func TestConcludeLedgerFaults(t *testing.T) {
	down := errors.New("database down")
	for _, method := range []string{"Run", "Count", "Buckets", "Budget", "MoveRun"} {
		t.Run(method, func(t *testing.T) {
			l := ledgertest.New()
			record(t, l, "r", ledger.RunReviewing, 4, 2, false)
			l.Fail(method, 1, down)
			if _, _, err := Conclude(t.Context(), config(l, "r", t.TempDir())); !errors.Is(err, down) {
				t.Fatalf("%v, want the ledger's error", err)
			}
			if r, err := l.Run(t.Context(), "r"); err != nil || r.State != ledger.RunReviewing {
				t.Errorf("run %s, %v; want it left reviewing", r.State, err)
			}
			// The retry concludes it.
			if run, _, err := Conclude(t.Context(), config(l, "r", t.TempDir())); err != nil || run.State != ledger.RunFailed {
				t.Errorf("the retry: %s, %v; want failed (short)", run.State, err)
			}
		})
	}
}

// readSuite reads what Run wrote in out: its index and report.
func readSuite(t *testing.T, out string) (*suite.Written, suite.Report) {
	t.Helper()
	w, err := suite.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := suite.ReadReport(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "review.json")); err != nil {
		t.Errorf("no review beside the suite: %v", err)
	}
	return w, rep
}

func names(w *suite.Written) []string {
	var out []string
	for _, e := range w.Index.Scenarios {
		out = append(out, e.Name)
	}
	return out
}

// TestRunWritesTheSuite: the reviewer's turn writes the suite as the
// ledger holds it, and says how a run that ended failed fell short.
func TestRunWritesTheSuite(t *testing.T) {
	l := ledgertest.New()
	record(t, l, "done", ledger.RunReviewing, 4, 4, false)
	record(t, l, "short", ledger.RunReviewing, 4, 3, false)
	record(t, l, "failed", ledger.RunFailed, 4, 1, false)
	if err := l.UpdateRun("failed", func(r *ledger.Run) { r.Message = "the provider quota ran out" }); err != nil {
		t.Fatal(err)
	}

	out := t.TempDir()
	rep, err := Run(t.Context(), config(l, "done", out))
	if err != nil || rep.State != string(ledger.RunDone) || rep.Count != 4 {
		t.Fatalf("done: %s with %d scenarios, %v", rep.State, rep.Count, err)
	}
	w, written := readSuite(t, out)
	if !slices.Equal(names(w), []string{"s0", "s2", "s1", "s3"}) || written.State != rep.State {
		t.Errorf("written %v in state %s; want s0 s2 (b0) s1 s3 (b1), done", names(w), written.State)
	}

	out = t.TempDir()
	rep, err = Run(t.Context(), config(l, "short", out))
	if short, ok := errors.AsType[*planner.ShortError](err); !ok || short.Proved != 3 || rep.State != string(ledger.RunFailed) {
		t.Errorf("short: %s, %v; want failed with a *planner.ShortError", rep.State, err)
	}
	if w, _ := readSuite(t, out); len(w.Index.Scenarios) != 3 {
		t.Errorf("short: %d scenarios written, want the 3 proved", len(w.Index.Scenarios))
	}

	rep, err = Run(t.Context(), config(l, "failed", t.TempDir()))
	if fe, ok := errors.AsType[*FailedError](err); !ok || fe.Reason != "the provider quota ran out" || rep.Count != 1 {
		t.Errorf("failed: %d scenarios, %v; want 1 and a *FailedError with the ledger's reason", rep.Count, err)
	}
}

// TestRunOnPostgres is the reviewer's turn on the ledger itself: the run
// concluded under the Store's lifecycle, the suite and the report's
// refusals as its queries give them, and a second turn (a retried Job)
// writing the same suite without moving the run again.
func TestRunOnPostgres(t *testing.T) {
	l := ledger.New(testenv.Postgres(t))
	record(t, l, "r", ledger.RunReviewing, 4, 3, true)
	for _, rf := range [][3]string{{"b1", "static", "placeholder"}, {"b1", "static", "placeholder"}, {"b1", "solvable", "check-failed"}} {
		if err := l.Refuse(t.Context(), "r", "s1", rf[0], rf[1], rf[2], "refused "+rf[2]); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir()
	rep, err := Run(t.Context(), config(l, "r", out))
	short, ok := errors.AsType[*planner.ShortError](err)
	if !ok || short.Proved != 3 || short.Blocked != 1 || rep.State != string(ledger.RunFailed) {
		t.Fatalf("%s, %v; want failed, a *planner.ShortError with b1 blocked", rep.State, err)
	}
	if run, err := l.Run(t.Context(), "r"); err != nil || run.State != ledger.RunFailed || run.Message != short.Error() {
		t.Fatalf("run %s %q, %v; want failed with the shortfall", run.State, run.Message, err)
	}
	w, written := readSuite(t, out)
	if !slices.Equal(names(w), []string{"s0", "s2", "s1"}) {
		t.Errorf("written %v, want s0 s2 s1", names(w))
	}
	if n := written.Refusals["static"]["placeholder"]; n != 2 {
		t.Errorf("report refusals %v, want static/placeholder 2", written.Refusals)
	}
	want := ledger.BucketRefusal{Gate: "static", Code: "placeholder", Count: 2, Of: 3, Example: "refused placeholder"}
	if len(written.Blocked) != 1 || written.Blocked[0].Bucket != "b1" || written.Blocked[0].Refusal == nil || *written.Blocked[0].Refusal != want {
		t.Errorf("report blocked %+v, want b1 refused by %+v", written.Blocked, want)
	}

	again := t.TempDir()
	if _, err := Run(t.Context(), config(l, "r", again)); !errors.As(err, new(*FailedError)) {
		t.Fatalf("the retried turn: %v, want the run's *FailedError", err)
	}
	if w2, _ := readSuite(t, again); !slices.Equal(names(w2), names(w)) {
		t.Errorf("the retried turn wrote %v, want %v", names(w2), names(w))
	}
}
