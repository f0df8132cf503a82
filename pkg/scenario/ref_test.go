package scenario

import (
	"reflect"
	"testing"
)

func TestRenumberRefs(t *testing.T) {
	by := func(n int) func(int) (int, bool) {
		return func(k int) (int, bool) { return k + n, true }
	}
	moved := func(m map[int]int) func(int) (int, bool) {
		return func(k int) (int, bool) { return m[k], m[k] > 0 }
	}
	cases := []struct {
		name string
		args map[string]any
		step func(int) (int, bool)
		want map[string]any
	}{
		{
			name: "shifted by the calls played before",
			args: map[string]any{"id": "$1.user_id", "n": 3},
			step: by(2),
			want: map[string]any{"id": "$3.user_id", "n": 3},
		},
		{
			name: "nested in lists and objects, path kept",
			args: map[string]any{"items": []any{"$2.items.0.id", map[string]any{"of": "$10.a.b"}}},
			step: by(1),
			want: map[string]any{"items": []any{"$3.items.0.id", map[string]any{"of": "$11.a.b"}}},
		},
		{
			name: "a dropped step closes the gap",
			args: map[string]any{"a": "$1.x", "b": "$3.y"},
			step: moved(map[int]int{1: 1, 3: 2}),
			want: map[string]any{"a": "$1.x", "b": "$2.y"},
		},
		{
			name: "a step the mapping declines is kept as written",
			args: map[string]any{"a": "$2.x"},
			step: moved(map[int]int{1: 1, 3: 2}),
			want: map[string]any{"a": "$2.x"},
		},
		{
			name: "strings that are not references are left alone",
			args: map[string]any{"price": "$5", "note": "pay $2.50 now", "bare": "$2.", "word": "$x.y", "lead": " $1.x"},
			step: by(4),
			want: map[string]any{"price": "$5", "note": "pay $2.50 now", "bare": "$2.", "word": "$x.y", "lead": " $1.x"},
		},
		{
			name: "a number too large for an int is kept",
			args: map[string]any{"a": "$99999999999999999999999.x"},
			step: by(1),
			want: map[string]any{"a": "$99999999999999999999999.x"},
		},
		{
			name: "no arguments gives an empty map, not nil",
			args: nil,
			step: by(1),
			want: map[string]any{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RenumberRefs(tc.args, tc.step)
			if got == nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("RenumberRefs(%v) = %#v, want %#v", tc.args, got, tc.want)
			}
		})
	}
}

// TestRenumberRefsCopies checks the input is left as it was: callers keep
// the calls they renumber from.
func TestRenumberRefsCopies(t *testing.T) {
	in := map[string]any{"a": "$1.x", "l": []any{"$1.y"}}
	RenumberRefs(in, func(k int) (int, bool) { return k + 1, true })
	if in["a"] != "$1.x" || in["l"].([]any)[0] != "$1.y" {
		t.Fatalf("input changed: %#v", in)
	}
}

// FuzzRenumberRefs feeds model-written argument strings: renumbering never
// panics, and renumbering by zero changes nothing but leading zeros.
func FuzzRenumberRefs(f *testing.F) {
	for _, s := range []string{"$1.x", "$0.a.b", "$12.", "$5", "$-1.x", "$99999999999999999999.x", "x$1.y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := RenumberRefs(map[string]any{"v": s, "l": []any{s}}, func(k int) (int, bool) { return k, true })
		if v, ok := got["v"].(string); !ok || (v != s && stepRef.MatchString(s) && !hasLeadingZero(s)) {
			t.Fatalf("renumbering %q by zero gave %q", s, got["v"])
		}
	})
}

func hasLeadingZero(s string) bool { return len(s) > 2 && s[1] == '0' && s[2] >= '0' && s[2] <= '9' }
