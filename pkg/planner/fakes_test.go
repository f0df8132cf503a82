package planner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
)

// fakeLedger is the ledger in memory, with the semantics the planner relies
// on: claims, finishing, folding (a bucket is done at its want, blocked when
// its attempts run out, else reopened) and raising. pkg/canvas tests the
// real ones on Postgres.
type fakeLedger struct {
	mu       sync.Mutex
	run      canvas.Run
	buckets  []canvas.Bucket
	slices   []canvas.Slice
	refusals []canvas.Reason
	spent    int64
	spentUSD float64
	raised   map[string]plan.Spec
	moves    []canvas.RunState
}

func (l *fakeLedger) SaveContract(context.Context, string, string, map[string][]byte) error {
	return nil
}

func (l *fakeLedger) CreateRun(_ context.Context, r canvas.Run) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.run.ID != "" {
		return false, nil
	}
	l.run = r
	return true, nil
}

func (l *fakeLedger) Run(_ context.Context, id string) (canvas.Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id != l.run.ID {
		return canvas.Run{}, canvas.ErrNotFound
	}
	return l.run, nil
}

func (l *fakeLedger) MoveRun(_ context.Context, id string, to canvas.RunState, msg string) (canvas.RunState, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := l.run.State
	if err := from.To(to); err != nil {
		return from, err
	}
	l.run.State, l.run.Message = to, msg
	l.moves = append(l.moves, to)
	return from, nil
}

func (l *fakeLedger) SetRound(_ context.Context, id string, round int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.run.Round = round
	return nil
}

func (l *fakeLedger) Meter(context.Context, string) (canvas.Meter, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return canvas.Meter{PromptTokens: l.spent, CostUSD: l.spentUSD}, nil
}

func (l *fakeLedger) PutBuckets(_ context.Context, _ string, bs []canvas.Bucket) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range bs {
		if !slices.ContainsFunc(l.buckets, func(x canvas.Bucket) bool { return x.ID == b.ID }) {
			l.buckets = append(l.buckets, b)
		}
	}
	return nil
}

func (l *fakeLedger) Buckets(context.Context, string) ([]canvas.Bucket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.buckets), nil
}

func (l *fakeLedger) bucket(id string) *canvas.Bucket {
	for i := range l.buckets {
		if l.buckets[i].ID == id {
			return &l.buckets[i]
		}
	}
	return nil
}

func (l *fakeLedger) Raise(_ context.Context, _, id string, want int, spec plan.Spec) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(id)
	if b == nil || (b.State != canvas.BucketOpen && b.State != canvas.BucketDone) || b.ClaimedBy != "" {
		return canvas.ErrNotFound
	}
	b.Want, b.Spec, b.State = want, spec, canvas.BucketOpen
	if l.raised == nil {
		l.raised = map[string]plan.Spec{}
	}
	l.raised[id] = spec
	return nil
}

func (l *fakeLedger) Slices(_ context.Context, _ string, round int) ([]canvas.Slice, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []canvas.Slice
	for _, s := range l.slices {
		if round < 0 || s.Round == round {
			out = append(out, s)
		}
	}
	return out, nil
}

func (l *fakeLedger) ClaimSlice(_ context.Context, sl canvas.Slice) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if slices.ContainsFunc(l.slices, func(s canvas.Slice) bool { return s.ID == sl.ID }) {
		return nil
	}
	for _, id := range sl.BucketIDs {
		b := l.bucket(id)
		if b == nil {
			return fmt.Errorf("bucket %s does not exist", id)
		}
		if err := b.State.To(canvas.BucketClaimed); err != nil {
			return err
		}
		b.State, b.ClaimedBy = canvas.BucketClaimed, sl.ID
	}
	sl.State = canvas.SlicePublished
	l.slices = append(l.slices, sl)
	return nil
}

func (l *fakeLedger) FinishSlice(_ context.Context, _, id string, to canvas.SliceState, _, reason string, deliveries int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.slices {
		if l.slices[i].ID != id {
			continue
		}
		s := &l.slices[i]
		if err := s.State.To(to); err != nil {
			return err
		}
		if s.State != to {
			s.State, s.Reason, s.Deliveries = to, reason, deliveries
		}
		return nil
	}
	return canvas.ErrNotFound
}

func (l *fakeLedger) Fold(_ context.Context, _ string, maxAttempts int) (canvas.FoldResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var res canvas.FoldResult
	for i := range l.buckets {
		b := &l.buckets[i]
		sl := slices.IndexFunc(l.slices, func(s canvas.Slice) bool { return s.ID == b.ClaimedBy })
		if sl < 0 || !l.slices[sl].State.Finished() {
			continue
		}
		b.ClaimedBy = ""
		switch {
		case b.Done >= b.Want:
			b.State = canvas.BucketDone
			res.Done = append(res.Done, b.ID)
		case b.Attempts+1 >= maxAttempts:
			b.Attempts++
			b.State, b.Notes = canvas.BucketBlocked, "blocked"
			res.Blocked = append(res.Blocked, b.ID)
		default:
			b.Attempts++
			b.State = canvas.BucketOpen
			res.Reopened = append(res.Reopened, b.ID)
		}
	}
	return res, nil
}

func (l *fakeLedger) TopRefusals(context.Context, string, int) ([]canvas.Reason, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.refusals), nil
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
// outstanding scenarios (all when prove < 0) and finishes the slice done.
func writers(l *fakeLedger, prove int) func(queue.Slice) {
	return func(s queue.Slice) {
		l.mu.Lock()
		for _, id := range s.Buckets {
			b := l.bucket(id)
			n := b.Outstanding()
			if prove >= 0 {
				n = min(n, prove)
			}
			b.Done += n
		}
		l.mu.Unlock()
		if err := l.FinishSlice(context.Background(), s.Run, s.ID, canvas.SliceDone, "w", "", 1); err != nil {
			panic(err)
		}
	}
}

// testPlanner is a planner of run "r" over the retail contract (no world)
// with buckets bs already on the ledger.
func testPlanner(t *testing.T, asked int, bs ...canvas.Bucket) (*Planner, *fakeLedger, *fakeQueue) {
	t.Helper()
	c, err := contract.LoadValid("../../examples/retail")
	if err != nil {
		t.Fatal(err)
	}
	l := &fakeLedger{run: canvas.Run{ID: "r", Agent: c.Agent, ContractSHA256: c.SHA256, State: canvas.RunPlanned, Asked: asked, Seed: 7},
		buckets: bs}
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
func bucket(id, uc, cell string, ord, want, base, capacity int) canvas.Bucket {
	return canvas.Bucket{Bucket: plan.Bucket{ID: id, Ord: ord, Theme: uc, Cell: cell, UseCase: uc, Outcome: "succeed",
		Overlay: "none", Kind: "happy", Want: want, Spec: plan.Spec{Base: base, Sized: want, Capacity: capacity}},
		RunID: "r", State: canvas.BucketOpen, Origin: canvas.OriginPlan}
}
