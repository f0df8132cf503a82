package jetstream

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/suitegen/suitegen/pkg/queue"
)

// Delivery is one delivery of one slice to this process. Finish it exactly
// once with Ack, Nak or Term; until then keep it alive with InProgress or
// Heartbeat, or the server redelivers it after AckWait.
type Delivery struct {
	// Slice is the decoded work. Whether its run is known is the caller's
	// decision (Slice.Run).
	Slice queue.Slice
	// NumDelivered counts deliveries of this slice, this one included (1 on
	// the first).
	NumDelivered uint64
	// StreamSeq is the slice's sequence in the stream (as DeadLetters reports).
	StreamSeq uint64

	q *Queue
	// ack sends the acknowledgements, to the message's reply subject.
	ack acker

	mu       sync.Mutex
	finished bool
	hbStop   func()
	// extended is when the server last took this delivery's ack wait from
	// the start (its receipt, then each InProgress the server answered), as
	// sent: the ack window ends no earlier than extended + AckWait.
	extended time.Time
}

// acker sends one acknowledgement of a delivery (its body: +ACK, +WPI,
// -NAK, +TERM) and returns once the server answered it.
type acker interface {
	send(ctx context.Context, body string) error
}

// replyAcker acknowledges by a request on the message's reply subject, which
// reaches whichever server leads the consumer.
type replyAcker struct {
	nc    *nats.Conn
	reply string
}

func (a replyAcker) send(ctx context.Context, body string) error {
	_, err := a.nc.RequestWithContext(ctx, a.reply, []byte(body))
	return err
}

// Last reports whether this is the final delivery MaxDeliver allows: if the
// work fails now, record the slice as dead in the ledger, then Term it.
func (d *Delivery) Last() bool {
	return d.NumDelivered >= d.q.maxDeliver
}

// InProgress resets the server's ack-wait timer for this delivery and waits
// for the server to take it.
func (d *Delivery) InProgress(ctx context.Context) (err error) {
	defer func() { err = classify(err) }()
	d.mu.Lock()
	finished := d.finished
	d.mu.Unlock()
	if finished {
		return queue.ErrFinished
	}
	if err := d.extend(ctx); err != nil {
		return fmt.Errorf("queue: in progress %s: %w", d.name(), err)
	}
	return nil
}

// extend sends InProgress and, once the server answered, moves the start of
// the ack window to when it was sent.
func (d *Delivery) extend(ctx context.Context) error {
	sent := time.Now()
	if err := d.request(ctx, "+WPI"); err != nil {
		return err
	}
	d.mu.Lock()
	d.extended = sent
	d.mu.Unlock()
	return nil
}

// Ack reports the slice done and waits for the server's confirmation (a
// double ack), so a nil error means it will not be redelivered. Call it
// only after the slice's ledger writes committed.
//
// An ack that meets a transient failure (see transient: no answer in time,
// no responders, a connection reconnecting, a JetStream cluster electing the
// consumer's leader) is sent again with jittered backoff, at most
// maxAckTries times in all and only while the delivery's ack window lasts;
// before each retry an InProgress, when the server takes it, restarts the
// window. A committed slice whose ack is lost is redelivered after AckWait
// and spends one of its MaxDeliver deliveries on work already done. Sending
// the ack again is safe: acks match by stream sequence, and the server
// confirms an ack of a message it no longer holds, so a retry of an ack
// that landed but whose answer was lost succeeds. How each ack that met
// such a failure ended is reported to Config.Acks.
func (d *Delivery) Ack(ctx context.Context) (err error) {
	defer func() { err = classify(err) }()
	return d.finish(ctx, "ack", d.ackRetrying)
}

// Nak releases the slice for redelivery after delay (0: at once), e.g. on
// SIGTERM or a provider refusal that outlasts this process. The redelivery
// counts toward MaxDeliver.
func (d *Delivery) Nak(ctx context.Context, delay time.Duration) (err error) {
	defer func() { err = classify(err) }()
	body := "-NAK"
	if delay > 0 {
		body = fmt.Sprintf(`-NAK {"delay": %d}`, delay.Nanoseconds())
	}
	return d.finish(ctx, "nak", func(ctx context.Context) error { return d.request(ctx, body) })
}

// Term tells the server never to redeliver the slice; reason lands in the
// server's termination advisory. Use it after recording a dead slice in the
// ledger, or for a slice of a run the caller does not know.
func (d *Delivery) Term(ctx context.Context, reason string) (err error) {
	defer func() { err = classify(err) }()
	body := "+TERM"
	if r := strings.Join(strings.Fields(reason), " "); r != "" {
		body += " " + r
	}
	return d.finish(ctx, "term", func(ctx context.Context) error { return d.request(ctx, body) })
}

// Heartbeat starts a goroutine that sends InProgress every `every` (default
// AckWait/3 when every <= 0) until stop is called, ctx ends, the delivery is
// finished, or the Queue closes; after Close it starts nothing. stop waits
// for the goroutine and is safe to call more than once. Calling Heartbeat
// again replaces the previous one.
//
// A failed heartbeat is logged and the work goes on. If the slice was
// redelivered meanwhile, two writers work it; the server accepts whichever
// ack comes first (acks match by stream sequence), and the ledger's
// idempotent crediting absorbs the double work.
func (d *Delivery) Heartbeat(ctx context.Context, every time.Duration) (stop func()) {
	if every <= 0 {
		every = d.q.cfg.AckWait / 3
	}
	d.mu.Lock()
	prev := d.hbStop
	d.hbStop = nil
	d.mu.Unlock()
	if prev != nil {
		prev()
	}
	// Hold the lock until hbStop is set, so a concurrent Ack, Nak or Term
	// either sees this heartbeat and stops it, or finished before it started.
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.finished {
		return func() {}
	}

	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	started := d.q.spawn(func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-d.q.closed:
				return
			case <-tick.C:
				if err := d.InProgress(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, queue.ErrFinished) {
					d.q.log.Warn("heartbeat failed", "slice", d.name(), "err", err)
				}
			}
		}
	})
	if !started {
		cancel()
		return func() {}
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	d.hbStop = stop
	return stop
}

// finish runs one terminal acknowledgement, once, after stopping the
// heartbeat so no InProgress races behind it.
func (d *Delivery) finish(ctx context.Context, what string, send func(context.Context) error) error {
	d.mu.Lock()
	if d.finished {
		d.mu.Unlock()
		return queue.ErrFinished
	}
	d.finished = true
	stop := d.hbStop
	d.hbStop = nil
	d.mu.Unlock()
	if stop != nil {
		stop()
	}
	if err := send(ctx); err != nil {
		// The server may not have it: let the caller retry, or rely on
		// redelivery after AckWait.
		d.mu.Lock()
		d.finished = false
		d.mu.Unlock()
		return fmt.Errorf("queue: %s %s: %w", what, d.name(), err)
	}
	return nil
}

// request sends an acknowledgement and waits for the server's reply, so the
// caller knows it landed (the server answers every ack that has a reply
// subject).
func (d *Delivery) request(ctx context.Context, body string) error {
	ctx, cancel := d.q.opContext(ctx)
	defer cancel()
	return d.ack.send(ctx, body)
}

func (d *Delivery) name() string {
	if d.Slice.ID != "" {
		return d.Slice.ID
	}
	return fmt.Sprintf("seq %d", d.StreamSeq)
}

// Work is a delivery with its slice and attempt as methods: the form a
// consumer that names a delivery by what it does (a writer) takes.
type Work struct{ *Delivery }

// Slice is the delivered slice.
func (w Work) Slice() queue.Slice { return w.Delivery.Slice }

// Attempt counts deliveries of the slice, this one included.
func (w Work) Attempt() int { return int(w.NumDelivered) }
