package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// dispatch runs a command line in-process against servers of the test's own.
func dispatch(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return dispatchWith(t, nil, args...)
}

// dispatchWith is dispatch with the environment variables in set.
func dispatchWith(t *testing.T, set map[string]string, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	getenv := testenv.Getenv(t)
	env := &Env{Stdout: &out, Stderr: &out, Getenv: func(k string) string {
		if v, ok := set[k]; ok {
			return v
		}
		return getenv(k)
	}}
	env.Log = discard()
	code := Dispatch(context.Background(), env, "suitegen", args)
	return code, out.String()
}

// TestValidatePrints: a sound contract is valid, every probe holds, every
// use case is planned, and the binding table is printed. Every example and
// test contract is validated so in pkg/e2e (TestEveryExample), before its
// suite is written; here, the command on a small one.
//
// Its plan is kept in the plan cache the environment names, where a run
// after it reads the plan back; validating again prints the same.
func TestValidatePrints(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "contracts", "guardian-line")
	cache := t.TempDir()
	set := map[string]string{plan.EnvCacheDir: cache, plan.EnvCacheBuild: "validate " + cache}
	code, out := dispatchWith(t, set, "validate", dir)
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "*.json")); len(files) != 1 {
		t.Errorf("the plan cache holds %d files after validate, want 1", len(files))
	}
	if _, again := dispatchWith(t, set, "validate", dir); again != out {
		t.Errorf("validate from the plan cache printed:\n%s\nderived, it printed:\n%s", again, out)
	}
	if !strings.Contains(out, "every probe held, every use case planned") || strings.Contains(out, "  - ") {
		t.Errorf("probes did not all hold, or a use case is not planned:\n%s", out)
	}
	if !strings.Contains(out, "bindings (tool.argument -> table.column") || !strings.Contains(out, "confirmed by rehearsal") {
		t.Errorf("no binding table:\n%s", out)
	}
}

// TestValidateNamesWhatItCannotGround: an argument no column grounds is named
// with the x-ref line that would fix it, and each use case the plan cannot
// serve is warned of, with why.
func TestValidateNamesWhatItCannotGround(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "contracts", "unplannable")
	_, out := dispatch(t, "validate", dir)
	for _, want := range []string{
		filepath.Join(dir, "contract.yaml") + ":", "unbound:", "check_secret.secret", "add `x-ref: TABLE.COLUMN`",
		"warning:", "use case check-secret has no bucket", "use case rename has no bucket: no case of members could be minted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "use case read-notice has no bucket") {
		t.Errorf("read-notice can be planned:\n%s", out)
	}
}

// TestRunStopsOnUnplannedUseCases: run refuses, before spending anything, a
// plan that leaves use cases out, naming why; --allow-partial writes the
// rest and the report names what was left out.
func TestRunStopsOnUnplannedUseCases(t *testing.T) {
	t.Parallel() // the package's long runs, each on servers of its own
	dir := filepath.Join("..", "..", "testdata", "contracts", "unplannable")
	out1 := t.TempDir()
	code, out := dispatch(t, "run", dir, "--scenarios", "2", "--writers", "1", "--out", out1)
	if code != ExitFail || !strings.Contains(out, "cannot be planned (--allow-partial writes the rest)") || !strings.Contains(out, "use case rename: no case of members could be minted") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(out1, "report.json")); err == nil {
		t.Error("a refused plan wrote a suite")
	}
	out2 := t.TempDir()
	code, out = dispatch(t, "run", dir, "--scenarios", "2", "--writers", "1", "--allow-partial", "--out", out2)
	if code != ExitOK {
		t.Fatalf("--allow-partial: exit %d:\n%s", code, out)
	}
	rep, err := os.ReadFile(filepath.Join(out2, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rep), `"unplanned"`) || !strings.Contains(string(rep), `"use_case": "check-secret"`) {
		t.Errorf("the report does not name the unplanned use cases:\n%s", rep)
	}
}

// TestValidateBroken: every broken variant under the loader's testdata is
// refused with exit 1 and exactly its expected problems, file and line.
func TestValidateBroken(t *testing.T) {
	root := filepath.Join("..", "contract", "testdata", "bad")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 12 {
		t.Fatalf("%d broken variants, want at least 12", len(entries))
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		want, err := os.ReadFile(filepath.Join(dir, "expected.txt"))
		if err != nil {
			t.Fatal(err)
		}
		code, out := dispatch(t, "validate", dir)
		if code != ExitFail {
			t.Errorf("%s: exit %d, want %d", e.Name(), code, ExitFail)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(want)), "\n") {
			if !strings.Contains(out, filepath.Join(dir, line)) {
				t.Errorf("%s: output lacks %q:\n%s", e.Name(), filepath.Join(dir, line), out)
			}
		}
	}
}

// TestProve: a good scenario is kept; a vacuous, an ungrounded and an
// unsolvable one are each refused with their own code.
func TestProve(t *testing.T) {
	retail := filepath.Join("..", "..", "examples", "retail")
	for file, want := range map[string]string{
		"good.json":       "",
		"vacuous.json":    "not-vacuous/vacuous",
		"ungrounded.json": "grounding/ungrounded",
		"unsolvable.json": "solvable/step-refused",
	} {
		code, out := dispatch(t, "prove", retail, filepath.Join("testdata", "prove", file))
		if want == "" {
			if code != ExitOK || !strings.Contains(out, "kept:") {
				t.Errorf("%s: exit %d, want kept:\n%s", file, code, out)
			}
			continue
		}
		if code != ExitFail || !strings.Contains(out, want) {
			t.Errorf("%s: exit %d, want %s:\n%s", file, code, want, out)
		}
	}
}

// TestProveVerbose: -v shows, gate by gate, what was played and what each
// check said: for a kept success, the checks failing when nothing is done
// and over the untouched world given the solution's call log; for a refused
// scenario, the gate that refused it and nothing after.
func TestProveVerbose(t *testing.T) {
	retail := filepath.Join("..", "..", "examples", "retail")
	code, out := dispatch(t, "prove", "-v", retail, filepath.Join("testdata", "prove", "good.json"))
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"static: passed", "solvable: passed", "  solution: find_user_id_by_email ok, get_order_details ok, cancel_pending_order ok",
		"outcome: passed", "end state differs from nothing in orders", "not-vacuous: passed", "  nothing: no calls",
		"    FAILS  order_cancelled: order #W7000 is pending, not cancelled", "  without-precondition: cancel_pending_order ok",
		"  log-only: ", "kept: cancel-order-succeed-none-7000"} {
		if !strings.Contains(out, want) {
			t.Errorf("-v output lacks %q:\n%s", want, out)
		}
	}
	code, out = dispatch(t, "prove", "-v", retail, filepath.Join("testdata", "prove", "vacuous.json"))
	if code != ExitFail || !strings.Contains(out, "not-vacuous: REFUSED") || !strings.Contains(out, "    holds  not_called") {
		t.Errorf("exit %d, want the not-vacuous gate shown refusing:\n%s", code, out)
	}
}

func TestUsage(t *testing.T) {
	if code, _ := dispatch(t); code != ExitUsage {
		t.Errorf("no command: exit %d", code)
	}
	if code, out := dispatch(t, "nope"); code != ExitUsage || !strings.Contains(out, "unknown command") {
		t.Errorf("unknown command: exit %d %s", code, out)
	}
	if code, out := dispatch(t, "run", "--scenarios", "0", "x"); code != ExitUsage || !strings.Contains(out, "--scenarios") {
		t.Errorf("bad --scenarios names the flag: exit %d %s", code, out)
	}
}

// Provider settings that cannot work are usage errors naming what to set,
// before anything starts.
func TestProviderUsage(t *testing.T) {
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"m": {"prompt": 1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		say  string
	}{
		{[]string{"run", "x", "--model", "gpt-4o-mini"}, "OPENAI_API_KEY"},
		{[]string{"run", "x", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--price", "prompt=1"}, "--price"},
		{[]string{"run", "x", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--prices", prices}, "--prices"},
		{[]string{"run", "x", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--budget-usd", "5"}, "--budget-usd needs a price"},
		{[]string{"run", "x", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--provider", "bedrock"}, "--provider"},
		{[]string{"run", "x", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--reasoning", "maybe"}, "--reasoning"},
		{[]string{"writer", "--model", "prod", "--provider", "azure"}, "AZURE_OPENAI_ENDPOINT"},
	} {
		if code, out := dispatch(t, tc.args...); code != ExitUsage || !strings.Contains(out, tc.say) {
			t.Errorf("%v: exit %d, want %d naming %q:\n%s", tc.args, code, ExitUsage, tc.say, out)
		}
	}
}

// retailWith is a copy of examples/retail with one file written over.
func retailWith(t *testing.T, file, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "retail")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "examples", "retail"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(file)), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestValidateWarnsOfADeadIdentityTool: a tool of caller.from whose handler
// refuses every call leaves no scenario a way to identify through it:
// validate names it with its line among the warnings.
func TestValidateWarnsOfADeadIdentityTool(t *testing.T) {
	dir := retailWith(t, "handlers/find_user_id_by_name_zip.star", "def handle(args, db):\n    refuse(\"no user matches\")\n")
	_, out := dispatch(t, "validate", dir)
	if !strings.Contains(out, "never answered ok: "+filepath.Join(dir, "contract.yaml")+":") ||
		!strings.Contains(out, "warning: "+filepath.Join(dir, "contract.yaml")+":") || !strings.Contains(out, "find_user_id_by_name_zip, a tool of caller.from, never answered ok") {
		t.Fatalf("output:\n%s", out)
	}
}

// TestValidateWarnsOfJudgedEverywhere: a judged sub-goal that names no tools
// is listed on every scenario; validate says so of retail's, and not of one
// that names its tools.
func TestValidateWarnsOfJudgedEverywhere(t *testing.T) {
	dir := retailWith(t, "subgoals/refund_explained.star", "what = \"The agent said why the refund goes to the original payment method\"\njudged = True\ntools = [\"return_delivered_order_items\"]\n")
	_, out := dispatch(t, "validate", dir)
	if !strings.Contains(out, "warning: "+filepath.Join(dir, "subgoals", "polite_and_clear.star")+": judged sub-goal polite_and_clear names no tools") ||
		strings.Contains(out, "judged sub-goal refund_explained") {
		t.Fatalf("output:\n%s", out)
	}
}

// TestAnsweredInGrounding: the refusals-only warning says the world holds
// rows the act answers on only when grounding answered every listed tool ok.
func TestAnsweredInGrounding(t *testing.T) {
	uc := &contract.UseCase{ID: "missed", Tools: []string{"find", "report"}}
	if got := answeredInGrounding(uc, map[string]string{}); !strings.Contains(got, "grounding's rehearsal answered every tool") {
		t.Errorf("every tool answered: got %q", got)
	}
	if got := answeredInGrounding(uc, map[string]string{"report": "refused"}); got != "" {
		t.Errorf("report never answered: got %q, want nothing added", got)
	}
	if got := answeredInGrounding(&contract.UseCase{ID: "free"}, map[string]string{}); got != "" {
		t.Errorf("no listed tools: got %q, want nothing added", got)
	}
}
