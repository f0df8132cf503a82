package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
)

// sixBuckets: two use cases, three cells, various wants.
func sixBuckets() []ledger.Bucket {
	return []ledger.Bucket{
		bucket("b0", "cancel-order", "cancel-order", 0, 4, 0, 4),
		bucket("b1", "cancel-order", "cancel-order", 1, 3, 4, 6),
		bucket("b2", "cancel-order", "get-order", 2, 2, 7, 2),
		bucket("b3", "return-item", "return-item", 3, 5, 9, 8),
		bucket("b4", "return-item", "return-item", 4, 1, 14, 1),
		bucket("b5", "return-item", "get-order", 5, 2, 15, 3),
	}
}

// TestDealClaimsAndPublishes: every open bucket with work outstanding is
// dealt once, claimed by its slice, never two of a cell in one slice, at
// most PerSlice buckets and about SliceScenarios scenarios a slice; each
// slice carries the spread of the indices it will write, a turn budget
// that grows with them, and the round's lessons.
func TestDealClaimsAndPublishes(t *testing.T) {
	bs := sixBuckets()
	bs[4].State = ledger.BucketBlocked // not dealt
	bs[5].Done = 2                     // nothing outstanding: not dealt
	p, l, q := testPlanner(t, 20, bs...)
	for range 3 {
		if err := l.Refuse(t.Context(), "r", "s0", "b0", "solvable", "check-failed", strings.Repeat("x", 300)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := p.deal(t.Context(), 1, ledger.SliceWork, "")
	if err != nil {
		t.Fatal(err)
	}
	sent := q.sent()
	if n != len(sent) || n == 0 {
		t.Fatalf("dealt %d, published %d", n, len(sent))
	}
	dealt := map[string]string{}
	for i, s := range sent {
		if want := "r-r1-s00" + string(rune('1'+i)); s.ID != want || s.Run != "r" || s.Round != 1 || s.Gap != "" {
			t.Errorf("slice %d: %+v, want id %s", i, s, want)
		}
		if len(s.Buckets) > p.cfg.PerSlice {
			t.Errorf("%s has %d buckets", s.ID, len(s.Buckets))
		}
		cells := map[string]bool{}
		outstanding := 0
		var indices []int
		for _, id := range s.Buckets {
			b := l.bucket(id)
			if cells[b.Cell] {
				t.Errorf("%s holds two buckets of cell %s", s.ID, b.Cell)
			}
			cells[b.Cell] = true
			if prev, ok := dealt[id]; ok {
				t.Errorf("bucket %s dealt in %s and %s", id, prev, s.ID)
			}
			dealt[id] = s.ID
			if b.State != ledger.BucketClaimed || b.ClaimedBy != s.ID {
				t.Errorf("bucket %s is %s by %q, want claimed by %s", id, b.State, b.ClaimedBy, s.ID)
			}
			outstanding += b.Outstanding()
			for k := b.Done; k < b.Want; k++ {
				indices = append(indices, b.Spec.Index(k))
			}
		}
		if s.TurnBudget != 6+5*outstanding {
			t.Errorf("%s: turn budget %d for %d outstanding", s.ID, s.TurnBudget, outstanding)
		}
		if want := queue.Spread(plan.SpreadFor(p.cfg.Engine.C, indices)); !slicesEqualSpread(s.Spread, want) {
			t.Errorf("%s: spread %+v, want %+v", s.ID, s.Spread, want)
		}
		if len(s.Lessons) != 1 || !strings.Contains(s.Lessons[0], "3 submissions were refused by the solvable gate (check-failed)") ||
			!strings.HasSuffix(s.Lessons[0], "…") {
			t.Errorf("%s: lessons %q", s.ID, s.Lessons)
		}
	}
	for _, id := range []string{"b0", "b1", "b2", "b3"} {
		if dealt[id] == "" {
			t.Errorf("open bucket %s was not dealt", id)
		}
	}
	if dealt["b4"] != "" || dealt["b5"] != "" {
		t.Errorf("a blocked or full bucket was dealt: %v", dealt)
	}
}

func slicesEqualSpread(a, b queue.Spread) bool {
	return slices.Equal(a.Initials, b.Initials) && slices.Equal(a.CodePrefixes, b.CodePrefixes) &&
		slices.Equal(a.Personalities, b.Personalities) && slices.Equal(a.Accents, b.Accents) &&
		slices.Equal(a.Styles, b.Styles) && slices.Equal(a.Locations, b.Locations) &&
		slices.Equal(a.LineQualities, b.LineQualities) && slices.Equal(a.BackgroundNoises, b.BackgroundNoises) &&
		slices.Equal(a.Spellings, b.Spellings) && a.TalkOver == b.TalkOver
}

// TestDealReplaysARestartedRound: a planner restarted mid-round republishes
// the round's slices still published, under their own ids, and claims
// nothing again; slices already finished are left alone.
func TestDealReplaysARestartedRound(t *testing.T) {
	p, l, q := testPlanner(t, 20, sixBuckets()...)
	p.cfg.PerSlice = 1
	if _, err := p.deal(t.Context(), 1, ledger.SliceWork, ""); err != nil {
		t.Fatal(err)
	}
	first := q.sent()
	if len(first) < 3 {
		t.Fatalf("only %d slices dealt", len(first))
	}
	// The first slice was written and finished before the restart.
	if err := l.FinishSlice(t.Context(), "r", first[0].ID, ledger.SliceDone, "w", "", 1); err != nil {
		t.Fatal(err)
	}
	again := &fakeQueue{cfg: q.cfg}
	p.cfg.Queue = again
	n, err := p.deal(t.Context(), 1, ledger.SliceWork, "")
	if err != nil {
		t.Fatal(err)
	}
	re := again.sent()
	if n != len(first)-1 || len(re) != n {
		t.Fatalf("republished %d of %d slices, want all but the finished one", len(re), len(first))
	}
	for i, s := range re {
		if s.ID != first[i+1].ID || !slices.Equal(s.Buckets, first[i+1].Buckets) {
			t.Errorf("republished %s %v, want %s %v", s.ID, s.Buckets, first[i+1].ID, first[i+1].Buckets)
		}
	}
	if len(l.slices()) != len(first) {
		t.Errorf("the ledger has %d slices after the replay, want %d", len(l.slices()), len(first))
	}
}

// TestDealStopsAtTheBudget: the budget is asked before every slice; the
// dealing stops when it is reached.
func TestDealStopsAtTheBudget(t *testing.T) {
	p, l, q := testPlanner(t, 20, sixBuckets()...)
	l.update(func(r *ledger.Run) { r.BudgetTokens = 1000 })
	q.write = func(s queue.Slice) { spend(l, ledger.Call{Run: s.Run, Slice: s.ID, Prompt: 1000}) }
	n, err := p.deal(t.Context(), 1, ledger.SliceWork, "")
	if err != nil || n != 1 || len(q.sent()) != 1 || !p.budgetHit {
		t.Fatalf("dealt %d (err %v), budget hit %v; want one slice, then the cap", n, err, p.budgetHit)
	}
}

// TestDealStopsAtTheDollarBudget: the same with a cap in dollars, the meter
// read as the ledger prices the calls.
func TestDealStopsAtTheDollarBudget(t *testing.T) {
	p, l, q := testPlanner(t, 20, sixBuckets()...)
	l.update(func(r *ledger.Run) { r.BudgetUSD = 0.5 })
	q.write = func(s queue.Slice) { spend(l, ledger.Call{Run: s.Run, Slice: s.ID, CostUSD: 0.5, Priced: true}) }
	n, err := p.deal(t.Context(), 1, ledger.SliceWork, "")
	if err != nil || n != 1 || len(q.sent()) != 1 || !p.budgetHit {
		t.Fatalf("dealt %d (err %v), budget hit %v; want one slice, then the cap", n, err, p.budgetHit)
	}
}

// TestAwait: a round ends when the ledger has every slice finished; the
// queue giving up on a slice (its advisory) records it dead, for this run
// only, and its buckets are dealt again within the round, which ends once
// that slice is written; a queue that stays empty while slices stay
// published buries them, and so does the round timeout.
func TestAwait(t *testing.T) {
	t.Run("finished", func(t *testing.T) {
		p, l, q := testPlanner(t, 20, sixBuckets()...)
		q.write = writers(l, -1)
		q.pending = 1
		if _, err := p.deal(t.Context(), 1, ledger.SliceWork, ""); err != nil {
			t.Fatal(err)
		}
		if err := p.await(t.Context(), 1, 3); err != nil {
			t.Fatal(err)
		}
		for _, s := range l.slices() {
			if s.State != ledger.SliceDone {
				t.Errorf("%s is %s", s.ID, s.State)
			}
		}
	})
	t.Run("dead letter", func(t *testing.T) {
		p, l, q := testPlanner(t, 20, sixBuckets()...)
		q.pending = 1 // the queue is busy: only the advisory ends the round
		if _, err := p.deal(t.Context(), 1, ledger.SliceWork, ""); err != nil {
			t.Fatal(err)
		}
		dealt := len(q.sent())
		other := queue.Slice{Run: "another-run", ID: q.sent()[0].ID}
		q.mu.Lock()
		q.published = append(q.published, other)
		q.write = writers(l, -1) // the slices dealt again are written
		q.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- p.await(t.Context(), 1, 3) }()
		for {
			q.mu.Lock()
			fn := q.dead
			q.mu.Unlock()
			if fn != nil {
				fn(uint64(dealt + 1)) // another run's slice: ignored
				for seq := range dealt {
					fn(uint64(seq + 1))
				}
				break
			}
			time.Sleep(time.Millisecond)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ss := l.slices()
		if want := dealt + len(sixBuckets()); len(ss) != want {
			t.Fatalf("%d slices, want the %d dealt and one for each of their buckets", len(ss), dealt)
		}
		for _, s := range ss {
			if strings.Contains(s.ID, ".") {
				if s.State != ledger.SliceDone || s.Round != 1 || len(s.BucketIDs) != 1 || !strings.HasSuffix(s.ID, "."+s.BucketIDs[0]) {
					t.Errorf("%s, dealt again: %s in round %d with %v, want done in round 1, one bucket", s.ID, s.State, s.Round, s.BucketIDs)
				}
				continue
			}
			if s.State != ledger.SliceDead || !strings.Contains(s.Reason, "after 5 deliveries") || s.Deliveries != 5 {
				t.Errorf("%s: %s (%q, %d deliveries)", s.ID, s.State, s.Reason, s.Deliveries)
			}
		}
		for _, b := range l.buckets() {
			if b.State != ledger.BucketClaimed || !strings.HasSuffix(b.ClaimedBy, "."+b.ID) || b.Outstanding() != 0 {
				t.Errorf("%s: %s by %q, %d outstanding; want written by the slice dealt again", b.ID, b.State, b.ClaimedBy, b.Outstanding())
			}
		}
	})
	// The queue gives up on a slice whose work committed while every ack of
	// it was lost: the ledger keeps it done, and it is not counted dead.
	t.Run("dead letter of a slice done", func(t *testing.T) {
		p, l, q := testPlanner(t, 20, sixBuckets()...)
		q.pending = 1
		if _, err := p.deal(t.Context(), 1, ledger.SliceWork, ""); err != nil {
			t.Fatal(err)
		}
		sent := q.sent()
		if len(sent) < 2 {
			t.Fatalf("dealt %d slices, want at least 2", len(sent))
		}
		if err := l.FinishSlice(t.Context(), "r", sent[0].ID, ledger.SliceDone, "w", "", 1); err != nil {
			t.Fatal(err)
		}
		q.mu.Lock()
		q.write = writers(l, -1)
		q.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- p.await(t.Context(), 1, 3) }()
		for {
			q.mu.Lock()
			fn := q.dead
			q.mu.Unlock()
			if fn != nil {
				for seq := range len(sent) {
					fn(uint64(seq + 1))
				}
				break
			}
			time.Sleep(time.Millisecond)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for _, s := range l.slices() {
			want, deliveries := ledger.SliceDead, 5
			if s.ID == sent[0].ID || strings.Contains(s.ID, ".") {
				want, deliveries = ledger.SliceDone, 1
			}
			if s.State != want || s.Deliveries != deliveries {
				t.Errorf("%s: %s (%d deliveries), want %s (%d)", s.ID, s.State, s.Deliveries, want, deliveries)
			}
		}
		if n := testutil.ToFloat64(p.cfg.Metrics.SlicesDeadLettered); int(n) != len(sent)-1 {
			t.Errorf("%v slices counted dead, want %d", n, len(sent)-1)
		}
	})
	// Every slice buried is dealt again, a slice for each of its buckets,
	// until the dead slices of that bucket alone (which journalled nothing)
	// reach the bound given (3); the last stays the bucket's, for the fold
	// to block it. The first, of several buckets, singles none out.
	t.Run("empty queue", func(t *testing.T) {
		p, l, q := testPlanner(t, 20, sixBuckets()...)
		if _, err := p.deal(t.Context(), 1, ledger.SliceWork, ""); err != nil {
			t.Fatal(err)
		}
		dealt := len(q.sent())
		if err := p.await(t.Context(), 1, 3); err != nil {
			t.Fatal(err)
		}
		ss := l.slices()
		for _, s := range ss {
			if s.State != ledger.SliceDead || !strings.Contains(s.Reason, "the queue gave up on the slice") {
				t.Errorf("%s: %s (%q)", s.ID, s.State, s.Reason)
			}
		}
		if want := dealt + 3*len(sixBuckets()); len(ss) != want || len(q.sent()) != want {
			t.Errorf("%d slices recorded, %d published; want the %d dealt and each of their buckets dealt three times again", len(ss), len(q.sent()), dealt)
		}
		for _, b := range l.buckets() {
			if b.State != ledger.BucketClaimed || !strings.HasSuffix(b.ClaimedBy, "."+b.ID+".3") {
				t.Errorf("%s: %s by %s, want claimed by its third dead slice of its own", b.ID, b.State, b.ClaimedBy)
			}
		}
	})
	// The queue refuses the first publish of a dead slice's bucket (a NATS
	// restart): it is published again on the next pass, and written.
	t.Run("dead slice dealt again once the queue answers", func(t *testing.T) {
		p, l, q := testPlanner(t, 20, sixBuckets()...)
		if _, err := p.deal(t.Context(), 1, ledger.SliceWork, ""); err != nil {
			t.Fatal(err)
		}
		for _, s := range q.sent() {
			if err := l.FinishSlice(t.Context(), "r", s.ID, ledger.SliceDead, "", "lost with its writers", 10); err != nil {
				t.Fatal(err)
			}
		}
		q.write = writers(l, -1)
		fq := &refusingQueue{fakeQueue: q, refuse: 1}
		p.cfg.Queue = fq
		if err := p.await(t.Context(), 1, 3); err != nil {
			t.Fatal(err)
		}
		for _, b := range l.buckets() {
			if !strings.HasSuffix(b.ClaimedBy, "."+b.ID) || b.Outstanding() != 0 {
				t.Errorf("%s: claimed by %q, %d outstanding; want written by the slice dealt again", b.ID, b.ClaimedBy, b.Outstanding())
			}
		}
		if fq.refused != 1 {
			t.Errorf("%d publishes refused, want 1", fq.refused)
		}
	})
	t.Run("round timeout", func(t *testing.T) {
		p, l, q := testPlanner(t, 20, sixBuckets()...)
		q.pending = 1
		p.cfg.RoundTimeout = 20 * time.Millisecond
		if _, err := p.deal(t.Context(), 1, ledger.SliceWork, ""); err != nil {
			t.Fatal(err)
		}
		if err := p.await(t.Context(), 1, 3); err != nil {
			t.Fatal(err)
		}
		for _, s := range l.slices() {
			if s.State != ledger.SliceDead || !strings.Contains(s.Reason, "round timeout") {
				t.Errorf("%s: %s (%q)", s.ID, s.State, s.Reason)
			}
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		p, _, q := testPlanner(t, 20, sixBuckets()...)
		q.pending = 1
		if _, err := p.deal(t.Context(), 1, ledger.SliceWork, ""); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := p.await(ctx, 1, 3); !errors.Is(err, context.Canceled) {
			t.Fatalf("await after cancel: %v", err)
		}
	})
}

// TestTopUp: what blocked buckets will not write is dealt, one scenario at
// a time across use cases in plan order, to open or done buckets with spare
// capacity; their new scenarios take suite-wide indices past every other
// bucket's.
func TestTopUp(t *testing.T) {
	bs := []ledger.Bucket{
		bucket("b0", "cancel-order", "c1", 0, 4, 0, 4), // full capacity
		bucket("b1", "cancel-order", "c2", 1, 3, 4, 6), // 3 spare
		bucket("b2", "return-item", "c3", 2, 5, 10, 5), // blocked at 1 of 5: 4 short
		bucket("b3", "return-item", "c4", 3, 2, 15, 4), // 2 spare, done
		bucket("b4", "track-order", "c5", 4, 1, 17, 9), // claimed: left alone
		bucket("b5", "track-order", "c6", 5, 1, 18, 1), // full capacity
		bucket("b6", "track-order", "c7", 6, 0, 19, 1), // a reported bucket: want 0, capacity 1
	}
	bs[2].State, bs[2].Done = ledger.BucketBlocked, 1
	bs[3].State, bs[3].Done = ledger.BucketDone, 2
	bs[4].State = ledger.BucketClaimed
	p, l, _ := testPlanner(t, 17, bs...)
	n, err := p.topUp(t.Context(), 17)
	if err != nil {
		t.Fatal(err)
	}
	// committed: 4 + 3 + 1 + 2 + 1 + 1 + 0 = 12; short 5.
	// Rounds across use cases: cancel-order b1, return-item b3, track-order b6;
	// then b1, b3: 5.
	want := map[string]int{"b1": 5, "b3": 4, "b6": 1}
	if n != 5 {
		t.Fatalf("topped up %d, want 5", n)
	}
	next := 19 // the first index no bucket's plan reserved (b5's 18 is the last)
	for id, w := range want {
		b := l.bucket(id)
		if b.Want != w || b.State != ledger.BucketOpen {
			t.Errorf("%s: want %d (%s), want %d open", id, b.Want, b.State, w)
		}
		for k := b.Spec.Sized; k < b.Want; k++ {
			if i := b.Spec.Index(k); i < next {
				t.Errorf("%s: top-up scenario %d takes index %d, one of the plan's (below %d)", id, k, i, next)
			}
		}
	}
	// Every scenario of every bucket at its want has an index of its own,
	// and the top-up reserved only what it raised.
	seen := map[int]string{}
	top := 0
	for _, b := range l.buckets() {
		for k := range b.Want {
			i := b.Spec.Index(k)
			if other, dup := seen[i]; dup {
				t.Errorf("index %d dealt to %s and %s", i, other, b.ID)
			}
			seen[i] = b.ID
			top = max(top, i)
		}
	}
	if top != next+5-1 {
		t.Errorf("the top-up's last index is %d, want %d: it reserved more than the 5 it raised", top, next+5-1)
	}
	for _, id := range []string{"b0", "b2", "b4", "b5"} {
		if _, ok := l.raised[id]; ok {
			t.Errorf("%s was raised", id)
		}
	}
	// Asked for no more than the buckets hold: nothing to do.
	if n, err := p.topUp(t.Context(), 10); err != nil || n != 0 {
		t.Errorf("topping up a run that is not short: %d, %v", n, err)
	}
}

// TestTopUpCedesShortBuckets: a bucket short of its want after an attempt
// that proved some of it gives up the rest to buckets that never fell
// short, instead of being dealt again; its dealt indices stay reserved. A
// bucket that proved nothing keeps its want (its cell has no other case),
// and with no fresh room a short bucket keeps its want too.
func TestTopUpCedesShortBuckets(t *testing.T) {
	bs := []ledger.Bucket{
		bucket("b0", "cancel-order", "c1", 0, 10, 0, 10),  // short: 4 of 10 after an attempt
		bucket("b1", "cancel-order", "c2", 1, 10, 10, 10), // short: 0 of 10 after an attempt
		bucket("b2", "return-item", "c3", 2, 10, 20, 10),  // done
		bucket("b3", "return-item", "c4", 3, 0, 30, 10),   // reserve: want 0, capacity 10
	}
	bs[0].Done, bs[0].Attempts = 4, 1
	bs[1].Attempts = 1
	bs[2].State, bs[2].Done = ledger.BucketDone, 10
	p, l, _ := testPlanner(t, 30, bs...)
	n, err := p.topUp(t.Context(), 30)
	if err != nil || n != 6 {
		t.Fatalf("topped up %d (%v), want the 6 b0 ceded", n, err)
	}
	if b := l.bucket("b0"); b.Want != 4 || b.Outstanding() != 0 {
		t.Errorf("b0: want %d, outstanding %d; want 4, 0 (ceded, not dealt again)", b.Want, b.Outstanding())
	}
	if b := l.bucket("b1"); b.Want != 10 {
		t.Errorf("b1 proved nothing yet and should keep its want 10, has %d", b.Want)
	}
	if b := l.bucket("b3"); b.Want != 6 {
		t.Errorf("b3 (reserve) raised to %d, want 6", b.Want)
	}
	// Every index stays the bucket's own: b0's dealt 0..9 are not dealt
	// again by the raise.
	seen := map[int]string{}
	for _, b := range l.buckets() {
		for k := range b.Want {
			i := b.Spec.Index(k)
			if other, dup := seen[i]; dup {
				t.Errorf("index %d dealt to %s and %s", i, other, b.ID)
			}
			seen[i] = b.ID
		}
	}
	if got := nextIndex(l.buckets()); got != 36 {
		t.Errorf("next index %d, want 36: the plan's 30 and the raise's 6", got)
	}

	// No fresh room: a short bucket keeps its want and is dealt again.
	bs = []ledger.Bucket{bucket("b0", "cancel-order", "c1", 0, 10, 0, 10), bucket("b1", "return-item", "c2", 1, 10, 10, 10)}
	bs[0].Done, bs[0].Attempts = 4, 1
	bs[1].State, bs[1].Done = ledger.BucketDone, 10
	p, l, _ = testPlanner(t, 20, bs...)
	if n, err := p.topUp(t.Context(), 20); err != nil || n != 0 {
		t.Fatalf("topped up %d (%v) with no room", n, err)
	}
	if b := l.bucket("b0"); b.Want != 10 {
		t.Errorf("b0 ceded to %d with nowhere to deal it", b.Want)
	}
}

// TestTopUpStopsAtMost: a top-up deals no index past what the contract's
// code shapes hold apart (Plan.Most); a bucket raised twice keeps the
// indices of its first raise and takes new ones for the second.
func TestTopUpStopsAtMost(t *testing.T) {
	bs := []ledger.Bucket{
		bucket("b0", "cancel-order", "c1", 0, 4, 0, 12),
		bucket("b1", "return-item", "c2", 1, 4, 4, 4),
	}
	bs[1].State, bs[1].Done = ledger.BucketBlocked, 0
	p, l, _ := testPlanner(t, 8, bs...)
	p.Plan = &plan.Plan{Most: 10}
	n, err := p.topUp(t.Context(), 8)
	if err != nil || n != 2 {
		t.Fatalf("topped up %d (%v), want 2: indices 8 and 9 are all Most leaves", n, err)
	}
	b := l.bucket("b0")
	if got := []int{b.Spec.Index(4), b.Spec.Index(5)}; !slices.Equal(got, []int{8, 9}) {
		t.Errorf("top-up indices %v, want [8 9]", got)
	}
	if n, err := p.topUp(t.Context(), 8); err != nil || n != 0 {
		t.Errorf("a top-up past Most: %d, %v", n, err)
	}
	p.Plan.Most = 0
	if n, err := p.topUp(t.Context(), 8); err != nil || n != 2 {
		t.Fatalf("second top-up: %d, %v", n, err)
	}
	b = l.bucket("b0")
	got := []int{}
	for k := range b.Want {
		got = append(got, b.Spec.Index(k))
	}
	if !slices.Equal(got, []int{0, 1, 2, 3, 8, 9, 10, 11}) {
		t.Errorf("indices after two top-ups %v", got)
	}
}

// TestRunLifecycle: the planner moves its run planned -> writing ->
// reviewing when the ledger holds the ask, and -> failed with a
// *ShortError when it does not; started again on a run past writing (a
// retried Job), it deals nothing.
func TestRunLifecycle(t *testing.T) {
	t.Run("met", func(t *testing.T) {
		p, l, q := testPlanner(t, 17, sixBuckets()...)
		q.write = writers(l, -1)
		res, err := p.Run(t.Context())
		if err != nil || res.State != ledger.RunReviewing || res.Proved != 17 || res.Blocked != 0 {
			t.Fatalf("run: %+v, %v", res, err)
		}
		if !slices.Equal(l.moves, []ledger.RunState{ledger.RunWriting, ledger.RunReviewing}) {
			t.Errorf("moves %v", l.moves)
		}
		dealt := len(q.sent())
		again, err := p.Run(t.Context())
		if err != nil || again.State != ledger.RunReviewing || len(q.sent()) != dealt {
			t.Errorf("a second run: %+v, %v, %d slices more", again, err, len(q.sent())-dealt)
		}
	})
	t.Run("short", func(t *testing.T) {
		p, l, q := testPlanner(t, 17, sixBuckets()...)
		q.write = writers(l, 0) // nothing is ever proved
		res, err := p.Run(t.Context())
		var short *ShortError
		if !errors.As(err, &short) || res.State != ledger.RunFailed || short.Proved != 0 || short.Asked != 17 || short.Blocked != 6 {
			t.Fatalf("run: %+v, %v", res, err)
		}
		if l.run().State != ledger.RunFailed || l.run().Message != short.Error() {
			t.Errorf("ledger: %s %q", l.run().State, l.run().Message)
		}
		if want := 3 * 6; len(q.sent()) > want {
			t.Errorf("%d slices for 6 buckets of 3 attempts", len(q.sent()))
		}
		dealt := len(q.sent())
		_, err = p.Run(t.Context())
		if !errors.As(err, &short) || len(q.sent()) != dealt {
			t.Errorf("a retried planner on a failed run: %v, dealt %d more", err, len(q.sent())-dealt)
		}
	})
	t.Run("short unblocked", func(t *testing.T) {
		// One round, one scenario per bucket: nothing blocks, yet five
		// buckets end below their want, and the error names them.
		p, _, q := testPlanner(t, 17, sixBuckets()...)
		p.cfg.MaxRounds = 1
		q.write = writers(p.cfg.Ledger.(*fakeLedger), 1)
		res, err := p.Run(t.Context())
		var short *ShortError
		if !errors.As(err, &short) || short.Proved != 6 || short.Blocked != 0 || short.Short != 5 || short.Unplanned != 0 {
			t.Fatalf("run: %+v, %v", res, err)
		}
		if msg := short.Error(); strings.Contains(msg, "0 buckets blocked") || !strings.Contains(msg, "5 buckets short of their want") {
			t.Errorf("the error does not say why: %q", msg)
		}
	})
	t.Run("beyond the plan", func(t *testing.T) {
		// Asked past every bucket's capacity: top-ups fill the buckets, and
		// the rest is the plan's, said as such.
		p, l, q := testPlanner(t, 30, sixBuckets()...)
		q.write = writers(l, -1)
		res, err := p.Run(t.Context())
		var short *ShortError
		if !errors.As(err, &short) || short.Proved != 24 || short.Blocked != 0 || short.Short != 0 || short.Unplanned != 6 {
			t.Fatalf("run: %+v, %v", res, err)
		}
		if msg := short.Error(); !strings.Contains(msg, "the plan holds 6 fewer than asked") {
			t.Errorf("the error does not say why: %q", msg)
		}
	})
	t.Run("budget", func(t *testing.T) {
		p, l, q := testPlanner(t, 17, sixBuckets()...)
		l.update(func(r *ledger.Run) { r.BudgetTokens = 10 })
		spend(l, ledger.Call{Run: "r", Prompt: 10})
		res, err := p.Run(t.Context())
		var short *ShortError
		if !errors.As(err, &short) || !short.Budget || !res.Budget || len(q.sent()) != 0 {
			t.Fatalf("a run at its cap: %+v, %v, %d slices", res, err, len(q.sent()))
		}
		if !strings.Contains(short.Error(), "budget") {
			t.Errorf("the error does not say the budget stopped it: %v", short)
		}
	})
	t.Run("resumed after a cancel", func(t *testing.T) {
		p, l, q := testPlanner(t, 17, sixBuckets()...)
		if _, err := l.MoveRun(t.Context(), "r", ledger.RunCancelled, ""); err != nil {
			t.Fatal(err)
		}
		q.write = writers(l, -1)
		if res, err := p.Run(t.Context()); err != nil || res.State != ledger.RunReviewing {
			t.Fatalf("resume: %+v, %v", res, err)
		}
	})
}

// TestGapRounds: gap rounds are counted in the ledger; Settle finishes a
// gap round a stopped reviewer left (republishing its slices under their
// ids); a gap round that finds nothing open deals nothing and leaves no
// trace.
func TestGapRounds(t *testing.T) {
	p, l, q := testPlanner(t, 17, sixBuckets()...)
	l.update(func(r *ledger.Run) { r.State, r.Round = ledger.RunReviewing, 2 })
	if n, err := p.GapRounds(t.Context()); err != nil || n != 0 {
		t.Fatalf("gap rounds of a fresh run: %d, %v", n, err)
	}
	// A reviewer deals a gap round and is stopped before anyone wrote it.
	q.pending = 1
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := p.Gap(ctx); done <- err }()
	for len(q.sent()) == 0 {
		time.Sleep(time.Millisecond)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the stopped gap round: %v", err)
	}
	dealt := q.sent()
	if n, _ := p.GapRounds(t.Context()); n != 1 || l.run().Round != 3 {
		t.Fatalf("gap rounds %d, round %d; want 1 and 3", n, l.run().Round)
	}
	for _, s := range dealt {
		if s.Gap == "" || s.Round != 3 {
			t.Errorf("%s: gap %q, round %d", s.ID, s.Gap, s.Round)
		}
	}
	// The next reviewer settles it: the same slices again, then the fold.
	q2 := &fakeQueue{cfg: q.cfg, write: writers(l, -1)}
	p.cfg.Queue = q2
	if err := p.Settle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if re := q2.sent(); len(re) != len(dealt) || re[0].ID != dealt[0].ID || re[0].Gap == "" {
		t.Fatalf("settled by republishing %d slices (%v), want the %d dealt", len(re), re, len(dealt))
	}
	for _, s := range l.slices() {
		if s.Kind != ledger.SliceGap || s.State != ledger.SliceDone {
			t.Errorf("%s: %s %s", s.ID, s.Kind, s.State)
		}
	}
	for _, b := range l.buckets() {
		if b.State != ledger.BucketDone || b.ClaimedBy != "" {
			t.Errorf("%s: %s, claimed by %q after the fold", b.ID, b.State, b.ClaimedBy)
		}
	}
	// Nothing open any more: a gap round deals nothing and is not recorded.
	if n, err := p.Gap(t.Context()); err != nil || n != 0 || l.run().Round != 3 {
		t.Fatalf("an empty gap round: %d, %v, round %d", n, err, l.run().Round)
	}
	if n, _ := p.GapRounds(t.Context()); n != 1 {
		t.Errorf("gap rounds %d after an empty one, want 1", n)
	}
}

func TestConfig(t *testing.T) {
	p, _, _ := testPlanner(t, 5)
	good := p.cfg
	for name, mutate := range map[string]func(*Config){
		"Ledger":       func(c *Config) { c.Ledger = nil },
		"Queue":        func(c *Config) { c.Queue = nil },
		"RunID":        func(c *Config) { c.RunID = "" },
		"Asked":        func(c *Config) { c.Asked = 0 },
		"BudgetTokens": func(c *Config) { c.BudgetTokens = -1 },
		"RoundTimeout": func(c *Config) { c.RoundTimeout = -time.Second },
	} {
		c := good
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	d := Config{}.withDefaults()
	if d.MaxRounds != 8 || d.MaxAttempts != 3 || d.PerSlice != 3 || d.SliceScenarios != 12 || d.Model != "builtin" {
		t.Errorf("defaults: %+v", d)
	}
}

// TestDeadSliceIsDealtAgainAsItWas: a slice dead-lettered after it wrote
// part of its bucket (its writers died) is no attempt of the bucket's: the
// bucket keeps its want and its indices, no top-up cedes them to a bucket
// with room, and its own round deals it again exactly the indices the dead
// slice was given and did not write, so the run writes the cases a run
// without the deaths writes.
func TestDeadSliceIsDealtAgainAsItWas(t *testing.T) {
	bs := []ledger.Bucket{
		bucket("b0", "cancel-order", "c1", 0, 10, 0, 10),
		bucket("b1", "return-item", "c2", 1, 0, 10, 10), // room a top-up could deal to
	}
	p, l, q := testPlanner(t, 10, bs...)
	var given [][]int // the indices each slice was dealt, in order
	var rounds []int  // and its round
	q.write = func(s queue.Slice) {
		rounds = append(rounds, s.Round)
		var idx []int
		for _, id := range s.Buckets {
			b := l.bucket(id)
			for k := b.Done; k < b.Want; k++ {
				idx = append(idx, b.Spec.Index(k))
			}
		}
		given = append(given, idx)
		if len(given) > 1 {
			writers(l, -1)(s)
			return
		}
		// The first slice writes 4 of its 10, then the queue gives up on it.
		if err := l.Credit(context.Background(), "r", "b0", 4); err != nil {
			panic(err)
		}
		if err := l.FinishSlice(context.Background(), "r", s.ID, ledger.SliceDead, "", "dead-lettered", 5); err != nil {
			panic(err)
		}
	}
	if _, _, err := p.rounds(t.Context(), l.run()); err != nil {
		t.Fatal(err)
	}
	if len(given) != 2 {
		t.Fatalf("%d slices dealt (%v), want the dead one and its replacement", len(given), given)
	}
	if want := given[0][4:]; !slices.Equal(given[1], want) || !slices.Equal(rounds, []int{1, 1}) {
		t.Errorf("the replacement was dealt indices %v in round %d, want the dead slice's unwritten %v in its round 1", given[1], rounds[1], want)
	}
	if len(l.raised) != 0 {
		t.Errorf("buckets raised or ceded after a dead slice: %v", l.raised)
	}
	if b0, b1 := l.bucket("b0"), l.bucket("b1"); b0.Want != 10 || b0.Done != 10 || b0.Attempts != 0 || b0.State != ledger.BucketDone || b1.Want != 0 {
		t.Errorf("b0 %s want %d done %d attempts %d, b1 want %d; want b0 done 10 of 10 after no attempt, b1 untouched",
			b0.State, b0.Want, b0.Done, b0.Attempts, b1.Want)
	}
}

// TestResumedRoundDealsTheDeadSliceAgain: a planner started again in a round
// whose slices were all dealt, one of them dead, deals nothing new in that
// round but the dead slice's buckets, again, before the round is folded.
func TestResumedRoundDealsTheDeadSliceAgain(t *testing.T) {
	p, l, q := testPlanner(t, 10, bucket("b0", "cancel-order", "c1", 0, 10, 0, 10))
	dealt := 0
	q.write = func(s queue.Slice) {
		dealt++
		if s.Round != 1 {
			panic(fmt.Sprintf("slice %s dealt in round %d, want 1", s.ID, s.Round))
		}
		if dealt > 1 {
			writers(l, -1)(s)
			return
		}
		if err := l.FinishSlice(context.Background(), "r", s.ID, ledger.SliceDead, "", "dead-lettered", 5); err != nil {
			panic(err)
		}
	}
	// The first planner dealt round 1 and was killed before it folded.
	if err := l.SetRound(t.Context(), "r", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.deal(t.Context(), 1, ledger.SliceWork, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.rounds(t.Context(), l.run()); err != nil {
		t.Fatal(err)
	}
	if b0 := l.bucket("b0"); dealt != 2 || b0.Done != 10 || b0.State != ledger.BucketDone {
		t.Errorf("%d slices dealt, b0 %s with %d of %d; want the dead slice dealt again and b0 done", dealt, b0.State, b0.Done, b0.Want)
	}
}

// TestBucketThatKillsItsWritersTakesNoOtherDown: a slice dies, and every
// slice that holds one of its two buckets dies too; the other bucket,
// dealt again in a slice of its own, is written, and the first is blocked
// with the dead reason once three dead slices of its own held it, all in
// one round (the first, of both, singles neither out).
func TestBucketThatKillsItsWritersTakesNoOtherDown(t *testing.T) {
	p, l, q := testPlanner(t, 8,
		bucket("b0", "cancel-order", "c1", 0, 4, 0, 4),
		bucket("b1", "return-item", "c2", 1, 4, 4, 4))
	q.write = func(s queue.Slice) {
		if !slices.Contains(s.Buckets, "b0") {
			writers(l, -1)(s)
			return
		}
		if err := l.FinishSlice(context.Background(), "r", s.ID, ledger.SliceDead, "w", "lost with its writers", 10); err != nil {
			panic(err)
		}
	}
	_, err := p.Run(t.Context())
	var short *ShortError
	if !errors.As(err, &short) || short.Proved != 4 || short.Blocked != 1 {
		t.Fatalf("run: %v, want 4 of 8 proved and one bucket blocked", err)
	}
	if b0, b1 := l.bucket("b0"), l.bucket("b1"); b0.State != ledger.BucketBlocked || b0.Notes != "lost with its writers" || b1.State != ledger.BucketDone {
		t.Errorf("b0 %s (%q), b1 %s; want b0 blocked with the dead reason, b1 done", b0.State, b0.Notes, b1.State)
	}
	var ids []string
	for _, s := range q.sent() {
		ids = append(ids, fmt.Sprintf("%s r%d %v", s.ID, s.Round, s.Buckets))
	}
	want := []string{"r-r1-s001 r1 [b0 b1]", "r-r1-s001.b0 r1 [b0]", "r-r1-s001.b1 r1 [b1]", "r-r1-s001.b0.2 r1 [b0]", "r-r1-s001.b0.3 r1 [b0]"}
	if !slices.Equal(ids, want) {
		t.Errorf("dealt %v, want %v", ids, want)
	}
}

// refusingQueue is a fakeQueue that refuses its next refuse publishes, as a
// queue out of reach does.
type refusingQueue struct {
	*fakeQueue
	refuse, refused int
}

func (q *refusingQueue) Publish(ctx context.Context, s queue.Slice) (bool, error) {
	if q.refused < q.refuse {
		q.refused++
		return false, errors.New("nats: no servers available for connection")
	}
	return q.fakeQueue.Publish(ctx, s)
}
