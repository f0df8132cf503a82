package script

import (
	"context"
	"errors"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"

	"github.com/suitegen/suitegen/pkg/contract"
)

// heapDuring is the Go heap the process allocated while f ran. Tests that
// use it do not run in parallel, so the figure is f's, give or take the
// runtime's own few kilobytes.
func heapDuring(f func()) uint64 {
	runtime.GC()
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// allocOnly are limits under which only the allocation budget can stop a
// program: steps and wall clock are far beyond anything the bombs need,
// whatever else the machine is doing.
var allocOnly = Options{MaxSteps: 1 << 40, MaxAlloc: 1 << 20, Timeout: time.Hour}

// bypassBombs each build at least 64 MiB if their route is not charged, in
// few steps, through one route each.
var bypassBombs = map[string]string{
	// method values and builtins taken as values
	"join value":         "f = ''.join\n    l = ['x' * 1024] * 1024\n    keep = []\n    for i in range(64):\n        keep.append(f(l))",
	"join getattr":       "f = getattr('', 'join')\n    l = ['x' * 1024] * 1024\n    return [f(l) for i in range(64)]",
	"getattr on module":  "d = getattr(json, 'decode')\n    s = '[' + '{},' * 4000 + '{}]'\n    return [d(s) for i in range(64)]",
	"module alias":       "m = json\n    s = '[' + '{},' * 4000 + '{}]'\n    return [m.decode(s) for i in range(64)]",
	"upper value":        "u = ('x' * 500000).upper\n    return [u() for i in range(128)]",
	"replace value":      "r = ('x' * 100000).replace\n    return [r('x', 'yy') for i in range(320)]",
	"split value":        "sp = ('x ' * 100000).split\n    return [sp() for i in range(64)]",
	"extend value":       "l = []\n    e = l.extend\n    big = list(range(20000))\n    for i in range(200):\n        e(big)",
	"items value":        "d = {}\n    for i in range(1500):\n        d[i] = i\n    it = d.items\n    return [it() for i in range(1000)]",
	"keys call":          "d = {}\n    for i in range(1500):\n        d[i] = i\n    return [d.keys() for i in range(3000)]",
	"union value":        "s = set(range(2000))\n    u = s.union\n    return [u(s) for i in range(500)]",
	"sorted value":       "g = sorted\n    big = list(range(20000))\n    return [g(big) for i in range(200)]",
	"list value":         "g = list\n    big = list(range(20000))\n    return [g(big) for i in range(200)]",
	"tuple":              "big = list(range(20000))\n    return [tuple(big) for i in range(200)]",
	"dict builtin":       "big = [(i, i) for i in range(1000)]\n    return [dict(big) for i in range(500)]",
	"set builtin":        "big = list(range(1000))\n    return [set(big) for i in range(500)]",
	"zip":                "big = list(range(20000))\n    return [zip(big, big) for i in range(100)]",
	"enumerate":          "big = list(range(20000))\n    return [enumerate(big) for i in range(100)]",
	"reversed":           "big = list(range(20000))\n    return [reversed(big) for i in range(200)]",
	"list of codepoints": "s = 'x' * 100000\n    return [list(s.codepoints()) for i in range(64)]",
	"bytes":              "s = 'x' * 500000\n    return [bytes(s) for i in range(128)]",
	// operators
	"string times":   "return 'x' * (1 << 30)",
	"list times":     "return [0] * (1 << 30)",
	"percent":        "l = ['x' * 100000]\n    for i in range(40):\n        l = [l, l]\n    return len('%s' % [l])",
	"format":         "l = ['x' * 100000]\n    for i in range(40):\n        l = [l, l]\n    return len('{}'.format(l))",
	"plus doubling":  "s = 'x'\n    for i in range(64):\n        s = s + s",
	"dict union":     "d = {}\n    for i in range(1500):\n        d[i] = i\n    return [d | d for i in range(500)]",
	"set difference": "s = set(range(2000))\n    e = set()\n    return [s - e for i in range(500)]",
	"big shift":      "n = 1\n    for i in range(1000000):\n        n = n << 500",
	// slicing and comprehensions
	"list slice":     "big = list(range(20000))\n    return [big[:] for i in range(200)]",
	"string reverse": "s = 'x' * 500000\n    return [s[::-1] for i in range(128)]",
	"empty dicts":    "return [{} for i in range(200000)]",
	"dict compr":     "return [{k: k for k in range(4)} for i in range(100000)]",
	"range":          "return list(range(1 << 30))",
	// augmented assignment
	"iadd string":  "s = 'x'\n    for i in range(64):\n        s += s",
	"iadd element": "d = {'s': 'x'}\n    for i in range(64):\n        d['s'] += d['s']",
	"imul element": "l = ['xx']\n    for i in range(64):\n        l[0] *= 2",
	"iadd list":    "l = [1]\n    for i in range(64):\n        l += l",
	"ior dict":     "d = {}\n    big = {}\n    for i in range(1500):\n        big[i] = i\n    for i in range(500):\n        d = {}\n        d |= big",
	// text of values
	"repr":        "l = ['x' * 100000]\n    for i in range(40):\n        l = [l, l]\n    return len(str(l))",
	"json encode": "l = ['x' * 100000]\n    for i in range(40):\n        l = [l, l]\n    return len(json.encode(l))",
	"json decode": "s = '[' + '{},' * 4000 + '{}]'\n    return [json.decode(s) for i in range(64)]",
	"fail":        "l = ['x' * 100000]\n    for i in range(40):\n        l = [l, l]\n    fail(l)",
	"int parse":   "return int('9' * 500000)",
	// what crosses to the database
	"db param": "l = ['x' * 100000]\n    for i in range(40):\n        l = [l, l]\n    db.execute('SELECT $1', l)",
	"db rows":  "return [db.query('SELECT big') for i in range(1000)]",
}

// bigRows is a query result of about 100 KB.
var bigRows = []Row{{Columns: []string{"big"}, Values: []any{string(make([]byte, 100_000))}}}

// TestAllocationLimitHolds: every route that can allocate more than a
// constant in one step is charged to the budget before it allocates. Each
// bomb builds at least 64 MiB through one route if that route is not
// charged; under a 1 MiB budget, with the step and time limits out of
// reach, each must stop on the allocation limit having allocated a few
// MiB at most, measured on the Go heap.
func TestAllocationLimitHolds(t *testing.T) {
	srcs := map[string]string{}
	names := make([]string, 0, len(bypassBombs))
	for name, body := range bypassBombs {
		srcs[toolName(name)] = "def handle(args, db):\n    " + body + "\n"
		names = append(names, name)
	}
	sort.Strings(names)
	p := compile(t, allocOnly, srcs, nil)
	db := &fakeDB{rows: bigRows}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			var err error
			used := heapDuring(func() { _, err = handle(t, p, toolName(name), nil, db) })
			wantLimit(t, err, "allocation limit")
			if used > 8<<20 {
				t.Errorf("allocated %d bytes under a %d byte budget", used, allocOnly.MaxAlloc)
			}
			t.Logf("stopped after %d bytes of Go heap", used)
		})
	}
}

func toolName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == ' ' {
			b[i] = '_'
		}
	}
	return string(b)
}

// TestAllocationLimitInTopLevel: a file's top level (run once at compile
// time) is held to the same budget.
func TestAllocationLimitInTopLevel(t *testing.T) {
	_, err := compileErr(allocOnly, map[string]string{
		"t": "f = ''.join\nbig = [f(['x' * 1024] * 1024) for i in range(64)]\ndef handle(args, db):\n    return 1\n",
	}, nil)
	var ce *CompileError
	if err == nil || !errors.As(err, &ce) || !strings.Contains(ce.Error(), "allocation limit") {
		t.Fatalf("a top-level bomb compiled: %v", err)
	}
}

// TestAllocationLimitInAddedSubGoal: a sub-goal a model adds during a run
// is compiled and checked under the contract's limits, measured.
func TestAllocationLimitInAddedSubGoal(t *testing.T) {
	p := compile(t, allocOnly, map[string]string{"t": "def handle(args, db):\n    return 1\n"}, nil)
	src := "what = 'x'\nparams = {}\ndef check(world, calls, params):\n    f = ''.join\n    l = ['x' * 1024] * 1024\n    keep = [f(l) for i in range(64)]\n"
	sg, probs := contract.ParseSubGoal("subgoals/bomb.star", src)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	np, err := p.WithSubGoals(map[string]string{}, []contract.SubGoal{sg})
	if err != nil {
		t.Fatal(err)
	}
	var held bool
	used := heapDuring(func() {
		held, _, err = np.Check(context.Background(), sg.Name, &view{db: &fakeDB{}}, nil, nil)
	})
	if held || !errors.Is(err, ErrBroken) || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "allocation limit") {
		t.Fatalf("want a broken check stopped by the allocation limit, got %v %v", held, err)
	}
	if used > 8<<20 {
		t.Errorf("allocated %d bytes under a %d byte budget", used, allocOnly.MaxAlloc)
	}

	// The world's fields are charged when read.
	src = "what = 'x'\nparams = {}\ndef check(world, calls, params):\n    keep = [world.said for i in range(100000)]\n"
	sg, _ = contract.ParseSubGoal("subgoals/said.star", src)
	np, err = p.WithSubGoals(map[string]string{}, []contract.SubGoal{sg})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = np.Check(context.Background(), sg.Name, &view{db: &fakeDB{}}, nil, nil)
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "allocation limit") {
		t.Fatalf("reading world.said in a loop: %v", err)
	}
}

// TestEveryMethodCosted: each method of each built-in type has its own cost
// in methodCosts, so a newer Starlark's method does not slip through
// uncosted (it would be charged the conservative default, and this fails).
func TestEveryMethodCosted(t *testing.T) {
	for _, v := range []starlark.HasAttrs{starlark.String(""), starlark.Bytes(""), starlark.NewList(nil), starlark.NewDict(0), starlark.NewSet(0)} {
		for _, name := range v.AttrNames() {
			if _, ok := methodCosts[v.Type()][name]; !ok {
				t.Errorf("%s.%s has no cost", v.Type(), name)
			}
		}
	}
}

// TestStepBoundedGrowth measures what the budget does not count: values
// that take a constant each (a list slot, a tuple, a closure) and so are
// bounded by the step limit. The figure in docs/RELIABILITY.md is the
// largest of these.
func TestStepBoundedGrowth(t *testing.T) {
	const perStep = 64
	progs := map[string]string{
		"lists":    "keep = [[] for i in range(20000)]",
		"tuples":   "keep = [(i, i) for i in range(20000)]",
		"literals": "keep = [[[], [], [], [], [], [], [], []] for i in range(2000)]",
		"closures": "keep = [lambda: i for i in range(20000)]",
		"strings":  "keep = [str(i) for i in range(20000)]",
		"append":   "keep = []\n    for i in range(20000):\n        keep.append(i)",
		"dict set": "keep = {}\n    for i in range(20000):\n        keep[i] = i",
	}
	srcs := map[string]string{}
	for name, body := range progs {
		srcs[toolName(name)] = "def handle(args, db):\n    " + body + "\n    return len(keep)\n"
	}
	p := compile(t, Options{MaxSteps: 1 << 40, Timeout: time.Hour}, srcs, nil)
	worst := 0.0
	for name := range progs {
		var tr Trace
		var err error
		used := heapDuring(func() { _, tr, err = p.HandleWithTrace(context.Background(), toolName(name), nil, nil) })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		per := float64(used) / float64(tr.Steps)
		worst = max(worst, per)
		t.Logf("%-9s %7d steps %9d bytes %5.1f bytes/step", name, tr.Steps, used, per)
		if per > perStep {
			t.Errorf("%s: %.0f bytes per step, more than %d", name, per, perStep)
		}
	}
	t.Logf("worst: %.0f bytes per step", worst)
}

// TestOrdinaryWorkWithinBudget: typical handler work charges far less
// than the default budget.
func TestOrdinaryWorkWithinBudget(t *testing.T) {
	p := compile(t, Options{MaxAlloc: 4 << 20}, map[string]string{"t": `
def handle(args, db):
    rows = []
    for i in range(500):
        rows.append({"id": "#W%d" % i, "items": [{"sku": str(j), "qty": j} for j in range(3)], "status": "pending"})
    by_status = {}
    for r in rows:
        by_status.setdefault(r["status"], []).append(r["id"])
    text = "\n".join(["%s: %s" % (k, ", ".join(v[:3])) for k, v in by_status.items()])
    total = sum_qty(rows)
    return {"text": text.upper()[:40], "total": total, "n": len(json.decode(json.encode(rows[:50])))}

def sum_qty(rows):
    n = 0
    for r in rows:
        for it in r["items"]:
            n += it["qty"]
    return n
`}, nil)
	got, err := handle(t, p, "t", nil, nil)
	if err != nil || got != `{"text":"PENDING: #W0, #W1, #W2","total":1500,"n":50}` {
		t.Fatalf("got %s %v", got, err)
	}
}
