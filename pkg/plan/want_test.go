package plan

import (
	"context"
	"testing"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// totalWorld refuses a booking whose payments do not add up to 122,
// telling the number it wanted, as a handler's refusal does.
type totalWorld struct{ calls int }

func (w *totalWorld) Rehearse(_ context.Context, _ []scenario.Statement, calls []scenario.Call) ([]ground.Answer, error) {
	w.calls++
	var out []ground.Answer
	for _, c := range calls {
		paid := 0.0
		for _, p := range c.Args["payments"].([]any) {
			f, _ := p.(map[string]any)["amount"].(int64)
			paid += float64(f)
		}
		pin, _ := c.Args["pin"].(int64)
		switch {
		case pin != 1234:
			out = append(out, ground.Answer{Refused: true, Error: "wrong pin", Want: &ground.Want{Arg: pin, Value: int64(1234)}})
		case paid != 122:
			out = append(out, ground.Answer{Refused: true, Error: "does not add up", Want: &ground.Want{Arg: paid, Value: int64(122)}})
		default:
			out = append(out, ground.Answer{OK: true})
		}
	}
	return out, nil
}

// A number no column holds is settled from the refusal, in the call the
// caller keeps; one a confirmed column grounds is left as it is.
func TestWantingSettlesComputedNumbers(t *testing.T) {
	bs := ground.Bindings{
		{Tool: "book", Param: "payments", How: ground.FromRows},
		{Tool: "book", Param: "pin", How: ground.ByXRef, Table: "cards", Column: "pin", Confirmed: true},
	}
	w := &totalWorld{}
	r := &wanting{r: w, bs: &bs}
	shared := map[string]any{"amount": int64(58)}
	calls := []scenario.Call{{Tool: "book", Args: map[string]any{"pin": int64(1234), "payments": []any{shared}}}}
	ans, err := r.Rehearse(context.Background(), nil, calls)
	if err != nil {
		t.Fatal(err)
	}
	if !ans[0].OK || w.calls != 2 {
		t.Fatalf("want ok on the second rehearsal, got %+v after %d", ans[0], w.calls)
	}
	if got := calls[0].Args["payments"].([]any)[0].(map[string]any)["amount"]; got != int64(122) {
		t.Errorf("the call carries %v, want 122", got)
	}
	if shared["amount"] != int64(58) {
		t.Errorf("a map the call shared was changed: %v", shared)
	}

	// A wrong pin is a refusal cases test: never settled.
	calls = []scenario.Call{{Tool: "book", Args: map[string]any{"pin": int64(1111), "payments": []any{map[string]any{"amount": int64(122)}}}}}
	ans, err = r.Rehearse(context.Background(), nil, calls)
	if err != nil {
		t.Fatal(err)
	}
	if ans[0].OK || calls[0].Args["pin"] != int64(1111) {
		t.Errorf("a confirmed column's value was settled: %+v, %v", ans[0], calls[0].Args)
	}
}
