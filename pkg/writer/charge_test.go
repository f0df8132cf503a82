package writer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/queue/jetstream"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// onServers is run "r" of the retail contract (model "m") on a real ledger,
// with two buckets of two scenarios claimed by one slice, and that slice
// published on a real queue of the default settings.
type onServers struct {
	store *ledger.Store
	q     *jetstream.Queue
	slice queue.Slice
	e     *engine.Engine
}

func newOnServers(t *testing.T) *onServers {
	t.Helper()
	ctx := t.Context()
	c, err := retail()
	if err != nil {
		t.Fatal(err)
	}
	store := ledger.New(testenv.Postgres(t))
	if _, err := store.CreateRun(ctx, ledger.Run{ID: "r", Agent: c.Agent, ContractSHA256: c.SHA256, WorldSHA256: "w", Model: "m",
		State: ledger.RunWriting, Asked: 4, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	var bs []ledger.Bucket
	for i := range 2 {
		bs = append(bs, ledger.Bucket{Bucket: plan.Bucket{ID: fmt.Sprintf("b%d", i), Ord: i, Theme: "t",
			UseCase: "cancel-order", Cell: fmt.Sprintf("cancel-order-%d", i), Outcome: "succeed", Overlay: "none", Kind: "happy", Want: 2,
			Spec: plan.Spec{Base: 2 * i, Capacity: 2, Sized: 2}}, Origin: ledger.OriginPlan})
	}
	if err := store.PutBuckets(ctx, "r", bs); err != nil {
		t.Fatal(err)
	}
	s := queue.Slice{Run: "r", ID: "r-r1-s001", Round: 1, Buckets: []string{"b0", "b1"}, TurnBudget: 20}
	if err := store.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: s.ID, Round: 1, BucketIDs: s.Buckets}); err != nil {
		t.Fatal(err)
	}
	q, err := jetstream.Connect(ctx, queue.Config{URL: testenv.NATS(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	if _, err := q.Publish(ctx, s); err != nil {
		t.Fatal(err)
	}
	return &onServers{store: store, q: q, slice: s, e: &engine.Engine{C: c}}
}

// lose takes delivery n of the slice and drops it as a writer killed once it
// took it does: nothing recorded, no ack. Releasing it stands in for the ack
// wait running out: either way the server delivers the slice again, once
// more counted. It fails the test when the queue no longer delivers it.
func (o *onServers) lose(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // an upper bound only
	defer cancel()
	d, err := o.q.Next(ctx)
	if err != nil {
		t.Fatalf("delivery %d: the queue delivers the slice no more (%v)", n, err)
	}
	if d.Slice.ID != o.slice.ID || d.NumDelivered != uint64(n) {
		t.Fatalf("got %s delivery %d, want %s delivery %d", d.Slice.ID, d.NumDelivered, o.slice.ID, n)
	}
	if err := d.Nak(ctx, 0); err != nil {
		t.Fatal(err)
	}
}

// writer runs a writer on the servers, driving model m, until it logs want;
// it returns how many times its BeforeSlice ran.
func (o *onServers) writer(t *testing.T, m *scriptedModel, want string, cfg func(*Config)) int32 {
	t.Helper()
	var began atomic.Int32
	said := testenv.NewLogSignal(want)
	c := Config{ID: "w-last", Slices: SourceFunc(func(ctx context.Context) (Delivery, error) {
		d, err := o.q.Next(ctx)
		if err != nil {
			return nil, err
		}
		return jetstream.Work{Delivery: d}, nil
	}), Ledger: o.store, Engines: fakeEngines{e: o.e}, Model: m,
		Logger: slog.New(said), BeforeSlice: func(string) { began.Add(1) }}
	if cfg != nil {
		cfg(&c)
	}
	w, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	select {
	case <-said.Seen():
	case <-time.After(time.Minute): // an upper bound only
		t.Errorf("the writer never logged %q", want)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	return began.Load()
}

// ledgerSlice is the slice as the ledger records it.
func (o *onServers) ledgerSlice(t *testing.T) ledger.Slice {
	t.Helper()
	ss, err := o.store.Slices(t.Context(), "r", 1)
	if err != nil || len(ss) != 1 {
		t.Fatalf("slices %+v (%v)", ss, err)
	}
	return ss[0]
}

// TestLostWritersDoNotExhaustTheSlice: on a real ledger and queue of the
// default settings, a slice whose first six deliveries are lost with their
// writers (more than the five deliveries a slice used to get) is still
// delivered, and the seventh writer writes it: writers dying for reasons of
// their own do not spend the slice the way its own failures do.
func TestLostWritersDoNotExhaustTheSlice(t *testing.T) {
	o := newOnServers(t)
	for n := 1; n <= 6; n++ {
		o.lose(t, n)
	}
	m := &scriptedModel{name: "m"}
	if began := o.writer(t, m, "slice written", nil); began != 1 {
		t.Errorf("the last writer began the slice %d times, want 1", began)
	}
	if s := o.ledgerSlice(t); s.State != ledger.SliceDone || s.Deliveries != 7 {
		t.Errorf("slice %s after %d deliveries (%q), want done after 7", s.State, s.Deliveries, s.Reason)
	}
	if pending, acking, err := o.q.Pending(t.Context()); err != nil || pending != 0 || acking != 0 {
		t.Errorf("queue: %d pending, %d awaiting ack (%v); want the slice acked", pending, acking, err)
	}
}

// TestSliceThatKillsItsWritersEnds: a slice whose deliveries are all lost
// with their writers before it progressed ends all the same: the delivery
// that finds MaxLost of them is recorded dead and terminated before any
// work (no BeforeSlice, no model call), and the queue holds nothing of it.
func TestSliceThatKillsItsWritersEnds(t *testing.T) {
	o := newOnServers(t)
	for n := 1; n <= 3; n++ {
		o.lose(t, n)
	}
	m := &scriptedModel{name: "m"}
	began := o.writer(t, m, "slice dead-lettered", func(c *Config) { c.MaxLost = 3 })
	if began != 0 || m.made() != 0 {
		t.Errorf("the slice was worked (%d begun, %d model calls), want it dead before any work", began, m.made())
	}
	if s := o.ledgerSlice(t); s.State != ledger.SliceDead || !strings.Contains(s.Reason, "3 of its deliveries were lost with their writer") || s.Deliveries != 4 {
		t.Errorf("slice %s after %d deliveries (%q), want dead after 4, three lost", s.State, s.Deliveries, s.Reason)
	}
	if pending, acking, err := o.q.Pending(t.Context()); err != nil || pending != 0 || acking != 0 {
		t.Errorf("queue: %d pending, %d awaiting ack (%v); want the slice terminated", pending, acking, err)
	}
}

// TestFailuresEndTheSlice: a slice whose work fails is dead once
// MaxFailures deliveries failed on it, before the queue's last delivery.
func TestFailuresEndTheSlice(t *testing.T) {
	h := newHarness(t)
	h.w.cfg.MaxFailures = 2
	h.w.cfg.Engines = fakeEngines{err: errors.New("engine: world unreachable")}
	first, second := h.delivery("r", 1, false), h.delivery("r", 2, false)
	h.w.handle(t.Context(), first)
	if state, _ := h.ledger.state("r", "s1"); state != "" {
		t.Errorf("ledger: slice %q after one failure, want it published", state)
	}
	h.w.handle(t.Context(), second)
	for _, c := range []struct {
		d    *fakeDelivery
		want string
	}{{first, "nak 2s"}, {second, "term engine: engine: world unreachable"}} {
		if got := c.d.ends(); !slices.Equal(got, []string{c.want}) {
			t.Errorf("delivery %d finished with %q, want %q", c.d.attempt, got, c.want)
		}
	}
	if state, reason := h.ledger.state("r", "s1"); state != ledger.SliceDead || !strings.Contains(reason, "world unreachable") {
		t.Errorf("ledger: slice %q (%q), want dead on its second failure", state, reason)
	}
}
