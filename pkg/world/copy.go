package world

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
)

// Copy is one throwaway copy of a world: a transaction that is always rolled
// back. It belongs to one goroutine.
type Copy struct {
	w      *World
	c      *wconn
	schema string
	sp     int
	stmts  *knownStmts // statements that prepared on this session
	// opening holds BEGIN, the SET LOCALs and the uncommittable marker
	// until they can travel with the first statement; nil once the
	// transaction is open.
	opening []string
	retry   bool  // a serialization failure or deadlock was seen: the work reruns
	broken  error // the transaction cannot be used any more
	// dirty: a statement may have left something in the session that
	// outlives the transaction (a prepared statement, a dropped one of
	// ours): the session is closed rather than reused.
	dirty bool
	// st is the state of the copy's rows, for answers (answers.go).
	st state
}

// CallResult is one tool call as the world ran it.
type CallResult struct {
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"args"`
	OK      bool           `json:"ok"`
	Refused bool           `json:"refused,omitempty"`
	Crash   bool           `json:"crash,omitempty"`
	// Result is what the agent sees (a JSON string for string returns).
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Wrote    bool            `json:"wrote,omitempty"`     // the handler changed rows (ok calls only)
	Invalid  bool            `json:"invalid,omitempty"`   // refused by the params schema: the handler never ran
	ReadArgs []string        `json:"read_args,omitempty"` // which args the handler read
	// Branch is the refusal branch of the handler that refused (file:line,
	// see script.Branches); "" otherwise.
	Branch string `json:"branch,omitempty"`
	// Want is the refusal's number of the call's against the handler's
	// own (script.Want), when its branch compared the two.
	Want *script.Want `json:"want,omitempty"`
	// Err is why a crashed call stopped, as a value: a prover tells an
	// outage of the database from a bug in the contract by it.
	Err error `json:"-"`
}

// Copy runs fn on a fresh copy and rolls it back, always. The whole of fn is
// run again (a bounded number of times, with jittered backoff) when the copy
// met a serialization failure or a deadlock, so fn must not keep results of
// an earlier attempt.
func (w *World) Copy(ctx context.Context, fn func(cp *Copy) error) error {
	return w.retry(ctx, func() (bool, error) {
		cp, err := w.begin(ctx, w.schema)
		if err != nil {
			return retryable(err), err
		}
		defer cp.end(ctx)
		err = fn(cp)
		return cp.retry || retryable(err), err
	})
}

func (w *World) retry(ctx context.Context, once func() (bool, error)) error {
	for attempt := 0; ; attempt++ {
		again, err := once()
		if !again || attempt >= w.opts.MaxRetries {
			if again && err == nil {
				err = fmt.Errorf("world %s: copy kept meeting serialization failures or deadlocks", w.schema)
			}
			return err
		}
		backoff := time.Duration(1<<min(attempt, 6)) * time.Millisecond
		backoff += rand.N(backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// uncommittable is the first statement of every copy: its row's deferred
// trigger fails any commit (pkg/migrate, 0030_worlds.sql), so whatever a
// copy is sent, COMMIT included, its transaction can only roll back.
const uncommittable = "INSERT INTO suitegen_copy.uncommittable DEFAULT VALUES"

// begin prepares a copy on schema, in a session of the world's own role.
// Nothing is sent yet: BEGIN, the SET LOCALs and the uncommittable marker
// travel with the copy's first statement, and a copy that sends nothing
// costs no round trip at all.
func (w *World) begin(ctx context.Context, schema string) (*Copy, error) {
	c, err := w.conns.acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("world %s: %w", w.schema, err)
	}
	return &Copy{w: w, c: c, schema: schema, stmts: c.stmts, st: startState(w, schema), opening: []string{
		"BEGIN",
		"SET LOCAL search_path TO " + schema,
		"SET LOCAL statement_timeout = " + strconv.FormatInt(w.opts.StatementTimeout.Milliseconds(), 10),
		"SET LOCAL TimeZone = 'UTC'",
		uncommittable,
	}}, nil
}

func (cp *Copy) end(ctx context.Context) {
	keep := !cp.dirty
	if cp.opening == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		// The session's row counters (which say what a snapshot must
		// render, see stateSQL) keep this transaction's counts until they
		// are flushed, by default at most once a second: flushed now, the
		// next copy on this session starts with none.
		if _, err := cp.c.conn.Exec(ctx, "ROLLBACK; SELECT pg_catalog.pg_stat_force_next_flush()"); err != nil {
			keep = false // never hand back a session in a transaction
		}
	}
	cp.w.conns.release(cp.c, keep)
	cp.broken = errors.New("copy is closed")
}

// bound is ctx with the copy's wall-clock deadline for one round trip.
func (cp *Copy) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, cp.w.opts.Deadline)
}

// guard applies the statement guard (guard.go), unless the world skips it.
func (cp *Copy) guard(sql string, readOnly bool) error {
	if cp.w.opts.SkipGuard {
		return nil
	}
	return checkSQL(sql, readOnly)
}

// simple sends sql (no parameters) with the simple protocol, opening the
// transaction first if this is the copy's first statement.
func (cp *Copy) simple(ctx context.Context, sql string) error {
	if cp.opening != nil {
		sql = strings.Join(cp.opening, "; ") + "; " + sql
		cp.opening = nil // from here on a transaction is open (or the copy is broken)
	}
	ctx, cancel := cp.bound(ctx)
	defer cancel()
	_, err := cp.c.conn.Exec(ctx, sql)
	return cp.note(err)
}

// opened returns b with the transaction's opening statements in front when
// nothing was sent yet. Every statement of ours in b is already prepared
// under its own name (see send), so pgx prepares nothing of ours before the
// batch runs and BEGIN and the SET LOCALs can travel in the same round trip.
func (cp *Copy) opened(b *pgx.Batch) *pgx.Batch {
	if cp.opening == nil {
		return b
	}
	qs := make([]*pgx.QueuedQuery, 0, len(cp.opening)+len(b.QueuedQueries))
	for _, sql := range cp.opening {
		qs = append(qs, &pgx.QueuedQuery{SQL: sql})
	}
	cp.opening = nil
	return &pgx.Batch{QueuedQueries: append(qs, b.QueuedQueries...)}
}

// World is the world this is a copy of.
func (cp *Copy) World() *World { return cp.w }

// note records what err says about the copy: a serialization failure or
// deadlock reruns it; a missing or clashing prepared statement means
// something changed the session's statements under us.
func (cp *Copy) note(err error) error {
	if retryable(err) {
		cp.retry = true
	}
	if isCode(err, "26000") || isCode(err, "42P05") || cp.c.conn.IsClosed() {
		cp.dirty = true
	}
	return err
}

// sawTag records the command tag of a statement a copy was given: anything
// but a query or a row change may have touched the session itself.
func (cp *Copy) sawTag(ct pgconn.CommandTag) {
	if !(ct.Select() || ct.Insert() || ct.Update() || ct.Delete() || strings.HasPrefix(ct.String(), "MERGE")) {
		cp.dirty = true
	}
}

func (cp *Copy) nextSavepoint(prefix string) string {
	cp.sp++
	return prefix + strconv.Itoa(cp.sp)
}

// pgArgs sends dict and list parameters as JSON text, which Postgres types
// from the statement (jsonb, json or text).
func pgArgs(args []any) []any {
	var out []any
	for i, a := range args {
		if j, ok := a.(script.JSONParam); ok {
			if out == nil {
				out = append([]any(nil), args...)
			}
			out[i] = string(j)
		}
	}
	if out == nil {
		return args
	}
	return out
}

// rollbackTo undoes everything since savepoint sp, repairing an aborted
// transaction.
func (cp *Copy) rollbackTo(ctx context.Context, sp string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := cp.simple(ctx, "ROLLBACK TO SAVEPOINT "+sp+"; RELEASE SAVEPOINT "+sp); err != nil {
		cp.broken = fmt.Errorf("copy unusable: %w", err)
		return cp.broken
	}
	return nil
}

// Try runs fn on the copy and then undoes whatever fn did to it: calls
// played to learn how the world answers them, not to keep their effect.
func (cp *Copy) Try(ctx context.Context, fn func() error) error {
	if cp.broken != nil {
		return cp.broken
	}
	sp := cp.nextSavepoint("t")
	if err := cp.simple(ctx, "SAVEPOINT "+sp); err != nil {
		return err
	}
	st := cp.st
	err := fn()
	if rerr := cp.rollbackTo(ctx, sp); rerr != nil {
		return errors.Join(err, rerr)
	}
	cp.st = st
	return err
}

// Exec runs one guarded INSERT, UPDATE or DELETE (or a query) in the copy and
// returns the rows affected. A failed statement leaves the copy usable.
func (cp *Copy) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if cp.broken != nil {
		return 0, cp.broken
	}
	if err := cp.guard(sql, false); err != nil {
		return 0, err
	}
	cp.st.known = false
	sp := cp.nextSavepoint("e")
	b, err := cp.savepoint(ctx, sp, cp.w.tag+sql)
	if err != nil {
		return 0, err
	}
	qq := b.Queue(cp.w.tag+sql, pgArgs(args)...)
	b.Queue("RELEASE SAVEPOINT " + sp)
	var n int64
	qq.Exec(func(ct pgconn.CommandTag) error { cp.sawTag(ct); n = ct.RowsAffected(); return nil })
	if err := cp.send(ctx, b); err != nil {
		cp.note(err)
		if rerr := cp.rollbackTo(ctx, sp); rerr != nil {
			return 0, errors.Join(err, rerr)
		}
		return 0, err
	}
	return n, nil
}

// Query runs one guarded statement in the copy and returns its rows,
// normalised (see rows.go). A failed statement leaves the copy usable.
func (cp *Copy) Query(ctx context.Context, sql string, args ...any) ([]script.Row, error) {
	if cp.broken != nil {
		return nil, cp.broken
	}
	if err := cp.guard(sql, false); err != nil {
		return nil, err
	}
	if !plainRead(sql) {
		cp.st.known = false
	}
	sp := cp.nextSavepoint("q")
	return cp.querySavepoint(ctx, sp, sql, args, "RELEASE SAVEPOINT "+sp)
}

func (cp *Copy) querySavepoint(ctx context.Context, sp, sql string, args []any, after ...string) ([]script.Row, error) {
	b, err := cp.savepoint(ctx, sp, cp.w.tag+sql)
	if err != nil {
		return nil, err
	}
	var out []script.Row
	var qerr error
	b.Queue(cp.w.tag+sql, pgArgs(args)...).Query(func(rows pgx.Rows) error {
		out, qerr = cp.readRows(rows)
		return qerr
	})
	for _, a := range after {
		b.Queue(a)
	}
	if err := cp.send(ctx, b); err != nil {
		cp.note(err)
		if rerr := cp.rollbackTo(ctx, sp); rerr != nil {
			return nil, errors.Join(err, rerr)
		}
		return nil, err
	}
	return out, nil
}

// savepoint starts a batch that opens savepoint sp before sqls run. A
// statement this connection never ran may fail to prepare, and pgx prepares
// a batch's new statements before executing any of it: that failure would
// abort the transaction before the savepoint existed. So unless every
// statement is known to prepare here, the savepoint is sent first on its own.
func (cp *Copy) savepoint(ctx context.Context, sp string, sqls ...string) (*pgx.Batch, error) {
	b := &pgx.Batch{}
	for _, s := range sqls {
		if !cp.stmts.has(s) {
			if err := cp.simple(ctx, "SAVEPOINT "+sp); err != nil {
				cp.broken = fmt.Errorf("copy unusable: %w", err)
				return nil, cp.note(err)
			}
			return b, nil
		}
	}
	b.Queue("SAVEPOINT " + sp)
	return b, nil
}

// PrepareError is a statement of ours that Postgres would not prepare.
type PrepareError struct {
	SQL string
	Err error
}

func (e *PrepareError) Error() string { return e.Err.Error() }
func (e *PrepareError) Unwrap() error { return e.Err }

// send runs a batch. The world's own statements (those carrying its tag) are
// prepared explicitly, inside the transaction so they resolve in the copy's
// schema, under names of their own that pgx never evicts; so a statement
// known on this connection is certain to need no prepare, and the copy's
// opening can travel with its first batch (no round trip of its own).
func (cp *Copy) send(ctx context.Context, b *pgx.Batch) error {
	err := cp.sendBatch(ctx, b)
	if isCode(err, "57014") && ctx.Err() == nil {
		// Cancelled while the caller still had time: a statement ran past
		// the world's per-statement limit (on the server, or this process's
		// deadline behind it). That is the contract's doing, a limit like
		// the script's own, so it wraps script.ErrLimit and is never taken
		// for an outage.
		return fmt.Errorf("%w: statement time limit exceeded (%s): %w", script.ErrLimit, cp.w.opts.StatementTimeout, err)
	}
	return err
}

func (cp *Copy) sendBatch(ctx context.Context, b *pgx.Batch) error {
	ctx, cancel := cp.bound(ctx)
	defer cancel()
	var fresh []string
	for _, q := range b.QueuedQueries {
		if strings.HasPrefix(q.SQL, cp.w.tag) && !cp.stmts.has(q.SQL) && !slices.Contains(fresh, q.SQL) {
			fresh = append(fresh, q.SQL)
		}
	}
	if len(fresh) > 0 {
		if cp.opening != nil {
			if err := cp.simple(ctx, "SELECT 1"); err != nil {
				return cp.note(err)
			}
		}
		if err := cp.stmts.room(ctx, cp.c.conn, len(fresh)); err != nil {
			return cp.note(err)
		}
		for _, sql := range fresh {
			name := stmtName(sql)
			if _, err := cp.c.conn.Prepare(ctx, name, sql); err != nil {
				return cp.note(&PrepareError{SQL: sql, Err: err})
			}
			cp.stmts.add(sql, name)
		}
	}
	for _, q := range b.QueuedQueries {
		if name, ok := cp.stmts.name(q.SQL); ok {
			q.SQL = name
		}
	}
	if err := cp.c.conn.SendBatch(ctx, cp.opened(b)).Close(); err != nil {
		return cp.note(err)
	}
	return nil
}

// ExecBatch runs setup statements in one round trip, all or nothing: when
// one fails (a *scenario.SetupError says which) none of them stays applied and the
// copy stays usable.
func (cp *Copy) ExecBatch(ctx context.Context, stmts []scenario.Statement) error {
	return cp.execBatch(ctx, stmts, nil)
}

// ExecBatchSnapshot is ExecBatch followed by Snapshot, in the same round
// trip: a rehearsal's setup and its "before" state travel together.
func (cp *Copy) ExecBatchSnapshot(ctx context.Context, stmts []scenario.Statement) (Snapshot, error) {
	if len(stmts) == 0 || cp.w.stateSQL == "" {
		if err := cp.ExecBatch(ctx, stmts); err != nil {
			return Snapshot{}, err
		}
		return cp.Snapshot(ctx)
	}
	var snap Snapshot
	if err := cp.execBatch(ctx, stmts, &snap); err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// execBatch runs stmts in one savepoint and, when snap is not nil, reads the
// state after them in the same batch.
func (cp *Copy) execBatch(ctx context.Context, stmts []scenario.Statement, snap *Snapshot) error {
	if cp.broken != nil {
		return cp.broken
	}
	if len(stmts) == 0 {
		return nil
	}
	for i, st := range stmts {
		if err := cp.guard(st.SQL, false); err != nil {
			return &scenario.SetupError{Index: i, SQL: st.SQL, Err: err}
		}
	}
	sp := cp.nextSavepoint("b")
	sqls := make([]string, len(stmts))
	for i, st := range stmts {
		sqls[i] = cp.w.tag + st.SQL
	}
	seqs := cp.w.seqsPast(stmts)
	known := append(slices.Clip(sqls), seqs...)
	if snap != nil {
		known = append(known, cp.w.stateSQL)
	}
	b, err := cp.savepoint(ctx, sp, known...)
	if err != nil {
		return err
	}
	failed := -1
	for i, st := range stmts {
		// Each statement between a savepoint of its own and that savepoint's
		// release: a statement that ends the copy's transaction makes the
		// release fail, so no later statement runs outside it.
		b.Queue("SAVEPOINT s")
		q := b.Queue(cp.w.tag+st.SQL, pgArgs(st.Args)...)
		q.Fn = func(br pgx.BatchResults) error {
			ct, err := br.Exec()
			if err != nil {
				if failed < 0 {
					failed = i
				}
				return err
			}
			cp.sawTag(ct)
			return nil
		}
		b.Queue("RELEASE SAVEPOINT s")
	}
	for _, q := range seqs {
		b.Queue(q)
	}
	b.Queue("RELEASE SAVEPOINT " + sp)
	stateFailed := false
	if snap != nil {
		cp.queueSnapshot(b, snap, &stateFailed, false)
	}
	ferr := cp.send(ctx, b)
	if ferr != nil {
		cp.st.known = false
		cp.note(ferr)
		if snap != nil {
			*snap = Snapshot{}
		}
		var pe *PrepareError
		if snap != nil && failed < 0 && (stateFailed || errors.As(ferr, &pe) && pe.SQL == cp.w.stateSQL) {
			// The setup ran; only reading the state failed, after the
			// savepoint was released: the copy is as broken as Snapshot
			// would have left it.
			return fmt.Errorf("world state: %w", ferr)
		}
		if rerr := cp.rollbackTo(ctx, sp); rerr != nil {
			return errors.Join(ferr, rerr)
		}
		if failed < 0 && errors.As(ferr, &pe) {
			failed = slices.Index(sqls, pe.SQL)
		}
		if failed >= 0 {
			return &scenario.SetupError{Index: failed, SQL: stmts[failed].SQL, Err: ferr}
		}
		return ferr
	}
	if cp.st.known {
		cp.st = cp.st.then(setupText(stmts))
	}
	if snap != nil {
		if err := cp.w.frozen.fill(snap, cp.schema, cp.w.tables); err != nil {
			*snap = Snapshot{}
			return err
		}
	}
	return nil
}

// seqsPast are the statements that move the sequences of the tables stmts
// insert into past the keys they hold (seqPastSQL).
func (w *World) seqsPast(stmts []scenario.Statement) []string {
	var out []string
	for _, st := range stmts {
		m := insertInto.FindStringSubmatch(st.SQL)
		if m == nil {
			continue
		}
		name := strings.ToLower(m[1])
		if strings.HasPrefix(m[1], `"`) {
			name = strings.Trim(m[1], `"`)
		}
		if q := w.seqSQL[name]; q != "" && !slices.Contains(out, q) {
			out = append(out, q)
		}
	}
	return out
}

var insertInto = regexp.MustCompile(`(?is)^\s*insert\s+into\s+(?:public\.)?("[^"]+"|[A-Za-z_][A-Za-z0-9_]*)`)

// Call runs a tool as the world does: validate the arguments, run the
// handler inside a savepoint, roll back on refusal or crash. Unknown tools
// and invalid arguments are refused; a tool without a handler is a crash;
// nothing but a handler's return is ever ok.
func (cp *Copy) Call(ctx context.Context, toolName string, args map[string]any) CallResult {
	res := CallResult{Tool: toolName, Args: args}
	t, ok := cp.w.tools[toolName]
	if !ok {
		res.Refused = true
		res.Error = "Error: unknown tool " + toolName
		return res
	}
	if err := t.validate(args); err != nil {
		res.Refused, res.Invalid = true, true
		res.Error = "Error: invalid arguments: " + err.Error()
		return res
	}
	if cp.broken != nil {
		res.Crash = true
		res.Error = "Crash: " + cp.broken.Error()
		res.Err = cp.broken
		return res
	}
	if !cp.w.progs.HasHandler(toolName) {
		res.Crash = true
		res.Error = "Crash: tool " + toolName + " has no handler"
		return res
	}
	// A world that keeps no answers, or a copy whose state is unknown,
	// describes no call: nothing would read it.
	var what, key string
	if cp.st.known {
		what = callText(toolName, args)
		key = string(cp.st.sum[:]) + what
		if r, ok := cp.w.answers.get(key); ok {
			r.Args, r.Result, r.ReadArgs = args, slices.Clone(r.Result), slices.Clone(r.ReadArgs)
			if r.Refused {
				// Whoever counts the branches refusals reach (adequacy,
				// report.json) counts this one as if it ran.
				script.LogBranch(ctx, r.Branch)
			}
			return r
		}
	}
	h := &handlerDB{cp: cp, sp: cp.nextSavepoint("h")}
	out, tr, err := cp.w.progs.HandleWithTrace(ctx, toolName, args, h)
	res.ReadArgs = tr.Read
	if err == nil {
		// Success keeps the savepoint open rather than paying a round trip to
		// release it; the copy is rolled back as a whole anyway.
		res.OK = true
		res.Result = out
		res.Wrote = tr.Wrote || h.wrote
		switch {
		case !cp.st.known:
		case res.Wrote:
			cp.st = cp.st.then(what)
		default:
			cp.w.answers.put(key, res)
		}
		return res
	}
	rolledBack := true
	if h.sent {
		if rerr := cp.rollbackTo(ctx, h.sp); rerr != nil {
			// Why the handler stopped comes first (a wall-clock limit hit
			// mid-query closes the connection, so the rollback fails too).
			err = &script.Crash{Reason: stopReason(err) + " (then " + rerr.Error() + ")", Err: errors.Join(err, rerr)}
			rolledBack = false
		}
	}
	var ref *script.Refusal
	var crash *script.Crash
	switch {
	case errors.As(err, &ref):
		res.Refused = true
		res.Error = "Error: " + ref.Message
		res.Branch = ref.Branch
		res.Want = ref.Want
		if rolledBack && cp.st.known {
			// A refusal is rolled back: the state is as before the call.
			cp.w.answers.put(key, res)
		}
	case errors.As(err, &crash):
		res.Crash = true
		res.Error = "Crash: " + crash.Reason
		res.Err = err
	default:
		res.Crash = true
		res.Error = "Crash: " + err.Error()
		res.Err = err
	}
	return res
}

// stopReason is what a handler's error says, without the "Crash: " a
// result adds.
func stopReason(err error) string {
	var ref *script.Refusal
	var crash *script.Crash
	switch {
	case errors.As(err, &crash):
		return crash.Reason
	case errors.As(err, &ref):
		return ref.Message
	}
	return err.Error()
}

// handlerDB is a handler's db: the copy, with the call's savepoint sent
// together with the first statement.
type handlerDB struct {
	cp   *Copy
	sp   string
	sent bool
	// wrote: a statement changed rows, db.query's and db.one's with
	// RETURNING as much as db.execute's (contract.md offers both).
	wrote bool
}

// changedRows reports a command tag of a statement that changed rows.
func changedRows(ct pgconn.CommandTag) bool {
	return (ct.Insert() || ct.Update() || ct.Delete() || strings.HasPrefix(ct.String(), "MERGE")) && ct.RowsAffected() > 0
}

func (h *handlerDB) batch(ctx context.Context, sql string, args []any, fn func(b *pgx.Batch) *pgx.QueuedQuery) error {
	if h.cp.broken != nil {
		return h.cp.broken
	}
	if err := h.cp.guard(sql, false); err != nil {
		return err
	}
	b := &pgx.Batch{}
	if !h.sent {
		var err error
		if b, err = h.cp.savepoint(ctx, h.sp, h.cp.w.tag+sql); err != nil {
			return err
		}
		h.sent = true
	}
	// As in execBatch: a statement that ends the transaction makes the
	// release after it fail.
	b.Queue("SAVEPOINT s")
	fn(b)
	b.Queue("RELEASE SAVEPOINT s")
	return h.cp.send(ctx, b)
}

func (h *handlerDB) Query(ctx context.Context, sql string, args ...any) ([]script.Row, error) {
	var out []script.Row
	err := h.batch(ctx, sql, args, func(b *pgx.Batch) *pgx.QueuedQuery {
		q := b.Queue(h.cp.w.tag+sql, pgArgs(args)...)
		q.Query(func(rows pgx.Rows) error {
			var err error
			out, err = h.cp.readRows(rows)
			h.wrote = h.wrote || err == nil && changedRows(rows.CommandTag())
			return err
		})
		return q
	})
	return out, err
}

func (h *handlerDB) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	var n int64
	err := h.batch(ctx, sql, args, func(b *pgx.Batch) *pgx.QueuedQuery {
		q := b.Queue(h.cp.w.tag+sql, pgArgs(args)...)
		q.Exec(func(ct pgconn.CommandTag) error {
			h.cp.sawTag(ct)
			n, h.wrote = ct.RowsAffected(), h.wrote || changedRows(ct)
			return nil
		})
		return q
	})
	return n, err
}
