package brief

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

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
// buckets (the builtin model reads it this way), in the wire shape.
func TestBriefRoundTrip(t *testing.T) {
	b := Brief{Run: "r", Slice: "r-1", Agent: "shop", Buckets: []Bucket{{Bucket: plan.Bucket{ID: "b1", UseCase: "cancel-order",
		Angle: "a", Outcome: "refuse", Overlay: "none", Kind: "edge", Axes: map[string]string{"status": "shipped"}, Want: 3,
		Spec: plan.Spec{Tool: "cancel", Templates: []string{"#W1"}, Base: 7, Capacity: 4, Sized: 3}}, Have: 1}}, TurnBudget: 16}
	got, ok := Parse(Render(b))
	if !ok || !reflect.DeepEqual(got, b) {
		t.Fatalf("parsed back %+v, %v", got, ok)
	}
	js, _ := json.Marshal(b.Buckets[0])
	want := `{"id":"b1","use_case":"cancel-order","angle":"a","outcome":"refuse","overlay":"none","kind":"edge","axes":{"status":"shipped"},"want":3,"have":1,"spec":`
	if !strings.HasPrefix(string(js), want) {
		t.Fatalf("wire shape:\n%s\nwant prefix\n%s", js, want)
	}
}
