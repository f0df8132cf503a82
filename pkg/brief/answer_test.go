package brief

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/plan"
)

func TestErrorAnswers(t *testing.T) {
	for _, c := range []Code{CodeNotJSON, CodeUnknownTool, CodeTooLarge, CodeBadArguments, CodeInvalid, CodeTaken, CodeFull, CodeLedger, CodeNotProved, CodeNotServed} {
		e := Error{Message: "what went wrong, \"quoted\"\nacross lines", Code: c}
		got, ok := ParseError(e.Answer())
		if !ok || got != e {
			t.Errorf("%s: %q parsed as %+v, %v", c, e.Answer(), got, ok)
		}
		if got.Code.NotRun() != (c == CodeNotJSON || c == CodeUnknownTool) {
			t.Errorf("%s: NotRun = %v", c, got.Code.NotRun())
		}
	}
	try, _ := json.Marshal(TryResult{Error: "world: copy failed"})
	sub, _ := json.Marshal(SubmitResult{Name: "x", Refusals: []Refusal{{Gate: "static", Code: "bad-name", Message: "m"}}})
	for _, answer := range []string{string(try), string(sub), `{"ok":true}`, "Error: the arguments are not valid JSON", "", "[]", `{"error":"x"}`, `{"code":"unknown-tool"}`} {
		if e, ok := ParseError(answer); ok {
			t.Errorf("%q parsed as an error answer %+v", answer, e)
		}
	}
}

// TestBriefRoundTrip: the brief the model reads parses back into the same
// slice and buckets (the builtin model reads it this way), in the wire
// shape; what the prose says (turns, spread, lessons, gap) is said once.
func TestBriefRoundTrip(t *testing.T) {
	email := ground.Binding{Tool: "find", Param: "email", Table: "users", Column: "email", How: "likeness", Source: "case", Confirmed: true}
	order := ground.Binding{Tool: "cancel", Param: "order_id", Table: "orders", Column: "order_id", How: "x-ref", Picks: []any{"a", 1.5}}
	refund := ground.Binding{Tool: "cancel", Param: "refund", How: "rows", Confirmed: true, Computed: true, Keep: true}
	b := Brief{Run: "r", Slice: "r-1", Agent: "shop", Contract: "abc", Seed: 7, Buckets: []Bucket{{Bucket: plan.Bucket{ID: "b1", UseCase: "cancel-order",
		Angle: "a", Outcome: "refuse", Overlay: "none", Kind: "edge", Axes: map[string]string{"status": "shipped"}, Want: 3,
		Spec: plan.Spec{Tool: "cancel", Templates: []string{"#W1", "#W2", "#W3"}, Base: 7, Capacity: 4, Sized: 3,
			Choices: map[string]plan.Choice{"#W1": {Ordinal: 2}, "#W3": {Variant: 1, Ordinal: 4}}, Binds: ground.Bindings{email, order}}}, Have: 1},
		{Bucket: plan.Bucket{ID: "b2", UseCase: "cancel-order", Angle: "b", Outcome: "succeed", Overlay: "none", Kind: "happy", Want: 1,
			Spec: plan.Spec{Tool: "cancel", Templates: []string{"#W9"}, Binds: ground.Bindings{order, email, refund}, Ask: "a caller on a bad line"}}}},
		TurnBudget: 16, Lessons: []string{"3 submissions were refused by the static gate (bad-args), e.g.:\nline two " + strings.Repeat("x", 400)},
		Spread: plan.Spread{Initials: []string{"QZ"}}, Gap: "the gap"}
	text := render(t, b)
	got, ok := Parse(text)
	want := b
	want.TurnBudget, want.Lessons, want.Spread, want.Gap = 0, nil, plan.Spread{}, ""
	want.Run = "" // part of the slice's id, not sent apart
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("parsed back %+v, %v", got, ok)
	}
	for _, s := range []string{"16 turns", "QZ", "the gap", "bad-args", "a caller on a bad line", `"angle":"a"`} {
		if strings.Count(text, s) != 1 {
			t.Errorf("%q is said %d times in the brief, want once", s, strings.Count(text, s))
		}
	}
	if strings.Contains(text, `"run"`) {
		t.Errorf("the brief carries the run's id beside the slice's:\n%s", text)
	}
	if !strings.Contains(text, `"keep"]`) || strings.Contains(text, `["find","email","users","email","likeness","case",true,null`) {
		t.Errorf("bind_fields do not end with the longest row's last column (keep), or a row keeps its trailing empty columns:\n%s", text)
	}
	if strings.Count(text, `["find","email"`) != 1 {
		t.Errorf("a binding two buckets share is written %d times, want once:\n%s", strings.Count(text, `["find","email"`), text)
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "bad-args") && (len(l) > maxLesson+10 || !strings.Contains(l, "line two")) {
			t.Errorf("the lesson is not one bounded line: %q", l)
		}
	}
	js, _ := json.Marshal(b.Buckets[0])
	prefix := `{"id":"b1","use_case":"cancel-order","angle":"a","outcome":"refuse","overlay":"none","kind":"edge","axes":{"status":"shipped"},"want":3,"have":1,"spec":`
	if !strings.HasPrefix(string(js), prefix) {
		t.Fatalf("wire shape:\n%s\nwant prefix\n%s", js, prefix)
	}
}

// TestDigest: a digest parses back into its submissions; other messages,
// a brief among them, are not digests.
func TestDigest(t *testing.T) {
	subs := []Submission{{Name: "a-1", Bucket: "b1", Refused: []string{"static/bad-name"}, Remaining: 3},
		{Name: "a-1", Bucket: "b1", Kept: true, Remaining: 2}}
	got, ok := ParseDigest(Digest(subs))
	if !ok || !reflect.DeepEqual(got, subs) {
		t.Fatalf("parsed back %+v, %v", got, ok)
	}
	if strings.Contains(Digest(subs), "\n\n") || strings.Count(Digest(subs), "\n") != len(subs) {
		t.Errorf("not one line a submission:\n%s", Digest(subs))
	}
	for _, s := range []string{"", "Submitted", render(t, Brief{Agent: "x"}), digestHead + "\nnot json"} {
		if _, ok := ParseDigest(s); ok {
			t.Errorf("%q parsed as a digest", s)
		}
	}
}

// TestChoiceWire: the brief carries a choice as [variant, ordinal] (and
// the world's row, when not the first) and the bucket's outside table,
// swap and argument left out; a field added to plan.Choice must be added to
// the wire too, or it is lost on the way to the model.
func TestChoiceWire(t *testing.T) {
	if n := reflect.TypeOf(plan.Choice{}).NumField(); n != 6 {
		t.Fatalf("plan.Choice has %d fields; the brief's wire carries 6 (Bucket.MarshalJSON)", n)
	}
	world := map[string]plan.Choice{"a": {Ordinal: 1, Outside: "slots", Swap: ground.SwapWorld, Other: 3}, "b": {Outside: "slots", Swap: ground.SwapWorld}}
	left := map[string]plan.Choice{"a": {Variant: 1, Leave: "guardian_id"}, "b": {Leave: "guardian_id"}}
	day := map[string]plan.Choice{"a": {Outside: "claims", Swap: ground.SwapDay, Other: 5}, "b": {Ordinal: 2, Outside: "claims", Swap: ground.SwapDay, Other: 13}}
	for _, chs := range []map[string]plan.Choice{world, left, day} {
		b := Brief{Run: "r", Slice: "s", Agent: "a", Contract: "c", Buckets: []Bucket{{Bucket: plan.Bucket{ID: "b1", UseCase: "u", Want: 2,
			Spec: plan.Spec{Tool: "t", Templates: []string{"a", "b"}, Choices: chs}}}}}
		got, ok := Parse(render(t, b))
		if !ok || !reflect.DeepEqual(got.Buckets[0].Spec.Choices, chs) {
			t.Fatalf("choices %+v came back as %+v", chs, got)
		}
	}
	leaves := Brief{Buckets: []Bucket{{Bucket: plan.Bucket{ID: "b1", Want: 2, Spec: plan.Spec{Templates: []string{"a", "b"},
		Choices: map[string]plan.Choice{"a": {Leave: "guardian_id"}, "b": {Leave: "card_id"}}}}}}}
	if _, err := json.Marshal(leaves); err == nil {
		t.Fatal("a bucket whose templates leave out two different arguments was written")
	}
	for _, bad := range []string{
		`{"id":"b1","spec":{"templates":["a"]},"choices":[[1]]}`,
		`{"id":"b1","spec":{"templates":["a"]},"choices":[[0,1,2,3]]}`,
		`{"id":"b1","spec":{"templates":["a"]},"choices":[[0,1,2]],"outside":"slots"}`,
	} {
		var bk Bucket
		if err := json.Unmarshal([]byte(bad), &bk); err == nil {
			t.Errorf("%s was read as %+v", bad, bk.Spec.Choices)
		}
	}
	mixed := Brief{Buckets: []Bucket{{Bucket: plan.Bucket{ID: "b1", Want: 2, Spec: plan.Spec{Templates: []string{"a", "b"},
		Choices: map[string]plan.Choice{"a": {Outside: "orders"}, "b": {Outside: "cards"}}}}}}}
	if _, err := json.Marshal(mixed); err == nil {
		t.Fatal("a bucket whose templates take records from two outside tables was written")
	}
	swaps := Brief{Buckets: []Bucket{{Bucket: plan.Bucket{ID: "b1", Want: 2, Spec: plan.Spec{Templates: []string{"a", "b"},
		Choices: map[string]plan.Choice{"a": {Outside: "variants", Swap: ground.SwapItself}, "b": {Outside: "variants"}}}}}}}
	if _, err := json.Marshal(swaps); err == nil {
		t.Fatal("a bucket whose templates swap to a record two ways was written")
	}
}

// TestBriefCarriesTheRecordsCasesReach: a bucket's template records and
// callers are cut to those its cases can reach (want, plus two spare
// records), with the choices of the records kept; the cases index them as
// they would the whole list.
func TestBriefCarriesTheRecordsCasesReach(t *testing.T) {
	var templates, callers []string
	choices := map[string]plan.Choice{}
	for i := range 40 {
		templates = append(templates, fmt.Sprintf("#W%d", i))
		callers = append(callers, fmt.Sprintf("u%d", i))
		choices[templates[i]] = plan.Choice{Variant: i % 2, Ordinal: i, Outside: "variants", Swap: ground.SwapHeld}
	}
	b := Brief{Run: "r", Slice: "s", Agent: "a", Contract: "c", Buckets: []Bucket{{Bucket: plan.Bucket{ID: "b1", UseCase: "u", Want: 3,
		Spec: plan.Spec{Tool: "t", Templates: templates, Callers: callers, Choices: choices}}, Have: 1}}}
	got, ok := Parse(render(t, b))
	if !ok {
		t.Fatal("the brief does not parse back")
	}
	sp := got.Buckets[0].Spec
	if !reflect.DeepEqual(sp.Templates, templates[:5]) || !reflect.DeepEqual(sp.Callers, callers[:3]) {
		t.Fatalf("templates %v, callers %v", sp.Templates, sp.Callers)
	}
	for _, k := range sp.Templates {
		if sp.Choices[k] != choices[k] {
			t.Fatalf("choice of %s: %+v, want %+v", k, sp.Choices[k], choices[k])
		}
	}
	if len(sp.Choices) > 5 {
		t.Fatalf("%d choices for 5 templates", len(sp.Choices))
	}
}
