package writer

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ledger"
)

// deps is a Dependencies probe that fails down times, then answers; every
// probe is counted, and the first is announced on asked.
type deps struct {
	mu     sync.Mutex
	down   int // -1: never answers
	probes int
	asked  chan struct{}
}

func newDeps(down int) *deps { return &deps{down: down, asked: make(chan struct{})} }

func (p *deps) probe(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.probes++
	if p.probes == 1 {
		close(p.asked)
	}
	if p.down < 0 {
		return fmt.Errorf("ping: %w", shutdown)
	}
	if p.down > 0 {
		p.down--
		return fmt.Errorf("ping: %w", shutdown)
	}
	return nil
}

func (p *deps) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.probes
}

// outageHarness is a harness whose writer probes p and backs off briefly.
func outageHarness(t *testing.T, p *deps, replies ...any) *harness {
	h := newHarness(t, replies...)
	h.w.cfg.Dependencies = p.probe
	h.w.cfg.OutageBackoff, h.w.cfg.MaxOutageBackoff = time.Millisecond, 4*time.Millisecond
	return h
}

// TestOutageHoldsTheDelivery: an outage met while writing a slice, on any
// delivery (the last too), spends none: the writer keeps the delivery,
// probes its servers until they answer, writes the slice on the same
// delivery and acks it. Nothing is released, nothing dead-lettered.
func TestOutageHoldsTheDelivery(t *testing.T) {
	for _, last := range []bool{false, true} {
		t.Run(fmt.Sprintf("last=%v", last), func(t *testing.T) {
			p := newDeps(3)
			h := outageHarness(t, p, brief.ToolFinish)
			h.ledger.Fail("Run", 2, fmt.Errorf("read run: %w", shutdown))
			d := h.delivery("r", 5, last)
			h.w.handle(t.Context(), d)
			if got := d.ends(); !slices.Equal(got, []string{"ack"}) {
				t.Errorf("finished with %q, want one ack on the held delivery", got)
			}
			if state, _ := h.ledger.state("r", "s1"); state != ledger.SliceDone {
				t.Errorf("ledger: slice %q, want done", state)
			}
			// Two outages, each followed by probes until one answered: 3
			// failed probes and 2 answers.
			if n := p.count(); n != 5 {
				t.Errorf("%d probes, want 5", n)
			}
			if h.ledger.Calls("Run") != 3 || h.model.made() != 1 {
				t.Errorf("run read %d times, %d model calls; want 3 and 1", h.ledger.Calls("Run"), h.model.made())
			}
			if d.beats != 1 {
				t.Errorf("%d heartbeats started, want 1 (held throughout)", d.beats)
			}
			if n := testutil.ToFloat64(h.w.cfg.Metrics.For("r").OutagePauses); n != 2 {
				t.Errorf("suitegen_outage_pauses_total %v, want 2", n)
			}
		})
	}
}

// TestOutageWhileSettling: the ledger write that records a written slice
// meets an outage; it is written again once the servers answer, and the
// slice acked, not released.
func TestOutageWhileSettling(t *testing.T) {
	p := newDeps(1)
	h := outageHarness(t, p, brief.ToolFinish)
	h.ledger.Fail("FinishSlice", 2, shutdown)
	d := h.delivery("r", 1, false)
	h.w.handle(t.Context(), d)
	if got := d.ends(); !slices.Equal(got, []string{"ack"}) {
		t.Errorf("finished with %q, want ack", got)
	}
	if state, _ := h.ledger.state("r", "s1"); state != ledger.SliceDone {
		t.Errorf("ledger: slice %q, want done", state)
	}
}

// TestOutageStopReleases: a writer told to stop while paused by an outage
// releases the slice at once (no drain period: nothing is being written),
// as on any shutdown.
func TestOutageStopReleases(t *testing.T) {
	p := newDeps(-1)
	h := outageHarness(t, p)
	h.w.cfg.DrainTimeout = time.Hour // a release that waited for it would hang the test
	h.ledger.Fail("Run", 1, fmt.Errorf("read run: %w", shutdown))
	ctx, cancel := context.WithCancel(t.Context())
	d := h.delivery("r", 1, false)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.w.handle(ctx, d)
	}()
	<-p.asked
	cancel()
	<-done
	if got := d.ends(); !slices.Equal(got, []string{"nak 0s"}) {
		t.Errorf("finished with %q, want an immediate release", got)
	}
	if state, _ := h.ledger.state("r", "s1"); state != "" {
		t.Errorf("the ledger recorded the released slice %s", state)
	}
}

// TestOutageThatIsNot: a slice that keeps failing with an outage's error
// while the servers answer every first probe is the slice's failure: after
// maxUnprovenOutages tries it is released like one, and dead-lettered on
// its last delivery, rather than held for ever.
func TestOutageThatIsNot(t *testing.T) {
	for _, c := range []struct {
		last bool
		ends string
	}{{false, "nak 2s"}, {true, "term read run: read run: " + shutdown.Error()}} {
		p := newDeps(0)
		h := outageHarness(t, p)
		h.ledger.Fail("Run", -1, fmt.Errorf("read run: %w", shutdown))
		d := h.delivery("r", 2, c.last)
		h.w.handle(t.Context(), d)
		if got := d.ends(); !slices.Equal(got, []string{c.ends}) {
			t.Errorf("last=%v: finished with %q, want %q", c.last, got, c.ends)
		}
		if h.ledger.Calls("Run") != maxUnprovenOutages {
			t.Errorf("last=%v: the slice was tried %d times, want %d", c.last, h.ledger.Calls("Run"), maxUnprovenOutages)
		}
	}
}

// TestRunBacksOffAnUnreachableQueue: while the queue does not answer, the
// writer takes nothing and asks again with backoff; once it answers, the
// slice it hands out is written.
func TestRunBacksOffAnUnreachableQueue(t *testing.T) {
	h := outageHarness(t, newDeps(0), brief.ToolFinish)
	ctx, cancel := context.WithCancel(t.Context())
	d := h.delivery("r", 1, false)
	calls := 0
	h.w.cfg.Slices = SourceFunc(func(ctx context.Context) (Delivery, error) {
		calls++
		switch {
		case calls <= 4:
			return nil, fmt.Errorf("queue: fetch: %w", nats.ErrConnectionReconnecting)
		case calls == 5:
			return d, nil
		}
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	if err := h.w.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := d.ends(); !slices.Equal(got, []string{"ack"}) || calls != 6 {
		t.Fatalf("after the queue came back: %q, %d fetches", got, calls)
	}
}

// TestSessionTimeoutIsNoOutage: a session that runs out of its own time is
// the slice's failure, never an outage to pause for.
func TestSessionTimeoutIsNoOutage(t *testing.T) {
	p := newDeps(0)
	h := outageHarness(t, p, "block")
	h.w.cfg.SessionTimeout = time.Millisecond
	d := h.delivery("r", 1, false)
	h.w.handle(t.Context(), d)
	if got := d.ends(); !slices.Equal(got, []string{"nak 2s"}) {
		t.Errorf("finished with %q, want a release", got)
	}
	if n := p.count(); n != 0 {
		t.Errorf("%d probes after a session timeout, want none", n)
	}
}

// TestBudgetMeterOutage: the budget meter's read meeting an outage ends the
// session at once (no model call asked again in vain) and pauses the writer;
// the slice is written on the same delivery.
func TestBudgetMeterOutage(t *testing.T) {
	p := newDeps(1)
	h := outageHarness(t, p, brief.ToolFinish)
	h.ledger.Fail("Budget", 1, shutdown)
	d := h.delivery("r", 1, false)
	h.w.handle(t.Context(), d)
	if got := d.ends(); !slices.Equal(got, []string{"ack"}) {
		t.Errorf("finished with %q, want ack", got)
	}
	if n := p.count(); n != 2 {
		t.Errorf("%d probes, want 2", n)
	}
}

// TestProviderTroubleIsNoOutage: a model call that keeps failing on the
// network is the provider's trouble: the slice is released as before, and
// the writer's servers are not probed.
func TestProviderTroubleIsNoOutage(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	p := newDeps(0)
	h := outageHarness(t, p, reset, reset, reset, reset)
	d := h.delivery("r", 1, false)
	h.w.handle(t.Context(), d)
	if got := d.ends(); !slices.Equal(got, []string{"nak 2s"}) {
		t.Errorf("finished with %q, want a release", got)
	}
	if n := p.count(); n != 0 {
		t.Errorf("%d probes, want none", n)
	}
}
