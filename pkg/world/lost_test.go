package world

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestCopyLostToAnOutage: a copy whose connection the server drops under a
// handler is an outage, not the tool crashing: Copy returns the failure as
// an error (a caller then tells its model nothing about the record), while
// the step still reads as a crash, with the cause as a value.
func TestCopyLostToAnOutage(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	c, problems, err := contract.Load(filepath.Join(filepath.Dir(file), "..", "..", "examples", "retail"))
	if err != nil || len(problems) > 0 {
		t.Fatalf("load: %v %v", err, problems)
	}
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url := testenv.PostgresURL(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// Only a superuser may end another role's session.
	admin, err := pgxpool.New(ctx, testenv.AdminURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	w, err := Open(ctx, pool, c, progs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"order_id": "#W1001"}
	var r CallResult
	err = w.Copy(ctx, func(cp *Copy) error {
		if first := cp.Call(ctx, "get_order_details", args); !first.OK {
			t.Fatalf("the first call: %+v", first)
		}
		if _, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, cp.c.conn.PgConn().PID()); err != nil {
			t.Fatal(err)
		}
		r = cp.Call(ctx, "get_order_details", args)
		return nil
	})
	if err == nil {
		t.Fatal("a copy lost under a handler returned no error")
	}
	if !r.Crash || r.Err == nil {
		t.Errorf("the call that met the outage: %+v", r)
	}
	// The world is usable again afterwards.
	if err := w.Copy(ctx, func(cp *Copy) error {
		if r := cp.Call(ctx, "get_order_details", args); !r.OK {
			t.Errorf("after the outage: %+v", r)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
