package progress

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCut: a block line (which holds contract text, e.g. use case names) cut
// to a window stays a prefix of the line, never splits a rune and leaves the
// last column free.
func FuzzCut(f *testing.F) {
	f.Add("proved 120/300 [=====>    ] 40%", 20)
	f.Add("  annulation-de-réservation 3/6", 10)
	f.Add("\xff\xfe broken", 3)
	f.Fuzz(func(t *testing.T, l string, w int) {
		got := cut(l, w)
		if !strings.HasPrefix(l, got) {
			t.Fatalf("cut(%q, %d) = %q, not a prefix", l, w, got)
		}
		if utf8.ValidString(l) && !utf8.ValidString(got) {
			t.Fatalf("cut(%q, %d) = %q splits a rune", l, w, got)
		}
		if w > 1 && utf8.RuneCountInString(got) > w-1 {
			t.Fatalf("cut(%q, %d) = %q: %d runes", l, w, got, utf8.RuneCountInString(got))
		}
		if w <= 1 && got != l {
			t.Fatalf("cut(%q, %d) = %q: an unknown width must leave the line alone", l, w, got)
		}
	})
}

// FuzzMatches: If-None-Match, a header any client sends, never matches a
// tag it does not name (and never panics).
func FuzzMatches(f *testing.F) {
	f.Add(`"abc"`, `"abc"`)
	f.Add(`W/"abc", "def"`, `"def"`)
	f.Add(`*`, `"x"`)
	f.Fuzz(func(t *testing.T, header, etag string) {
		if matches(header, etag) && !strings.Contains(header, etag) && !strings.Contains(header, "*") {
			t.Fatalf("matches(%q, %q) without the tag in the header", header, etag)
		}
	})
}
