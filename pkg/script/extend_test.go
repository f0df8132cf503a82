package script_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/script"
)

func ridesPrograms(t *testing.T) (*contract.Contract, *script.Programs) {
	t.Helper()
	c, probs, err := contract.Load(filepath.Join("..", "..", "examples", "rides"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	p, err := script.Compile(c, script.Options{MaxSteps: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	return c, p
}

func added(t *testing.T, name, src string) contract.SubGoal {
	t.Helper()
	sg, probs := contract.ParseSubGoal("subgoals/"+name+".star", src)
	if len(probs) > 0 {
		t.Fatalf("parse %s: %v", name, probs)
	}
	return sg
}

// TestWithSubGoals: an added sub-goal is compiled over the contract's
// programs, may load the contract's lib, runs under the same limits, and
// leaves the programs it was added to unchanged.
func TestWithSubGoals(t *testing.T) {
	c, p := ridesPrograms(t)
	sg := added(t, "tz_known", "load(\"lib/rides.star\", \"CITY_TZ\")\nwhat = \"the city time zone is known\"\nparams = {}\ndef check(world, calls, params):\n    if CITY_TZ == \"\":\n        return \"no tz\"\n")
	np, err := p.WithSubGoals(c.Sources, []contract.SubGoal{sg})
	if err != nil {
		t.Fatalf("WithSubGoals: %v", err)
	}
	if !np.HasCheck("tz_known") || p.HasCheck("tz_known") {
		t.Fatalf("the new programs must have the check and the old ones not: %v %v", np.HasCheck("tz_known"), p.HasCheck("tz_known"))
	}
	if !np.HasCheck("trip_cancelled") || !np.HasHandler("cancel_trip") {
		t.Fatal("the contract's checks and handlers must carry over")
	}
	held, why, err := np.Check(context.Background(), "tz_known", nil, nil, nil)
	if err != nil || !held {
		t.Fatalf("check: %v %q %v", held, why, err)
	}
	if np.Options() != p.Options() {
		t.Errorf("limits differ: %+v vs %+v", np.Options(), p.Options())
	}

	// A check that loops forever is stopped by the contract's step limit.
	loop := added(t, "spins", "what = \"spins\"\nparams = {}\ndef check(world, calls, params):\n    while True:\n        pass\n")
	lp, err := p.WithSubGoals(c.Sources, []contract.SubGoal{loop})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := lp.Check(context.Background(), "spins", nil, nil, nil); !errors.Is(err, script.ErrBroken) || !errors.Is(err, script.ErrLimit) {
		t.Errorf("a runaway check: %v, want broken by a limit", err)
	}

	for name, tc := range map[string]struct{ src, want string }{
		"top_runaway": {"what = \"x\"\nparams = {}\nn = 0\nwhile True:\n    n += 1\ndef check(world, calls, params):\n    return None\n", "step limit"},
		"bad_load":    {"load(\"lib/nope.star\", \"X\")\nwhat = \"x\"\nparams = {}\ndef check(world, calls, params):\n    return None\n", "subgoals/bad_load.star:1"},
		"no_check":    {"what = \"x\"\nparams = {}\ncheck = 3\n", "no function check"},
	} {
		sg, _ := contract.ParseSubGoal("subgoals/"+name+".star", tc.src)
		_, err := p.WithSubGoals(c.Sources, []contract.SubGoal{sg})
		var ce *script.CompileError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a compile error with %q", name, err, tc.want)
		}
	}
	// A name the contract already checks cannot be added again.
	dup := added(t, "trip_cancelled", "what = \"x\"\nparams = {}\ndef check(world, calls, params):\n    return None\n")
	if _, err := p.WithSubGoals(c.Sources, []contract.SubGoal{dup}); err == nil {
		t.Error("a second trip_cancelled was compiled")
	}
}

// TestParseSubGoal reads what, judged and params like Load does.
func TestParseSubGoal(t *testing.T) {
	sg, probs := contract.ParseSubGoal("subgoals/said_fee.star", "what = \"says the fee\"\njudged = True\nparams = {\"fee\": \"number\"}\n")
	if len(probs) > 0 || sg.Name != "said_fee" || !sg.Judged || sg.Params["fee"] != "number" || sg.What != "says the fee" {
		t.Fatalf("%+v %v", sg, probs)
	}
	_, probs = contract.ParseSubGoal("subgoals/x.star", "what = \"x\"\nparams = {}\n")
	if !probs.Has(contract.CodeSubGoalNoCheck) {
		t.Errorf("a settled sub-goal without check: %v", probs)
	}
	_, probs = contract.ParseSubGoal("subgoals/x.star", "params = {\"a\": \"float\"}\ndef check(world, calls, params):\n    return None\n")
	if !probs.Has(contract.CodeSubGoalBadParams) || !probs.Has(contract.CodeMissingField) {
		t.Errorf("bad params and no what: %v", probs)
	}
}
