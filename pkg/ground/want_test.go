package ground

import (
	"reflect"
	"testing"
)

// SwapWant puts the wanted number in the first leaf that gave the call's,
// in the leaf's own form, and nowhere when none did.
func TestSwapWant(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want Want
		out  any
		ok   bool
	}{
		{int64(58), Want{int64(58), int64(122)}, int64(122), true},
		{int64(58), Want{int64(58), 121.5}, 121.5, true},
		{"12.50", Want{12.5, int64(61)}, "61", true},
		{[]any{map[string]any{"amount": int64(58), "id": "gift_1"}}, Want{int64(58), int64(122)},
			[]any{map[string]any{"amount": int64(122), "id": "gift_1"}}, true},
		{int64(57), Want{int64(58), int64(122)}, nil, false},
		{"gift_1", Want{int64(58), int64(122)}, nil, false},
		{int64(58), Want{int64(58), int64(58)}, nil, false},
	} {
		out, ok := SwapWant(CloneValue(tc.in), &tc.want)
		if ok != tc.ok || ok && !reflect.DeepEqual(out, tc.out) {
			t.Errorf("SwapWant(%v, %v) = %v, %v; want %v, %v", tc.in, tc.want, out, ok, tc.out, tc.ok)
		}
	}
	for _, tc := range []struct {
		b    Binding
		want bool
	}{
		{Binding{How: ByLikeness, Table: "t", Column: "c", Confirmed: true, Computed: true}, true},
		{Binding{How: FromRows}, true},
		{Binding{How: Unbound}, true},
		{Binding{How: ByLikeness, Table: "t", Column: "c"}, true},
		{Binding{How: ByLikeness, Table: "t", Column: "c", Confirmed: true}, false},
		{Binding{How: ByXRef, Table: "t", Column: "c"}, false},
	} {
		if got := tc.b.Settles(); got != tc.want {
			t.Errorf("%+v.Settles() = %v, want %v", tc.b, got, tc.want)
		}
	}
}
