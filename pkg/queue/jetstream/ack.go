package jetstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/suitegen/suitegen/pkg/outage"
)

// Bounds of an ack's retries (Delivery.Ack). A JetStream cluster elects a
// consumer leader in seconds; the backoff reaches its cap well within that,
// and the ack window bounds the whole.
const (
	maxAckTries     = 10
	ackBackoffFirst = 100 * time.Millisecond
	ackBackoffMax   = 2 * time.Second
	// minAckTry is the least time worth giving one more try.
	minAckTry = 50 * time.Millisecond
)

// ackRetrying sends the double ack, and again after each transient failure
// while tries and the ack window last (Ack says why).
func (d *Delivery) ackRetrying(ctx context.Context) (final error) {
	// met: a transient failure made this ack one to retry, whether or not
	// tries, the window or the caller then allowed another.
	met := false
	defer func() {
		if met && d.q.cfg.Acks != nil {
			d.q.cfg.Acks.AckRetried(d.Slice.Run, final == nil)
		}
	}()
	wait := ackBackoffFirst
	timeout := d.q.cfg.OpTimeout
	for try := 1; ; try++ {
		err := d.try(ctx, timeout, "+ACK")
		if err == nil {
			if try > 1 {
				d.q.log.Info("ack confirmed on a later try", "slice", d.name(), "tries", try)
			}
			return nil
		}
		if ctx.Err() != nil || !transient(err) {
			return err
		}
		met = true
		if try == maxAckTries {
			return fmt.Errorf("not confirmed in %d tries: %w", try, err)
		}
		pause := jitter(wait)
		wait = min(2*wait, ackBackoffMax)
		if d.windowLeft()-pause < minAckTry {
			return fmt.Errorf("not confirmed in %d tries within the ack wait: %w", try, err)
		}
		d.q.log.Warn("ack not confirmed; sending it again", "slice", d.name(), "try", try, "err", err, "next", pause)
		if !d.pause(ctx, pause) {
			return err
		}
		// An InProgress the server takes restarts the window, so the slice
		// stays this delivery's while the ack is tried again. One that fails
		// meets what the ack met; the ack is tried all the same.
		ectx, cancel := context.WithTimeout(ctx, min(d.q.cfg.OpTimeout, d.windowLeft()))
		_ = d.extend(ectx)
		cancel()
		timeout = min(d.q.cfg.OpTimeout, d.windowLeft())
		if timeout < minAckTry {
			return fmt.Errorf("not confirmed in %d tries within the ack wait: %w", try, err)
		}
	}
}

// try sends one acknowledgement, waiting at most timeout for the answer.
func (d *Delivery) try(ctx context.Context, timeout time.Duration, body string) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return d.ack.send(ctx, body)
}

// windowLeft is how long the server will surely still wait for this
// delivery's ack before it redelivers the slice.
func (d *Delivery) windowLeft() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return time.Until(d.extended.Add(d.q.cfg.AckWait))
}

// pause waits for p; false when ctx ended or the Queue closed first.
func (d *Delivery) pause(ctx context.Context, p time.Duration) bool {
	t := time.NewTimer(p)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-d.q.closed:
		return false
	}
}

// jitter is a wait between half of w and w, so writers that lost their acks
// to one election do not ask again in step.
func jitter(w time.Duration) time.Duration {
	return w/2 + rand.N(w/2+1)
}

// transient reports an acknowledgement failure that sending it again can
// get past: the ack may not have reached a consumer leader, or its answer
// was lost. That is an attempt's time running out (context.DeadlineExceeded,
// nats.ErrTimeout), nobody answering the reply subject while the consumer
// has no leader (nats.ErrNoResponders), a connection down or reconnecting,
// or a JetStream cluster that is not ready: the queue's outages as outage.Is
// classifies them, by type. A closed connection is not: this process is
// closing the Queue.
func transient(err error) bool {
	if errors.Is(err, nats.ErrConnectionClosed) {
		return false
	}
	return errors.Is(err, context.DeadlineExceeded) || outage.Is(err) || unavailable(err)
}
