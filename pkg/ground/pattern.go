package ground

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// fromPattern writes a string a JSON Schema pattern accepts, varied by n, for
// an argument no column holds values of (a card's last four digits). It
// reads the pattern's syntax: literals are kept, each class takes one of its
// characters, repeats take their least count. "" when it cannot.
func fromPattern(pattern string, n int) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return ""
	}
	var b strings.Builder
	pos := 0
	var walk func(r *syntax.Regexp) bool
	walk = func(r *syntax.Regexp) bool {
		switch r.Op {
		case syntax.OpLiteral:
			b.WriteString(string(r.Rune))
		case syntax.OpCharClass:
			if len(r.Rune) < 2 {
				return false
			}
			lo, hi := r.Rune[0], r.Rune[1]
			span := int(hi-lo) + 1
			// Vary by n and position, so two calls differ.
			b.WriteRune(lo + rune((n*7+pos*3+4)%span))
			pos++
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			b.WriteByte('x')
		case syntax.OpConcat:
			for _, s := range r.Sub {
				if !walk(s) {
					return false
				}
			}
		case syntax.OpCapture:
			return walk(r.Sub[0])
		case syntax.OpAlternate:
			return walk(r.Sub[n%len(r.Sub)])
		case syntax.OpRepeat:
			k := r.Min
			if k == 0 && r.Max != 0 {
				k = 1
			}
			for i := 0; i < k; i++ {
				if !walk(r.Sub[0]) {
					return false
				}
			}
		case syntax.OpPlus:
			return walk(r.Sub[0])
		case syntax.OpStar, syntax.OpQuest, syntax.OpEmptyMatch,
			syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
			syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		default:
			return false
		}
		return true
	}
	if !walk(re) {
		return ""
	}
	out := b.String()
	if ok, err := regexp.MatchString(pattern, out); err != nil || !ok {
		return ""
	}
	return out
}
