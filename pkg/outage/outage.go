// Package outage tells an outage of the servers suitegen depends on (the
// PostgreSQL ledger and worlds, the NATS JetStream queue) from every other
// failure. An outage says nothing about the work that met it: the same work
// succeeds once the servers answer again, so the caller waits and retries
// instead of blaming (or spending) the work.
//
// The classification is by the error's behaviour, never its text: the
// driver's own retry verdict, SQLSTATE classes, network errors, and what a
// driver that classifies its own errors marks as an outage (Error: the
// queue's NATS connection states and JetStream API codes).
package outage

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/suitegen/suitegen/pkg/script"
)

// Is reports whether err is an outage: the database or the queue out of
// reach, shutting down, starting up, failing over or out of resources, or a
// transaction the server aborted only because of concurrent ones. A handler
// stopped by one of its Starlark limits is the contract's doing, whatever the
// connection did after, and never an outage; nor is the end of a context,
// whatever it interrupted: only its owner knows whether it set the deadline
// for the server's sake or its own.
func Is(err error) bool {
	if err == nil || errors.Is(err, script.ErrLimit) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return Code(pgErr.Code)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, pgconn.ErrConnClosed) {
		return true
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) {
		return true
	}
	var marked *Error
	return errors.As(err, &marked)
}

// Error is an error its source has classified as an outage. A driver that
// knows its own errors wraps its outages in it (the NATS queue: a
// connection down or reconnecting, a cluster electing), so that Is need not
// know every driver, and a process that does not link one does not link it
// for Is.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Code reports an SQLSTATE of an outage: connection exceptions (class 08),
// the server shutting down, starting up or ending the session (57P01,
// 57P02, 57P03, 57P05), insufficient resources (class 53: disk full, out of
// memory, too many connections), a write sent to a server that has become a
// standby (25006, during a failover), and transactions aborted by concurrent
// ones (40001 serialization failure, 40P01 deadlock), which succeed when
// tried again.
func Code(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "57P05", "25006", "40001", "40P01":
		return true
	}
	return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53")
}
