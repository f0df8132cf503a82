package script

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
)

func branchLines(bs []Branch) string {
	var parts []string
	for _, b := range bs {
		s := b.At()
		if b.Else {
			s += "(else)"
		}
		parts = append(parts, s+"@"+b.Func)
	}
	return strings.Join(parts, " ")
}

func TestFileBranchesStyles(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"nested ifs", `
def handle(args, db):
    row = db.one("x")
    if row != None:
        if row["status"] != "open":
            refuse("closed")
    return row
`, "h.star:5@handle"},
		{"elif chain and else", `
def handle(args, db):
    k = args["kind"]
    if k == "a":
        refuse("a is not allowed")
    elif k == "b":
        return refuse("b is not allowed")
    elif k == "c":
        pass
    else:
        refuse("unknown kind %s" % k)
    return k
`, "h.star:4@handle h.star:6@handle h.star:10(else)@handle"},
		{"early returns", `
def handle(args, db):
    if args["n"] < 0:
        return {"ok": False}
    if args["n"] > 10:
        return refuse("too many")
    return {"ok": True}
`, "h.star:5@handle"},
		{"helper that refuses", `
def deny(what):
    refuse("no " + what)

def always(what):
    if what == "":
        refuse("empty")
    else:
        deny(what)

def handle(args, db):
    if args["x"] == 1:
        deny("ones")
    if args["x"] == 2:
        always("twos")
    for i in args["items"]:
        if i in args["seen"]:
            (deny("twice"))
    return None
`, "h.star:6@always h.star:8(else)@always h.star:12@handle h.star:14@handle h.star:17@handle"},
		{"no refusals", `
def handle(args, db):
    if args["x"]:
        return 1
    refuse("always")
`, ""},
		{"a local named refuse is not the builtin", `
def refuse(m):
    return m

def handle(args, db):
    if args["x"]:
        refuse("not really")
    return 1
`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bs, err := FileBranches("h.star", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := branchLines(bs); got != tc.want {
				t.Fatalf("branches:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// Branches of a contract follow load(): a lib helper's branch belongs to
// every tool that reaches it, through an alias too.
func TestBranchesThroughLib(t *testing.T) {
	c := &contract.Contract{Sources: map[string]string{
		"lib/orders.star": `
def load_order(db, id):
    o = db.one("SELECT * FROM orders WHERE id = $1", id)
    if o == None:
        refuse("order %s not found" % id)
    return o

def unused(x):
    if x:
        refuse("never reached")
`,
		"handlers/cancel.star": `
load("lib/orders.star", get="load_order")

def handle(args, db):
    o = get(db, args["id"])
    if o["status"] != "pending":
        refuse("only pending orders can be cancelled")
    return o
`,
		"handlers/show.star": `
load("lib/orders.star", "load_order")

def handle(args, db):
    return load_order(db, args["id"])
`,
	}}
	c.Tools = []contract.Tool{{Name: "cancel"}, {Name: "show"}}
	bs, err := Branches(c)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := branchLines(bs), "handlers/cancel.star:6@handle lib/orders.star:4@load_order"; got != want {
		t.Fatalf("branches:\n got %q\nwant %q", got, want)
	}
	if got := strings.Join(bs[1].Tools, ","); got != "cancel,show" {
		t.Fatalf("lib branch tools = %s", got)
	}
	if bs[1].Message != "order %s not found" {
		t.Fatalf("message = %q", bs[1].Message)
	}
	if !bs[1].Guard() || bs[0].Class != ClassRule {
		t.Fatalf("classes = %s, %s; want the lib's a guard, the handler's a rule", bs[0].Class, bs[1].Class)
	}

	// At run time a refusal names its branch, through the helper's frame.
	p, err := Compile(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var log BranchLog
	ctx := WithBranchLog(context.Background(), &log)
	_, err = p.Handle(ctx, "show", map[string]any{"id": "x"}, &fakeDB{})
	var ref *Refusal
	if !errors.As(err, &ref) || ref.Branch != "lib/orders.star:4" {
		t.Fatalf("refusal = %v (branch %q), want lib/orders.star:4", err, branchOf(ref))
	}
	_, err = p.Handle(ctx, "cancel", map[string]any{"id": "x"}, &fakeDB{rows: []Row{{Columns: []string{"status"}, Values: []any{"sent"}}}})
	if !errors.As(err, &ref) || ref.Branch != "handlers/cancel.star:6" {
		t.Fatalf("refusal = %v (branch %q), want handlers/cancel.star:6", err, branchOf(ref))
	}
	if h := log.Hits(); h["lib/orders.star:4"] != 1 || h["handlers/cancel.star:6"] != 1 {
		t.Fatalf("log = %v", h)
	}

	// With the lib branch off, the missing order is no longer refused there:
	// the handler reads on and crashes on None.
	m, err := CompileEdited(c, Options{}, BranchOff(bs[1]))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Handle(context.Background(), "show", map[string]any{"id": "x"}, &fakeDB{})
	if err != nil {
		t.Fatalf("mutant show: %v, want ok (None)", err)
	}
	_, err = m.Handle(context.Background(), "cancel", map[string]any{"id": "x"}, &fakeDB{rows: []Row{{Columns: []string{"status"}, Values: []any{"sent"}}}})
	if !errors.As(err, &ref) || ref.Branch != "handlers/cancel.star:6" {
		t.Fatalf("mutant keeps other branches: %v", err)
	}
}

func branchOf(r *Refusal) string {
	if r == nil {
		return ""
	}
	return r.Branch
}

func TestCheckHolds(t *testing.T) {
	c := &contract.Contract{Sources: map[string]string{
		"subgoals/never.star": "what = \"x\"\ndef check(world, calls, params):\n    return \"fails\"\n",
	}, SubGoals: []contract.SubGoal{{Name: "never", File: "subgoals/never.star"}}}
	p, err := CompileEdited(c, Options{}, CheckHolds("subgoals/never.star"))
	if err != nil {
		t.Fatal(err)
	}
	held, why, err := p.Check(context.Background(), "never", nil, nil, nil)
	if err != nil || !held {
		t.Fatalf("neutered check: held=%v why=%q err=%v", held, why, err)
	}
}

// FuzzFileBranches: the finder never panics on any source, every branch
// it reports stands on a line of the source, and turning any branch off
// leaves a file that still compiles when the original did.
func FuzzFileBranches(f *testing.F) {
	for _, s := range []string{
		"def handle(args, db):\n    if args['x']:\n        refuse('no')\n    return 1\n",
		"def d(m):\n    refuse(m)\ndef handle(a, db):\n    if a:\n        d('x')\n    elif a == 2:\n        return refuse('y')\n    else:\n        d('z')\n",
		"load('lib/x.star', 'y')\ndef handle(a, db):\n    for i in a:\n        while i:\n            if i:\n                y(i)\n",
		"if True:\n    refuse('top')\n",
		"def handle(a, db):\n    x = lambda: refuse('l')\n    if a: (refuse('p'))\n",
		"def get(db):\n    r = db.one('q')\n    return r\ndef handle(a, db):\n    r = get(db)\n    if not r or len(r) <= 0:\n        refuse('x')\n    elif r['s'] != 1:\n        refuse('y')\n    else:\n        refuse('z')\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4000 {
			return
		}
		bs, err := FileBranches("handlers/h.star", src)
		if err != nil {
			return
		}
		lines := strings.Count(src, "\n") + 1
		for _, b := range bs {
			if b.Line < 1 || b.Line > lines || b.Refuses < b.Line || b.Refuses > lines {
				t.Fatalf("branch %+v outside the source's %d lines", b, lines)
			}
			if b.Class != ClassRule && b.Class != ClassExistence && b.Class != ClassArgument {
				t.Fatalf("branch %+v has no class", b)
			}
		}
		c := &contract.Contract{Sources: map[string]string{"handlers/h.star": src}, Tools: []contract.Tool{{Name: "h"}}}
		if _, err := Compile(c, Options{MaxSteps: 10_000}); err != nil {
			return
		}
		for _, b := range bs {
			if _, err := CompileEdited(c, Options{MaxSteps: 10_000}, BranchOff(b)); err != nil {
				t.Fatalf("branch %s off: %v", b.At(), err)
			}
		}
	})
}

// Existence guards are told from the syntax tree: a condition that, as the
// arm needs it, implies a database read found nothing — whatever the names
// and messages say.
func TestBranchClasses(t *testing.T) {
	c := &contract.Contract{Sources: map[string]string{
		"lib/find.star": `
def fetch(db, id):
    return db.one("SELECT * FROM things WHERE id = $1", id)

def fetch_via(db, id):
    got = fetch(db, id)
    return got

def maybe(db, id):
    if id == "":
        return None
    return db.one("SELECT * FROM things WHERE id = $1", id)

def doc_of(db, id):
    r = db.one("SELECT * FROM things WHERE id = $1", id)
    if r == None:
        return None
    doc = {"id": r["id"]}
    doc["more"] = 1
    return doc
`,
		"handlers/h.star": `
load("lib/find.star", "fetch", get="fetch_via", "maybe", "doc_of")

def handle(args, db):
    row = db.one("SELECT * FROM things WHERE id = $1", args["id"])
    if not row:
        refuse("a")
    if row == None:
        refuse("b")
    if None == row:
        refuse("c")
    rows = db.query("SELECT * FROM things")
    if len(rows) == 0:
        refuse("d")
    if len(rows) < 1:
        refuse("e")
    if not len(rows):
        refuse("f")
    x = fetch(db, args["id"])
    if x == None:
        refuse("g")
    y = get(db, args["id"])
    if not y:
        refuse("h")
    if db.one("SELECT 1") == None:
        refuse("i")
    if row:
        pass
    else:
        refuse("j")
    if row != None:
        pass
    elif args["n"] > 1:
        refuse("k")
    if not row or not rows:
        refuse("l")
    if row == None and args["strict"]:
        refuse("m")
    if row == None:
        if args["n"] > 1:
            refuse("n")
    if row["status"] != "pending":
        refuse("R1")
    if not row["active"]:
        refuse("R2")
    if row != None:
        refuse("R3")
    if len(rows) > 1:
        refuse("R4")
    if len(rows) == 1:
        refuse("R5")
    if not row or row["status"] != "pending":
        refuse("R6")
    z = maybe(db, args["id"])
    if z == None:
        refuse("R7")
    w = db.one("SELECT 1 AS x FROM t")
    w = args["w"]
    if not w:
        refuse("R8")
    for r in rows:
        if not r:
            refuse("R9")
    pending = [r for r in rows if r["status"] == "pending"]
    if len(pending) == 0:
        refuse("R10")
    n = db.one("SELECT count(*) AS n FROM things")["n"]
    if n == 0:
        refuse("R11")
    d = doc_of(db, args["id"])
    if d == None:
        refuse("o")
    return row
`,
	}, Tools: []contract.Tool{{Name: "h"}}}
	bs, err := Branches(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 26 {
		t.Fatalf("%d branches, want 26: %s", len(bs), branchLines(bs))
	}
	for _, b := range bs {
		rule := strings.HasPrefix(b.Message, "R")
		if rule != (b.Class == ClassRule) || rule == b.Guard() {
			t.Errorf("branch %s %q: class %s", b.At(), b.Message, b.Class)
		}
	}
	// The same source on its own (loads unresolved): the helpers' reads are
	// not known, the direct ones are.
	fb, err := FileBranches("handlers/h.star", c.Sources["handlers/h.star"])
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range fb {
		if want := b.Message == "g" || b.Message == "h" || b.Message == "o"; want != (b.Class == ClassRule && !strings.HasPrefix(b.Message, "R")) {
			t.Errorf("file branch %s %q: class %s", b.At(), b.Message, b.Class)
		}
	}
}

// Argument checks are told from the syntax tree: the branch's own
// condition reads nothing but the call's arguments, constants and
// literals — through locals, loops, a loop counter, a set filled with
// arguments, the parameters (positional, keyword or defaulted) of a lib
// function every call passes arguments to, what a lib function built
// from arguments alone returns, and a read that names no table (a date
// checked by the database). One value from the world anywhere on the way
// (a field stored into a copy, an early return on a record's value, the
// clock, a function of the schema) makes the branch a rule.
func TestArgumentChecks(t *testing.T) {
	c := &contract.Contract{Sources: map[string]string{
		"lib/check.star": `
KINDS = ["a", "b"]

def each_once(ids):
    seen = set()
    for i in ids:
        if i in seen:
            refuse("A1")
        seen.add(i)

def against(rows, ids):
    if len(rows) != len(ids):
        refuse("R1")

def mixed(v):
    if v == "":
        refuse("R2")

def digits(s):
    i = 0
    for _ in range(len(s)):
        if i < len(s) and s[i].isdigit():
            i += 1
    return s[:i]

def number(text, base=10):
    if len(text) > 1 and text.startswith("0"):
        refuse("A7")
    return int(text, base)

DATE_SQL = "SELECT to_char(make_date($1, $2, 1) + ($3 - 1), " + "'YYYY-MM-DD') AS d"

def valid_date(db, s):
    if len(s) != 10:
        return False
    row = db.one(DATE_SQL, int(s[0:4]), int(s[5:7]), int(s[8:10]))
    return row["d"] == s

def minor(db, patient, gid):
    if patient["age"] >= 18:
        return None
    if gid == None:
        refuse("R6")

def cents(x):
    return round(x * 100)

def stored(db, x):
    return db.one("SELECT $1::int + n AS v FROM things", x)["v"]
`,
		"handlers/h.star": `
load("lib/check.star", "each_once", "against", "mixed", "digits", "number", "minor", "valid_date", "cents", "stored", kinds="KINDS")

LIMIT = 5

def handle(args, db):
    ids = args["ids"]
    if len(ids) == 0:
        refuse("A2")
    each_once(ids)
    if args["kind"] not in kinds:
        refuse("A3")
    parts = [args["street"], args["city"]]
    for p in parts:
        if p.strip() == "":
            refuse("A4")
    if args["n"] > LIMIT:
        refuse("A5")
    n = number(text=digits(args["expr"]))
    if type(n) == "int" and n > 1000:
        refuse("A6")
    if not valid_date(db, args["date"]):
        refuse("A8")
    if db.one("SELECT ($1::date > $2::date + 120) AS far", args["date"], "2026-03-10")["far"]:
        refuse("A9")
    if db.one("SELECT ($1::date < current_date) AS past", args["date"])["past"]:
        refuse("R8")
    if db.one("SELECT balance_of($1) AS b", ids[0])["b"] > 0:
        refuse("R9")
    if db.query("SELECT $1::int AS n FROM things", args["n"]):
        refuse("R10")
    rows = db.query("SELECT * FROM things")
    against(rows, ids)
    row = db.one("SELECT * FROM things WHERE id = $1", ids[0])
    mixed(args["x"])
    mixed(row["x"])
    got = []
    for r in rows:
        got.append(r["id"])
    if ids[0] in got:
        refuse("R3")
    if args["n"] > row["max"]:
        refuse("R4")
    if row["status"] != args["status"]:
        refuse("R5")
    minor(db, row, args.get("guardian"))
    seg = dict(args["seg"])
    seg["price"] = row["price"]
    if seg["price"] > args["n"]:
        refuse("R7")
    if cents(args["amount"]) % 5 != 0:
        refuse("A10")
    if cents(row["price"]) > 100:
        refuse("R11")
    if stored(db, args["n"]) > 3:
        refuse("R12")
    for f in args["forms"]:
        if f not in kinds:
            refuse("A11")
    if len(args["forms"]) != len({f: True for f in args["forms"]}):
        refuse("A12")
    digits = "".join([ch for ch in str(args["phone"]).elems() if ch.isdigit()])
    if len(digits) != 10:
        refuse("A13")
    k = args["k"]
    took = [k for k in rows if k["id"] != None]
    if k == "x":
        refuse("A14")
    if len(took) > 3:
        refuse("R13")
    return row
`,
	}, Tools: []contract.Tool{{Name: "h"}}}
	bs, err := Branches(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 27 {
		t.Fatalf("%d branches, want 27: %s", len(bs), branchLines(bs))
	}
	for _, b := range bs {
		arg := strings.HasPrefix(b.Message, "A")
		if arg != (b.Class == ClassArgument) || !arg && b.Class != ClassRule {
			t.Errorf("branch %s %q: class %s", b.At(), b.Message, b.Class)
		}
	}
}

// A value chosen by a condition of the world is the world's, even when
// each choice is a literal: a helper that returns one of two words by
// comparing a row with an argument, a local set under such a condition, a
// flag set in a loop over rows. The same shapes under conditions of the
// arguments alone stay argument checks.
func TestArgumentChecksImplicitFlow(t *testing.T) {
	c := &contract.Contract{Sources: map[string]string{
		"lib/role.star": `
def role_of(row, who):
    if row["owner"] == who:
        return "owner"
    if row["other"] == who:
        return "other"
    return None

def early(row, who):
    if row["owner"] == who:
        return "owner"
    return "stranger"

def shape(who):
    if who.startswith("C"):
        return "customer"
    return None
`,
		"handlers/h.star": `
load("lib/role.star", "role_of", "early", "shape")

def handle(args, db):
    row = db.one("SELECT * FROM things WHERE id = $1", args["id"])
    if role_of(row, args["who"]) == None:
        refuse("R1")
    if early(row, args["who"]) != "owner":
        refuse("R2")
    kind = "plain"
    if row["special"]:
        kind = "special"
    if kind == "special":
        refuse("R3")
    found = False
    for r in db.query("SELECT * FROM things"):
        found = True
    if not found:
        refuse("R4")
    seen = []
    if row["flag"]:
        seen.append("x")
    if len(seen) > 0:
        refuse("R5")
    if shape(args["who"]) == None:
        refuse("A1")
    mode = "a"
    if args["fast"]:
        mode = "b"
    if mode == "b":
        refuse("A2")
    return row
`,
	}, Tools: []contract.Tool{{Name: "h"}}}
	bs, err := Branches(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 7 {
		t.Fatalf("%d branches, want 7: %s", len(bs), branchLines(bs))
	}
	for _, b := range bs {
		arg := strings.HasPrefix(b.Message, "A")
		if arg != (b.Class == ClassArgument) || !arg && b.Class != ClassRule {
			t.Errorf("branch %s %q: class %s", b.At(), b.Message, b.Class)
		}
	}
}

// A handler that never names its database nor the clock can refuse only
// for what its call says, however its checks are built (closures the
// argument taint does not follow); one that does is judged branch by
// branch, and a lib branch it shares keeps the world's class.
func TestWorldFreeHandlers(t *testing.T) {
	lib := `
def positive(v):
    if v <= 0:
        refuse("shared")
    return v
`
	calc := `
load("lib/math.star", "positive")

def handle(args, db):
    toks = list(args["expr"])
    pos = [0]
    def peek():
        return toks[pos[0]] if pos[0] < len(toks) else None
    def atom():
        t = peek()
        pos[0] += 1
        return int(t)
    n = atom()
    if n > 100:
        refuse("free")
    return positive(n)
`
	for _, tc := range []struct {
		name, other string
		want        map[string]string
	}{
		{"alone", "", map[string]string{"free": ClassArgument, "shared": ClassArgument}},
		{"db named", strings.Replace(calc, "return positive(n)", "db.one('SELECT 1')\n    return positive(n)", 1),
			map[string]string{"free": ClassRule, "shared": ClassRule}},
		{"clock named", strings.Replace(calc, "toks = list", "if now[:4] == '2020':\n        return 0\n    toks = list", 1),
			map[string]string{"free": ClassRule, "shared": ClassRule}},
		{"lib shared with a reader", "def handle(args, db):\n    row = db.one('SELECT n FROM t')\n    return positive(row['n'])\n",
			map[string]string{"free": ClassArgument, "shared": ClassRule}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := map[string]string{"lib/math.star": lib, "handlers/calc.star": calc}
			tools := []contract.Tool{{Name: "calc"}}
			switch {
			case strings.HasPrefix(tc.other, "def handle"):
				src["handlers/reader.star"] = "load(\"lib/math.star\", \"positive\")\n" + tc.other
				tools = append(tools, contract.Tool{Name: "reader"})
			case tc.other != "":
				src["handlers/calc.star"] = tc.other
			}
			bs, err := Branches(&contract.Contract{Sources: src, Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, b := range bs {
				got[b.Message] = b.Class
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("classes %v, want %v", got, tc.want)
			}
		})
	}
}
