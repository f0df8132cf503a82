package writer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/suitegen/suitegen/pkg/script"
)

func TestTransient(t *testing.T) {
	yes := []error{
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "08006"},
		fmt.Errorf("copy: %w", io.ErrUnexpectedEOF),
		context.DeadlineExceeded,
		fmt.Errorf("copy unusable: %w", &pgconn.PgError{Code: "57P01"}),
		&script.Crash{Reason: "db failed", Err: fmt.Errorf("query: %w", io.ErrUnexpectedEOF)},
		fmt.Errorf("copy unusable: %w", pgconn.ErrConnClosed),
	}
	no := []error{
		nil,
		&pgconn.PgError{Code: "23505", Message: "duplicate key value"},
		&pgconn.PgError{Code: "42P01", Message: "relation does not exist"},
		errors.New("handler refused: no such trip"),
		// Words alone are not an outage: only the error's type says so.
		errors.New("failed to connect: conn closed (SQLSTATE 57P01)"),
		// A handler over its time limit takes the copy's connection with it:
		// the contract's doing, not an outage.
		&script.Crash{Reason: "wall-clock limit exceeded (2s)", Err: errors.Join(fmt.Errorf("%w: wall-clock", script.ErrLimit), io.ErrUnexpectedEOF)},
		&script.Refusal{Message: "no such order"},
	}
	for _, err := range yes {
		if !transient(err) {
			t.Errorf("transient(%v) = false, want true", err)
		}
	}
	for _, err := range no {
		if transient(err) {
			t.Errorf("transient(%v) = true, want false", err)
		}
	}
}
