package suite

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestWriteJSON: the file holds v indented, HTML characters as they are and
// a final newline; an identical rewrite leaves the file (and its time)
// alone; a value that does not encode or a folder that is not there fails
// and leaves the old file whole and no temporary file behind.
func TestWriteJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "review.json")
	if err := WriteJSON(path, map[string]any{"a": "<b> & c"}); err != nil {
		t.Fatal(err)
	}
	const want = "{\n  \"a\": \"<b> & c\"\n}\n"
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Fatalf("file holds %q (%v), want %q", b, err, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v (%v), want 0644", fi.Mode().Perm(), err)
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(path, map[string]any{"a": "<b> & c"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || !fi.ModTime().Equal(old) {
		t.Fatalf("an identical rewrite touched the file: %v (%v)", fi.ModTime(), err)
	}
	if err := WriteJSON(path, map[string]any{"a": make(chan int)}); err == nil {
		t.Fatal("a value JSON cannot hold was written")
	}
	if err := WriteJSON(filepath.Join(dir, "missing", "x.json"), 1); err == nil {
		t.Fatal("a file in a missing folder was written")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != want {
		t.Fatalf("a failed write changed the file: %q (%v)", b, err)
	}
	if err := WriteJSON(path, []int{1}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "[\n  1\n]\n" {
		t.Fatalf("a changed value was not written: %q (%v)", b, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the folder holds %q, want review.json alone", names)
	}
}

// TestNextIndexCoversTopUps: index.json's NextIndex is past every index a
// bucket was dealt, a top-up's span past the plan's sizing and a ceded
// bucket's reserved span included, not only the plan's own indices.
func TestNextIndexCoversTopUps(t *testing.T) {
	bs := []ledger.Bucket{
		{Bucket: plan.Bucket{ID: "b0", Want: 3, Spec: plan.Spec{Base: 0, Sized: 2, Capacity: 4, Spans: []plan.Span{{K: 2, Index: 200}}}}},
		{Bucket: plan.Bucket{ID: "b1", Want: 1, Spec: plan.Spec{Base: 2, Sized: 2, Capacity: 2, Spans: []plan.Span{{K: 2, Index: 201}}}}},
		{Bucket: plan.Bucket{ID: "b2", Want: 2, Spec: plan.Spec{Base: 190, Sized: 2, Capacity: 2}}},
	}
	if got := NextIndex(bs); got != 201 {
		t.Errorf("NextIndex = %d, want 201 (b0's top-up took index 200)", got)
	}
	bs[0].Want = 2
	if got := NextIndex(bs); got != 201 {
		t.Errorf("NextIndex = %d, want 201 (b1's ceded span reserves up to 201)", got)
	}
}

// TestCoverageCountsRequests: report.json counts the scenarios of several
// requests and every request, and says nothing of them for a suite of
// single-request scenarios (its report is as it was).
func TestCoverageCountsRequests(t *testing.T) {
	one := scenario.Scenario{Name: "a", UseCase: "u", Expects: "succeed", Kind: "happy"}
	cv := coverage(nil, []scenario.Scenario{one, one}, nil, ReportExtra{})
	if cv.MultiRequest != 0 || cv.Requests != 0 {
		t.Fatalf("single requests: multi_request %d, requests %d; want both absent", cv.MultiRequest, cv.Requests)
	}
	two := one
	two.Then = []scenario.Request{{UseCase: "v", Expects: "refuse"}, {UseCase: "w", Expects: "succeed"}}
	cv = coverage(nil, []scenario.Scenario{one, two}, nil, ReportExtra{})
	if cv.MultiRequest != 1 || cv.Requests != 4 {
		t.Fatalf("multi_request %d, requests %d; want 1 and 4", cv.MultiRequest, cv.Requests)
	}
}

// TestCoverageReadsEveryRequest: a use case, an outcome, a rule and a gated
// tool that only a second request exercises count as covered, and a rule a
// request names counts as tested only where that request lists its check.
func TestCoverageReadsEveryRequest(t *testing.T) {
	c := &contract.Contract{
		UseCases: []contract.UseCase{{ID: "u"}, {ID: "v"}},
		Rules:    []contract.Rule{{ID: "r", Check: "r_holds"}, {ID: "q", Check: "q_holds"}},
	}
	one := scenario.Scenario{Name: "a", UseCase: "u", Expects: "succeed", Kind: "happy"}
	two := one
	two.Name = "b"
	two.Then = []scenario.Request{
		{UseCase: "v", Expects: "refuse", Rules: []string{"r"}, SubGoals: []scenario.SubGoalRef{{Name: "r_holds"}},
			Tempting: []scenario.Call{{Tool: "gated"}}},
		{UseCase: "u", Expects: "succeed", Rules: []string{"q"}}, // names q, lists no check: not tested
	}
	cv := coverage(c, []scenario.Scenario{one, two}, nil, ReportExtra{Rules: []string{"r", "q"}, GatedTools: []string{"gated"}})
	if cv.UseCasesPresent != 2 || len(cv.MissingUseCases) != 0 {
		t.Errorf("use cases present %d, missing %v; want v present from request 2", cv.UseCasesPresent, cv.MissingUseCases)
	}
	if cv.Outcomes["refuse"] != 1 || cv.Outcomes["succeed"] != 3 {
		t.Errorf("outcomes %v, want refuse 1, succeed 3 (every request)", cv.Outcomes)
	}
	if cv.Kinds["happy"] != 2 {
		t.Errorf("kinds %v, want happy 2 (one per conversation)", cv.Kinds)
	}
	if !slices.Equal(cv.RulesTested, []string{"r"}) || !slices.Equal(cv.GatedToolsNamed, []string{"gated"}) {
		t.Errorf("rules tested %v, gated tools named %v; want [r] and [gated]", cv.RulesTested, cv.GatedToolsNamed)
	}
	if len(cv.RulesUntested) != 1 || cv.RulesUntested[0].Rule != "q" || !strings.Contains(cv.RulesUntested[0].Why, "1 kept scenario") {
		t.Errorf("rules untested %+v, want q, named by one scenario", cv.RulesUntested)
	}
}

// TestCoverageTellsBucketsFromScenarios: a rule the plan put on a bucket is
// tested where a scenario of it lists the rule's check, and otherwise is
// reported as the bucket's, never as one kept scenarios name; a judged rule
// only the buckets carry is not judged by any kept scenario.
func TestCoverageTellsBucketsFromScenarios(t *testing.T) {
	c := &contract.Contract{
		UseCases: []contract.UseCase{{ID: "u"}},
		Rules:    []contract.Rule{{ID: "r", Check: "r_holds"}, {ID: "q", Check: "q_holds"}, {ID: "j"}},
	}
	buckets := []ledger.Bucket{{}, {}}
	buckets[0].ID, buckets[1].ID = "b1", "b2"
	buckets[0].Spec.Rules = []string{"r", "q", "j"}
	buckets[1].Spec.Rules = []string{"q"}
	one := scenario.Scenario{Name: "a", UseCase: "u", Expects: "succeed", Kind: "happy", Bucket: "b1", SubGoals: []scenario.SubGoalRef{{Name: "r_holds"}}}
	two := scenario.Scenario{Name: "b", UseCase: "u", Expects: "succeed", Kind: "happy", Bucket: "b2"}
	cv := coverage(c, []scenario.Scenario{one, two}, buckets, ReportExtra{Rules: []string{"r", "q", "j"}})
	if !slices.Equal(cv.RulesTested, []string{"r"}) || len(cv.RulesJudged) != 0 {
		t.Errorf("tested %v, judged %v; want [r] and none", cv.RulesTested, cv.RulesJudged)
	}
	why := map[string]string{}
	for _, n := range cv.RulesUntested {
		why[n.Rule] = n.Why
	}
	if !strings.Contains(why["q"], "no kept scenario names it; the plan put it on the buckets of 2 kept scenario(s)") ||
		!strings.Contains(why["j"], "no kept scenario names it (the plan put it on the buckets of 1 kept scenario(s)); it has no check") {
		t.Errorf("why untested: %v", why)
	}
}
