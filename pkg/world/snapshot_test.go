package world

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// DiffSnapshots decodes only the tables that changed and must say exactly
// what Diff of the full states says.
func TestDiffSnapshotsMatchesDiff(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	err := w.Copy(ctx, func(cp *Copy) error {
		s0, err := cp.State(ctx)
		if err != nil {
			return err
		}
		n0, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		if d, err := DiffSnapshots(n0, n0); err != nil || !d.Empty() {
			t.Errorf("a snapshot against itself: %+v %v", d, err)
		}
		if _, err := cp.Exec(ctx, "UPDATE orders SET status = 'cancelled' WHERE id = '#W1'"); err != nil {
			return err
		}
		if _, err := cp.Exec(ctx, "INSERT INTO users (user_id, name, since) VALUES ('u9', 'Ez', '2021-01-01')"); err != nil {
			return err
		}
		s1, err := cp.State(ctx)
		if err != nil {
			return err
		}
		n1, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		got, err := DiffSnapshots(n0, n1)
		if err != nil {
			return err
		}
		want := Diff(s0, s1)
		if want.Empty() || !reflect.DeepEqual(got, want) {
			t.Errorf("DiffSnapshots %+v, Diff %+v", got, want)
		}
		// ChangedTables names exactly the tables the diff has, decoding none.
		var tables []string
		for _, td := range want.Tables {
			tables = append(tables, td.Table)
		}
		if ct := ChangedTables(n0, n1); !reflect.DeepEqual(ct, tables) {
			t.Errorf("ChangedTables %v, the diff's tables %v", ct, tables)
		}
		if ct := ChangedTables(n1, n1); len(ct) != 0 {
			t.Errorf("ChangedTables of a snapshot against itself: %v", ct)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// ExecBatchSnapshot is ExecBatch then Snapshot in one round trip: the same
// snapshot, and a failing statement still named by index with nothing kept
// and the copy usable.
func TestExecBatchSnapshot(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	setup := []scenario.Statement{
		{SQL: "UPDATE orders SET status = 'processed' WHERE id = '#W1'"},
		{SQL: "INSERT INTO users (user_id, name, since) VALUES ($1, $2, $3)", Args: []any{"u3", "Cy", "2020-01-01"}},
	}
	var want Snapshot
	if err := w.Copy(ctx, func(cp *Copy) error {
		if err := cp.ExecBatch(ctx, setup); err != nil {
			return err
		}
		var err error
		want, err = cp.Snapshot(ctx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, warm := range []bool{false, true} { // statements new to the connection, then known
		if err := w.Copy(ctx, func(cp *Copy) error {
			got, err := cp.ExecBatchSnapshot(ctx, setup)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("warm=%v: ExecBatchSnapshot %+v, ExecBatch+Snapshot %+v", warm, got, want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Copy(ctx, func(cp *Copy) error {
		_, err := cp.ExecBatchSnapshot(ctx, append(setup, scenario.Statement{SQL: "INSERT INTO users (user_id, name) VALUES ('u4', 'Di')"}))
		var se *scenario.SetupError
		if !errors.As(err, &se) || se.Index != 2 {
			t.Fatalf("want statement 3 to fail, got %v", err)
		}
		rows, err := cp.Query(ctx, "SELECT (SELECT status FROM orders WHERE id = '#W1'), (SELECT count(*) FROM users)")
		if err != nil || rows[0].Values[0] != "pending" || rows[0].Values[1] != int64(2) {
			t.Fatalf("all or nothing: %v %v", rows, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A snapshot renders only what the copy's transaction changed: an
// untouched table is the frozen world's rows, learnt from the first
// snapshots; a table the copy only added to is its own rows over the frozen
// ones; a table whose frozen rows changed is rendered whole. Diffs of such
// snapshots are those of full renderings.
func TestSnapshotRendersWhatChanged(t *testing.T) {
	pool := testenv.Postgres(t)
	c := newContract(t, seeds)
	w := open(t, pool, c, script.Options{})
	ctx := context.Background()
	known := func() bool {
		w.frozen.mu.Lock()
		defer w.frozen.mu.Unlock()
		fs := w.frozen.bySchema[w.schema]
		return fs != nil && fs.complete
	}
	change := func(cp *Copy) error {
		if _, err := cp.Exec(ctx, "UPDATE orders SET status = 'cancelled' WHERE id = '#W1'"); err != nil {
			return err
		}
		if _, err := cp.Exec(ctx, "INSERT INTO users (user_id, name, since) VALUES ('u9', 'Ez', '2021-01-01')"); err != nil {
			return err
		}
		// A statement that failed after writing is rolled back: users
		// keeps its other rows (the table may count as touched anyway).
		if _, err := cp.Exec(ctx, "INSERT INTO users (user_id, name, since) VALUES ('u1', 'Di', '2020-01-01')"); err == nil {
			t.Error("an insert of a user_id already there should fail")
		}
		return nil
	}
	if !known() {
		t.Fatal("a world just opened should know its frozen rows")
	}
	// Forgotten, they are learnt from the first untouched snapshot.
	w.frozen.mu.Lock()
	w.frozen.bySchema = nil
	w.frozen.mu.Unlock()
	var full State // the changed copy, every table rendered
	if err := w.Copy(ctx, func(cp *Copy) error {
		if err := change(cp); err != nil {
			return err
		}
		var err error
		full, err = cp.State(ctx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if known() {
		t.Fatal("a snapshot with touched tables cannot teach their frozen rows")
	}
	// The next copy (likely on the same session, right after) starts with
	// none of the last one's row counts: every table is untouched.
	var frozen State
	var frozenSnap Snapshot
	if err := w.Copy(ctx, func(cp *Copy) error {
		var err error
		if frozen, err = cp.State(ctx); err != nil {
			return err
		}
		frozenSnap, err = cp.Snapshot(ctx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !known() {
		t.Fatal("a snapshot of an untouched copy should teach every table's frozen rows")
	}
	if err := w.Copy(ctx, func(cp *Copy) error {
		if err := change(cp); err != nil {
			return err
		}
		snap, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		for _, tb := range snap.tables {
			switch tb.name {
			case "orders": // a frozen row changed
				if !tb.touched || tb.layered || !strings.Contains(tb.doc, "cancelled") {
					t.Errorf("orders: touched %v layered %v doc %s", tb.touched, tb.layered, tb.doc)
				}
			case "users": // only added to
				if !tb.touched || !tb.layered || !strings.Contains(tb.ours, `"u9"`) || strings.Contains(tb.ours, `"u1"`) {
					t.Errorf("users: touched %v layered %v ours %s", tb.touched, tb.layered, tb.ours)
				}
			default:
				if tb.touched {
					t.Errorf("table %s: touched", tb.name)
				}
			}
		}
		got, err := DiffSnapshots(frozenSnap, snap)
		if err != nil {
			return err
		}
		if want := Diff(frozen, full); !reflect.DeepEqual(got, want) {
			t.Errorf("DiffSnapshots %+v, Diff of full renderings %+v", got, want)
		}
		if back, err := DiffSnapshots(snap, frozenSnap); err != nil || !reflect.DeepEqual(back, Diff(full, frozen)) {
			t.Errorf("DiffSnapshots back %+v (%v), Diff of full renderings %+v", back, err, Diff(full, frozen))
		}
		if ct := ChangedTables(frozenSnap, snap); !reflect.DeepEqual(ct, []string{"users", "orders"}) {
			t.Errorf("ChangedTables %v", ct)
		}
		if ct := ChangedTables(snap, snap); len(ct) != 0 {
			t.Errorf("ChangedTables of a snapshot against itself: %v", ct)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
