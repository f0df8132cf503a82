package script

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.starlark.net/starlark"
)

// checkEvery is how many steps pass between checks of the step and depth
// limits. Each Starlark call runs at least one step, so the depth limit is
// overshot by at most this many frames.
const checkEvery = 16

const localState = "suitegen.script.call"

// callState is the per-call bookkeeping every builtin reaches through the
// thread.
type callState struct {
	p       *Programs
	ctx     context.Context
	parent  context.Context // the caller's context, to tell a cancel from the wall-clock limit
	db      DB
	alloc   int64
	queries int // database round trips so far
	wrote   bool
	wants   map[string]Want        // the noted operations' last sides, by place (want.go)
	reason  atomic.Pointer[string] // the limit that stopped the call, first wins
}

func stateOf(th *starlark.Thread) *callState {
	st, _ := th.Local(localState).(*callState)
	return st
}

// newThread prepares a thread for one call. stop must be called when the call
// ends; it stops the timer and the context watch.
func (p *Programs) newThread(ctx context.Context, name string) (*starlark.Thread, *callState, func()) {
	st := &callState{p: p}
	parent := ctx
	ctx, cancel := context.WithTimeout(parent, p.opts.Timeout)
	st.ctx = ctx
	th := &starlark.Thread{
		Name:  name,
		Print: func(*starlark.Thread, string) {},
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, errors.New("load is only allowed at the top level of a file")
		},
	}
	th.SetLocal(localState, st)
	maxSteps := p.opts.MaxSteps
	maxDepth := p.opts.MaxDepth
	th.OnMaxSteps = func(t *starlark.Thread) {
		if t.Steps >= maxSteps {
			st.stop(t, fmt.Sprintf("step limit exceeded (%d steps)", maxSteps))
			return
		}
		if t.CallStackDepth() > maxDepth {
			st.stop(t, fmt.Sprintf("call depth limit exceeded (%d frames)", maxDepth))
			return
		}
		t.SetMaxExecutionSteps(min(t.Steps+checkEvery, maxSteps))
	}
	th.SetMaxExecutionSteps(min(checkEvery, maxSteps))
	st.parent = parent
	done := context.AfterFunc(ctx, func() { st.stop(th, st.expiry()) })
	return th, st, func() { done(); cancel() }
}

// expiry says why the call's context ended: the caller cancelled, or the
// call ran past its wall-clock limit.
func (st *callState) expiry() string {
	if err := st.parent.Err(); err != nil {
		return "cancelled: " + context.Cause(st.parent).Error()
	}
	return fmt.Sprintf("wall-clock limit exceeded (%s)", st.p.opts.Timeout)
}

// stop records why the call must end and cancels the thread.
func (st *callState) stop(th *starlark.Thread, reason string) {
	st.reason.CompareAndSwap(nil, &reason)
	th.Cancel(reason)
}

// limit records a limit hit inside a builtin and returns the error the
// builtin must return.
func (st *callState) limit(th *starlark.Thread, reason string) error {
	st.stop(th, reason)
	return fmt.Errorf("%w: %s", ErrLimit, reason)
}

// roundTrip counts one database round trip against the call's MaxQueries.
// Counting work rather than time keeps a handler that queries in a loop
// bounded the same way on an idle machine and a busy one.
func (st *callState) roundTrip(th *starlark.Thread) error {
	st.queries++
	if st.queries > st.p.opts.MaxQueries {
		return st.limit(th, fmt.Sprintf("query limit exceeded (%d queries)", st.p.opts.MaxQueries))
	}
	return nil
}

// charge counts n bytes against the call's allocation budget before an
// operation allocates them.
func (st *callState) charge(th *starlark.Thread, n int64) error {
	if st == nil || n <= 0 {
		return nil
	}
	st.alloc += n
	if n < 0 || st.alloc > st.p.opts.MaxAlloc {
		return st.limit(th, fmt.Sprintf("allocation limit exceeded (%d bytes)", st.p.opts.MaxAlloc))
	}
	return nil
}

func (st *callState) remaining() int64 {
	if st == nil {
		return DefaultMaxAlloc
	}
	return st.p.opts.MaxAlloc - st.alloc
}

// classify turns an error out of Starlark into a *Refusal or a *Crash.
func (st *callState) classify(err error) error {
	if st.reason.Load() == nil && st.ctx != nil && st.ctx.Err() != nil {
		// The deadline passed inside a builtin (a query cancelled mid-flight
		// says "conn closed"), which can return before the context watch has
		// recorded why: the limit is the reason, not the query's error.
		r := st.expiry()
		st.reason.CompareAndSwap(nil, &r)
	}
	if r := st.reason.Load(); r != nil {
		return &Crash{Reason: *r, Err: fmt.Errorf("%w: %s", ErrLimit, *r)}
	}
	var ref *Refusal
	if errors.As(err, &ref) {
		return ref
	}
	reason := err.Error()
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		reason = ee.Msg
		// The innermost frame in the contract's code: a builtin's frame
		// (db.one, the % operator) has no line of its own.
		for i := 0; i < len(ee.CallStack); i++ {
			if fr := ee.CallStack.At(i); fr.Pos.IsValid() && fr.Pos.Line > 0 {
				reason = fmt.Sprintf("%s: %s", fr.Pos, ee.Msg)
				break
			}
		}
	}
	return &Crash{Reason: reason, Err: err}
}
