package script

import (
	"strconv"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
)

// TestShadowedBranches: a branch is shadowed only when a later one is
// proved to refuse every call it does, from comparisons of the same
// expression with literals, with nothing between that could leave the
// function or change what they read.
func TestShadowedBranches(t *testing.T) {
	c := &contract.Contract{Sources: map[string]string{
		"lib/k.star": `
STATES = ["booked", "waiting"]
`,
		"handlers/h.star": `
load("lib/k.star", "STATES")

def handle(args, db):
    a = db.one("SELECT * FROM appointments WHERE id = $1", args["id"])
    if a["status"] == "confirmed":
        refuse("already confirmed")                        # 6: by 8
    if a["status"] != "booked":
        refuse("cannot be confirmed")                      # 8
    if a["kind"] in ["x", "y"]:
        refuse("x or y")                                   # 10: by 15
    n = a["seats"]
    if a["kind"] not in ["p", "q"] and n > 0:
        refuse("not p or q, and seats")                    # 13: not shadowed (n is not a comparison with a literal)
    if a["kind"] == "z" or a["kind"] not in ["p", "q"]:
        refuse("not p or q")                               # 15
    if a["tier"] == "gold":
        refuse("gold")                                     # 17: not shadowed, a["tier"] may change
    a = db.one("SELECT * FROM appointments WHERE id = $1", args["other"])
    if a["tier"] != "silver":
        refuse("not silver")                               # 20
    if a["room"] == 3:
        refuse("room 3")                                   # 22: not shadowed, a return may come first
    if args["x"]:
        return a
    if a["room"] != 4:
        refuse("not room 4")                               # 26
    if a["zone"] == "n":
        refuse("north")                                    # 28: by its own elif, 30
    elif a["zone"] not in STATES:
        refuse("not a state")                              # 30
    if a["zone"] == "booked":
        refuse("booked zone")                              # 32: not shadowed, "booked" is in STATES
    elif a["zone"] not in STATES:
        refuse("not a state")
    if a["pay"] == "cash":
        refuse("cash")                                     # 36: not shadowed, a call may fail first
    db.execute("UPDATE appointments SET seen = true WHERE id = $1", args["id"])
    if a["pay"] != "card":
        refuse("not card")
    return a
`,
	}}
	c.Tools = []contract.Tool{{Name: "h"}}
	bs, err := Branches(c)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]string{}
	for _, b := range bs {
		got[b.Line] = b.Shadowed
	}
	want := map[int]string{
		6:  "handlers/h.star:8",
		10: "handlers/h.star:15",
		13: "",
		17: "",
		22: "",
		28: "handlers/h.star:30",
		32: "",
		36: "",
	}
	for line, w := range want {
		if got[line] != w {
			t.Errorf("branch at line %d: shadowed %q, want %q", line, got[line], w)
		}
	}
}

// FuzzBranches: reading the branches of any handler that parses (their
// classes and which shadows which) never panics, and a branch is only ever
// shadowed by one after it in the same file.
func FuzzBranches(f *testing.F) {
	for _, s := range []string{
		"def handle(args, db):\n    a = db.one('x')\n    if a['s'] == 'c':\n        refuse('c')\n    if a['s'] != 'b':\n        refuse('b')\n    return a\n",
		"def handle(args, db):\n    if args['k'] in ('a', 'b') and args['n'] > 1:\n        refuse('x')\n    elif not (args['k'] == 'a'):\n        refuse('y')\n    else:\n        return 1\n    if args['k'] not in ['c']:\n        refuse('z')\n",
		"def handle(args, db):\n    for x in args['l']:\n        if x == None:\n            refuse('n')\n        x = 1\n        if x != 2:\n            refuse('m')\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		c := &contract.Contract{Sources: map[string]string{"handlers/h.star": src}, Tools: []contract.Tool{{Name: "h"}}}
		bs, err := Branches(c)
		if err != nil {
			return
		}
		for _, b := range bs {
			if b.Shadowed == "" {
				continue
			}
			file, line, ok := strings.Cut(b.Shadowed, ":")
			n, _ := strconv.Atoi(line)
			if !ok || file != b.File || n <= b.Line || b.Else {
				t.Fatalf("branch %s shadowed by %s", b.At(), b.Shadowed)
			}
		}
	})
}
