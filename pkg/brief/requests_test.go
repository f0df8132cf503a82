package brief

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestBriefCarriesTheSecondRequest: a bucket of two requests reaches the
// model with its second request, cut to the records the bucket's cases
// reach, and reads back as the builtin writer composes it.
func TestBriefCarriesTheSecondRequest(t *testing.T) {
	nx := &plan.Next{UseCase: "change-address", Angle: "ordinary", Outcome: "succeed", Kind: "happy",
		Spec: plan.Spec{Tool: "modify_address", Table: "orders", Templates: []string{"o9", "o2", "o1", "o3"},
			Choices: map[string]plan.Choice{"o1": {Variant: 1}, "o9": {Variant: 2}}, Strides: map[string]int{"orders": 2}, Callers: []string{"u1"}}}
	b := Bucket{Bucket: plan.Bucket{ID: "b0001", UseCase: "cancel-order", Outcome: "refuse", Want: 1,
		Spec: plan.Spec{Tool: "cancel", Table: "orders", Templates: []string{"o1", "o2", "o3", "o4", "o5"}, Next: nx}}}
	js, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var got Bucket
	if err := json.Unmarshal(js, &got); err != nil {
		t.Fatal(err)
	}
	want := plan.Next{UseCase: "change-address", Angle: "ordinary", Outcome: "succeed", Kind: "happy",
		Spec: plan.Spec{Tool: "modify_address", Table: "orders", Templates: []string{"o2", "o1", "o3"},
			Choices: map[string]plan.Choice{"o1": {Variant: 1}}}}
	if got.Spec.Next == nil || !reflect.DeepEqual(*got.Spec.Next, want) {
		t.Fatalf("second request read back as %+v, want %+v", got.Spec.Next, want)
	}
	if len(nx.Spec.Templates) != 4 || nx.Spec.Strides == nil {
		t.Errorf("the plan's own second request changed: %+v", nx.Spec)
	}
}

// TestBriefSaysSharedThingsOnce: a binding the second request shares with
// the buckets, and the strides every bucket carries, are written once and
// read back where they were; the plan's own second request is not changed.
func TestBriefSaysSharedThingsOnce(t *testing.T) {
	email := ground.Binding{Tool: "find_user", Param: "email", Table: "users", Column: "email", How: "likeness", Source: "case", Confirmed: true}
	reason := ground.Binding{Tool: "cancel", Param: "reason", How: "enum", Picks: []any{"no longer needed"}, Fill: true}
	strides := map[string]int{"orders": 2, "users": 1}
	nx := &plan.Next{UseCase: "refund-status", Outcome: "succeed", Kind: "happy",
		Spec: plan.Spec{Tool: "get_order", Templates: []string{"o1"}, Binds: ground.Bindings{email, reason}}}
	b := Brief{Run: "r", Slice: "r-1", Agent: "shop", Buckets: []Bucket{
		{Bucket: plan.Bucket{ID: "b1", UseCase: "cancel-order", Want: 1, Spec: plan.Spec{Tool: "cancel", Templates: []string{"o1"},
			Binds: ground.Bindings{email}, Strides: strides, Next: nx}}},
		{Bucket: plan.Bucket{ID: "b2", UseCase: "return-items", Want: 1, Spec: plan.Spec{Tool: "return", Templates: []string{"o2"},
			Binds: ground.Bindings{email, reason}, Strides: strides}}}}}
	text := render(t, b)
	for _, s := range []string{`["find_user","email"`, `"orders":2`, `"no longer needed"`} {
		if n := strings.Count(text, s); n != 1 {
			t.Errorf("%s is written %d times, want once:\n%s", s, n, text)
		}
	}
	got, ok := Parse(text)
	if !ok {
		t.Fatalf("the brief does not parse:\n%s", text)
	}
	for i, bk := range got.Buckets {
		if !reflect.DeepEqual(bk.Spec.Binds, b.Buckets[i].Spec.Binds) || !reflect.DeepEqual(bk.Spec.Strides, strides) {
			t.Errorf("bucket %s read back with binds %+v, strides %v", bk.ID, bk.Spec.Binds, bk.Spec.Strides)
		}
	}
	if n := got.Buckets[0].Spec.Next; n == nil || !reflect.DeepEqual(n.Spec.Binds, nx.Spec.Binds) {
		t.Errorf("the second request read back as %+v", n)
	}
	if got.Buckets[1].Spec.Next != nil {
		t.Errorf("a bucket of one request read back with a second: %+v", got.Buckets[1].Spec.Next)
	}
	if len(nx.Spec.Binds) != 2 {
		t.Errorf("the plan's own second request lost its bindings: %+v", nx.Spec)
	}
	// Strides that differ stay with their buckets.
	b.Buckets[1].Spec.Strides = map[string]int{"orders": 3}
	got, ok = Parse(render(t, b))
	if !ok || !reflect.DeepEqual(got.Buckets[0].Spec.Strides, strides) || got.Buckets[1].Spec.Strides["orders"] != 3 {
		t.Errorf("strides that differ read back as %v and %v", got.Buckets[0].Spec.Strides, got.Buckets[1].Spec.Strides)
	}
}

// TestFeatures: a brief names the features its buckets have as it carries
// them (a record past the templates its cases reach does not count), and
// renders the notes that explain them.
func TestFeatures(t *testing.T) {
	nx := &plan.Next{UseCase: "refund-status", Spec: plan.Spec{Templates: []string{"o1"}, Ask: "harder"}}
	b := Brief{Buckets: []Bucket{
		{Bucket: plan.Bucket{ID: "b1", Want: 1, Spec: plan.Spec{Templates: []string{"o1", "o2", "o3", "o4"},
			Choices: map[string]plan.Choice{"o4": {Outside: "orders"}}, Prior: map[string][]scenario.Statement{"o4": {{SQL: "UPDATE x"}}}}}},
	}}
	if f := b.Features(); len(f) != 0 {
		t.Errorf("a record no case reaches gives features %v", f)
	}
	for _, t := range []string{"o1", "o2", "o3"} {
		b.Buckets[0].Spec.Choices[t] = plan.Choice{Leave: "guardian"} // a level deals one per bucket
	}
	b.Buckets = append(b.Buckets, Bucket{Bucket: plan.Bucket{ID: "b2", Want: 1, Spec: plan.Spec{Templates: []string{"o1"},
		Choices: map[string]plan.Choice{"o1": {Outside: "variants", Swap: ground.SwapHeld}}, Next: nx}}})
	if f, want := b.Features(), []string{FeatureOutside, "swap-held", FeatureLeave, FeatureAsk, FeatureNext}; !reflect.DeepEqual(f, want) {
		t.Errorf("features %v, want %v", f, want)
	}
	b.Notes = []string{"A bucket whose `leave` is set.\n", "A bucket whose `spec.next` is set.\n"}
	text := render(t, b)
	for _, n := range b.Notes {
		if !strings.Contains(text, strings.TrimSpace(n)) {
			t.Errorf("the note %q is not in the brief:\n%s", n, text)
		}
	}
	if _, ok := Parse(text); !ok {
		t.Errorf("a brief with notes does not parse:\n%s", text)
	}
}
