package jetstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// flakyAcker stands between a delivery and the server as a JetStream leader
// election does: the first len(errs) acks (+ACK) fail with errs in turn;
// every other acknowledgement, and every later ack, reaches the server.
type flakyAcker struct {
	next acker
	// land: a failed ack reaches the server all the same (its answer is
	// what was lost).
	land bool
	// always: every ack and every InProgress fails with errs[0].
	always bool

	mu         sync.Mutex
	errs       []error
	acks, wpis int // sent, failed or not
}

func (f *flakyAcker) send(ctx context.Context, body string) error {
	f.mu.Lock()
	var fail error
	switch body {
	case "+ACK":
		f.acks++
		if f.always {
			fail = f.errs[0]
		} else if len(f.errs) > 0 {
			fail, f.errs = f.errs[0], f.errs[1:]
		}
	case "+WPI":
		f.wpis++
		if f.always {
			fail = f.errs[0]
		}
	}
	f.mu.Unlock()
	if fail != nil {
		if f.land {
			if err := f.next.send(ctx, body); err != nil {
				return err
			}
		}
		return fmt.Errorf("injected: %w", fail)
	}
	return f.next.send(ctx, body)
}

func (f *flakyAcker) sent() (acks, wpis int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.acks, f.wpis
}

// flaky puts a flakyAcker in front of d's acknowledgements.
func flaky(d *Delivery, f *flakyAcker) *flakyAcker {
	f.next = d.ack
	d.ack = f
	return f
}

// consumerState is what the server says of the queue's consumer and stream.
func consumerState(t *testing.T, q *Queue) (*natsjs.ConsumerInfo, uint64) {
	t.Helper()
	ci, err := q.cons.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	si, err := q.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return ci, si.State.Msgs
}

// assertAckedOnce: the server holds nothing of the slice (a work queue drops
// an acked message), delivered it once and redelivers nothing.
func assertAckedOnce(t *testing.T, q *Queue) {
	t.Helper()
	ci, msgs := consumerState(t, q)
	if ci.NumAckPending != 0 || ci.NumPending != 0 || ci.NumRedelivered != 0 || ci.Delivered.Consumer != 1 || msgs != 0 {
		t.Fatalf("server: ack pending %d, pending %d, redelivered %d, deliveries %d, messages %d; want one delivery, acked",
			ci.NumAckPending, ci.NumPending, ci.NumRedelivered, ci.Delivered.Consumer, msgs)
	}
}

// longWait sets an ack wait far longer than the retries here take, so
// nothing depends on how fast they run.
func longWait(url string) queue.Config {
	cfg := testConfig(url)
	cfg.AckWait = time.Minute
	return cfg
}

// counted gives cfg's queue a writer's metrics to report its acks to, as
// the writer commands do.
func counted(cfg queue.Config) (queue.Config, *metrics.Metrics) {
	m := metrics.New(prometheus.NewRegistry(), "", "writer")
	cfg.Acks = m
	return cfg, m
}

// assertAcksRetried: run's suitegen_acks_retried_total is confirmed and
// gaveUp.
func assertAcksRetried(t *testing.T, m *metrics.Metrics, run string, confirmed, gaveUp float64) {
	t.Helper()
	v := m.For(run).AcksRetried
	if c, g := testutil.ToFloat64(v.WithLabelValues(metrics.AckConfirmed)), testutil.ToFloat64(v.WithLabelValues(metrics.AckGaveUp)); c != confirmed || g != gaveUp {
		t.Errorf("acks retried of %s: %v confirmed, %v gave up; want %v and %v", run, c, g, confirmed, gaveUp)
	}
}

func TestAckRetriesTransientFailures(t *testing.T) {
	cfg, m := counted(longWait(testenv.NATS(t)))
	q := connect(t, cfg)
	publish(t, q, newSlice("run1", 1))
	d := next(t, q, 5*time.Second)
	electing := &natsjs.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}
	f := flaky(d, &flakyAcker{errs: []error{nats.ErrTimeout, nats.ErrNoResponders, context.DeadlineExceeded, electing}})
	if err := d.Ack(t.Context()); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	if acks, wpis := f.sent(); acks != 5 || wpis != 4 {
		t.Fatalf("sent %d acks and %d InProgress, want 5 (4 failed) and one InProgress before each retry", acks, wpis)
	}
	assertAckedOnce(t, q)
	// One ack, retried four times: counted once, as confirmed.
	assertAcksRetried(t, m, "run1", 1, 0)
	if err := d.Ack(t.Context()); !errors.Is(err, queue.ErrFinished) {
		t.Fatalf("Ack after a confirmed ack: %v, want ErrFinished", err)
	}
}

// An ack the server took whose answer was lost is sent again, and the server
// confirms the second.
func TestAckWhoseAnswerWasLost(t *testing.T) {
	cfg, m := counted(longWait(testenv.NATS(t)))
	q := connect(t, cfg)
	publish(t, q, newSlice("run1", 1))
	d := next(t, q, 5*time.Second)
	f := flaky(d, &flakyAcker{land: true, errs: []error{nats.ErrTimeout}})
	if err := d.Ack(t.Context()); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	if acks, _ := f.sent(); acks != 2 {
		t.Fatalf("sent %d acks, want 2", acks)
	}
	assertAckedOnce(t, q)
	assertAcksRetried(t, m, "run1", 1, 0)
}

// A failure that is not transient is not tried again; the delivery stays
// unfinished, so the caller can.
func TestAckDoesNotRetryOtherFailures(t *testing.T) {
	cfg, m := counted(longWait(testenv.NATS(t)))
	q := connect(t, cfg)
	publish(t, q, newSlice("run1", 1))
	d := next(t, q, 5*time.Second)
	refused := errors.New("refused")
	f := flaky(d, &flakyAcker{errs: []error{refused, refused}})
	if err := d.Ack(t.Context()); !errors.Is(err, refused) {
		t.Fatalf("Ack: %v, want the refusal", err)
	}
	if acks, wpis := f.sent(); acks != 1 || wpis != 0 {
		t.Fatalf("sent %d acks and %d InProgress, want one ack", acks, wpis)
	}
	// Nor is one on a context the caller cancelled.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	f.errs = []error{nats.ErrTimeout}
	if err := d.Ack(ctx); err == nil {
		t.Fatal("Ack on a cancelled context succeeded")
	}
	if acks, _ := f.sent(); acks != 2 {
		t.Fatalf("sent %d acks, want 2", acks)
	}
	if err := d.Ack(t.Context()); err != nil {
		t.Fatalf("Ack: %v", err)
	}
	assertAckedOnce(t, q)
	// No ack was retried: none is counted.
	assertAcksRetried(t, m, "run1", 0, 0)
}

// An ack that keeps failing, while the server takes no InProgress either,
// is given up within the ack window; the slice is then redelivered (the
// ledger makes that delivery an ack without work: pkg/writer).
func TestAckRetriesEndWithTheWindow(t *testing.T) {
	cfg, m := counted(testConfig(testenv.NATS(t)))
	q := connect(t, cfg)
	publish(t, q, newSlice("run1", 1))
	d := next(t, q, 5*time.Second)
	f := flaky(d, &flakyAcker{always: true, errs: []error{nats.ErrTimeout}})
	err := d.Ack(t.Context())
	if !errors.Is(err, nats.ErrTimeout) {
		t.Fatalf("Ack: %v, want a timeout", err)
	}
	if acks, _ := f.sent(); acks < 1 || acks > maxAckTries {
		t.Fatalf("sent %d acks, want 1 to %d", acks, maxAckTries)
	}
	assertAcksRetried(t, m, "run1", 0, 1)
	again := next(t, q, 5*time.Second)
	if again.Slice.ID != d.Slice.ID || again.NumDelivered != 2 {
		t.Fatalf("redelivery: %s delivery %d", again.Slice.ID, again.NumDelivered)
	}
	if err := again.Ack(t.Context()); err != nil {
		t.Fatal(err)
	}
	assertAcksRetried(t, m, "run1", 0, 1) // the redelivery's ack met no failure
}

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nats.ErrTimeout, true},
		{fmt.Errorf("queue: ack s1: %w", nats.ErrNoResponders), true},
		{context.DeadlineExceeded, true},
		{nats.ErrConnectionReconnecting, true},
		{nats.ErrDisconnected, true},
		{&natsjs.APIError{Code: 503}, true},
		{&natsjs.APIError{Code: 400, ErrorCode: 10009}, true}, // not the leader
		{&natsjs.APIError{Code: 400, ErrorCode: 10014}, false},
		{nats.ErrConnectionClosed, false},
		{context.Canceled, false},
		{errors.New("nats: timeout"), false}, // the text is not the type
		{queue.ErrFinished, false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
