package planner

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/ledger/ledgertest"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
)

// ledger is the ledger in memory (ledgertest, held to *ledger.Store by its
// contract test), recording what only the planner's tests ask: the moves of
// the run and the buckets raised.
type fakeLedger struct {
	*ledgertest.Ledger
	mu     sync.Mutex
	moves  []ledger.RunState
	raised map[string]plan.Spec
}

func (l *fakeLedger) MoveRun(ctx context.Context, id string, to ledger.RunState, msg string) (ledger.RunState, error) {
	from, err := l.Ledger.MoveRun(ctx, id, to, msg)
	if err == nil {
		l.mu.Lock()
		l.moves = append(l.moves, to)
		l.mu.Unlock()
	}
	return from, err
}

func (l *fakeLedger) Raise(ctx context.Context, run string, rs ...ledger.Raising) error {
	err := l.Ledger.Raise(ctx, run, rs...)
	if err == nil {
		l.mu.Lock()
		for _, r := range rs {
			l.raised[r.ID] = r.Spec
		}
		l.mu.Unlock()
	}
	return err
}

// run is run "r" as the ledger holds it.
func (l *fakeLedger) run() ledger.Run {
	r, err := l.Run(context.Background(), "r")
	if err != nil {
		panic(err)
	}
	return r
}

// buckets are run "r"'s buckets.
func (l *fakeLedger) buckets() []ledger.Bucket {
	bs, err := l.Buckets(context.Background(), "r")
	if err != nil {
		panic(err)
	}
	return bs
}

// bucket is run "r"'s bucket id (the zero Bucket when there is none).
func (l *fakeLedger) bucket(id string) ledger.Bucket {
	for _, b := range l.buckets() {
		if b.ID == id {
			return b
		}
	}
	return ledger.Bucket{}
}

// slices are run "r"'s slices of every round.
func (l *fakeLedger) slices() []ledger.Slice {
	ss, err := l.Slices(context.Background(), "r", -1)
	if err != nil {
		panic(err)
	}
	return ss
}

// spend records a model call.
func spend(l *fakeLedger, c ledger.Call) {
	if err := l.SpendCall(context.Background(), c); err != nil {
		panic(err)
	}
}

// update changes run "r"'s record as a direct write would.
func (l *fakeLedger) update(fn func(*ledger.Run)) {
	if err := l.UpdateRun("r", fn); err != nil {
		panic(err)
	}
}

// fakeQueue records what is published. write, when set, plays the writers:
// it is called with each new slice and may credit its buckets and finish it.
type fakeQueue struct {
	mu        sync.Mutex
	published []queue.Slice
	dup       map[string]bool
	pending   uint64
	dead      func(seq uint64)
	write     func(s queue.Slice)
	cfg       queue.Config
}

func (q *fakeQueue) Publish(_ context.Context, s queue.Slice) (bool, error) {
	q.mu.Lock()
	if q.dup[s.ID] {
		q.mu.Unlock()
		return true, nil
	}
	if q.dup == nil {
		q.dup = map[string]bool{}
	}
	q.dup[s.ID] = true
	q.published = append(q.published, s)
	w := q.write
	q.mu.Unlock()
	if w != nil {
		w(s)
	}
	return false, nil
}

func (q *fakeQueue) Pending(context.Context) (uint64, uint64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending, 0, nil
}

func (q *fakeQueue) DeadLetters(_ context.Context, fn func(uint64)) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.dead = fn
	return nil
}

func (q *fakeQueue) Lookup(_ context.Context, seq uint64) (queue.Slice, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if seq == 0 || int(seq) > len(q.published) {
		return queue.Slice{}, errors.New("no such message")
	}
	return q.published[seq-1], nil
}

func (q *fakeQueue) Config() queue.Config { return q.cfg }

func (q *fakeQueue) sent() []queue.Slice {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.published)
}

// writers is a fakeQueue.write that proves prove of each bucket's
// outstanding scenarios (all when prove < 0), journalling them, and
// finishes the slice done.
func writers(l *fakeLedger, prove int) func(queue.Slice) {
	return func(s queue.Slice) {
		ctx := context.Background()
		for _, id := range s.Buckets {
			n := l.bucket(id).Outstanding()
			if prove >= 0 {
				n = min(n, prove)
			}
			if err := l.Credit(ctx, s.Run, id, n); err != nil {
				panic(err)
			}
		}
		if err := l.FinishSlice(ctx, s.Run, s.ID, ledger.SliceDone, "w", "", 1); err != nil {
			panic(err)
		}
	}
}

// testPlanner is a planner of run "r" over the retail contract (no world)
// with buckets bs already on the ledger, each credited its Done.
func testPlanner(t *testing.T, asked int, bs ...ledger.Bucket) (*Planner, *fakeLedger, *fakeQueue) {
	t.Helper()
	c, err := contract.LoadValid("../../examples/retail")
	if err != nil {
		t.Fatal(err)
	}
	l := &fakeLedger{Ledger: ledgertest.New(), raised: map[string]plan.Spec{}}
	ctx := t.Context()
	if _, err := l.CreateRun(ctx, ledger.Run{ID: "r", Agent: c.Agent, ContractSHA256: c.SHA256, State: ledger.RunPlanned, Asked: asked, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	if err := l.PutBuckets(ctx, "r", bs); err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if err := l.Credit(ctx, "r", b.ID, b.Done); err != nil {
			t.Fatal(err)
		}
	}
	q := &fakeQueue{cfg: queue.Config{AckWait: 20 * time.Millisecond, FetchWait: 10 * time.Millisecond, MaxDeliver: 5}}
	p, err := New(Config{Ledger: l, Queue: q, Engine: &engine.Engine{C: c}, RunID: "r", Asked: asked,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: time.Millisecond, RoundTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return p, l, q
}

// bucket is an open plan bucket of use case uc in cell, wanting want, its
// scenarios from suite index base on, with room for capacity.
func bucket(id, uc, cell string, ord, want, base, capacity int) ledger.Bucket {
	return ledger.Bucket{Bucket: plan.Bucket{ID: id, Ord: ord, Theme: uc, Cell: cell, UseCase: uc, Outcome: "succeed",
		Overlay: "none", Kind: "happy", Want: want, Spec: plan.Spec{Base: base, Sized: want, Capacity: capacity}},
		RunID: "r", State: ledger.BucketOpen, Origin: ledger.OriginPlan}
}
