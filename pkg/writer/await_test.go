package writer

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger/ledgertest"
	"github.com/suitegen/suitegen/pkg/outage"
)

// fakeClock is a writer's timer that records each wait asked for: fire
// says whether the wait ends at once or never.
type fakeClock struct {
	fire  bool
	waits chan time.Duration
}

func (c *fakeClock) after(d time.Duration) (<-chan time.Time, func() bool) {
	c.waits <- d
	t := make(chan time.Time, 1)
	if c.fire {
		t <- time.Time{}
	}
	return t, func() bool { return true }
}

// awaitWriter is a writer whose outage waits run on clk and draw r.
func awaitWriter(t *testing.T, p *deps, up *outage.Up, clk *fakeClock, r float64) *Writer {
	t.Helper()
	w, err := New(Config{ID: "w", Slices: SourceFunc(nil), Ledger: fakeLedger{ledgertest.New()}, Engines: fakeEngines{}, Model: &scriptedModel{name: "m"},
		Logger: discardLog(), Dependencies: p.probe, Up: up})
	if err != nil {
		t.Fatal(err)
	}
	w.after, w.jitter = clk.after, func() float64 { return r }
	return w
}

// TestAwaitBackoff: a paused writer's waits double from 250 ms to a cap of
// 5 s (it finds its servers back at most that late), each drawn between
// half and all of the step, so writers paused together do not probe
// together.
func TestAwaitBackoff(t *testing.T) {
	for _, c := range []struct {
		r    float64
		want []time.Duration
	}{
		{0, []time.Duration{125 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 2500 * time.Millisecond, 2500 * time.Millisecond}},
		{0.5, []time.Duration{187500 * time.Microsecond, 375 * time.Millisecond, 750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second, 3750 * time.Millisecond, 3750 * time.Millisecond}},
	} {
		p := newDeps(6)
		clk := &fakeClock{fire: true, waits: make(chan time.Duration, 16)}
		w := awaitWriter(t, p, nil, clk, c.r)
		down, ok := w.await(t.Context(), nil, discardLog())
		close(clk.waits)
		var got []time.Duration
		for d := range clk.waits {
			got = append(got, d)
		}
		if !down || !ok || !slices.Equal(got, c.want) {
			t.Errorf("draw %v: down %v, ok %v, waits %v; want true, true, %v", c.r, down, ok, got, c.want)
		}
	}
}

// TestAwaitWokenWhenServersAnswer: a writer paused in a long wait probes at
// once when another writer of its process finds the servers answering,
// instead of at the end of its wait.
func TestAwaitWokenWhenServersAnswer(t *testing.T) {
	up := new(outage.Up)
	paused := &fakeClock{waits: make(chan time.Duration, 1)} // never ends by itself
	p := newDeps(0)
	w := awaitWriter(t, p, up, paused, 0.5)
	type result struct{ down, ok bool }
	done := make(chan result, 1)
	go func() {
		down, ok := w.await(t.Context(), nil, discardLog())
		done <- result{down, ok}
	}()
	<-paused.waits // w is in its wait
	// Another writer sees the servers answer at its first probe.
	other := awaitWriter(t, newDeps(0), up, &fakeClock{fire: true, waits: make(chan time.Duration, 1)}, 0.5)
	if _, ok := other.await(t.Context(), nil, discardLog()); !ok {
		t.Fatal("the other writer's await did not end")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a failure guard only
	defer cancel()
	select {
	case r := <-done:
		if r.down || !r.ok || p.count() != 1 {
			t.Errorf("woken writer: down %v, ok %v, %d probes; want false, true, 1", r.down, r.ok, p.count())
		}
	case <-ctx.Done():
		t.Fatal("the paused writer was not woken when another found the servers answering")
	}
}
