package queue

import (
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/stack"
)

// TestRestartKeepsUnackedSlices stops the server with slices queued and one
// held, starts it again on the same store directory and port, and checks that
// nothing was lost and deduplication still holds. testenv.NATS cannot restart
// a server on its store, so this test starts its own through pkg/stack.
func TestRestartKeepsUnackedSlices(t *testing.T) {
	dir := t.TempDir()
	srv, err := stack.StartNATS(stack.NATSConfig{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Shutdown() }()
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}

	cfg := testConfig(srv.URL())
	q := connect(t, cfg) // this writer lives through the restart
	for i := 1; i <= 3; i++ {
		publish(t, q, newSlice("run1", i))
	}
	held := next(t, q, 5*time.Second) // delivered, never acked
	if held.Slice.ID != newSlice("run1", 1).ID {
		t.Fatalf("held %s", held.Slice.ID)
	}

	srv.Shutdown()
	srv, err = stack.StartNATS(stack.NATSConfig{StoreDir: dir, Port: port})
	if err != nil {
		t.Fatalf("restart: %v", err)
	}

	// A process connecting after the restart finds the same stream.
	q2 := connect(t, cfg)
	if dup, err := q2.Publish(t.Context(), newSlice("run1", 2)); err != nil || !dup {
		t.Fatalf("republish after restart: dup=%v err=%v, want duplicate", dup, err)
	}
	got := map[string]uint64{}
	for range 3 {
		// The held slice comes back once its ack wait runs out.
		d := next(t, q2, 10*time.Second)
		got[d.Slice.ID] = d.NumDelivered
		if err := d.Ack(t.Context()); err != nil {
			t.Fatalf("Ack %s: %v", d.Slice.ID, err)
		}
	}
	for i := 1; i <= 3; i++ {
		id := newSlice("run1", i).ID
		n, ok := got[id]
		if !ok {
			t.Fatalf("slice %s lost in the restart (got %v)", id, got)
		}
		if want := uint64(1 + btoi(i == 1)); n != want {
			t.Errorf("slice %s: NumDelivered=%d, want %d", id, n, want)
		}
	}

	// The writer that was connected before the restart reconnects and keeps
	// working.
	publish(t, q2, newSlice("run1", 4))
	d := next(t, q, 10*time.Second)
	if d.Slice.ID != newSlice("run1", 4).ID {
		t.Fatalf("reconnected writer got %s", d.Slice.ID)
	}
	if err := d.Ack(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitPending(t, q, 0, 0)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
