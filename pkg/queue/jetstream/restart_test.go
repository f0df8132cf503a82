package jetstream

import (
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/testenv"
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

	// The connection's loss and return are logged (slog's default at
	// Connect; no test of this package runs in parallel).
	var logged testenv.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

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
	// The client logs from its callback goroutine, which may run after the
	// work above: wait for the lines, within a bound.
	for _, want := range []string{`msg="queue: disconnected"`, `msg="queue: reconnected"`} {
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logged.String(), want) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !strings.Contains(logged.String(), want) {
			t.Errorf("the log lacks %s:\n%s", want, logged.String())
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// failingDialer dials as net.Dialer does and closes failed on the first
// dial that fails.
type failingDialer struct {
	once   sync.Once
	failed chan struct{}
}

func (d *failingDialer) Dial(network, address string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: 2 * time.Second}).Dial(network, address)
	if err != nil {
		d.once.Do(func() { close(d.failed) })
	}
	return c, err
}

// TestConnectWaitsForTheServer: a process that starts before its NATS
// server (a pod scheduled before the server answers) keeps trying within
// StartupTimeout and connects once the server is up, instead of failing;
// without a StartupTimeout it fails at once.
func TestConnectWaitsForTheServer(t *testing.T) {
	dir := t.TempDir()
	srv, err := stack.StartNATS(stack.NATSConfig{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	srv.Shutdown()

	cfg := testConfig(srv.URL())
	if _, err := Connect(t.Context(), cfg); err == nil {
		t.Fatal("Connect without a StartupTimeout succeeded with the server down")
	}

	cfg.StartupTimeout = 2 * time.Minute
	dialer := &failingDialer{failed: make(chan struct{})}
	type result struct {
		q   *Queue
		err error
	}
	done := make(chan result, 1)
	go func() {
		q, err := Connect(t.Context(), cfg, nats.SetCustomDialer(dialer))
		done <- result{q, err}
	}()
	<-dialer.failed // it has met the server down at least once
	srv, err = stack.StartNATS(stack.NATSConfig{StoreDir: dir, Port: port})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer srv.Shutdown()
	r := <-done
	if r.err != nil {
		t.Fatalf("Connect once the server was up: %v", r.err)
	}
	defer r.q.Close()
	publish(t, r.q, newSlice("run1", 1))
}
