package outage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/suitegen/suitegen/pkg/outage"
	"github.com/suitegen/suitegen/pkg/script"
)

func TestIs(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	yes := []error{
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"},
		&pgconn.PgError{Code: "08006"},
		&pgconn.PgError{Code: "53300", Message: "too many connections"},
		&pgconn.PgError{Code: "53100", Message: "disk full"},
		&pgconn.PgError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"},
		&pgconn.PgError{Code: "40001"},
		&pgconn.PgError{Code: "40P01"},
		fmt.Errorf("copy: %w", io.ErrUnexpectedEOF),
		fmt.Errorf("copy unusable: %w", &pgconn.PgError{Code: "57P01"}),
		&script.Crash{Reason: "db failed", Err: fmt.Errorf("query: %w", io.ErrUnexpectedEOF)},
		fmt.Errorf("copy unusable: %w", pgconn.ErrConnClosed),
		fmt.Errorf("ping: %w", refused),
		// A driver's own verdict (the queue marks its NATS outages).
		fmt.Errorf("queue: fetch: %w", &outage.Error{Err: errors.New("nats: connection reconnecting")}),
	}
	no := []error{
		nil,
		&pgconn.PgError{Code: "23505", Message: "duplicate key value"},
		&pgconn.PgError{Code: "42P01", Message: "relation does not exist"},
		&pgconn.PgError{Code: "57014", Message: "canceling statement due to user request"},
		errors.New("handler refused: no such trip"),
		// Words alone are not an outage: only the error's type says so.
		errors.New("failed to connect: conn closed (SQLSTATE 57P01)"),
		errors.New("nats: no responders available for request"),
		errors.New("queue: stream not found"),
		// The end of a context is its owner's to judge.
		context.DeadlineExceeded,
		context.Canceled,
		// A handler over its time limit takes the copy's connection with it:
		// the contract's doing, not an outage.
		&script.Crash{Reason: "wall-clock limit exceeded (2s)", Err: errors.Join(fmt.Errorf("%w: wall-clock", script.ErrLimit), io.ErrUnexpectedEOF)},
		&script.Refusal{Message: "no such order"},
	}
	for _, err := range yes {
		if !outage.Is(err) {
			t.Errorf("Is(%v) = false, want true", err)
		}
	}
	for _, err := range no {
		if outage.Is(err) {
			t.Errorf("Is(%v) = true, want false", err)
		}
	}
}

// TestUp: a Signal wakes every Wait before it, none after it, and a nil Up
// never wakes.
func TestUp(t *testing.T) {
	var u outage.Up
	a, b := u.Wait(), u.Wait()
	u.Signal()
	for _, c := range []<-chan struct{}{a, b} {
		select {
		case <-c:
		default:
			t.Fatal("a Wait before Signal was not woken")
		}
	}
	select {
	case <-u.Wait():
		t.Fatal("a Wait after Signal was woken")
	default:
	}
	var none *outage.Up
	none.Signal()
	if none.Wait() != nil {
		t.Fatal("a nil Up gave a channel")
	}
}

// TestJitter: a wait is drawn between half and all of it.
func TestJitter(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		r    float64
		want time.Duration
	}{{4 * time.Second, 0, 2 * time.Second}, {4 * time.Second, 0.5, 3 * time.Second}, {4 * time.Second, 0.999999, 4 * time.Second}, {time.Nanosecond, 0.5, 0}} {
		if got := outage.Jitter(c.d, c.r); got.Round(time.Millisecond) != c.want.Round(time.Millisecond) || got > c.d || got < c.d/2 {
			t.Errorf("Jitter(%s, %v) = %s, want %s", c.d, c.r, got, c.want)
		}
	}
}
