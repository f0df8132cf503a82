package world

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/suitegen/suitegen/pkg/script"
)

// View is what sub-goal checks read: the copy's current state, read-only.
// Each query must be a single SELECT (or WITH, VALUES, TABLE) and runs inside
// a savepoint that is rolled back, so even a data-modifying WITH leaves no
// trace.
type View struct {
	cp       *Copy
	caller   any
	before   func() script.WorldView
	Messages []string // world.said: the agent's messages, in order
	row      any      // the caller's row, once read
	read     bool
}

var _ script.WorldView = (*View)(nil)

// View returns the copy as checks see it. before (may be nil) gives
// world.before; it is called only when a check reads world.before.
func (cp *Copy) View(caller any, before func() script.WorldView) *View {
	return &View{cp: cp, caller: caller, before: before}
}

// Query runs a read-only query against the copy.
func (v *View) Query(ctx context.Context, sql string, args ...any) ([]script.Row, error) {
	return v.cp.ReadQuery(ctx, sql, args...)
}

// Before is world.before, or nil.
func (v *View) Before() script.WorldView {
	if v.before == nil {
		return nil
	}
	bv := v.before()
	if b, ok := bv.(*beforeView); ok {
		return &beforeView{b: b.b, caller: v.caller} // the same caller, as the world stood before
	}
	return bv
}

// Caller is world.caller: the row of the contract's caller table whose key
// is the caller's id, as the copy holds it now; nil when the contract names
// no caller table, the scenario no caller, or no row has that key.
func (v *View) Caller(ctx context.Context) (any, error) {
	if v.read {
		return v.row, nil
	}
	row, err := callerRow(ctx, v.cp, v.caller)
	if err != nil {
		return nil, err
	}
	v.row, v.read = row, true
	return row, nil
}

// callerRow reads the caller's row from cp (see View.Caller).
func callerRow(ctx context.Context, cp *Copy, caller any) (any, error) {
	cl := cp.w.c.Caller
	if cl == nil || caller == nil {
		return nil, nil
	}
	q := fmt.Sprintf("SELECT * FROM %s WHERE %s::text = $1", pgx.Identifier{cl.Table}.Sanitize(), pgx.Identifier{cl.Key}.Sanitize())
	rows, err := cp.ReadQuery(ctx, q, fmt.Sprint(caller))
	if err != nil || len(rows) != 1 {
		return nil, err
	}
	return rows[0].Map(), nil
}

// Said is world.said.
func (v *View) Said() []string {
	if v.Messages == nil {
		return []string{}
	}
	return v.Messages
}

// ReadQuery runs a single SELECT (or WITH, VALUES, TABLE) in a savepoint that
// is always rolled back, in one round trip.
func (cp *Copy) ReadQuery(ctx context.Context, sql string, args ...any) ([]script.Row, error) {
	if cp.broken != nil {
		return nil, cp.broken
	}
	if err := cp.guard(sql, true); err != nil {
		return nil, err
	}
	sp := cp.nextSavepoint("r")
	return cp.querySavepoint(ctx, sp, sql, args, "ROLLBACK TO SAVEPOINT "+sp, "RELEASE SAVEPOINT "+sp)
}

// Before is a second copy holding the state right after setup, opened only
// when something reads it. It runs on the world's twin schema, so it never
// waits on the row locks of the main copy.
type Before struct {
	w     *World
	ctx   context.Context
	setup func(cp *Copy) error
	cp    *Copy
	err   error
}

// Pair runs setup on a fresh copy, then fn with that copy and a lazily opened
// Before (the same setup on a second copy, on its own connection). Both are
// rolled back; the whole is retried like Copy. The pool must have a second
// connection to spare whenever fn reads before.
func (w *World) Pair(ctx context.Context, setup func(cp *Copy) error, fn func(main *Copy, before *Before) error) error {
	return w.retry(ctx, func() (bool, error) {
		main, err := w.begin(ctx, w.schema)
		if err != nil {
			return retryable(err), err
		}
		defer main.end(ctx)
		b := &Before{w: w, ctx: ctx, setup: setup}
		defer b.close()
		if setup != nil {
			if err := setup(main); err != nil {
				return main.retry || retryable(err), err
			}
		}
		err = fn(main, b)
		return main.retry || b.retried() || retryable(err), err
	})
}

// Opened reports whether the before copy was opened.
func (b *Before) Opened() bool { return b.cp != nil || b.err != nil }

// Copy opens (once) and returns the before copy.
func (b *Before) Copy() (*Copy, error) {
	if b.cp != nil || b.err != nil {
		return b.cp, b.err
	}
	cp, err := b.w.begin(b.ctx, b.w.twin)
	if err != nil {
		b.err = err
		return nil, err
	}
	b.cp = cp
	if b.setup != nil {
		if err := b.setup(cp); err != nil {
			b.err = err
			return nil, err
		}
	}
	return cp, nil
}

// View returns world.before for checks: a read-only view that opens the
// before copy on its first query.
func (b *Before) View() script.WorldView { return &beforeView{b: b} }

func (b *Before) retried() bool { return b.cp != nil && b.cp.retry || retryable(b.err) }

func (b *Before) close() {
	if b.cp != nil {
		b.cp.end(b.ctx)
	}
}

type beforeView struct {
	b      *Before
	caller any
}

func (v *beforeView) Query(ctx context.Context, sql string, args ...any) ([]script.Row, error) {
	cp, err := v.b.Copy()
	if err != nil {
		return nil, errors.Join(errors.New("world.before"), err)
	}
	return cp.ReadQuery(ctx, sql, args...)
}
func (v *beforeView) Before() script.WorldView { return nil }

// Caller is world.before.caller: the caller's row as it stood after setup.
func (v *beforeView) Caller(ctx context.Context) (any, error) {
	cp, err := v.b.Copy()
	if err != nil {
		return nil, errors.Join(errors.New("world.before"), err)
	}
	return callerRow(ctx, cp, v.caller)
}
func (v *beforeView) Said() []string { return []string{} }
