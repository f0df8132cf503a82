package writer

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/suitegen/suitegen/pkg/script"
)

// An outage of the ledger or the world's database is not the model's
// business: a rehearsal, proof or journal write that fails because the
// server went away must not reach the conversation, where a model (and the
// builtin) would take it as the record failing and write something else.
// The session stops instead and the slice is released; its redelivery picks
// up from the journal and writes what a clean run writes.

// transient reports an error of the connection or the server's availability
// rather than of the statement. A handler stopped by one of its limits is
// the contract's doing, whatever the connection did after.
func transient(err error) bool {
	if err == nil || errors.Is(err, script.ErrLimit) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, pgconn.ErrConnClosed) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return transientCode(pgErr.Code)
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}

// transientCode: connection exceptions (class 08), the server shutting
// down or starting up (57P01-57P03), and too many connections (53300).
func transientCode(code string) bool {
	return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03" || code == "53300"
}

// outageError ends a session on an infrastructure failure.
type outageError struct{ err error }

func (e *outageError) Error() string {
	return "writer: database unavailable; releasing the slice: " + e.err.Error()
}
func (e *outageError) Unwrap() error { return e.err }
