package brief

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/suitegen/suitegen/pkg/plan"
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
