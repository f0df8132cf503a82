package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/suitegen/suitegen/pkg/contract"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeDB answers queries from a fixed table of rows and records what it was
// sent. The SQL itself is exercised against real Postgres in pkg/world.
type fakeDB struct {
	mu       sync.Mutex
	rows     []Row
	affected int64
	err      error
	sent     []string
	params   [][]any
}

func (f *fakeDB) Query(ctx context.Context, sql string, args ...any) ([]Row, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, sql)
	f.params = append(f.params, args)
	return f.rows, f.err
}

func (f *fakeDB) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, sql)
	f.params = append(f.params, args)
	return f.affected, f.err
}

// compile builds a contract with one tool per handler source.
func compile(t testing.TB, opts Options, handlers map[string]string, extra map[string]string) *Programs {
	t.Helper()
	p, err := compileErr(opts, handlers, extra)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return p
}

func compileErr(opts Options, handlers map[string]string, extra map[string]string) (*Programs, error) {
	c := &contract.Contract{Sources: map[string]string{}}
	for name, src := range handlers {
		c.Tools = append(c.Tools, contract.Tool{Name: name})
		c.Sources["handlers/"+name+".star"] = src
	}
	for path, src := range extra {
		c.Sources[path] = src
	}
	return Compile(c, opts)
}

func handle(t testing.TB, p *Programs, tool string, args map[string]any, db DB) (string, error) {
	t.Helper()
	res, err := p.Handle(context.Background(), tool, args, db)
	return string(res), err
}

func TestOutcomes(t *testing.T) {
	p := compile(t, Options{}, map[string]string{
		"ok":     "def handle(args, db):\n    return {'id': args['id'], 'n': 2}\n",
		"refuse": "def handle(args, db):\n    refuse('order %s not found' % args['id'])\n    return 1\n",
		"crash":  "def handle(args, db):\n    return args['missing']\n",
		"fail":   "def handle(args, db):\n    fail('boom')\n",
		"format": "def handle(args, db):\n    return '%.2f' % 1.5\n",
		"str":    "def handle(args, db):\n    return 'Order #W1 is \"pending\"'\n",
		"none":   "def handle(args, db):\n    pass\n",
	}, nil)
	args := map[string]any{"id": "#W1"}

	got, err := handle(t, p, "ok", args, nil)
	if err != nil || got != `{"id":"#W1","n":2}` {
		t.Errorf("ok: %q, %v", got, err)
	}

	_, err = handle(t, p, "refuse", args, nil)
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Message != "order #W1 not found" {
		t.Errorf("refuse: %v", err)
	}
	var crash *Crash
	if errors.As(err, &crash) {
		t.Errorf("a refusal must not be a crash: %v", err)
	}

	for _, tool := range []string{"crash", "fail"} {
		_, err = handle(t, p, tool, args, nil)
		if !errors.As(err, &crash) || errors.As(err, &ref) {
			t.Errorf("%s: want a crash, got %v", tool, err)
		}
	}
	// A crash inside a builtin (fail, the % operator) names the handler's
	// line that called it, not the builtin.
	for _, tool := range []string{"crash", "fail", "format"} {
		_, err = handle(t, p, tool, args, nil)
		if !strings.Contains(err.Error(), "handlers/"+tool+".star:2:") {
			t.Errorf("%s: crash reason should name the file and line: %v", tool, err)
		}
	}

	got, err = handle(t, p, "str", args, nil)
	if err != nil || got != `"Order #W1 is \"pending\""` {
		t.Errorf("string result: %q, %v", got, err)
	}
	got, err = handle(t, p, "none", args, nil)
	if err != nil || got != "null" {
		t.Errorf("None result: %q, %v", got, err)
	}

	_, err = handle(t, p, "nosuch", args, nil)
	if !errors.Is(err, ErrNoHandler) {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestResultKeepsInsertionOrder(t *testing.T) {
	p := compile(t, Options{}, map[string]string{
		"t": `
def handle(args, db):
    d = {"zeta": 1, "alpha": [1, 2.5, None, True], "mid": {"y": "x", "b": {}}}
    d["aardvark"] = (1, 2)
    d["zeta"] = 3
    return d
`}, nil)
	got, err := handle(t, p, "t", nil, nil)
	want := `{"zeta":3,"alpha":[1,2.5,null,true],"mid":{"y":"x","b":{}},"aardvark":[1,2]}`
	if err != nil || got != want {
		t.Errorf("got %s, %v\nwant %s", got, err, want)
	}
}

func TestRound(t *testing.T) {
	cases := map[string]string{
		"round(2.5)":         "2",
		"round(3.5)":         "4",
		"round(-2.5)":        "-2",
		"round(0.5)":         "0",
		"round(0.125, 2)":    "0.12",
		"round(0.375, 2)":    "0.38",
		"round(2.675, 2)":    "2.67",
		"round(1.005, 2)":    "1.0",
		"round(2.5, 0)":      "2.0",
		"round(1234, -2)":    "1200",
		"round(1250, -2)":    "1200",
		"round(1350, -2)":    "1400",
		"round(7)":           "7",
		"round(15.0, -1)":    "20.0",
		"round(25.0, -1)":    "20.0",
		"round(1e300)":       "1000000000000000052504760255204420248704468581108159154915854115511802457988908195786371375080447864043704443832883878176942523235360430575644792184786706982848387200926575803737830233794788090059368953234970799945081119038967640880074652742780142494579258788820056842838115669472196386865459400540160",
		"round(-0.4, 0)":     "-0.0",
		"round(123.456, 1)":  "123.5",
		"round(5e-324, 400)": "5e-324",
	}
	for expr, want := range cases {
		p := compile(t, Options{}, map[string]string{"t": "def handle(args, db):\n    return str(" + expr + ")\n"}, nil)
		got, err := handle(t, p, "t", nil, nil)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		var s string
		_ = json.Unmarshal([]byte(got), &s)
		if s != want {
			t.Errorf("%s = %s, want %s", expr, s, want)
		}
	}
	p := compile(t, Options{}, map[string]string{"t": "def handle(args, db):\n    return [type(round(2.5)), type(round(2.5, 1)), round(2.5) == 2, round(0.125, 2) == 0.12, round(2.675, 2) == 2.67]\n"}, nil)
	got, err := handle(t, p, "t", nil, nil)
	if err != nil || got != `["int","float",true,true,true]` {
		t.Errorf("round types: %s %v", got, err)
	}
}

func wantLimit(t *testing.T, err error, words string) {
	t.Helper()
	var crash *Crash
	if !errors.As(err, &crash) || !errors.Is(err, ErrLimit) {
		t.Fatalf("want a limit crash (%s), got %v", words, err)
	}
	if !strings.Contains(crash.Reason, words) {
		t.Fatalf("crash reason %q does not say %q", crash.Reason, words)
	}
}

func TestStepLimit(t *testing.T) {
	p := compile(t, Options{MaxSteps: 10_000}, map[string]string{
		"loop": "def handle(args, db):\n    while True:\n        pass\n",
		"ok":   "def handle(args, db):\n    n = 0\n    for i in range(100):\n        n += i\n    return n\n",
	}, nil)
	_, err := handle(t, p, "loop", nil, nil)
	wantLimit(t, err, "step limit")
	// The next call on the same programs starts afresh.
	got, err := handle(t, p, "ok", nil, nil)
	if err != nil || got != "4950" {
		t.Fatalf("ok after a limit: %s %v", got, err)
	}
}

// TestQueryLimit: a handler that queries in a loop is stopped by counting its
// round trips, so where it stops does not depend on how fast the database
// answers.
func TestQueryLimit(t *testing.T) {
	p := compile(t, Options{MaxSteps: 1 << 40, MaxQueries: 20, Timeout: time.Hour}, map[string]string{
		"reads":  "def handle(args, db):\n    for i in range(args['n']):\n        db.query('SELECT 1')\n    return args['n']\n",
		"writes": "def handle(args, db):\n    for i in range(args['n']):\n        db.execute('UPDATE t SET a = 1')\n    return args['n']\n",
	}, nil)
	for _, tool := range []string{"reads", "writes"} {
		db := &fakeDB{}
		if got, err := handle(t, p, tool, map[string]any{"n": 20}, db); err != nil || got != "20" {
			t.Fatalf("%s at the limit: %s %v", tool, got, err)
		}
		db = &fakeDB{}
		_, err := handle(t, p, tool, map[string]any{"n": 21}, db)
		wantLimit(t, err, "query limit")
		if len(db.sent) != 20 {
			t.Fatalf("%s past the limit sent %d statements, want 20", tool, len(db.sent))
		}
	}
	if _, err := Compile(&contract.Contract{}, Options{MaxQueries: -1}); err == nil || !strings.Contains(err.Error(), "MaxQueries") {
		t.Fatalf("negative MaxQueries: %v", err)
	}
}

func TestWallClockLimit(t *testing.T) {
	p := compile(t, Options{MaxSteps: 1 << 62, Timeout: 100 * time.Millisecond}, map[string]string{
		"loop": "def handle(args, db):\n    while True:\n        pass\n",
	}, nil)
	start := time.Now()
	_, err := handle(t, p, "loop", nil, nil)
	wantLimit(t, err, "wall-clock limit")
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("stopped after %s", d)
	}
}

func TestContextCancel(t *testing.T) {
	p := compile(t, Options{MaxSteps: 1 << 62, Timeout: time.Minute}, map[string]string{
		"loop": "def handle(args, db):\n    while True:\n        pass\n",
	}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Handle(ctx, "loop", nil, nil)
	wantLimit(t, err, "cancelled")
}

func TestDepthLimit(t *testing.T) {
	p := compile(t, Options{MaxSteps: 1 << 40, MaxDepth: 100}, map[string]string{
		"deep":    "def f(n):\n    return f(n + 1)\n\ndef handle(args, db):\n    return f(0)\n",
		"shallow": "def f(n):\n    if n == 0:\n        return 0\n    return 1 + f(n - 1)\n\ndef handle(args, db):\n    return f(50)\n",
	}, nil)
	_, err := handle(t, p, "deep", nil, nil)
	wantLimit(t, err, "call depth")
	got, err := handle(t, p, "shallow", nil, nil)
	if err != nil || got != "50" {
		t.Fatalf("recursion within the limit: %s %v", got, err)
	}
}

func TestAllocationLimit(t *testing.T) {
	bombs := map[string]string{
		"repeat":   `return "x" * (1 << 30)`,
		"double":   "s = 'x'\n    for i in range(40):\n        s = s + s\n    return len(s)",
		"iadd":     "s = 'x'\n    for i in range(40):\n        s += s\n    return len(s)",
		"imul":     "s = 'xx'\n    for i in range(40):\n        s *= 2\n    return len(s)",
		"listmul":  "l = [1]\n    for i in range(40):\n        l = l * 2\n    return len(l)",
		"listiadd": "l = [1]\n    for i in range(40):\n        l += l\n    return len(l)",
		"join":     "s = 'x' * 1000000\n    l = [s] * 1000\n    return len(''.join(l))",
		"replace":  "s = 'x' * 100000\n    return len(s.replace('', s))",
		"repr":     "l = ['x' * 100000]\n    for i in range(40):\n        l = [l, l]\n    return len(str(l))",
		"format":   "l = ['x' * 100000]\n    for i in range(40):\n        l = [l, l]\n    return len('%s' % [l])",
		"json":     "l = ['x' * 100000]\n    for i in range(40):\n        l = [l, l]\n    return len(json.encode(l))",
		"listcopy": "big = list(range(1000000))\n    keep = []\n    for i in range(1000):\n        keep.append(list(big))\n    return len(keep)",
		"bigint":   "n = 3\n    for i in range(40):\n        n = n * n\n    return n % 10",
	}
	srcs := map[string]string{}
	for name, body := range bombs {
		srcs[name] = "def handle(args, db):\n    " + body + "\n"
	}
	// A wall clock generous enough that only the allocation bound can stop
	// the bombs, even under -race on a busy machine.
	p := compile(t, Options{MaxSteps: 1 << 40, MaxAlloc: 64 << 20, Timeout: time.Minute}, srcs, nil)
	for name := range bombs {
		t.Run(name, func(t *testing.T) {
			_, err := handle(t, p, name, nil, nil)
			wantLimit(t, err, "allocation limit")
		})
	}
	// Ordinary work stays well within the budget.
	p = compile(t, Options{}, map[string]string{"t": `
def handle(args, db):
    parts = []
    for i in range(1000):
        parts.append("line %d of %s" % (i, "report"))
    s = "\n".join(parts)
    s = s.replace("line", "row")
    return len(s.split("\n")) + len(str(parts)) % 1
`}, nil)
	if got, err := handle(t, p, "t", nil, nil); err != nil || got != "1000" {
		t.Fatalf("ordinary work: %s %v", got, err)
	}
}

func TestResultLimit(t *testing.T) {
	p := compile(t, Options{MaxResult: 1000}, map[string]string{
		"t": "def handle(args, db):\n    return ['x' * 100] * 20\n",
	}, nil)
	_, err := handle(t, p, "t", nil, nil)
	wantLimit(t, err, "result")
}

func TestLanguageSemanticsKept(t *testing.T) {
	p := compile(t, Options{}, map[string]string{"t": `
def handle(args, db):
    a = []
    b = a
    b += [1, 2]         # lists extend in place
    s = "ab"
    s *= 2
    d = {"k": [1]}
    d["k"] += [2]
    t = (1,) + (2,)
    fmt = "%s-%d" % ("x", 3)
    n = 0
    n += 5
    seen = set([1, 2])
    while n > 3:
        n -= 1
    words = "a,b".split(",")
    words.extend(["c"])
    return [a, s, d, t, fmt, n, len(seen), words, "{}!".format("hi"), 7 * 6, 1.5 + 1]
`}, nil)
	got, err := handle(t, p, "t", nil, nil)
	want := `[[1,2],"abab",{"k":[1,2]},[1,2],"x-3",3,2,["a","b","c"],"hi!",42,2.5]`
	if err != nil || got != want {
		t.Fatalf("got %s %v\nwant %s", got, err, want)
	}
	p = compile(t, Options{}, map[string]string{"t": `
def handle(args, db):
    d = {"x": "ab", "n": 3, "l": [1], "d": {"a": 1}}
    l = ["a", [1]]
    d["x"] *= 2
    d["n"] -= 1
    d["n"] <<= 2
    alias = d["l"]
    d["l"] += [2]
    d["d"] |= {"b": 2}
    l[-1] += [3]
    l[0] %= ()
    s = "abcdef"
    return [d, l, alias, s[1:4], s[::-2], s[-2:], [1, 2, 3][::-1], (1, 2, 3)[1:]]
`}, nil)
	got, err = handle(t, p, "t", nil, nil)
	want = `[{"x":"abab","n":8,"l":[1,2],"d":{"a":1,"b":2}},["a",[1,3]],[1,2],"bcd","fdb","ef",[3,2,1],[2,3]]`
	if err != nil || got != want {
		t.Fatalf("augmented elements and slices: got %s %v\nwant %s", got, err, want)
	}
	_, err = compileErr(Options{}, map[string]string{"t": "def handle(args, db):\n    d = {}\n    d.x += 2\n"}, nil)
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Errs[0].Line != 3 {
		t.Fatalf("+= on a field: %v", err)
	}
}

func TestLoad(t *testing.T) {
	lib := map[string]string{
		"lib/orders.star": "load('lib/fmt.star', 'money')\n\ndef order_doc(o):\n    return {'id': o, 'total': money(12.5)}\n",
		"lib/fmt.star":    "def money(x):\n    return '$%s' % x\n",
	}
	p := compile(t, Options{}, map[string]string{
		"t": "load('lib/orders.star', 'order_doc')\n\ndef handle(args, db):\n    return order_doc('#W1')\n",
	}, lib)
	got, err := handle(t, p, "t", nil, nil)
	if err != nil || got != `{"id":"#W1","total":"$12.5"}` {
		t.Fatalf("load: %s %v", got, err)
	}

	for _, mod := range []string{"/etc/passwd", "../../etc/passwd", "lib/nosuch.star", "script.go"} {
		_, err := compileErr(Options{}, map[string]string{"t": fmt.Sprintf("load(%q, 'x')\n\ndef handle(args, db):\n    return 1\n", mod)}, nil)
		var ce *CompileError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "handlers/t.star:1") {
			t.Errorf("load(%q): want a compile error at handlers/t.star:1, got %v", mod, err)
		}
	}

	_, err = compileErr(Options{}, map[string]string{"t": "load('lib/a.star', 'a')\n\ndef handle(args, db):\n    return a\n"}, map[string]string{
		"lib/a.star": "load('lib/b.star', 'b')\na = 1\n",
		"lib/b.star": "load('lib/a.star', 'a')\nb = 1\n",
	})
	if err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("load cycle: %v", err)
	}

	// Loaded modules are frozen: a handler cannot change shared state.
	p = compile(t, Options{}, map[string]string{
		"t": "load('lib/s.star', 'cache')\n\ndef handle(args, db):\n    cache.append(1)\n    return len(cache)\n",
	}, map[string]string{"lib/s.star": "cache = []\n"})
	if _, err := handle(t, p, "t", nil, nil); err == nil || !strings.Contains(err.Error(), "frozen") {
		t.Errorf("mutating a loaded global: %v", err)
	}
}

func TestCompileErrors(t *testing.T) {
	_, err := compileErr(Options{}, map[string]string{
		"a": "def handle(args, db):\n    return (\n",
		"b": "def other(args, db):\n    return 1\n",
		"c": "x = undefined_name\ndef handle(args, db):\n    return 1\n",
	}, nil)
	var ce *CompileError
	if !errors.As(err, &ce) || len(ce.Errs) != 3 {
		t.Fatalf("want three file errors, got %v", err)
	}
	if ce.Errs[0].File != "handlers/a.star" || ce.Errs[0].Line == 0 {
		t.Errorf("syntax error position: %+v", ce.Errs[0])
	}
	if !strings.Contains(ce.Errs[1].Msg, "handle") {
		t.Errorf("missing handle: %+v", ce.Errs[1])
	}
	if ce.Errs[2].Line != 1 {
		t.Errorf("undefined name position: %+v", ce.Errs[2])
	}
	if _, err := Compile(&contract.Contract{}, Options{Timeout: -1}); err == nil || !strings.Contains(err.Error(), "Timeout") {
		t.Errorf("bad options must name the field: %v", err)
	}
}

func TestNowAndPrint(t *testing.T) {
	srcs := map[string]string{"t": "def handle(args, db):\n    print('ignored', args)\n    return now\n"}
	c := &contract.Contract{Now: "2026-03-10T10:00:00-06:00", Tools: []contract.Tool{{Name: "t"}}, Sources: map[string]string{"handlers/t.star": srcs["t"]}}
	p, err := Compile(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := handle(t, p, "t", nil, nil)
	if err != nil || got != `"2026-03-10T10:00:00-06:00"` {
		t.Errorf("contract now: %s %v", got, err)
	}
	p = compile(t, Options{}, srcs, nil)
	if got, _ := handle(t, p, "t", nil, nil); got != `"`+DefaultNow+`"` {
		t.Errorf("default now: %s", got)
	}
	p = compile(t, Options{Now: "2030-01-01T00:00:00Z"}, srcs, nil)
	if got, _ := handle(t, p, "t", nil, nil); got != `"2030-01-01T00:00:00Z"` {
		t.Errorf("option now: %s", got)
	}
}

func TestReadKeys(t *testing.T) {
	p := compile(t, Options{}, map[string]string{
		"some": `
def handle(args, db):
    x = args["a"]
    y = args.get("b")
    z = "c" in args
    w = args.get("zz", 3)
    return [x, y, z, w]
`,
		"all":    "def handle(args, db):\n    return [k for k in args]\n",
		"items":  "def handle(args, db):\n    return args.items()\n",
		"none":   "def handle(args, db):\n    return 1\n",
		"refuse": "def handle(args, db):\n    if args['a'] == 1:\n        refuse('no')\n    return args['b']\n",
	}, nil)
	args := map[string]any{"a": int64(1), "b": "x", "c": nil, "d": []any{int64(1)}}
	cases := map[string][]string{
		"some":   {"a", "b", "c", "zz"},
		"all":    {"a", "b", "c", "d"},
		"items":  {"a", "b", "c", "d"},
		"none":   {},
		"refuse": {"a"},
	}
	for tool, want := range cases {
		_, read, _ := p.HandleTraced(context.Background(), tool, args, nil)
		if !reflect.DeepEqual(read, want) {
			t.Errorf("%s read %v, want %v", tool, read, want)
		}
	}
	got, err := handle(t, p, "some", args, nil)
	if err != nil || got != `[1,"x",true,3]` {
		t.Errorf("values: %s %v", got, err)
	}
}

func TestDB(t *testing.T) {
	p := compile(t, Options{MaxRows: 3}, map[string]string{
		"q": `
def handle(args, db):
    rows = db.query("SELECT id, n FROM t WHERE x = $1 AND y = $2", {"z": 1, "a": [1, 2]}, [None, 1.5])
    rows[0]["n"] = 99   # values are fresh and mutable
    return rows
`,
		"one":  "def handle(args, db):\n    return db.one('SELECT 1')\n",
		"exec": "def handle(args, db):\n    return db.execute('UPDATE t SET x = $1', args['v'])\n",
	}, nil)
	db := &fakeDB{rows: []Row{{Columns: []string{"id", "n"}, Values: []any{"b", int64(1)}}, {Columns: []string{"id", "n"}, Values: []any{"a", map[string]any{"k": 1.5, "j": []any{true}}}}}}
	got, err := handle(t, p, "q", nil, db)
	if err != nil || got != `[{"id":"b","n":99},{"id":"a","n":{"j":[true],"k":1.5}}]` {
		t.Fatalf("query: %s %v", got, err)
	}
	if want := []any{JSONParam(`{"z":1,"a":[1,2]}`), JSONParam(`[null,1.5]`)}; !reflect.DeepEqual(db.params[0], want) {
		t.Errorf("params sent: %#v", db.params[0])
	}

	if _, err := handle(t, p, "one", nil, db); err == nil || !strings.Contains(err.Error(), "at most one") {
		t.Errorf("one with two rows must crash: %v", err)
	}
	db.rows = nil
	if got, err := handle(t, p, "one", nil, db); err != nil || got != "null" {
		t.Errorf("one with no rows: %s %v", got, err)
	}
	db.rows = make([]Row, 4)
	_, err = handle(t, p, "q", nil, db)
	wantLimit(t, err, "row limit")

	db.affected = 2
	_, tr, err := p.HandleWithTrace(context.Background(), "exec", map[string]any{"v": int64(1)}, db)
	if err != nil || !tr.Wrote {
		t.Errorf("execute affecting rows: wrote=%v %v", tr.Wrote, err)
	}
	db.affected = 0
	_, tr, _ = p.HandleWithTrace(context.Background(), "exec", map[string]any{"v": int64(1)}, db)
	if tr.Wrote {
		t.Error("execute affecting no rows must not count as a write")
	}
	db.err = errors.New("relation t does not exist")
	_, err = handle(t, p, "exec", map[string]any{"v": int64(1)}, db)
	var crash *Crash
	if !errors.As(err, &crash) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a database error is a crash: %v", err)
	}
}

type view struct {
	db      *fakeDB
	before  *view
	opened  int
	callers any
}

func (v *view) Query(ctx context.Context, sql string, args ...any) ([]Row, error) {
	return v.db.Query(ctx, sql, args...)
}
func (v *view) Before() WorldView {
	v.opened++
	if v.before == nil {
		return nil
	}
	return v.before
}
func (v *view) Caller(context.Context) (any, error) { return v.callers, nil }
func (v *view) Said() []string                      { return []string{"hello"} }

func TestCheck(t *testing.T) {
	checks := map[string]string{
		"held":    "def check(world, calls, params):\n    return None\n",
		"true":    "def check(world, calls, params):\n    return True\n",
		"why":     "def check(world, calls, params):\n    return 'order %s is not cancelled' % params['order_id']\n",
		"false":   "def check(world, calls, params):\n    return False\n",
		"raises":  "def check(world, calls, params):\n    return params['nope']\n",
		"refuses": "def check(world, calls, params):\n    refuse('x')\n",
		"number":  "def check(world, calls, params):\n    return 1\n",
		"exec":    "def check(world, calls, params):\n    world.execute('DELETE FROM t')\n",
		"before": `
def check(world, calls, params):
    now_ = world.one("SELECT status FROM orders")
    was = world.before.one("SELECT status FROM orders")
    if world.before.one("SELECT 1") == None:
        return "x"
    return "%s->%s" % (was["status"], now_["status"])
`,
		"nobefore": "def check(world, calls, params):\n    return str(world.before)\n",
		"calls": `
def check(world, calls, params):
    c = calls[0]
    return json.encode([c["tool"], c["ok"], c["refused"], c["result"]["id"], c["result"]["n"], c["args"], c["error"], calls[1]["result"], calls[1]["error"], world.caller, world.said])
`,
		"loop": "def check(world, calls, params):\n    while True:\n        pass\n",
	}
	c := &contract.Contract{Sources: map[string]string{}}
	for name, src := range checks {
		c.SubGoals = append(c.SubGoals, contract.SubGoal{Name: name, File: "subgoals/" + name + ".star"})
		c.Sources["subgoals/"+name+".star"] = src
	}
	c.SubGoals = append(c.SubGoals, contract.SubGoal{Name: "judged", Judged: true, File: "subgoals/judged.star"})
	c.Sources["subgoals/judged.star"] = "what = 'polite'\njudged = True\n"
	p, err := Compile(c, Options{MaxSteps: 10000})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w := &view{db: &fakeDB{}}
	params := map[string]any{"order_id": "#W1"}

	for name, want := range map[string]struct {
		held bool
		why  string
	}{"held": {true, ""}, "true": {true, ""}, "why": {false, "order #W1 is not cancelled"}} {
		held, why, err := p.Check(ctx, name, w, nil, params)
		if err != nil || held != want.held || why != want.why {
			t.Errorf("%s: %v %q %v", name, held, why, err)
		}
	}
	for _, name := range []string{"false", "raises", "refuses", "number", "exec", "loop", "judged", "nosuch"} {
		if _, _, err := p.Check(ctx, name, w, nil, params); !errors.Is(err, ErrBroken) {
			t.Errorf("%s: want broken, got %v", name, err)
		}
	}

	end := &fakeDB{rows: []Row{{Columns: []string{"status"}, Values: []any{"cancelled"}}}}
	start := &view{db: &fakeDB{rows: []Row{{Columns: []string{"status"}, Values: []any{"pending"}}}}}
	w = &view{db: end, before: start}
	held, why, err := p.Check(ctx, "before", w, nil, nil)
	if err != nil || held || why != "pending->cancelled" {
		t.Errorf("before: %v %q %v", held, why, err)
	}
	if w.opened != 1 {
		t.Errorf("world.before opened %d times, want once", w.opened)
	}
	w = &view{db: end}
	if _, why, err := p.Check(ctx, "nobefore", w, nil, nil); err != nil || why != "None" {
		t.Errorf("nil before: %q %v", why, err)
	}
	w = &view{db: end}
	if _, _, _ = p.Check(ctx, "held", w, nil, nil); w.opened != 0 {
		t.Error("a check that does not read world.before must not open it")
	}

	calls := []Call{
		{Tool: "get_order", Args: map[string]any{"order_id": "#W1"}, OK: true, Result: json.RawMessage(`{"n":12345678901234,"id":"#W1"}`)},
		{Tool: "cancel", Refused: true, Error: "Error: not pending"},
	}
	w = &view{db: end, callers: "user_1"}
	_, why, err = p.Check(ctx, "calls", w, calls, nil)
	want := `["get_order",true,false,"#W1",12345678901234,{"order_id":"#W1"},null,null,"Error: not pending","user_1",["hello"]]`
	if err != nil || why != want {
		t.Errorf("calls:\n got %s %v\nwant %s", why, err, want)
	}
}

func TestConcurrentCalls(t *testing.T) {
	p := compile(t, Options{}, map[string]string{"t": `
def handle(args, db):
    total = 0
    for i in range(args["n"]):
        total += i
    return {"n": args["n"], "total": total}
`}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				n := int64(g*50 + i)
				got, err := p.Handle(context.Background(), "t", map[string]any{"n": n}, nil)
				if want := fmt.Sprintf(`{"n":%d,"total":%d}`, n, n*(n-1)/2); err != nil || string(got) != want {
					errs <- fmt.Errorf("got %s %v want %s", got, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func FuzzHandleArgs(f *testing.F) {
	p, err := compileErr(Options{MaxSteps: 100_000}, map[string]string{"t": `
def handle(args, db):
    out = {}
    for k in args:
        v = args[k]
        if type(v) == "string":
            out[k] = v.upper() + v * 2
        elif type(v) == "list":
            out[k] = len(v)
        elif type(v) == "dict":
            out[k] = sorted(v.keys())
        elif type(v) in ("int", "float"):
            out[k] = round(v * 1.5, 2)
        else:
            out[k] = v
    if "refuse" in args:
        refuse("asked to")
    return out
`}, nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{`{}`, `{"a":"x","b":[1,2],"c":{"z":1,"a":2}}`, `{"n":1e308,"m":-3,"s":null,"t":true}`, `{"refuse":1}`, `{"big":123456789012345678901234567890}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := DecodeJSON([]byte(s))
		if err != nil {
			return
		}
		args, ok := v.(map[string]any)
		if !ok {
			return
		}
		res, err := p.Handle(context.Background(), "t", args, nil)
		var ref *Refusal
		var crash *Crash
		switch {
		case err == nil:
			if !json.Valid(res) {
				t.Fatalf("invalid JSON result %q", res)
			}
		case errors.As(err, &ref), errors.As(err, &crash):
		default:
			t.Fatalf("error that is neither refusal nor crash: %T %v", err, err)
		}
	})
}

func BenchmarkHandle(b *testing.B) {
	p := compile(b, Options{}, map[string]string{"t": `
def handle(args, db):
    order = db.one("SELECT * FROM orders WHERE id = $1", args["order_id"])
    if order == None:
        refuse("order not found")
    return {"id": order["id"], "status": order["status"], "items": [1, 2, 3]}
`}, nil)
	db := &fakeDB{rows: []Row{{Columns: []string{"id", "status"}, Values: []any{"#W1", "pending"}}}}
	args := map[string]any{"order_id": "#W1"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		db.sent, db.params = db.sent[:0], db.params[:0]
		if _, err := p.Handle(ctx, "t", args, db); err != nil {
			b.Fatal(err)
		}
	}
}
