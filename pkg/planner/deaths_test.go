package planner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// A plan whose rounds top up: in the first, b1 and x fall short after
// proving some of their want and cede one scenario each, which top-ups deal
// to buckets with room (a2, b2) at new suite indices; b2 proves nothing of
// its raise in the second round and cedes it; z proves nothing in three
// attempts and is blocked in the third, its want topped up to a2.
// limits says how many of a bucket's scenarios (by position) its writers
// can prove.
var (
	deathsPlan = []ledger.Bucket{
		bucket("a1", "a", "a1", 0, 2, 0, 2),
		bucket("a2", "a", "a2", 1, 2, 2, 6),
		bucket("b1", "b", "b1", 2, 3, 4, 3),
		bucket("b2", "b", "b2", 3, 2, 7, 6),
		bucket("x", "c", "x", 4, 3, 9, 3),
		bucket("z", "d", "z", 5, 1, 12, 1),
		bucket("e", "e", "e", 6, 1, 13, 6),
	}
	deathsLimits = map[string]int{"a1": 2, "a2": 6, "b1": 2, "b2": 2, "x": 2, "z": 0, "e": 6}
)

// death is the slice of a run that dies: the first slice of round that holds
// bucket, after journalling the first scenario it can; its writers are all
// lost and the slice is recorded dead, as a writer finding its lost
// deliveries at the bound records it. The zero death is a run without one.
type death struct {
	round  int
	bucket string
}

// A fate says of each slice, as its writer takes it, whether it dies and,
// if so, how many scenarios of each of its buckets it journals first.
type fate func(s queue.Slice) (dies bool, journals int)

// once is the fate of d: one slice dies after journalling one scenario.
func (d death) once() fate {
	died := false
	return func(s queue.Slice) (bool, int) {
		if died || s.Round != d.round || !slices.Contains(s.Buckets, d.bucket) {
			return false, 0
		}
		died = true
		return true, 1
	}
}

// unlucky is the fate of writers that die around bucket: the slices that
// hold it die in turn, the n-th after journalling journals[n] scenarios of
// each of its buckets, until journals runs out.
func unlucky(bucket string, journals ...int) fate {
	n := 0
	return func(s queue.Slice) (bool, int) {
		if n == len(journals) || !slices.Contains(s.Buckets, bucket) {
			return false, 0
		}
		n++
		return true, journals[n-1]
	}
}

// poison is the fate of a bucket that kills every writer that takes it:
// every slice that holds it dies before journalling anything.
func poison(bucket string) fate {
	return func(s queue.Slice) (bool, int) {
		return slices.Contains(s.Buckets, bucket), 0
	}
}

// errStopped is a planner stopped (killed) by a test.
var errStopped = errors.New("the planner was stopped")

// stopper stops the planner right after its at-th write (0: never); n
// counts the writes so far.
type stopper struct {
	at, n int
	what  string // the write it stopped after
}

func (s *stopper) after(what string, err error) error {
	if err != nil {
		return err
	}
	if s.n++; s.n == s.at {
		s.what = what
		return errStopped
	}
	return nil
}

// stoppingLedger is a ledger whose every write the planner makes between
// reads (a claim, a take-over, a raise, a round or a run moved) may be its
// last: it is made, then the planner is told it failed, as a planner killed
// right after it would not go on. The fold, which the planner retries,
// and the reads are not stopped.
type stoppingLedger struct {
	*ledger.Store
	s *stopper
}

func (l stoppingLedger) ClaimSlice(ctx context.Context, sl ledger.Slice) error {
	return l.s.after("claim "+sl.ID, l.Store.ClaimSlice(ctx, sl))
}

func (l stoppingLedger) RedealSlice(ctx context.Context, dead string, sl ledger.Slice) (bool, error) {
	moved, err := l.Store.RedealSlice(ctx, dead, sl)
	return moved, l.s.after("take over "+dead, err)
}

func (l stoppingLedger) Raise(ctx context.Context, run string, rs ...ledger.Raising) error {
	return l.s.after(fmt.Sprint("raise ", len(rs), " buckets"), l.Store.Raise(ctx, run, rs...))
}

func (l stoppingLedger) SetRound(ctx context.Context, id string, round int) error {
	return l.s.after(fmt.Sprint("round ", round), l.Store.SetRound(ctx, id, round))
}

func (l stoppingLedger) MoveRun(ctx context.Context, id string, to ledger.RunState, msg string) (ledger.RunState, error) {
	from, err := l.Store.MoveRun(ctx, id, to, msg)
	return from, l.s.after("move to "+string(to), err)
}

// stoppingQueue is fakeQueue whose publishes may be the planner's last.
type stoppingQueue struct {
	*fakeQueue
	s *stopper
}

func (q stoppingQueue) Publish(ctx context.Context, sl queue.Slice) (bool, error) {
	dup, err := q.fakeQueue.Publish(ctx, sl)
	return dup, q.s.after("publish "+sl.ID, err)
}

// writeRun runs the planner on a ledger in PostgreSQL over deathsPlan, each
// slice written at once by a writer that proves what deathsLimits allows,
// one slice per bucket, and returns the names of the scenarios journalled:
// each is its bucket and its suite-wide index, what deals its callers,
// codes and name in a real run. A planner stopped after its stopAt-th write
// (0: none) is started again on the run, as its Job would be; stopped says
// whether one was.
func writeRun(t *testing.T, store *ledger.Store, run string, die death, stopAt int) (names []string, stopped string) {
	t.Helper()
	names, stopped, _ = writeRunOf(t, store, run, die.once(), stopAt, 1)
	if die.round > 0 && !slices.ContainsFunc(deadOf(t, store, run), func(s ledger.Slice) bool { return s.Round == die.round }) {
		t.Fatalf("run %s: no slice of round %d held %s", run, die.round, die.bucket)
	}
	return names, stopped
}

// deadOf lists a run's dead slices.
func deadOf(t *testing.T, store *ledger.Store, run string) []ledger.Slice {
	t.Helper()
	ss, err := store.Slices(t.Context(), run, -1)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(ss, func(s ledger.Slice) bool { return s.State != ledger.SliceDead })
}

// writeRunOf is writeRun with the slices' fate and the buckets a slice holds
// at most (perSlice); it also returns the planner's result.
func writeRunOf(t *testing.T, store *ledger.Store, run string, fate fate, stopAt, perSlice int) (names []string, stopped string, res Result) {
	t.Helper()
	ctx := t.Context()
	c, err := contract.LoadValid("../../examples/retail")
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	for _, b := range deathsPlan {
		asked += b.Want
	}
	if _, err := store.CreateRun(ctx, ledger.Run{ID: run, Agent: c.Agent, ContractSHA256: c.SHA256, WorldSHA256: "w", Model: "builtin",
		State: ledger.RunPlanned, Asked: asked, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	bs := slices.Clone(deathsPlan)
	for i := range bs {
		bs[i].RunID = run
	}
	if err := store.PutBuckets(ctx, run, bs); err != nil {
		t.Fatal(err)
	}
	q := &fakeQueue{cfg: queue.Config{AckWait: 20 * time.Millisecond, FetchWait: 10 * time.Millisecond, MaxDeliver: 5}}
	q.write = func(s queue.Slice) {
		ctx := context.Background()
		bs, err := store.Buckets(ctx, run)
		if err != nil {
			panic(err)
		}
		dies, journals := fate(s)
		for _, b := range bs {
			if !slices.Contains(s.Buckets, b.ID) {
				continue
			}
			end := min(b.Want, deathsLimits[b.ID])
			if dies {
				end = min(end, b.Done+journals)
			}
			for k := b.Done; k < end; k++ {
				i := b.Spec.Index(k)
				name := fmt.Sprintf("%s-%d", b.ID, i)
				sc := &scenario.Scenario{Name: name, Bucket: b.ID, UseCase: b.UseCase, Branch: name, Kind: "happy",
					Expects: "succeed", Instruction: "case " + name, MaxTurns: 1}
				if _, err := store.Journal(ctx, run, sc, s.ID, "w", nil); err != nil {
					panic(err)
				}
			}
		}
		to, reason := ledger.SliceDone, ""
		if dies {
			to, reason = ledger.SliceDead, "lost with its writers"
		}
		if err := store.FinishSlice(ctx, run, s.ID, to, "w", reason, 5); err != nil {
			panic(err)
		}
	}
	stop := &stopper{at: stopAt}
	for {
		p, err := New(Config{Ledger: stoppingLedger{store, stop}, Queue: stoppingQueue{q, stop}, Engine: &engine.Engine{C: c}, RunID: run, Asked: asked,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: time.Millisecond, RoundTimeout: time.Minute, PerSlice: perSlice})
		if err != nil {
			t.Fatal(err)
		}
		res, err = p.Run(ctx)
		if errors.Is(err, errStopped) {
			stopped = stop.what
			continue
		}
		// A run short of its ask (a bucket blocked) is a result to compare.
		if short := (*ShortError)(nil); err != nil && !errors.As(err, &short) {
			t.Fatalf("run %s: %+v, %v", run, res, err)
		}
		break
	}
	scs, err := store.Scenarios(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		names = append(names, sc.Name)
	}
	slices.Sort(names)
	return names, stopped, res
}

// TestDeathsChangeNothingWritten: a run in which one slice dies (its
// writers lost, the slice recorded dead, its buckets dealt again) writes
// the cases a run without the death writes: the same buckets at the same
// suite-wide indices. Before, a dead slice's buckets were settled a round
// late, so the top-up that their shortfall called for was dealt in another
// round, with another round's, to other buckets at other indices (b1, x,
// b2); and, dealt again in its round, a bucket whose slice died must not be
// blocked an attempt early for it, which would top up its want a round
// early (z).
func TestDeathsChangeNothingWritten(t *testing.T) {
	store := ledger.New(testenv.Postgres(t))
	clean, _ := writeRun(t, store, "clean", death{}, 0)
	t.Logf("written without a death: %v", clean)
	for _, die := range []death{{1, "a1"}, {1, "a2"}, {1, "b1"}, {1, "b2"}, {1, "x"}, {1, "z"}, {1, "e"}, {2, "a2"}, {2, "b2"}, {2, "z"}, {3, "z"}} {
		t.Run(fmt.Sprintf("round %d %s", die.round, die.bucket), func(t *testing.T) {
			got, _ := writeRun(t, store, fmt.Sprintf("dies-r%d-%s", die.round, die.bucket), die, 0)
			if !slices.Equal(got, clean) {
				t.Errorf("written with a dead slice:\n  %v\nwithout:\n  %v", got, clean)
			}
		})
	}
}

// TestRestartsChangeNothingWritten: a planner stopped right after any of its
// writes (a slice claimed or published, a bucket raised, a dead slice's
// buckets taken over, a round or the run moved) and started again on the
// run writes what a planner never stopped writes, with and without a dead
// slice. Before, a planner stopped in the middle of dealing a round dealt
// the rest of it a round late, and one stopped in the middle of a top-up
// topped up the rest anew, one scenario at a time across use cases from
// the first again.
func TestRestartsChangeNothingWritten(t *testing.T) {
	store := ledger.New(testenv.Postgres(t))
	for _, die := range []death{{}, {1, "b1"}} {
		clean, _ := writeRun(t, store, fmt.Sprintf("clean-r%d-%s", die.round, die.bucket), die, 0)
		for at := 1; ; at++ {
			name := fmt.Sprintf("stopped-%d-r%d-%s", at, die.round, die.bucket)
			got, stopped := writeRun(t, store, name, die, at)
			if stopped == "" {
				break
			}
			if !slices.Equal(got, clean) {
				t.Errorf("%s: written by a planner stopped after %s:\n  %v\nnever stopped:\n  %v", name, stopped, got, clean)
			}
		}
	}
}

// TestUnluckyDeathsBlockNothing: on PostgreSQL, slices of several buckets
// (as the planner deals them by default) die around one bucket, in turn,
// as writers killed for reasons of their own leave them: with nothing or
// some of it journalled, the bucket's own slices too, in one round and
// across rounds. None of these deaths singles the bucket out as one that
// kills its writers, so none blocks it, and every run journals what the
// run without a death journals. Before, the third dead slice that held a
// bucket blocked it, whatever else it held and whatever it had journalled,
// and the bucket's ceded want was topped up elsewhere.
func TestUnluckyDeathsBlockNothing(t *testing.T) {
	store := ledger.New(testenv.Postgres(t))
	clean, _, want := writeRunOf(t, store, "clean", func(queue.Slice) (bool, int) { return false, 0 }, 0, 3)
	t.Logf("written without a death: %v, %d bucket blocked (z: it proves nothing)", clean, want.Blocked)
	for _, c := range []struct {
		bucket   string
		journals []int
	}{
		// Its round's slice, then the slice of it alone that took over,
		// with one written, then the next with nothing.
		{"a2", []int{0, 1, 0}},
		// Two slices of it alone die with nothing written: below the bound.
		{"b2", []int{0, 0, 0}},
		// Every slice that holds it, in every round, dies after writing one.
		{"a2", []int{1, 1, 1, 1, 1, 1}},
		{"x", []int{1, 1, 1}},
	} {
		t.Run(fmt.Sprint(c.bucket, c.journals), func(t *testing.T) {
			run := fmt.Sprintf("unlucky-%s-%v", c.bucket, c.journals)
			got, _, res := writeRunOf(t, store, run, unlucky(c.bucket, c.journals...), 0, 3)
			dead := deadOf(t, store, run)
			if len(dead) < 3 {
				t.Fatalf("%d slices died, want at least 3", len(dead))
			}
			if res.Blocked != want.Blocked || !slices.Equal(got, clean) {
				t.Errorf("%d dead slices (%v), %d buckets blocked, want %d; written:\n  %v\nwithout a death:\n  %v",
					len(dead), ids(dead), res.Blocked, want.Blocked, got, clean)
			}
		})
	}
}

// TestBucketThatKillsItsWritersEnds: on PostgreSQL, a bucket every slice of
// which dies before journalling anything (it kills every writer that takes
// it) is dealt again in slices of its own until three of them died, then
// blocked with the dead reason, whether it was first dealt with others or
// alone; the others it was dealt with are written, and the run ends.
func TestBucketThatKillsItsWritersEnds(t *testing.T) {
	store := ledger.New(testenv.Postgres(t))
	for _, perSlice := range []int{1, 3} {
		t.Run(fmt.Sprint(perSlice, " a slice"), func(t *testing.T) {
			run := fmt.Sprintf("poison-%d", perSlice)
			got, _, res := writeRunOf(t, store, run, poison("e"), 0, perSlice)
			var own, others []string
			for _, s := range deadOf(t, store, run) {
				switch {
				case slices.Equal(s.BucketIDs, []string{"e"}):
					own = append(own, s.ID)
				case slices.Contains(s.BucketIDs, "e"):
					others = append(others, s.ID)
				default:
					t.Errorf("slice %s %v died, which does not hold e", s.ID, s.BucketIDs)
				}
			}
			if len(own) != 3 || len(others) > 1 {
				t.Errorf("e's dead slices: %v of its own, %v with others; want 3 of its own and at most one with others", own, others)
			}
			bs, err := store.Buckets(t.Context(), run)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bs {
				switch {
				case b.ID == "e" && (b.State != ledger.BucketBlocked || b.Notes != "lost with its writers" || b.Done != 0):
					t.Errorf("e: %s with %d done, notes %q; want blocked with the dead reason", b.State, b.Done, b.Notes)
				case b.ID != "e" && b.Done == 0 && b.Want > 0 && deathsLimits[b.ID] > 0:
					t.Errorf("%s: nothing written of %d", b.ID, b.Want)
				}
			}
			if res.Blocked < 1 {
				t.Errorf("result %+v: e not counted blocked", res)
			}
			t.Logf("written: %v", got)
		})
	}
}

func ids(ss []ledger.Slice) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprint(s.ID, s.BucketIDs)
	}
	return out
}
