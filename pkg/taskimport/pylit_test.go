package taskimport

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func one(t *testing.T, src string) any {
	t.Helper()
	as, err := ParsePython([]byte("X = " + src + "\n"))
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	if len(as) != 1 {
		t.Fatalf("%s: %d assignments", src, len(as))
	}
	return as[0].Value
}

// TestParseLiterals: each literal form reads as Python reads it.
func TestParseLiterals(t *testing.T) {
	for _, c := range []struct {
		src  string
		want any
	}{
		{`"a" 'b'`, "ab"},
		{"(\n  \"one \"  # a comment\n  'two'\n)", "one two"},
		{`"tab\there\nnl \\ \' \" \x41\u00e9\U0001F600 \101 \q"`, "tab\there\nnl \\ ' \" A\u00e9\U0001F600 A \\q"},
		{`r"raw\n\"q"`, `raw\n\"q`},
		{`"""multi
line 'quoted' "x" """`, "multi\nline 'quoted' \"x\" "},
		{`'''a''' "b"`, "ab"},
		{`"line \
joined"`, "line joined"},
		{`u"é"`, "é"},
		{`12`, int64(12)},
		{`-3`, int64(-3)},
		{`1_000`, int64(1000)},
		{`0`, int64(0)},
		{`2.5`, 2.5},
		{`-1e3`, -1000.0},
		{`.5`, 0.5},
		{`True`, true},
		{`False`, false},
		{`None`, nil},
		{`[]`, []any{}},
		{`[1, "a", [None],]`, []any{int64(1), "a", []any{nil}}},
		{`{"k": {"n": 1}, 'j': [],}`, map[string]any{"k": map[string]any{"n": int64(1)}, "j": []any{}}},
	} {
		if got := one(t, c.src); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.src, got, c.want)
		}
	}
}

// TestParseCalls: a call takes keyword arguments, in order.
func TestParseCalls(t *testing.T) {
	v := one(t, `Task(user_id="u", actions=[Action(name="a", kwargs={})],)`)
	c, ok := v.(*Call)
	if !ok || c.Func != "Task" || !reflect.DeepEqual(c.Order, []string{"user_id", "actions"}) || c.Line != 1 || c.Col != 5 {
		t.Fatalf("%#v", v)
	}
	inner := c.Kwargs["actions"].([]any)[0].(*Call)
	if inner.Func != "Action" || inner.Kwargs["name"] != "a" || inner.Col != 32 {
		t.Errorf("%#v", inner)
	}
}

// TestParseErrors: what is not in the subset is refused at its line and
// column, never run or guessed.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"X = [\n  os.system('x'),\n]", "2:3: name os is not a literal"},
		{"X = Task('positional')", "1:10: expected a keyword argument of Task"},
		{"X = Task(a=1, a=2)", "1:15: keyword argument a given twice"},
		{"X = {1: 2}", "1:6: a dict key must be a string"},
		{`X = {"a": 1, "a": 2}`, `1:14: key "a" given twice`},
		{`X = f"{x}"`, `1:5: string prefix "f" is not accepted`},
		{`X = b"x"`, `1:5: string prefix "b" is not accepted`},
		{"X = \"open\n\"", "1:5: string not closed on its line"},
		{`X = "never`, "1:5: string not closed"},
		{`X = """never`, "1:5: string not closed"},
		{`X = "\N{DASH}"`, `1:6: \N{...} escapes are not accepted`},
		{`X = "\x4"`, `1:6: truncated \x escape`},
		{`X = "\ud800"`, `1:6: \u escape out of range`},
		{"X = (1, 2)", "1:7: tuples are not accepted"},
		{"X = 0x10", "1:5: only decimal numbers are accepted"},
		{"X = 007", "1:5: leading zeros in a decimal number"},
		{"X = 99999999999999999999", "1:5: integer out of range"},
		{"X = [1 2]", "1:8: expected ',' or ']', found '2'"},
		{"X = [1,", "1:8: expected ']', found end of file"},
		{"X = 1 + 2", "1:7: expected the end of the statement, found '+'"},
		{"def f(): pass", "1:5: expected '=' after def, found 'f'"},
		{"X = lambda: 1", "1:5: name lambda is not a literal"},
		{"from x import", "1:14: expected a name to import, found end of file"},
		{"X = 1\n  \xff", "2:3: invalid UTF-8"},
		{"X = " + strings.Repeat("[", maxDepth+2), "nested deeper than 100"},
	} {
		_, err := ParsePython([]byte(c.src))
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s", c.src, err, c.want)
		}
	}
}

const sample = `# Copyright someone
from tau_bench.types import Action, Task
from .x import (
    A as B,
    C,
)
import json

TASKS = [
    Task(
        annotator="0",
        user_id="ann_lee_1",
        instruction="Your user id is ann_lee_1. "
        "You want to cancel ABC123.",
        actions=[
            Action(name="get_user_details", kwargs={"user_id": "ann_lee_1"}),
            Action(
                name="cancel_reservation",
                kwargs={"reservation_id": "ABC123"},
            ),
        ],
        outputs=["1,200"],
    ),
    Task(user_id="bo_ng_2", instruction="x", actions=[], outputs=[]),
]
`

// TestParseTauBench: a module in the published shape gives its tasks;
// fields the Task type does not have are refused.
func TestParseTauBench(t *testing.T) {
	ts, err := ParseTauBench([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := []Task{{
		ID: "0", UserID: "ann_lee_1", Instruction: "Your user id is ann_lee_1. You want to cancel ABC123.", Line: 10,
		Actions: []Action{
			{Name: "get_user_details", Kwargs: map[string]any{"user_id": "ann_lee_1"}},
			{Name: "cancel_reservation", Kwargs: map[string]any{"reservation_id": "ABC123"}},
		},
		Outputs: []string{"1,200"},
	}, {ID: "1", UserID: "bo_ng_2", Instruction: "x", Line: 24}}
	if !reflect.DeepEqual(ts, want) {
		got, _ := json.Marshal(ts)
		t.Fatalf("got %s", got)
	}
	for _, c := range []struct{ src, want string }{
		{`T = [Task(user_id="u", instruction="i", reward=1)]`, "1:6: Task has no field reward"},
		{`T = [Task(user_id="u", instruction="i", actions=[Action(name="a", kwargs={"x": Task()})])]`, "Action kwargs: Task(...) is not data"},
		{`T = [Task(user_id="u", instruction="i", actions=[{"name": "a"}])]`, "Task actions: want a list of Action(...)"},
		{`T = [Task(user_id="u")]`, "Task needs user_id and instruction"},
		{`T = [1]`, "T holds something other than Task(...) calls"},
		{`T = 1`, "no list of Task(...) calls"},
	} {
		if _, err := ParseTauBench([]byte(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %s", c.src, err, c.want)
		}
	}
}

// TestParseTau2Bench: the user id comes from what the user knows, the
// user's own actions and an initial state are kept apart for the import
// to refuse.
func TestParseTau2Bench(t *testing.T) {
	src := `[{"id": "7", "description": {"purpose": "p"},
	  "user_scenario": {"persona": null, "instructions": {"domain": "airline", "reason_for_call": "Cancel XEHM4B.",
	    "known_info": "Your user id is 'daiki_m_1'.", "unknown_info": null, "task_instructions": "Be terse."}},
	  "initial_state": null,
	  "evaluation_criteria": {"actions": [{"action_id": "7_0", "name": "cancel_reservation", "arguments": {"reservation_id": "XEHM4B"}, "info": null},
	    {"action_id": "7_1", "requestor": "user", "name": "reboot_device", "arguments": {}}],
	    "communicate_info": ["5244"], "nl_assertions": ["x"], "reward_basis": ["DB"]}},
	 {"id": "8", "user_scenario": {"instructions": "plain text"}, "initial_state": {"initialization_actions": []}}]`
	ts, err := ParseTau2Bench(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 {
		t.Fatalf("%d tasks", len(ts))
	}
	a := ts[0]
	if a.ID != "7" || a.UserID != "daiki_m_1" || a.Instruction != "Cancel XEHM4B.\n\nYour user id is 'daiki_m_1'.\n\nBe terse." ||
		len(a.Actions) != 1 || a.Actions[0].Name != "cancel_reservation" || len(a.UserActions) != 1 || a.InitialState ||
		!reflect.DeepEqual(a.Outputs, []string{"5244"}) {
		t.Errorf("%+v", a)
	}
	if b := ts[1]; !b.InitialState || b.Instruction != "plain text" || b.UserID != "" {
		t.Errorf("%+v", b)
	}
	if _, err := ParseTau2Bench(strings.NewReader(`{"tasks": [{"id": 3}]}`)); err == nil {
		t.Error("a numeric id was accepted")
	}
}

// FuzzParseTauTasks: the parser reads untrusted files; whatever it is
// given, it returns tasks or a *SyntaxError with a position, never panics,
// and what it returns is JSON data.
func FuzzParseTauTasks(f *testing.F) {
	for _, s := range []string{
		sample,
		`X = "a" 'b' r"\q" """t""" u'x'`,
		`X = [1, -2.5e3, True, None, {"k": [()]}]`,
		"from a import (b as c,)\nX = T(a=[{\"x\": '\\u00e9\\x41\\101'}])",
		`X = "\`,
		"X = [" + strings.Repeat("[", 50),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		ts, err := ParseTauBench(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Line < 1 || se.Col < 1 {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		if _, err := json.Marshal(ts); err != nil {
			t.Fatalf("tasks are not data: %v", err)
		}
	})
}
