package world

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/outage"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const schemaSQL = `
CREATE TABLE users (
    user_id text PRIMARY KEY,
    name    text NOT NULL,
    since   date NOT NULL,
    prefs   jsonb NOT NULL DEFAULT '{}'
);
CREATE TABLE orders (
    id            text PRIMARY KEY,
    user_id       text NOT NULL REFERENCES users (user_id),
    status        text NOT NULL,
    total         numeric(10,2) NOT NULL,
    placed_at     timestamptz NOT NULL,
    items         jsonb NOT NULL DEFAULT '[]',
    tags          text[] NOT NULL DEFAULT '{}',
    n             serial,
    ratio         double precision,
    token         uuid,
    local_at      timestamp,
    cancel_reason text
);
CREATE FUNCTION fail_serialization(n int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    IF n = 1 THEN
        RAISE EXCEPTION 'could not serialize access' USING ERRCODE = '40001';
    END IF;
    RETURN n;
END $$;
CREATE TABLE events (
    seq      bigserial PRIMARY KEY,
    order_id text,
    kind     text NOT NULL,
    data     jsonb
);
`

var handlers = map[string]string{
	"get_order": `
def handle(args, db):
    o = db.one("SELECT id, status, total, cancel_reason FROM orders WHERE id = $1", args["order_id"])
    if o == None:
        refuse("order %s not found" % args["order_id"])
    return o
`,
	"cancel_order": `
def handle(args, db):
    o = db.one("SELECT status FROM orders WHERE id = $1", args["order_id"])
    if o == None:
        refuse("order not found")
    if o["status"] != "pending":
        refuse("non-pending order cannot be cancelled")
    db.execute("UPDATE orders SET status = 'cancelled', cancel_reason = $2 WHERE id = $1", args["order_id"], args["reason"])
    db.execute("INSERT INTO events (order_id, kind, data) VALUES ($1, 'cancel', $2)", args["order_id"], {"reason": args["reason"], "at": now, "n": [1, 2]})
    return {"order_id": args["order_id"], "status": "cancelled"}
`,
	"cancel_returning": `
def handle(args, db):
    return db.one("UPDATE orders SET status = 'cancelled' WHERE id = $1 AND status = 'pending' RETURNING id, status", args["order_id"])
`,
	"loop":         "def handle(args, db):\n    while True:\n        pass\n",
	"bad_sql":      "def handle(args, db):\n    db.execute(\"UPDATE nosuch SET x = 1\")\n",
	"write_crash":  "def handle(args, db):\n    db.execute(\"UPDATE orders SET status = 'lost'\")\n    fail('boom')\n",
	"write_refuse": "def handle(args, db):\n    db.execute(\"UPDATE orders SET status = 'lost'\")\n    refuse('changed my mind')\n",
	"escape":       "def handle(args, db):\n    return db.query(\"SELECT * FROM public.suitegen_migrations\")\n",
	"reset_role":   "def handle(args, db):\n    db.execute(\"RESET ROLE\")\n    return db.query(\"SELECT * FROM public.suitegen_migrations\")\n",
	"set_config":   "def handle(args, db):\n    return db.query(\"SELECT set_config('role', 'none', true)\")\n",
	"strict":       "def handle(args, db):\n    fail('the handler ran')\n",
	"json_params": `
def handle(args, db):
    db.execute("UPDATE users SET prefs = $1 WHERE user_id = $2", {"z": 1, "a": [True, None]}, "u1")
    r = db.one("SELECT prefs, $1::jsonb -> 'k' AS k, jsonb_typeof($2) AS t FROM users WHERE user_id = 'u1'", {"k": 2.5}, [1])
    return r
`,
	"flaky": "def handle(args, db):\n    return db.one('SELECT fail_serialization($1) AS x', args['n'])['x']\n",
	"all_types": `
def handle(args, db):
    return db.one("SELECT * FROM orders WHERE id = '#W1'")
`,
}

var tools = []contract.Tool{
	{Name: "get_order", Params: obj(map[string]any{"order_id": str()}, "order_id")},
	{Name: "cancel_order", Params: obj(map[string]any{"order_id": str(), "reason": map[string]any{"type": "string", "enum": []any{"no longer needed", "ordered by mistake"}}}, "order_id", "reason")},
	{Name: "cancel_returning", Params: obj(map[string]any{"order_id": str()}, "order_id")},
	{Name: "loop", Params: obj(nil)},
	{Name: "bad_sql", Params: obj(nil)},
	{Name: "write_crash", Params: obj(nil)},
	{Name: "write_refuse", Params: obj(nil)},
	{Name: "escape", Params: obj(nil)},
	{Name: "reset_role", Params: obj(nil)},
	{Name: "set_config", Params: obj(nil)},
	{Name: "strict", Params: obj(map[string]any{"x": map[string]any{"type": "integer"}}, "x")},
	{Name: "json_params", Params: obj(nil)},
	{Name: "all_types", Params: obj(nil)},
	{Name: "flaky", Params: obj(map[string]any{"n": map[string]any{"type": "integer"}})},
	{Name: "no_handler", Params: obj(nil)},
	{Name: "open_args", Params: map[string]any{"type": "object", "additionalProperties": true}},
}

func obj(props map[string]any, required ...string) map[string]any {
	m := map[string]any{"type": "object", "properties": props}
	if props == nil {
		m["properties"] = map[string]any{}
	}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		m["required"] = req
	}
	return m
}

func str() map[string]any { return map[string]any{"type": "string"} }

var seeds = []contract.SeedTable{
	{Table: "users", File: "world/seed/users.jsonl", Lines: []int{1, 2}, Rows: []map[string]any{
		{"user_id": "u1", "name": "Ada", "since": "2024-01-02", "prefs": map[string]any{"lang": "en", "n": int64(3), "big": int64(12345678901234567)}},
		{"user_id": "u2", "name": "Bo", "since": "2025-06-30"},
	}},
	{Table: "orders", File: "world/seed/orders.jsonl", Lines: []int{1, 2}, Rows: []map[string]any{
		{"id": "#W1", "user_id": "u1", "status": "pending", "total": 12.5, "placed_at": "2026-03-10T10:00:00-06:00",
			"items": []any{map[string]any{"sku": "A", "qty": int64(2)}}, "tags": []any{"a", "b c"}, "ratio": 0.1,
			"token": "6f1c2b9e-8d3a-4c5e-9f70-123456789abc", "local_at": "2026-01-01 08:30:00"},
		{"id": "#W2", "user_id": "u2", "status": "delivered", "total": int64(7), "placed_at": "2026-02-01T00:00:00Z"},
	}},
}

// newContract builds a contract whose world hash is unique to the test, so
// tests sharing the cluster never share a world unless they mean to.
func newContract(t testing.TB, seed []contract.SeedTable) *contract.Contract {
	t.Helper()
	c := &contract.Contract{
		Agent:     "test",
		Tools:     tools,
		SchemaSQL: schemaSQL,
		Seeds:     seed,
		Sources:   map[string]string{},
		SHA256:    "contract",
	}
	for name, src := range handlers {
		c.Sources["handlers/"+name+".star"] = src
	}
	sum := sha256.Sum256([]byte(t.Name() + time.Now().String()))
	c.WorldSHA256 = hex.EncodeToString(sum[:])
	c.Tables = []contract.Table{
		{Name: "users", PrimaryKey: []string{"user_id"}, Columns: []contract.Column{{Name: "user_id", Type: "text"}, {Name: "name", Type: "text"}, {Name: "since", Type: "date"}, {Name: "prefs", Type: "jsonb"}}},
		{Name: "orders", PrimaryKey: []string{"id"}, Columns: []contract.Column{{Name: "id", Type: "text"}, {Name: "tags", Type: "text[]"}, {Name: "items", Type: "jsonb"}}},
		{Name: "events", PrimaryKey: []string{"seq"}},
	}
	return c
}

func open(t testing.TB, pool *pgxpool.Pool, c *contract.Contract, sopts script.Options) *World {
	t.Helper()
	progs, err := script.Compile(c, sopts)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(context.Background(), pool, c, progs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// poolAndAdmin are a pool of the application role on a database of the
// test's own, a superuser's connection to it, and its URL; both are closed
// when the test ends.
func poolAndAdmin(t *testing.T) (*pgxpool.Pool, *pgx.Conn, string) {
	t.Helper()
	ctx := context.Background()
	u := testenv.PostgresURL(t)
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	admin, err := pgx.Connect(ctx, testenv.AdminURL(t, u))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(context.Background()) })
	return pool, admin, u
}

func countWorlds(t *testing.T, pool *pgxpool.Pool, schema string) (schemas, markers int) {
	t.Helper()
	ctx := context.Background()
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname LIKE $1`, schema+"%").Scan(&schemas); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM public.suitegen_worlds WHERE schema = $1`, schema).Scan(&markers); err != nil {
		t.Fatal(err)
	}
	return
}

func TestOpenTwiceMakesOneWorld(t *testing.T) {
	pool := testenv.Postgres(t)
	c := newContract(t, seeds)
	w1 := open(t, pool, c, script.Options{})
	w2 := open(t, pool, c, script.Options{})
	if w1.Schema() != w2.Schema() || w1.Schema() != "w_"+c.WorldSHA256[:16] {
		t.Fatalf("schemas %s and %s", w1.Schema(), w2.Schema())
	}
	schemas, markers := countWorlds(t, pool, w1.Schema())
	if schemas != 2 || markers != 1 { // the world and its twin
		t.Fatalf("%d schemas, %d markers", schemas, markers)
	}
	var users int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+w1.Schema()+".users").Scan(&users); err != nil || users != 2 {
		t.Fatalf("seeded once: %d users, %v", users, err)
	}
	if got := w1.Tables(); !reflect.DeepEqual(got, []string{"users", "orders", "events"}) {
		t.Errorf("tables %v", got)
	}
}

func TestConcurrentOpenMakesOneWorld(t *testing.T) {
	pool := testenv.Postgres(t)
	c := newContract(t, seeds)
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Open(context.Background(), pool, c, progs, Options{})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	schema, _ := SchemaName(c.WorldSHA256)
	if schemas, markers := countWorlds(t, pool, schema); schemas != 2 || markers != 1 {
		t.Fatalf("%d schemas, %d markers", schemas, markers)
	}
	var users int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM "+schema+".users").Scan(&users); err != nil || users != 2 {
		t.Fatalf("%d users, %v", users, err)
	}
}

// A GRANT on the database by a session outside the world's lock, committed
// while the world's own GRANT waits on it, fails that GRANT with "tuple
// concurrently updated"; the world is made all the same.
func TestOpenOutlivesAConcurrentGrant(t *testing.T) {
	ctx := context.Background()
	pool, admin, u := poolAndAdmin(t)
	db := pool.Config().ConnConfig.Database
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := tx.Exec(ctx, "GRANT CONNECT ON DATABASE "+pgx.Identifier{db}.Sanitize()+" TO "+pgx.Identifier{pool.Config().ConnConfig.User}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	c := newContract(t, seeds)
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		w, err := Open(ctx, pool, c, progs, Options{})
		if err == nil {
			w.Close()
		}
		opened <- err
	}()
	// The world's GRANT waits for the admin's transaction; commit only then.
	// Another session watches: one in a transaction sees a frozen activity view.
	watch, err := pgx.Connect(ctx, testenv.AdminURL(t, u))
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close(ctx)
	for waiting := 0; waiting == 0; {
		select {
		case err := <-opened:
			t.Fatalf("opened before the concurrent GRANT was committed: %v", err)
		default:
		}
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = $1 AND wait_event_type = 'Lock' AND wait_event = 'transactionid' AND query LIKE '%GRANT CONNECT ON DATABASE%'`, db).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("open after a concurrent GRANT: %v", err)
	}
}

func TestSeedValuesRoundTrip(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	err := w.Copy(ctx, func(cp *Copy) error {
		rows, err := cp.Query(ctx, "SELECT * FROM orders ORDER BY id")
		if err != nil {
			return err
		}
		got := rows[0].Map()
		want := map[string]any{
			"id": "#W1", "user_id": "u1", "status": "pending", "total": 12.5,
			"placed_at": "2026-03-10T16:00:00Z",
			"items":     []any{map[string]any{"sku": "A", "qty": int64(2)}},
			"tags":      []any{"a", "b c"}, "n": int64(1), "ratio": 0.1,
			"token": "6f1c2b9e-8d3a-4c5e-9f70-123456789abc", "local_at": "2026-01-01T08:30:00Z", "cancel_reason": nil,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("orders row:\n got %#v\nwant %#v", got, want)
		}
		if rows[1].Values[3] != 7.0 {
			t.Errorf("integral numeric is a float: %#v", rows[1].Values[3])
		}
		wantCols := []string{"id", "user_id", "status", "total", "placed_at", "items", "tags", "n", "ratio", "token", "local_at", "cancel_reason"}
		if !reflect.DeepEqual(rows[0].Columns, wantCols) {
			t.Errorf("columns keep order: %v", rows[0].Columns)
		}
		u, err := cp.Query(ctx, "SELECT since, prefs, 1::int2 AS s, 2::int4 AS i, 3::int8 AS b, 1.25::real AS r, 0.1::numeric(5,1) AS num, true AS t, NULL AS z FROM users WHERE user_id = 'u1'")
		if err != nil {
			return err
		}
		wantU := map[string]any{"since": "2024-01-02", "prefs": map[string]any{"lang": "en", "n": int64(3), "big": int64(12345678901234567)},
			"s": int64(1), "i": int64(2), "b": int64(3), "r": 1.25, "num": 0.1, "t": true, "z": nil}
		if !reflect.DeepEqual(u[0].Map(), wantU) {
			t.Errorf("users row:\n got %#v\nwant %#v", u[0].Map(), wantU)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCopiesNeverReachTheWorldOrEachOther(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	status := func(cp *Copy) string {
		rows, err := cp.Query(ctx, "SELECT status FROM orders WHERE id = '#W1'")
		if err != nil {
			t.Fatal(err)
		}
		return rows[0].Values[0].(string)
	}
	err := w.Copy(ctx, func(a *Copy) error {
		r := a.Call(ctx, "cancel_order", map[string]any{"order_id": "#W1", "reason": "no longer needed"})
		if !r.OK || !r.Wrote {
			return fmt.Errorf("cancel: %+v", r)
		}
		if s := status(a); s != "cancelled" {
			return fmt.Errorf("a sees its own write as %q", s)
		}
		// A second copy open at the same time sees the frozen world.
		return w.Copy(ctx, func(b *Copy) error {
			if s := status(b); s != "pending" {
				return fmt.Errorf("a concurrent copy sees %q", s)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := pool.QueryRow(ctx, "SELECT status FROM "+w.Schema()+".orders WHERE id = '#W1'").Scan(&s); err != nil || s != "pending" {
		t.Fatalf("frozen world has %q, %v", s, err)
	}
	_ = w.Copy(ctx, func(cp *Copy) error {
		if s := status(cp); s != "pending" {
			t.Errorf("a later copy sees %q", s)
		}
		return nil
	})
}

// TestWritesThroughQueriesAreWrites: a handler that changes rows with
// db.one or db.query and RETURNING, as contract.md offers, wrote; the same
// statement changing no row did not.
func TestWritesThroughQueriesAreWrites(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	err := w.Copy(ctx, func(cp *Copy) error {
		if r := cp.Call(ctx, "cancel_returning", map[string]any{"order_id": "#W1"}); !r.OK || !r.Wrote {
			t.Errorf("an UPDATE … RETURNING that changed a row: %+v %s", r, r.Result)
		}
		if r := cp.Call(ctx, "cancel_returning", map[string]any{"order_id": "#W2"}); !r.OK || r.Wrote {
			t.Errorf("an UPDATE … RETURNING that changed nothing: %+v %s", r, r.Result)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCallOutcomes(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{MaxSteps: 100_000})
	ctx := context.Background()
	err := w.Copy(ctx, func(cp *Copy) error {
		r := cp.Call(ctx, "get_order", map[string]any{"order_id": "#W2"})
		if !r.OK || string(r.Result) != `{"id":"#W2","status":"delivered","total":7.0,"cancel_reason":null}` || !reflect.DeepEqual(r.ReadArgs, []string{"order_id"}) || r.Wrote {
			t.Errorf("ok: %+v %s", r, r.Result)
		}
		r = cp.Call(ctx, "get_order", map[string]any{"order_id": "#nope"})
		if !r.Refused || r.OK || r.Crash || r.Error != "Error: order #nope not found" {
			t.Errorf("refused: %+v", r)
		}
		r = cp.Call(ctx, "cancel_order", map[string]any{"order_id": "#W2", "reason": "no longer needed"})
		if !r.Refused || r.Error != "Error: non-pending order cannot be cancelled" {
			t.Errorf("refused by rule: %+v", r)
		}
		r = cp.Call(ctx, "nosuch", map[string]any{})
		if !r.Refused || r.OK || r.Error != "Error: unknown tool nosuch" {
			t.Errorf("unknown tool: %+v", r)
		}
		r = cp.Call(ctx, "no_handler", nil)
		if !r.Crash || r.OK || !strings.Contains(r.Error, "no handler") {
			t.Errorf("no handler: %+v", r)
		}
		for _, args := range []map[string]any{
			{},                      // missing
			{"x": "one"},            // wrong type
			{"x": int64(1), "y": 2}, // unknown argument
			{"x": 1.5},              // not an integer
		} {
			r = cp.Call(ctx, "strict", args)
			if !r.Refused || r.Crash || !strings.HasPrefix(r.Error, "Error: invalid arguments: ") {
				t.Errorf("strict %v: %+v", args, r)
			}
		}
		r = cp.Call(ctx, "strict", map[string]any{"x": int64(1)})
		if !r.Crash || !strings.Contains(r.Error, "the handler ran") {
			t.Errorf("valid args run the handler: %+v", r)
		}
		r = cp.Call(ctx, "cancel_order", map[string]any{"order_id": "#W1", "reason": "because"})
		if !r.Refused || !strings.Contains(r.Error, "reason") {
			t.Errorf("enum: %+v", r)
		}
		r = cp.Call(ctx, "open_args", map[string]any{"anything": 1})
		if !r.Crash || !strings.Contains(r.Error, "no handler") {
			t.Errorf("additionalProperties: true lets unknown arguments through: %+v", r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCrashesLeaveTheCopyUsable(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{MaxSteps: 50_000})
	ctx := context.Background()
	err := w.Copy(ctx, func(cp *Copy) error {
		check := func(what string) {
			t.Helper()
			r := cp.Call(ctx, "get_order", map[string]any{"order_id": "#W1"})
			if !r.OK || !strings.Contains(string(r.Result), `"status":"pending"`) {
				t.Errorf("after %s: %+v %s", what, r, r.Result)
			}
		}
		r := cp.Call(ctx, "bad_sql", nil)
		if !r.Crash || !strings.Contains(r.Error, "nosuch") {
			t.Errorf("bad sql: %+v", r)
		}
		check("a failed statement")
		r = cp.Call(ctx, "loop", nil)
		if !r.Crash || !strings.Contains(r.Error, "step limit") {
			t.Errorf("loop: %+v", r)
		}
		check("an infinite loop")
		r = cp.Call(ctx, "write_crash", nil)
		if !r.Crash || r.Wrote {
			t.Errorf("write then crash: %+v", r)
		}
		check("a crash after a write")
		r = cp.Call(ctx, "write_refuse", nil)
		if !r.Refused || r.Error != "Error: changed my mind" {
			t.Errorf("write then refuse: %+v", r)
		}
		check("a refusal after a write")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A try is undone whatever it did: a call carried out inside it leaves no
// trace after it, a failing try returns its error, and the copy goes on.
func TestTryIsUndone(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{MaxSteps: 50_000})
	ctx := context.Background()
	status := func(cp *Copy) string {
		r := cp.Call(ctx, "get_order", map[string]any{"order_id": "#W1"})
		var o struct{ Status string }
		if err := json.Unmarshal(r.Result, &o); err != nil {
			t.Fatalf("get_order: %+v: %v", r, err)
		}
		return o.Status
	}
	cancel := map[string]any{"order_id": "#W1", "reason": "no longer needed"}
	stop := errors.New("stop")
	err := w.Copy(ctx, func(cp *Copy) error {
		// The copy's first statement is the try's own savepoint.
		if err := cp.Try(ctx, func() error {
			if r := cp.Call(ctx, "cancel_order", cancel); !r.OK {
				t.Errorf("cancel inside the try: %+v", r)
			}
			if s := status(cp); s != "cancelled" {
				t.Errorf("inside the try the order is %q", s)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if s := status(cp); s != "pending" {
			t.Errorf("after the try the order is %q, want pending", s)
		}
		if err := cp.Try(ctx, func() error {
			cp.Call(ctx, "cancel_order", cancel)
			return stop
		}); !errors.Is(err, stop) {
			t.Errorf("a failing try returned %v", err)
		}
		if s := status(cp); s != "pending" {
			t.Errorf("after a failing try the order is %q", s)
		}
		if r := cp.Call(ctx, "cancel_order", cancel); !r.OK || status(cp) != "cancelled" {
			t.Errorf("a call after the tries is kept: %+v", r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRoleIsConfinedToTheWorld(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM public.suitegen_migrations").Scan(&n); err != nil {
		t.Fatalf("the table the handler must not reach: %v", err)
	}
	err := w.Copy(ctx, func(cp *Copy) error {
		r := cp.Call(ctx, "escape", nil)
		if !r.Crash || !strings.Contains(r.Error, "permission denied") {
			t.Errorf("escape: %+v", r)
		}
		for _, tool := range []string{"reset_role", "set_config"} {
			r = cp.Call(ctx, tool, nil)
			if !r.Crash || !strings.Contains(r.Error, "not allowed") {
				t.Errorf("%s: %+v", tool, r)
			}
		}
		for _, sql := range []string{"RESET ROLE", "SET ROLE NONE", "SELECT 1; RESET ROLE", "select \"set_config\"('role','none',true)", "SELECT pg_advisory_lock(1)", "COPY orders TO STDOUT", "CREATE TABLE x (y int)"} {
			if _, err := cp.Exec(ctx, sql); !errors.Is(err, ErrStatement) {
				t.Errorf("%q: %v", sql, err)
			}
		}
		if _, err := cp.Query(ctx, "SELECT * FROM public.suitegen_worlds"); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("marker table: %v", err)
		}
		// Text that merely mentions a forbidden name is fine.
		if rows, err := cp.Query(ctx, "SELECT 'set_config; RESET ROLE' AS s -- set_config"); err != nil || rows[0].Values[0] != "set_config; RESET ROLE" {
			t.Errorf("literal: %v %v", rows, err)
		}
		var user string
		rows, err := cp.Query(ctx, "SELECT current_user::text")
		if err == nil {
			user = rows[0].Values[0].(string)
		}
		if user != w.Role() {
			t.Errorf("copies run as %q, want %q (%v)", user, w.Role(), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestSeedViolatingSchemaIsAProblem(t *testing.T) {
	pool := testenv.Postgres(t)
	bad := []contract.SeedTable{seeds[0], {Table: "orders", File: "world/seed/orders.jsonl", Lines: []int{1, 3}, Rows: []map[string]any{
		seeds[1].Rows[0],
		{"id": "#W9", "user_id": "u1", "total": 1.0, "placed_at": "2026-01-01T00:00:00Z"}, // status is NOT NULL
	}}}
	c := newContract(t, bad)
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), pool, c, progs, Options{})
	var ce *ContractError
	if !errors.As(err, &ce) || len(ce.Problems) != 1 {
		t.Fatalf("want a ContractError, got %v", err)
	}
	p := ce.Problems[0]
	if p.File != "world/seed/orders.jsonl" || p.Line != 3 || p.Code != CodeSeedViolatesSchema || !strings.Contains(p.Message, "status") {
		t.Errorf("problem %+v", p)
	}
	schema, _ := SchemaName(c.WorldSHA256)
	if schemas, markers := countWorlds(t, pool, schema); schemas != 0 || markers != 0 {
		t.Errorf("left behind %d schemas, %d markers", schemas, markers)
	}
}

func TestStateAndDiff(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	err := w.Copy(ctx, func(cp *Copy) error {
		before, err := cp.State(ctx)
		if err != nil {
			return err
		}
		if len(before.Tables) != 3 || len(before.Table("orders").Rows) != 2 || before.Table("orders").Rows[0]["id"] != "#W1" {
			t.Errorf("state: %+v", before)
		}
		if d := Diff(before, before); !d.Empty() {
			t.Errorf("self diff: %+v", d)
		}
		if r := cp.Call(ctx, "cancel_order", map[string]any{"order_id": "#W1", "reason": "ordered by mistake"}); !r.OK {
			return fmt.Errorf("cancel: %+v", r)
		}
		if _, err := cp.Exec(ctx, "DELETE FROM orders WHERE id = '#W2'"); err != nil {
			return err
		}
		after, err := cp.State(ctx)
		if err != nil {
			return err
		}
		d := Diff(before, after)
		if len(d.Tables) != 2 {
			t.Fatalf("diff: %+v", d)
		}
		od, ed := d.Tables[0], d.Tables[1]
		if od.Table != "orders" || len(od.Changed) != 1 || len(od.Removed) != 1 || od.Removed[0]["id"] != "#W2" ||
			!reflect.DeepEqual(od.Changed[0].Columns, []string{"cancel_reason", "status"}) || od.Changed[0].Key["id"] != "#W1" {
			t.Errorf("orders diff: %+v", od)
		}
		if ed.Table != "events" || len(ed.Added) != 1 {
			t.Fatalf("events diff: %+v", ed)
		}
		data := ed.Added[0]["data"].(map[string]any)
		if data["reason"] != "ordered by mistake" || data["at"] != script.DefaultNow || !reflect.DeepEqual(data["n"], []any{int64(1), int64(2)}) {
			t.Errorf("dict parameter stored as jsonb: %#v", data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestJSONParams(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	_ = w.Copy(ctx, func(cp *Copy) error {
		r := cp.Call(ctx, "json_params", nil)
		if !r.OK {
			t.Fatalf("%+v", r)
		}
		var got map[string]any
		_ = json.Unmarshal(r.Result, &got)
		want := map[string]any{"prefs": map[string]any{"z": 1.0, "a": []any{true, nil}}, "k": 2.5, "t": "array"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %s", r.Result)
		}
		r = cp.Call(ctx, "all_types", nil)
		if !r.OK || !strings.Contains(string(r.Result), `"items":[{"qty":2,"sku":"A"}]`) || !strings.Contains(string(r.Result), `"placed_at":"2026-03-10T16:00:00Z"`) {
			t.Errorf("all types through a handler: %+v %s", r, r.Result)
		}
		return nil
	})
}

func TestViewIsReadOnlyAndBeforeIsLazy(t *testing.T) {
	pool := testenv.Postgres(t)
	c := newContract(t, seeds)
	c.SubGoals = []contract.SubGoal{{Name: "cancelled", File: "subgoals/cancelled.star"}}
	c.Sources["subgoals/cancelled.star"] = `
def check(world, calls, params):
    now_ = world.one("SELECT status FROM orders WHERE id = $1", params["order_id"])
    was = world.before.one("SELECT status FROM orders WHERE id = $1", params["order_id"])
    if now_["status"] != "cancelled":
        return "order is %s" % now_["status"]
    if was["status"] != "pending":
        return "it was %s before" % was["status"]
    return None
`
	w := open(t, pool, c, script.Options{})
	ctx := context.Background()
	setup := func(cp *Copy) error {
		return cp.ExecBatch(ctx, []scenario.Statement{{SQL: "UPDATE orders SET status = 'pending', total = $1 WHERE id = '#W2'", Args: []any{99}}})
	}
	err := w.Pair(ctx, setup, func(main *Copy, before *Before) error {
		v := main.View("u1", before.View)
		if _, err := v.Query(ctx, "UPDATE orders SET status = 'x'"); !errors.Is(err, ErrStatement) {
			t.Errorf("update through a view: %v", err)
		}
		if _, err := v.Query(ctx, "WITH d AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM d"); err != nil {
			t.Errorf("sneaky CTE: %v", err)
		}
		rows, err := main.Query(ctx, "SELECT count(*) FROM orders")
		if err != nil || rows[0].Values[0] != int64(2) {
			t.Errorf("a data-modifying CTE left a trace: %v %v", rows, err)
		}
		held, _, err := w.Programs().Check(ctx, "cancelled", main.View("u1", nil), nil, map[string]any{"order_id": "#W2"})
		if err == nil || held {
			t.Errorf("world.before None must break this check: %v", err)
		}
		if before.Opened() {
			t.Error("before opened although nothing read it")
		}
		if r := main.Call(ctx, "cancel_order", map[string]any{"order_id": "#W2", "reason": "no longer needed"}); !r.OK {
			return fmt.Errorf("cancel after setup: %+v", r)
		}
		held, why, err := w.Programs().Check(ctx, "cancelled", v, nil, map[string]any{"order_id": "#W2"})
		if err != nil || !held {
			t.Errorf("check: %v %q %v", held, why, err)
		}
		if !before.Opened() {
			t.Error("before not opened")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWorldCallerIsTheRow: world.caller is the caller's row as the world
// holds it (a setup's change seen), world.before.caller as it stood after
// setup, and None where the contract names no caller table or no row has
// the id.
func TestWorldCallerIsTheRow(t *testing.T) {
	pool := testenv.Postgres(t)
	c := newContract(t, seeds)
	c.Caller = &contract.Caller{Table: "users", Key: "user_id"}
	c.SubGoals = []contract.SubGoal{{Name: "caller_named", File: "subgoals/caller_named.star"}}
	c.Sources["subgoals/caller_named.star"] = `
def check(world, calls, params):
    if world.caller == None:
        return "no caller"
    if world.caller["user_id"] != params["id"] or world.caller["name"] != params["name"]:
        return "caller %s %s" % (world.caller["user_id"], world.caller["name"])
    if world.before.caller["name"] != params["before"]:
        return "before %s" % world.before.caller["name"]
    return None
`
	w := open(t, pool, c, script.Options{})
	ctx := context.Background()
	err := w.Pair(ctx, nil, func(main *Copy, before *Before) error {
		if _, err := main.Exec(ctx, "UPDATE users SET name = 'Ada L.' WHERE user_id = 'u1'"); err != nil {
			return err
		}
		check := func(caller any, params map[string]any) (bool, string) {
			held, why, err := w.Programs().Check(ctx, "caller_named", main.View(caller, before.View), nil, params)
			if err != nil {
				t.Fatal(err)
			}
			return held, why
		}
		if held, why := check("u1", map[string]any{"id": "u1", "name": "Ada L.", "before": "Ada"}); !held {
			t.Errorf("caller u1: %s", why)
		}
		if held, why := check("nobody", map[string]any{"id": "x", "name": "x", "before": "x"}); held || why != "no caller" {
			t.Errorf("an id no row has: held %v %q", held, why)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestExecBatch(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	_ = w.Copy(ctx, func(cp *Copy) error {
		err := cp.ExecBatch(ctx, []scenario.Statement{
			{SQL: "UPDATE orders SET status = 'processed' WHERE id = '#W1'"},
			{SQL: "INSERT INTO users (user_id, name, since) VALUES ($1, $2, $3)", Args: []any{"u3", "Cy", "2020-01-01"}},
			{SQL: "INSERT INTO users (user_id, name) VALUES ('u4', 'Di')"}, // since is NOT NULL
		})
		var se *scenario.SetupError
		if !errors.As(err, &se) || se.Index != 2 {
			t.Fatalf("want statement 3 to fail, got %v", err)
		}
		rows, err := cp.Query(ctx, "SELECT (SELECT status FROM orders WHERE id = '#W1'), (SELECT count(*) FROM users)")
		if err != nil || rows[0].Values[0] != "pending" || rows[0].Values[1] != int64(2) {
			t.Fatalf("all or nothing: %v %v", rows, err)
		}
		if err := cp.ExecBatch(ctx, []scenario.Statement{{SQL: "DROP TABLE users"}}); !errors.Is(err, ErrStatement) {
			t.Errorf("DDL in setup: %v", err)
		}
		return nil
	})
}

func TestCopyRetriesSerializationFailures(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	var attempts atomic.Int32
	err := w.Copy(ctx, func(cp *Copy) error {
		if attempts.Add(1) < 3 {
			return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: "40P01", Message: "deadlock detected"})
		}
		return nil
	})
	if err != nil || attempts.Load() != 3 {
		t.Fatalf("attempts %d, %v", attempts.Load(), err)
	}
	attempts.Store(0)
	err = w.Copy(ctx, func(cp *Copy) error {
		attempts.Add(1)
		return &pgconn.PgError{Code: "40001"}
	})
	if err == nil || int(attempts.Load()) != w.opts.MaxRetries+1 {
		t.Fatalf("bounded: attempts %d, %v", attempts.Load(), err)
	}
	attempts.Store(0)
	_ = w.Copy(ctx, func(cp *Copy) error { attempts.Add(1); return errors.New("other") })
	if attempts.Load() != 1 {
		t.Fatalf("other errors are not retried: %d", attempts.Load())
	}
}

// A real serialization failure inside a handler reruns the whole copy,
// although the handler reported it as a crash.
func TestSerializationFailureInHandlerIsRetried(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	var attempts int
	var last CallResult
	err := w.Copy(ctx, func(cp *Copy) error {
		attempts++
		last = cp.Call(ctx, "flaky", map[string]any{"n": int64(attempts)})
		return nil
	})
	if err != nil || attempts != 2 || !last.OK || string(last.Result) != "2" {
		t.Fatalf("attempts %d, last %+v, %v", attempts, last, err)
	}
}

// roundTrips counts what a connection sends: each query, batch and prepare
// is at least one round trip.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (r *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	r.n.Add(1)
	return ctx
}
func (r *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

func tracedPool(tb testing.TB) (*pgxpool.Pool, *roundTrips) {
	cfg, err := pgxpool.ParseConfig(testenv.PostgresURL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	rt := &roundTrips{}
	cfg.ConnConfig.Tracer = rt
	cfg.MaxConns = 4
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool, rt
}

func TestRoundTripsPerCall(t *testing.T) {
	pool, rt := tracedPool(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	args := map[string]any{"order_id": "#W1"}
	// Warm the statement cache of every pooled connection.
	for i := 0; i < 8; i++ {
		_ = w.Copy(ctx, func(cp *Copy) error { cp.Call(ctx, "get_order", args); return nil })
	}
	// Each measured call is one the world has not answered before (Forget):
	// an answer it kept costs nothing (TestAnswersKept).
	var perCall int64
	_ = w.Copy(ctx, func(cp *Copy) error {
		cp.Call(ctx, "get_order", args) // opens the transaction
		start := rt.n.Load()
		for i := 0; i < 10; i++ {
			w.Forget()
			if r := cp.Call(ctx, "get_order", args); !r.OK {
				t.Fatalf("%+v", r)
			}
		}
		perCall = (rt.n.Load() - start) / 10
		return nil
	})
	start := rt.n.Load()
	_ = w.Copy(ctx, func(cp *Copy) error { return nil })
	empty := rt.n.Load() - start
	w.Forget()
	start = rt.n.Load()
	_ = w.Copy(ctx, func(cp *Copy) error { cp.Call(ctx, "get_order", args); return nil })
	one := rt.n.Load() - start
	// The world's statements are prepared under names pgx never evicts, so a
	// warm copy's opening travels with its first statement: one round trip
	// for BEGIN, the SET LOCALs and the call, one for ROLLBACK.
	if perCall != 1 || empty != 0 || one != 2 {
		t.Errorf("round trips: %d per call (want 1), %d per empty copy (want 0), %d for a copy with one call (want 2)", perCall, empty, one)
	}
}

// A call made again on a copy in the same state is answered from what the
// world kept, with no round trip; a call that wrote is always sent and
// moves the state on; a statement the copy runs for itself makes the state
// unknown, and then every call is sent.
func TestAnswersKept(t *testing.T) {
	pool, rt := tracedPool(t)
	// Without the schema's function and sequences (which keep a world from
	// keeping answers, TestNoAnswersKept).
	c := newContract(t, seeds)
	c.SchemaSQL = schemaSQL[:strings.Index(schemaSQL, "CREATE FUNCTION")] + schemaSQL[strings.Index(schemaSQL, "CREATE TABLE events"):]
	c.SchemaSQL = strings.NewReplacer(" serial,", " int,", "seq      bigserial PRIMARY KEY", "seq      int").Replace(c.SchemaSQL)
	w := open(t, pool, c, script.Options{})
	ctx := context.Background()
	get := map[string]any{"order_id": "#W1"}
	cancel := map[string]any{"order_id": "#W1", "reason": "no longer needed"}
	sent := func(cp *Copy, tool string, args map[string]any) (CallResult, int64) {
		start := rt.n.Load()
		r := cp.Call(ctx, tool, args)
		if !r.OK {
			t.Fatalf("%s: %+v", tool, r)
		}
		return r, rt.n.Load() - start
	}
	var first, after CallResult
	err := w.Copy(ctx, func(cp *Copy) error {
		var n int64
		if first, n = sent(cp, "get_order", get); n == 0 {
			t.Error("a first call was not sent")
		}
		if again, n := sent(cp, "get_order", get); n != 0 || string(again.Result) != string(first.Result) {
			t.Errorf("the same call on the same state: %d round trips, %s (want 0, %s)", n, again.Result, first.Result)
		}
		if _, n = sent(cp, "cancel_order", cancel); n == 0 {
			t.Error("a call that writes was answered from memory")
		}
		if after, n = sent(cp, "get_order", get); n == 0 || string(after.Result) == string(first.Result) {
			t.Errorf("after a write: %d round trips, %s (want sent, not %s)", n, after.Result, first.Result)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Copy(ctx, func(cp *Copy) error {
		if r, n := sent(cp, "get_order", get); n != 0 || string(r.Result) != string(first.Result) {
			t.Errorf("another copy, same state: %d round trips, %s", n, r.Result)
		}
		sent(cp, "cancel_order", cancel)
		if r, n := sent(cp, "get_order", get); n != 0 || string(r.Result) != string(after.Result) {
			t.Errorf("another copy, same writes: %d round trips, %s (want 0, %s)", n, r.Result, after.Result)
		}
		// A refusal given back from memory is logged where the handler
		// would have logged it: adequacy and report.json count the
		// branches refusals reach.
		var log script.BranchLog
		lctx := script.WithBranchLog(ctx, &log)
		first := cp.Call(lctx, "cancel_order", cancel)
		start := rt.n.Load()
		again := cp.Call(lctx, "cancel_order", cancel)
		if !first.Refused || !again.Refused || again.Branch != first.Branch || rt.n.Load() != start {
			t.Errorf("a second cancellation: %+v then %+v, %d round trips (want refused twice, the second from memory)", first, again, rt.n.Load()-start)
		}
		if hits := log.Hits(); hits[first.Branch] != 2 {
			t.Errorf("branch log %v: want %s twice", hits, first.Branch)
		}
		if _, err := cp.Exec(ctx, "UPDATE orders SET status = 'pending' WHERE id = '#W1'"); err != nil {
			return err
		}
		if r, n := sent(cp, "get_order", get); n == 0 || string(r.Result) == string(after.Result) {
			t.Errorf("after the copy's own statement: %d round trips, %s", n, r.Result)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A world whose rows a sequence, a function or the clock may set keeps no
// answers: the same call is sent each time.
func TestNoAnswersKept(t *testing.T) {
	pool, rt := tracedPool(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	_ = w.Copy(ctx, func(cp *Copy) error {
		for i := range 2 {
			start := rt.n.Load()
			if r := cp.Call(ctx, "get_order", map[string]any{"order_id": "#W1"}); !r.OK {
				t.Fatalf("%+v", r)
			}
			if rt.n.Load() == start {
				t.Errorf("call %d was not sent", i+1)
			}
		}
		return nil
	})
}

func BenchmarkCopyCall(b *testing.B) {
	pool, rt := tracedPool(b)
	w := open(b, pool, newContract(b, seeds), script.Options{})
	ctx := context.Background()
	args := map[string]any{"order_id": "#W1", "reason": "no longer needed"}
	b.ResetTimer()
	start := rt.n.Load()
	for b.Loop() {
		err := w.Copy(ctx, func(cp *Copy) error {
			if r := cp.Call(ctx, "cancel_order", args); !r.OK {
				return fmt.Errorf("%+v", r)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "roundtrips/copy")
}

// Two copies that lock the same rows in opposite orders deadlock for real;
// Postgres aborts one and its copy is run again.
func TestRealDeadlockIsRetried(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	var barrier sync.WaitGroup
	barrier.Add(2)
	var attempts [2]atomic.Int32
	var wg sync.WaitGroup
	errs := make([]error, 2)
	order := [2][2]string{{"#W1", "#W2"}, {"#W2", "#W1"}}
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[g] = w.Copy(ctx, func(cp *Copy) error {
				first := attempts[g].Add(1) == 1
				if _, err := cp.Exec(ctx, "UPDATE orders SET status = 'x' WHERE id = $1", order[g][0]); err != nil {
					return err
				}
				if first {
					barrier.Done()
					barrier.Wait() // both hold their first row
				}
				_, err := cp.Exec(ctx, "UPDATE orders SET status = 'y' WHERE id = $1", order[g][1])
				return err
			})
		}()
	}
	wg.Wait()
	for g, err := range errs {
		if err != nil {
			t.Errorf("copy %d: %v", g, err)
		}
	}
	if total := attempts[0].Load() + attempts[1].Load(); total < 3 {
		t.Errorf("no copy was retried (%d attempts): was there a deadlock?", total)
	}
}

// The world's statements are prepared under names of their own, so a tiny
// pgx statement cache (evicting all the time) changes nothing: a warm copy
// still opens with its first statement, and a setup statement that cannot
// prepare is reported by index with the copy left usable.
func TestPreparedStatementsOutliveTheCache(t *testing.T) {
	cfg, err := pgxpool.ParseConfig(testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	rt := &roundTrips{}
	cfg.ConnConfig.Tracer = rt
	cfg.ConnConfig.StatementCacheCapacity = 2
	cfg.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	queries := []string{"SELECT count(*) FROM orders", "SELECT count(*) FROM users", "SELECT max(id) FROM orders", "SELECT min(user_id) FROM users"}
	for range 3 {
		for _, q := range queries {
			if err := w.Copy(ctx, func(cp *Copy) error { _, err := cp.Query(ctx, q); return err }); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	start := rt.n.Load()
	if err := w.Copy(ctx, func(cp *Copy) error { _, err := cp.Query(ctx, queries[0]); return err }); err != nil {
		t.Fatal(err)
	}
	if n := rt.n.Load() - start; n != 2 {
		t.Errorf("a warm copy with one query took %d round trips, want 2", n)
	}
	_ = w.Copy(ctx, func(cp *Copy) error {
		err := cp.ExecBatch(ctx, []scenario.Statement{
			{SQL: "UPDATE orders SET status = 'processed' WHERE id = '#W1'"},
			{SQL: "UPDATE orders SET no_such_column = 1 WHERE id = '#W1'"},
		})
		var se *scenario.SetupError
		if !errors.As(err, &se) || se.Index != 1 {
			t.Fatalf("want statement 2 to fail, got %v", err)
		}
		rows, err := cp.Query(ctx, "SELECT status FROM orders WHERE id = '#W1'")
		if err != nil || rows[0].Values[0] != "pending" {
			t.Fatalf("copy after a statement that did not prepare: %v %v", rows, err)
		}
		return nil
	})
}

// Copies never run as a role that can do more than its world needs, nor
// in a superuser's session; a database without the setup gets no world.
func TestWorldRefusesPrivilegedRoles(t *testing.T) {
	ctx := context.Background()
	pool, admin, _ := poolAndAdmin(t)
	c := newContract(t, seeds)
	w := open(t, pool, c, script.Options{})
	progs := w.Programs()
	reopen := func() error {
		w, err := Open(ctx, pool, c, progs, Options{})
		if err == nil {
			w.Close()
		}
		return err
	}
	var pe *PrivilegeError
	for _, grant := range []struct{ do, undo, says string }{
		{"ALTER ROLE " + w.Role() + " CREATEDB", "ALTER ROLE " + w.Role() + " NOCREATEDB", "attribute"},
		{"GRANT pg_read_server_files TO " + w.Role(), "REVOKE pg_read_server_files FROM " + w.Role(), "membership"},
		{"GRANT EXECUTE ON FUNCTION pg_terminate_backend(integer, bigint) TO PUBLIC", "REVOKE EXECUTE ON FUNCTION pg_terminate_backend(integer, bigint) FROM PUBLIC", "pg_terminate_backend"},
		{"GRANT TEMP ON DATABASE " + pgx.Identifier{pool.Config().ConnConfig.Database}.Sanitize() + " TO PUBLIC", "REVOKE TEMP ON DATABASE " + pgx.Identifier{pool.Config().ConnConfig.Database}.Sanitize() + " FROM PUBLIC", "TEMP"},
	} {
		if _, err := admin.Exec(ctx, grant.do); err != nil {
			t.Fatal(err)
		}
		err := reopen()
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), grant.says) {
			t.Errorf("after %s: %v, want a PrivilegeError naming %s", grant.do, err, grant.says)
		}
		if _, err := admin.Exec(ctx, grant.undo); err != nil {
			t.Fatal(err)
		}
	}
	if err := reopen(); err != nil {
		t.Fatalf("after the grants were undone: %v", err)
	}
	// A session that is a superuser's is refused when it connects.
	pw := "pw-" + strings.Repeat("x", 20)
	if _, err := admin.Exec(ctx, "CREATE ROLE sg_super_probe LOGIN SUPERUSER PASSWORD '"+pw+"'"); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(context.Background(), "DROP ROLE sg_super_probe") //nolint:errcheck // the cluster is the binary's
	conn, err := pgx.ConnectConfig(ctx, sessionConfig(pool, "sg_super_probe", pw, w.opts))
	if err == nil {
		conn.Close(ctx)
	}
	if !errors.As(err, &pe) {
		t.Errorf("a superuser's session: %v, want a PrivilegeError", err)
	}
	// Not set up: no admin function, nothing granted away from PUBLIC.
	bare, err := pgxpool.New(ctx, testenv.EmptyPostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if err := migrate.Apply(ctx, bare); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, bare, newContract(t, seeds), progs, Options{})
	if err == nil || !strings.Contains(err.Error(), "docs/SECURITY.md") {
		t.Errorf("a database without the setup: %v, want an error pointing at docs/SECURITY.md", err)
	}
}

// A session goes back to the world's pool after a copy, even one whose
// statements failed; one a statement may have changed beyond its
// transaction is closed instead.
func TestSessionsAreReusedUnlessChanged(t *testing.T) {
	ctx := context.Background()
	pool := testenv.Postgres(t)
	c := newContract(t, seeds)
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(ctx, pool, c, progs, Options{SkipGuard: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	session := func(sql string) int64 {
		var pid int64
		err := w.Copy(ctx, func(cp *Copy) error {
			rows, err := cp.Query(ctx, "SELECT pg_backend_pid()")
			if err != nil {
				return err
			}
			pid = rows[0].Values[0].(int64)
			if sql != "" {
				_ = cp.ExecBatch(ctx, []scenario.Statement{{SQL: sql}})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	first := session("INSERT INTO users (user_id) VALUES ('no name')") // fails: name is NOT NULL
	if again := session("PREPARE mine AS SELECT 1"); again != first {
		t.Errorf("a failed statement cost the session: %d, then %d", first, again)
	}
	if after := session(""); after == first {
		t.Errorf("the session a PREPARE changed was reused (%d)", after)
	}
}

// A statement that turned its session's statement_timeout off is still
// stopped, on the server, by the copy's deadline: the server cancels it at
// this process's request, and no backend goes on running it.
func TestDeadlineCancelsOnTheServer(t *testing.T) {
	ctx := context.Background()
	pool, admin, _ := poolAndAdmin(t)
	c := newContract(t, seeds)
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The server's own limit is an hour: only the deadline can stop it.
	w, err := Open(ctx, pool, c, progs, Options{SkipGuard: true, StatementTimeout: time.Hour, Deadline: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	err = w.Copy(ctx, func(cp *Copy) error {
		return cp.ExecBatch(ctx, []scenario.Statement{{SQL: "SET statement_timeout = 0"}, {SQL: "SELECT pg_sleep(3600)"}})
	})
	var se *scenario.SetupError
	var pe *pgconn.PgError
	if !errors.As(err, &se) || se.Index != 1 || !errors.As(err, &pe) || pe.Code != "57014" || !strings.Contains(pe.Message, "user request") {
		t.Fatalf("got %v, want statement 2 cancelled at this process's request (57014)", err)
	}
	var running int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND query LIKE '%pg_sleep(3600)%' AND state = 'active'`, w.Role()).Scan(&running); err != nil || running != 0 {
		t.Fatalf("%d backends still sleeping (%v)", running, err)
	}
	if err := w.Copy(ctx, func(cp *Copy) error { _, err := cp.Query(ctx, "SELECT 1"); return err }); err != nil {
		t.Fatalf("the world after a cancelled statement: %v", err)
	}
}

// A session left idle is closed: the world of a contract a long-lived
// process no longer works on holds none.
func TestIdleSessionsAreClosed(t *testing.T) {
	ctx := context.Background()
	pool, admin, _ := poolAndAdmin(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	w.conns.idleFor = 100 * time.Millisecond
	sessions := func() int {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE usename = $1`, w.Role()).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := w.Copy(ctx, func(cp *Copy) error { _, err := cp.Query(ctx, "SELECT 1"); return err }); err != nil {
		t.Fatal(err)
	}
	if n := sessions(); n != 1 {
		t.Fatalf("%d sessions after a copy, want its one, kept idle", n)
	}
	for deadline := time.Now().Add(time.Minute); sessions() > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the idle session is still open after a minute")
		}
	}
	// And the world works on, with a new session.
	if err := w.Copy(ctx, func(cp *Copy) error { _, err := cp.Query(ctx, "SELECT 1"); return err }); err != nil {
		t.Fatal(err)
	}
}

// A handler statement that runs past the world's per-statement limit, while
// the call itself still has time, is a limit of the contract's making: it
// wraps script.ErrLimit (so it is never taken for an outage) and names the
// limit, whatever the machine's load.
func TestStatementTimeIsALimit(t *testing.T) {
	ctx := context.Background()
	pool := testenv.Postgres(t)
	c := newContract(t, seeds)
	c.Sources["handlers/loop.star"] = "def handle(args, db):\n    return db.one(\"SELECT pg_sleep(3600) IS NULL AS slept\")[\"slept\"]\n"
	progs, err := script.Compile(c, script.Options{Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	w, err := Open(ctx, pool, c, progs, Options{StatementTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	_ = w.Copy(ctx, func(cp *Copy) error {
		r := cp.Call(ctx, "loop", map[string]any{})
		if !r.Crash || !errors.Is(r.Err, script.ErrLimit) || !strings.Contains(r.Error, "statement time limit exceeded (200ms)") {
			t.Errorf("got %+v, want a crash on the statement time limit wrapping script.ErrLimit", r)
		}
		if outage.Is(r.Err) {
			t.Errorf("a statement over its limit taken for an outage: %v", r.Err)
		}
		return nil
	})
}

// TestSeededKeysMoveTheirSequence: a seed row that sets a serial key (an
// event numbered 5) moves its sequence past it, so a handler's INSERT that
// leaves the key to the sequence takes a new one, not the seed's.
func TestSeededKeysMoveTheirSequence(t *testing.T) {
	pool := testenv.Postgres(t)
	withEvents := append(slices.Clone(seeds), contract.SeedTable{Table: "events", File: "world/seed/events.jsonl", Lines: []int{1, 2},
		Rows: []map[string]any{{"seq": int64(1), "kind": "seeded"}, {"seq": int64(5), "kind": "seeded"}}})
	w := open(t, pool, newContract(t, withEvents), script.Options{})
	ctx := context.Background()
	err := w.Copy(ctx, func(cp *Copy) error {
		if r := cp.Call(ctx, "cancel_order", map[string]any{"order_id": "#W1", "reason": "no longer needed"}); !r.OK {
			t.Fatalf("cancel_order after a seeded event: %+v %s", r, r.Error)
		}
		rows, err := cp.Query(ctx, "SELECT seq FROM events WHERE kind = 'cancel'")
		if err != nil {
			return err
		}
		if len(rows) != 1 || rows[0].Values[0] != int64(6) {
			t.Errorf("the new event's key: %v, want 6", rows)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A setup that inserts rows with keys of their own moves the sequence past
// them: a handler's INSERT after it takes a fresh key instead of crashing on
// one the setup holds, whatever earlier copies drew from the sequence.
func TestSetupKeysMoveTheirSequence(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	for _, keys := range [][]int64{{1, 2, 3}, {9, 7}} {
		err := w.Copy(ctx, func(cp *Copy) error {
			var stmts []scenario.Statement
			for _, k := range keys {
				stmts = append(stmts, scenario.Statement{SQL: "INSERT INTO events (seq, order_id, kind) VALUES ($1, $2, $3)", Args: []any{k, "#W1", "setup"}})
			}
			if err := cp.ExecBatch(ctx, stmts); err != nil {
				return err
			}
			if r := cp.Call(ctx, "cancel_order", map[string]any{"order_id": "#W1", "reason": "no longer needed"}); !r.OK {
				t.Fatalf("cancel_order after setup keys %v: %+v %s", keys, r, r.Error)
			}
			rows, err := cp.Query(ctx, "SELECT seq FROM events WHERE kind = 'cancel'")
			if err != nil {
				return err
			}
			if len(rows) != 1 || rows[0].Values[0].(int64) <= slices.Max(keys) {
				t.Errorf("the new event's key after setup keys %v: %v", keys, rows)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
