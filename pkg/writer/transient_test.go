package writer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestTransient(t *testing.T) {
	yes := []error{
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "08006"},
		fmt.Errorf("copy: %w", io.ErrUnexpectedEOF),
		context.DeadlineExceeded,
		errors.New("failed to connect to `user=postgres database=suitegen`: 127.0.0.1:5432: dial error"),
	}
	no := []error{
		nil,
		&pgconn.PgError{Code: "23505", Message: "duplicate key value"},
		&pgconn.PgError{Code: "42P01", Message: "relation does not exist"},
		errors.New("handler refused: no such trip"),
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
	if !transientText("world: copy: FATAL: terminating connection due to administrator command (SQLSTATE 57P01)") {
		t.Error("a world-error refusal quoting 57P01 is not recognised")
	}
	if transientText("Crash: wall-clock limit exceeded (2s) (then copy unusable: conn closed)") {
		t.Error("a handler over its time limit is taken for an outage")
	}
	if transientText("check broken: ride R-1 is not cancelled") {
		t.Error("a check failure is taken for an outage")
	}
}
