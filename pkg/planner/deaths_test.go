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
	died := false
	q := &fakeQueue{cfg: queue.Config{AckWait: 20 * time.Millisecond, FetchWait: 10 * time.Millisecond, MaxDeliver: 5}}
	q.write = func(s queue.Slice) {
		ctx := context.Background()
		bs, err := store.Buckets(ctx, run)
		if err != nil {
			panic(err)
		}
		dies := !died && s.Round == die.round && slices.Contains(s.Buckets, die.bucket)
		for _, b := range bs {
			if !slices.Contains(s.Buckets, b.ID) {
				continue
			}
			for k := b.Done; k < min(b.Want, deathsLimits[b.ID]); k++ {
				i := b.Spec.Index(k)
				name := fmt.Sprintf("%s-%d", b.ID, i)
				sc := &scenario.Scenario{Name: name, Bucket: b.ID, UseCase: b.UseCase, Branch: name, Kind: "happy",
					Expects: "succeed", Instruction: "case " + name, MaxTurns: 1}
				if _, err := store.Journal(ctx, run, sc, s.ID, "w", nil); err != nil {
					panic(err)
				}
				if dies {
					break
				}
			}
		}
		to, reason := ledger.SliceDone, ""
		if dies {
			died = true
			to, reason = ledger.SliceDead, "lost with its writers"
		}
		if err := store.FinishSlice(ctx, run, s.ID, to, "w", reason, 5); err != nil {
			panic(err)
		}
	}
	stop := &stopper{at: stopAt}
	for {
		p, err := New(Config{Ledger: stoppingLedger{store, stop}, Queue: stoppingQueue{q, stop}, Engine: &engine.Engine{C: c}, RunID: run, Asked: asked,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: time.Millisecond, RoundTimeout: time.Minute, PerSlice: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(ctx)
		if errors.Is(err, errStopped) {
			stopped = stop.what
			continue
		}
		if err != nil {
			t.Fatalf("run %s: %+v, %v", run, res, err)
		}
		break
	}
	if die.round > 0 && !died {
		t.Fatalf("run %s: no slice of round %d held %s", run, die.round, die.bucket)
	}
	scs, err := store.Scenarios(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		names = append(names, sc.Name)
	}
	slices.Sort(names)
	return names, stopped
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
