package plan

import (
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
)

// TestPairRequests: RequestShare of the ask is dealt as two requests, a
// refusal then another use case's act on the same table whose templates
// hold the refusal's; outbound, overlaid, conversation-ending and
// other-table buckets are never a second request, and a plan with no such
// pair deals none.
func TestPairRequests(t *testing.T) {
	c := &contract.Contract{Tools: []contract.Tool{{Name: "cancel"}, {Name: "change"}, {Name: "transfer", EndsConversation: true}, {Name: "pay"}}}
	bucket := func(uc, outcome, tool, table string, want int, templates ...string) Bucket {
		return Bucket{UseCase: uc, Outcome: outcome, Overlay: "none", Want: want,
			Spec: Spec{Tool: tool, Table: table, Templates: templates, Refusal: map[bool]string{true: "rule:x"}[outcome == "refuse"], Base: 40, Sized: want}}
	}
	p := &Plan{Asked: 100, Buckets: []Bucket{
		bucket("cancel", "refuse", "cancel", "orders", 6, "o1", "o2"),
		bucket("cancel", "refuse", "cancel", "orders", 6, "o3"),
		bucket("cancel", "succeed", "cancel", "orders", 20, "o4"),
		bucket("escalate", "succeed", "transfer", "orders", 5, "o1", "o2", "o3"), // ends the conversation
		bucket("pay", "succeed", "pay", "payments", 5, "o1", "o2", "o3"),         // another table
		bucket("change", "succeed", "change", "orders", 5, "o1", "o2"),           // lacks o3
		bucket("change", "refuse", "change", "orders", 0, "o1", "o2", "o3"),
	}}
	out := *p
	out.Buckets = append([]Bucket(nil), p.Buckets...)
	out.pairRequests(c)
	nx := out.Buckets[0].Spec.Next
	if nx == nil || nx.UseCase != "change" || nx.Outcome != "succeed" || nx.Spec.Base != 0 || nx.Spec.Sized != 0 {
		t.Fatalf("first refusal's second request %+v, want change succeeding, without bookkeeping", nx)
	}
	if nx := out.Buckets[1].Spec.Next; nx == nil || nx.UseCase != "change" || nx.Outcome != "refuse" {
		t.Fatalf("second refusal's second request %+v, want the change refusal that holds o3", nx)
	}
	for i, b := range out.Buckets[2:] {
		if b.Spec.Next != nil {
			t.Errorf("bucket %d (%s %s) given a second request", i+2, b.UseCase, b.Outcome)
		}
	}
	// 12 of 100 dealt: the tenth is reached, no further bucket paired.
	out = *p
	out.Buckets = append([]Bucket(nil), p.Buckets...)
	out.Asked = 30
	out.pairRequests(c)
	if out.Buckets[0].Spec.Next == nil || out.Buckets[1].Spec.Next != nil {
		t.Errorf("ask of 30: want only the first refusal paired (6 >= 3)")
	}
	// A refusal about another person's record: no second request.
	out = *p
	out.Buckets = append([]Bucket(nil), p.Buckets...)
	out.Buckets[0].Spec.Choices = map[string]Choice{"o1": {Outside: "orders"}}
	out.pairRequests(c)
	if out.Buckets[0].Spec.Next != nil {
		t.Errorf("a case about someone else's record paired: %+v", out.Buckets[0].Spec.Next)
	}
	// No refusal to pair: a success, then another tool's act on its record.
	out = Plan{Asked: 100, Buckets: []Bucket{bucket("cancel", "succeed", "cancel", "orders", 12, "o1"), bucket("change", "refuse", "change", "orders", 6, "o1")}}
	out.Buckets[1].Spec.Refusal = "" // no way of saying no the plan dealt: not a first request
	out.pairRequests(c)
	if nx := out.Buckets[0].Spec.Next; nx == nil || nx.UseCase != "change" || out.Buckets[1].Spec.Next != nil {
		t.Errorf("a success's second request %+v, want the change", nx)
	}
	// Successes are paired after the refusals, with a second use case the
	// refusals already took: their rounds go on past it.
	out = Plan{Asked: 100, Buckets: []Bucket{bucket("cancel", "refuse", "cancel", "orders", 6, "o1"),
		bucket("cancel", "succeed", "cancel", "orders", 6, "o2"), bucket("change", "succeed", "change", "orders", 0, "o1", "o2")}}
	out.pairRequests(c)
	if out.Buckets[0].Spec.Next == nil || out.Buckets[1].Spec.Next == nil {
		t.Errorf("the success was not paired once the refusal took its only second use case: %+v", out.Buckets[1].Spec.Next)
	}
	// Only the cases on a template both buckets hold count: a bucket of 6
	// over o1 and o5, paired with one that holds o1, deals 3.
	out = Plan{Asked: 40, Buckets: []Bucket{bucket("cancel", "refuse", "cancel", "orders", 6, "o1", "o5"),
		bucket("cancel", "refuse", "cancel", "orders", 6, "o1"), bucket("change", "succeed", "change", "orders", 6, "o1")}}
	out.pairRequests(c) // a share of 40 is 6: 3, then 6 more
	if out.Buckets[0].Spec.Next == nil || out.Buckets[1].Spec.Next == nil {
		t.Errorf("want both refusals paired, the first counting 3 of its 6 cases: paired %v, %v", out.Buckets[0].Spec.Next != nil, out.Buckets[1].Spec.Next != nil)
	}
	// No other use case on the table: nothing paired.
	out = Plan{Asked: 100, Buckets: []Bucket{bucket("cancel", "refuse", "cancel", "orders", 6, "o1"), bucket("cancel", "succeed", "cancel", "orders", 6, "o1")}}
	out.pairRequests(c)
	if out.Buckets[0].Spec.Next != nil {
		t.Errorf("paired with its own use case: %+v", out.Buckets[0].Spec.Next)
	}
}

// TestNoSecondRequestAboutNothing: on examples/retail, a look-up of the
// caller's own account (which payment methods are on file) is never one of
// a conversation's two requests: its act takes only the caller's key, so
// nothing the caller says in it asks for it (the prover's
// request-unasked). Two requests on the caller's account that each take
// what the caller states (a new address) are still paired.
func TestNoSecondRequestAboutNothing(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("..", "..", "examples", "retail"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	bucket := func(uc, outcome, tool string, want int) Bucket {
		return Bucket{UseCase: uc, Outcome: outcome, Overlay: "none", Want: want,
			Spec: Spec{Tool: tool, Table: "users", Templates: []string{"u1"}, Refusal: map[bool]string{true: "rule:x"}[outcome == "refuse"], Base: 40, Sized: want}}
	}
	p := Plan{Asked: 100, Buckets: []Bucket{
		bucket("update-user-address", "succeed", "modify_user_address", 12),
		bucket("check-payment-methods", "succeed", "get_user_details", 6),
	}}
	p.pairRequests(c)
	if nx := p.Buckets[0].Spec.Next; nx != nil {
		t.Errorf("a change of address followed by %s, a look-up of the caller's own account", nx.UseCase)
	}
	p = Plan{Asked: 100, Buckets: []Bucket{
		bucket("check-payment-methods", "refuse", "get_user_details", 12),
		bucket("update-user-address", "succeed", "modify_user_address", 6),
	}}
	p.pairRequests(c)
	if nx := p.Buckets[0].Spec.Next; nx != nil {
		t.Errorf("a look-up of the caller's own account followed by %s", nx.UseCase)
	}
	p = Plan{Asked: 100, Buckets: []Bucket{
		bucket("update-user-address", "refuse", "modify_user_address", 12),
		bucket("modify-user", "succeed", "modify_user_address", 6),
	}}
	p.Buckets[1].Spec.Tool = "get_order_details" // another tool, one that names an order
	p.Buckets[1].Spec.Table = "users"
	p.pairRequests(c)
	if nx := p.Buckets[0].Spec.Next; nx == nil {
		t.Errorf("a refused change of address not paired with a request that names a record")
	}
}
