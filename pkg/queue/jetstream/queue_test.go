package jetstream

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestConnectRefusesABadConfig: Connect validates before it dials.
func TestConnectRefusesABadConfig(t *testing.T) {
	if _, err := Connect(t.Context(), queue.Config{MaxDeliver: -1}); err == nil || !strings.Contains(err.Error(), "MaxDeliver") {
		t.Errorf("Connect with a bad config: got %v", err)
	}
}

func TestPublishDuplicateIsDropped(t *testing.T) {
	q := connect(t, testConfig(testenv.NATS(t)))
	s := newSlice("run1", 1)
	publish(t, q, s)
	dup, err := q.Publish(t.Context(), s)
	if err != nil || !dup {
		t.Fatalf("republish: dup=%v err=%v, want duplicate", dup, err)
	}
	waitPending(t, q, 1, 0)
	publish(t, q, newSlice("run1", 2))
	waitPending(t, q, 2, 0)
	// Still a duplicate after the first copy was consumed and acked: a
	// planner replaying its publishes after a crash adds nothing.
	d := next(t, q, 5*time.Second)
	if err := d.Ack(t.Context()); err != nil {
		t.Fatal(err)
	}
	if dup, err := q.Publish(t.Context(), d.Slice); err != nil || !dup {
		t.Fatalf("republish after ack: dup=%v err=%v, want duplicate", dup, err)
	}
}

func TestPublishRejectsUnroutableSlices(t *testing.T) {
	q := connect(t, testConfig(testenv.NATS(t)))
	for name, s := range map[string]queue.Slice{
		"empty":        {},
		"no run":       {ID: "x/1/1"},
		"dotted run":   {Run: "a.b", ID: "a.b/1/1"},
		"wildcard run": {Run: "*", ID: "x"},
		"no slice id":  {Run: "run1"},
		"blank id":     {Run: "run1", ID: " "},
	} {
		if _, err := q.Publish(t.Context(), s); !errors.Is(err, queue.ErrInvalidSlice) {
			t.Errorf("%s: got %v, want ErrInvalidSlice", name, err)
		}
	}
	waitPending(t, q, 0, 0)
}

func TestNextDeliversOneAndAckRemovesIt(t *testing.T) {
	q := connect(t, testConfig(testenv.NATS(t)))
	for i := 1; i <= 3; i++ {
		publish(t, q, newSlice("run1", i))
	}
	d := next(t, q, 5*time.Second)
	if d.NumDelivered != 1 || d.Last() {
		t.Fatalf("first delivery: NumDelivered=%d Last=%v", d.NumDelivered, d.Last())
	}
	if want := newSlice("run1", 1); !reflect.DeepEqual(d.Slice, want) {
		t.Fatalf("got slice %v, want %v", d.Slice, want)
	}
	// Exactly one message taken: nothing prefetched into this process.
	waitPending(t, q, 2, 1)
	if err := d.Ack(t.Context()); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	if err := d.Ack(t.Context()); !errors.Is(err, queue.ErrFinished) {
		t.Fatalf("second Ack: %v, want ErrFinished", err)
	}
	if err := d.InProgress(t.Context()); !errors.Is(err, queue.ErrFinished) {
		t.Fatalf("InProgress after Ack: %v, want ErrFinished", err)
	}
	for i := 2; i <= 3; i++ {
		d := next(t, q, 5*time.Second)
		if d.Slice.ID != newSlice("run1", i).ID {
			t.Fatalf("got %s, want slice %d (stream order)", d.Slice.ID, i)
		}
		if err := d.Ack(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	waitPending(t, q, 0, 0)
	// Acked slices are never redelivered, even after the ack wait.
	expectNothing(t, q, 3*q.Config().AckWait)
}

func TestUnackedIsRedeliveredAfterAckWait(t *testing.T) {
	q := connect(t, testConfig(testenv.NATS(t)))
	publish(t, q, newSlice("run1", 1))
	d1 := next(t, q, 5*time.Second)
	start := time.Now()
	d2 := next(t, q, 5*time.Second)
	waited := time.Since(start)
	if d2.Slice.ID != d1.Slice.ID || d2.NumDelivered != 2 {
		t.Fatalf("redelivery: %s NumDelivered=%d, want %s and 2", d2.Slice.ID, d2.NumDelivered, d1.Slice.ID)
	}
	if waited < q.Config().AckWait*8/10 {
		t.Fatalf("redelivered after %v, before the ack wait %v", waited, q.Config().AckWait)
	}
	// The second holder's ack lands and ends it.
	if err := d2.Ack(t.Context()); err != nil {
		t.Fatal(err)
	}
	expectNothing(t, q, 3*q.Config().AckWait)
}

func TestHeartbeatKeepsDeliveryPastAckWait(t *testing.T) {
	url := testenv.NATS(t)
	q := connect(t, testConfig(url))
	other := connect(t, testConfig(url)) // another writer pod on the same consumer
	publish(t, q, newSlice("run1", 1))

	d := next(t, q, 5*time.Second)
	stop := d.Heartbeat(t.Context(), 100*time.Millisecond)
	expectNothing(t, other, 4*q.Config().AckWait)
	stop()
	stop() // idempotent

	// Manual InProgress works the same way, while the other writer pulls.
	ctx, cancel := context.WithTimeout(t.Context(), 4*q.Config().AckWait)
	defer cancel()
	stolen := make(chan *Delivery, 1)
	go func() {
		d, _ := other.Next(ctx)
		stolen <- d
	}()
	for ctx.Err() == nil {
		if err := d.InProgress(t.Context()); err != nil {
			t.Fatalf("InProgress: %v", err)
		}
		time.Sleep(q.Config().AckWait / 4)
	}
	if s := <-stolen; s != nil {
		t.Fatalf("other writer got %s (delivery %d) while InProgress was sent", s.Slice.ID, s.NumDelivered)
	}
	waitPending(t, q, 0, 1)

	// Ack stops a running heartbeat (goleak checks the goroutine is gone).
	d.Heartbeat(t.Context(), 0)
	if err := d.Ack(t.Context()); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	expectNothing(t, other, 3*q.Config().AckWait)
}

func TestWithoutHeartbeatTheOtherWriterGetsIt(t *testing.T) {
	// The control for the heartbeat test: same setup, no heartbeat.
	url := testenv.NATS(t)
	q := connect(t, testConfig(url))
	other := connect(t, testConfig(url))
	publish(t, q, newSlice("run1", 1))
	next(t, q, 5*time.Second)
	d := next(t, other, 4*q.Config().AckWait)
	if d.NumDelivered != 2 {
		t.Fatalf("NumDelivered=%d, want 2", d.NumDelivered)
	}
}

func TestMaxDeliverExhaustion(t *testing.T) {
	q := connect(t, testConfig(testenv.NATS(t))) // MaxDeliver 3
	var dead atomic.Uint64
	got := make(chan struct{}, 1)
	if err := q.DeadLetters(t.Context(), func(seq uint64) {
		dead.Store(seq)
		select {
		case got <- struct{}{}:
		default:
		}
	}); err != nil {
		t.Fatalf("DeadLetters: %v", err)
	}
	publish(t, q, newSlice("run1", 1))

	var last *Delivery
	for i := uint64(1); i <= 3; i++ {
		d := next(t, q, 5*time.Second)
		if d.NumDelivered != i || d.Last() != (i == 3) {
			t.Fatalf("delivery %d: NumDelivered=%d Last=%v", i, d.NumDelivered, d.Last())
		}
		last = d // never acked: the work "fails" every time
	}
	expectNothing(t, q, 4*q.Config().AckWait)

	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no max-deliveries advisory")
	}
	if dead.Load() != last.StreamSeq {
		t.Fatalf("advisory for seq %d, want %d", dead.Load(), last.StreamSeq)
	}
	s, err := q.Lookup(t.Context(), last.StreamSeq)
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	if !reflect.DeepEqual(s, newSlice("run1", 1)) {
		t.Fatalf("Lookup: %v", s)
	}

	// The run's leftovers are purged by subject; another run's are kept.
	publish(t, q, newSlice("run2", 1))
	if err := q.Purge(t.Context(), "run1"); err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if _, err := q.Lookup(t.Context(), last.StreamSeq); !errors.Is(err, natsjs.ErrMsgNotFound) {
		t.Fatalf("Lookup after purge: %v, want not found", err)
	}
	d := next(t, q, 5*time.Second)
	if d.Slice.Run != "run2" {
		t.Fatalf("after purge got run %s, want run2", d.Slice.Run)
	}
}

func TestTermOnLastDeliveryEndsIt(t *testing.T) {
	q := connect(t, testConfig(testenv.NATS(t)))
	var advisories atomic.Int32
	if err := q.DeadLetters(t.Context(), func(uint64) { advisories.Add(1) }); err != nil {
		t.Fatal(err)
	}
	publish(t, q, newSlice("run1", 1))
	var d *Delivery
	for {
		d = next(t, q, 5*time.Second)
		if d.Last() {
			break
		}
		if err := d.Nak(t.Context(), 0); err != nil {
			t.Fatalf("Nak: %v", err)
		}
	}
	if d.NumDelivered != 3 {
		t.Fatalf("last delivery is %d, want 3", d.NumDelivered)
	}
	// The caller records the dead slice in the ledger, then:
	if err := d.Term(t.Context(), "dead: writer failed\n3 times"); err != nil {
		t.Fatalf("Term: %v", err)
	}
	if err := d.Nak(t.Context(), 0); !errors.Is(err, queue.ErrFinished) {
		t.Fatalf("Nak after Term: %v, want ErrFinished", err)
	}
	expectNothing(t, q, 3*q.Config().AckWait)
	waitPending(t, q, 0, 0)
	if n := advisories.Load(); n != 0 {
		t.Fatalf("%d max-deliveries advisories for a slice the writer terminated, want 0", n)
	}
}

func TestNakRedeliversAtOnceOrAfterDelay(t *testing.T) {
	cfg := testConfig(testenv.NATS(t))
	cfg.AckWait = 5 * time.Second // any redelivery below must come from the Nak
	q := connect(t, cfg)
	publish(t, q, newSlice("run1", 1))
	d := next(t, q, 5*time.Second)
	if err := d.Nak(t.Context(), 0); err != nil {
		t.Fatalf("Nak: %v", err)
	}
	d = next(t, q, 2*time.Second)
	if d.NumDelivered != 2 {
		t.Fatalf("NumDelivered=%d, want 2", d.NumDelivered)
	}
	start := time.Now()
	if err := d.Nak(t.Context(), 300*time.Millisecond); err != nil {
		t.Fatalf("Nak with delay: %v", err)
	}
	d = next(t, q, 2*time.Second)
	if waited := time.Since(start); waited < 250*time.Millisecond || d.NumDelivered != 3 {
		t.Fatalf("delayed Nak: redelivered after %v with NumDelivered=%d, want >=300ms and 3", waited, d.NumDelivered)
	}
	if err := d.Ack(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestGarbageIsTerminatedNotRetried(t *testing.T) {
	q := connect(t, testConfig(testenv.NATS(t)))
	good := newSlice("run1", 1)
	goodBytes, err := good.Encode()
	if err != nil {
		t.Fatal(err)
	}
	noIDs, err := queue.Slice{Round: 3, Gap: "no ids"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, subject, msgID string
		data                 []byte
	}{
		{"not protobuf", "suitegen.slices.run1", "g1", []byte{0xff, 0xff, 0xff}},
		{"not protobuf either", "suitegen.slices.run1", "g2", []byte("hello")},
		{"no ids", "suitegen.slices.run1", "g3", noIDs},
		{"run differs from subject", "suitegen.slices.other", good.ID, goodBytes},
		{"slice id differs from msg id", "suitegen.slices.run1", "elsewhere", goodBytes},
	}
	for _, c := range cases {
		m := nats.NewMsg(c.subject)
		m.Data = c.data
		m.Header.Set(natsjs.MsgIDHeader, c.msgID)
		if err := q.Conn().PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Conn().Flush(); err != nil {
		t.Fatal(err)
	}
	publish(t, q, newSlice("run1", 2))

	for _, c := range cases {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		d, err := q.Next(ctx)
		cancel()
		var bad *queue.BadMessageError
		if !errors.As(err, &bad) {
			t.Fatalf("%s: Next = %v, %v; want *BadMessageError", c.name, d, err)
		}
		if bad.Subject != c.subject || bad.StreamSeq == 0 {
			t.Fatalf("%s: %+v", c.name, bad)
		}
	}
	d := next(t, q, 5*time.Second)
	if d.Slice.ID != newSlice("run1", 2).ID || d.NumDelivered != 1 {
		t.Fatalf("got %s (%d), want the good slice", d.Slice.ID, d.NumDelivered)
	}
	if err := d.Ack(t.Context()); err != nil {
		t.Fatal(err)
	}
	expectNothing(t, q, 3*q.Config().AckWait)
	waitPending(t, q, 0, 0)
}

func TestWritersShareWorkWithoutDoubleDelivery(t *testing.T) {
	url := testenv.NATS(t)
	// Writer pods start together: concurrent Connects must all succeed.
	const writers = 3
	qs := make([]*Queue, writers)
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() {
			qs[i], errs[i] = Connect(t.Context(), testConfig(url))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Connect %d: %v", i, err)
		}
		t.Cleanup(qs[i].Close)
	}

	const slices = 30
	for i := range slices {
		publish(t, qs[0], newSlice("run1", i))
	}
	var (
		mu    sync.Mutex
		seen  = map[string]int{}
		byQ   = make([]int, writers)
		taken atomic.Int32
	)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for i, q := range qs {
		wg.Go(func() {
			for taken.Load() < slices {
				nctx, ncancel := context.WithTimeout(ctx, 300*time.Millisecond)
				d, err := q.Next(nctx)
				ncancel()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					continue
				}
				taken.Add(1)
				mu.Lock()
				seen[d.Slice.ID]++
				byQ[i]++
				mu.Unlock()
				time.Sleep(10 * time.Millisecond) // the work
				if err := d.Ack(ctx); err != nil {
					t.Errorf("Ack: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != slices {
		t.Fatalf("%d distinct slices delivered, want %d", len(seen), slices)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("slice %s delivered %d times", id, n)
		}
	}
	for i, n := range byQ {
		if n == 0 {
			t.Errorf("writer %d got no work (split %v)", i, byQ)
		}
	}
	for _, q := range qs {
		expectNothing(t, q, q.Config().AckWait)
	}
}

func TestNextCancelReleasesAbandonedPull(t *testing.T) {
	cfg := testConfig(testenv.NATS(t))
	cfg.FetchWait = 3 * time.Second // the abandoned pull outlives the publish below
	cfg.AckWait = 5 * time.Second   // so only the release can make the redelivery quick
	q := connect(t, cfg)

	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if _, err := q.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next: %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Next took %v to notice cancellation", took)
	}
	// The server still holds the abandoned pull request and serves it first;
	// the queue must hand the message straight back.
	publish(t, q, newSlice("run1", 1))
	d := next(t, q, 2*time.Second)
	if d.NumDelivered != 2 {
		t.Fatalf("NumDelivered=%d, want 2 (first delivery went to the abandoned pull)", d.NumDelivered)
	}
	if err := d.Ack(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestClosedQueue(t *testing.T) {
	q, err := Connect(t.Context(), testConfig(testenv.NATS(t)))
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	q.Close()
	if _, err := q.Next(t.Context()); !errors.Is(err, queue.ErrClosed) {
		t.Fatalf("Next: %v", err)
	}
	if _, err := q.Publish(t.Context(), newSlice("run1", 1)); !errors.Is(err, queue.ErrClosed) {
		t.Fatalf("Publish: %v", err)
	}
}
