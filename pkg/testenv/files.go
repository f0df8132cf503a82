package testenv

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"
)

// SameFiles fails t for each file (path → contents) that differs between
// the written sets a and b, naming the first line that differs, and for
// each file only one of them holds; what names each set in the messages.
func SameFiles(t testing.TB, a, b map[string][]byte, what [2]string) {
	t.Helper()
	for _, p := range slices.Sorted(maps.Keys(a)) {
		if bytes.Equal(a[p], b[p]) {
			continue
		}
		la, lb := strings.Split(string(a[p]), "\n"), strings.Split(string(b[p]), "\n")
		i := 0
		for i < min(len(la), len(lb)) && la[i] == lb[i] {
			i++
		}
		at := func(ls []string) string {
			if i < len(ls) {
				return ls[i]
			}
			return "(end)"
		}
		t.Errorf("%s differs between %s and %s at line %d: %q, %q", p, what[0], what[1], i+1, at(la), at(lb))
	}
	for _, p := range slices.Sorted(maps.Keys(b)) {
		if _, ok := a[p]; !ok {
			t.Errorf("%s is written with %s only", p, what[1])
		}
	}
}
