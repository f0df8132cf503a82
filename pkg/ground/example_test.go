package ground

import (
	"testing"
)

// TestDescriptionExample: a value a description gives as an example ("The
// policy id, such as PL-1318") picks the columns whose values look like it:
// the same classes of characters and the same text before the first digit.
func TestDescriptionExample(t *testing.T) {
	for desc, want := range map[string]string{
		"The policy id, such as PL-1318": "PL-1318",
		"Order number, e.g. W1001":       "W1001",
		"A count, such as 12":            "", // a bare number says little
		"The caller's comment":           "",
		"for example AB-12-x9":           "AB-12-x9",
	} {
		if got := example(desc); got != want {
			t.Errorf("example(%q) = %q, want %q", desc, got, want)
		}
	}
	for _, tc := range []struct {
		v, ex string
		want  bool
	}{
		{"PL-1001", "PL-1318", true},
		{"AP-1327", "PL-1318", false}, // another table's prefix
		{"PL-10011", "PL-1318", false},
		{"pl-1001", "PL-1318", false},
		{"W1120", "W1001", true},
		{"PL 1001", "PL-1318", false},
	} {
		if got := alike(tc.v, tc.ex); got != tc.want {
			t.Errorf("alike(%q, %q) = %v, want %v", tc.v, tc.ex, got, tc.want)
		}
	}
}
