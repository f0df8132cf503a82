package pgsql

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is what a token is.
type Kind int

const (
	Ident       Kind = iota // unquoted identifier or keyword, lower-cased
	QuotedIdent             // "quoted" or U&"quoted" identifier, case kept, escapes decoded
	String                  // string constant of any quoting, its value
	Number                  // numeric constant, as written
	Param                   // positional parameter: $1
	Punct                   // one byte of punctuation or operator
)

// Token is one lexical unit of SQL text.
type Token struct {
	Kind Kind
	// Text is the identifier lower-cased (Ident), the name or value with
	// quotes removed and escapes decoded (QuotedIdent, String), or the text
	// as written (Number, Param, Punct).
	Text string
	Line int // 1-based line the token starts on
}

// Keyword reports whether t is the unquoted keyword kw (given in lower case).
func (t Token) Keyword(kw string) bool { return t.Kind == Ident && t.Text == kw }

// Punct reports whether t is the punctuation p.
func (t Token) Punct(p string) bool { return t.Kind == Punct && t.Text == p }

// Name reports whether t can be an identifier, and the name it spells.
func (t Token) Name() (string, bool) {
	if t.Kind == Ident || t.Kind == QuotedIdent {
		return t.Text, true
	}
	return "", false
}

// Error is a text the lexer cannot split: a quote or comment left open, an
// empty quoted identifier, a malformed Unicode escape. PostgreSQL refuses the
// same texts.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// IsIdentStart reports whether c may begin an unquoted identifier; every
// byte of a multi-byte character may.
func IsIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// IsIdentByte reports whether c may continue an unquoted identifier.
func IsIdentByte(c byte) bool { return IsIdentStart(c) || isDigit(c) || c == '$' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// Lex splits src into tokens, dropping white space and comments. On an
// error it returns the tokens before the error and an *Error.
//
// It knows PostgreSQL's quoting: '...' strings, E'...' with backslash
// escapes, B'...', X'...' and N'...', U&'...' and U&"..." with Unicode
// escapes and an optional UESCAPE 'c', "..." identifiers, $tag$...$tag$
// strings, -- comments and nested /* */ comments.
func Lex(src string) ([]Token, error) {
	l := &lexer{src: src, line: 1}
	for l.i < len(l.src) {
		if err := l.step(); err != nil {
			return l.toks, err
		}
	}
	return l.toks, nil
}

type lexer struct {
	src  string
	i    int
	line int
	toks []Token
}

func (l *lexer) emit(k Kind, text string, line int) {
	l.toks = append(l.toks, Token{Kind: k, Text: text, Line: line})
}

// step reads one token, blank or comment at l.i.
func (l *lexer) step() error {
	src, i, n := l.src, l.i, len(l.src)
	c := src[i]
	start := l.line
	switch {
	case c == '\n':
		l.line++
		l.i++
	case isSpace(c):
		l.i++
	case c == '-' && i+1 < n && src[i+1] == '-':
		for l.i < n && src[l.i] != '\n' {
			l.i++
		}
	case c == '/' && i+1 < n && src[i+1] == '*':
		if !l.comment() {
			return &Error{start, "unterminated /* comment"}
		}
	case c == '\'':
		s, ok := l.quoted('\'', false)
		if !ok {
			return &Error{start, "unterminated string constant"}
		}
		l.emit(String, s, start)
	case c == '"':
		s, ok := l.quoted('"', false)
		if !ok {
			return &Error{start, "unterminated quoted identifier"}
		}
		if s == "" {
			return &Error{start, "zero-length quoted identifier"}
		}
		l.emit(QuotedIdent, s, start)
	case (c == 'u' || c == 'U') && i+2 < n && src[i+1] == '&' && (src[i+2] == '"' || src[i+2] == '\''):
		return l.unicode(start)
	case c == '$':
		return l.dollar(start)
	case IsIdentStart(c):
		j := i
		for j < n && IsIdentByte(src[j]) {
			j++
		}
		// E'..', B'..', X'..', N'..': a one-letter prefix glued to a string.
		if j-i == 1 && j < n && src[j] == '\'' && strings.IndexByte("eEbBxXnN", c) >= 0 {
			l.i = j
			s, ok := l.quoted('\'', c == 'e' || c == 'E')
			if !ok {
				return &Error{start, "unterminated string constant"}
			}
			l.emit(String, s, start)
			return nil
		}
		l.emit(Ident, strings.ToLower(src[i:j]), start)
		l.i = j
	case isDigit(c) || c == '.' && i+1 < n && isDigit(src[i+1]):
		j := i
		for j < n && (isDigit(src[j]) || src[j] == '.' || src[j] == '_' ||
			src[j] == 'e' || src[j] == 'E' ||
			(src[j] == '+' || src[j] == '-') && j > i && (src[j-1] == 'e' || src[j-1] == 'E')) {
			j++
		}
		l.emit(Number, src[i:j], start)
		l.i = j
	default:
		l.emit(Punct, string(c), start)
		l.i++
	}
	return nil
}

// comment skips the (nested) comment at l.i and reports whether it closed.
func (l *lexer) comment() bool {
	src, n := l.src, len(l.src)
	depth := 0
	for l.i < n {
		switch {
		case src[l.i] == '/' && l.i+1 < n && src[l.i+1] == '*':
			depth++
			l.i += 2
		case src[l.i] == '*' && l.i+1 < n && src[l.i+1] == '/':
			depth--
			l.i += 2
			if depth == 0 {
				return true
			}
		default:
			if src[l.i] == '\n' {
				l.line++
			}
			l.i++
		}
	}
	return depth == 0
}

// quoted reads the text closed by q starting at the opening quote l.i,
// where a doubled q stands for one q and, when bs, a backslash escapes the
// next byte.
func (l *lexer) quoted(q byte, bs bool) (string, bool) {
	src, n := l.src, len(l.src)
	var b strings.Builder
	l.i++ // the opening quote
	for l.i < n {
		c := src[l.i]
		switch {
		case c == '\n':
			l.line++
			b.WriteByte(c)
			l.i++
		case bs && c == '\\' && l.i+1 < n:
			if src[l.i+1] == '\n' {
				l.line++
			}
			b.WriteByte(src[l.i+1])
			l.i += 2
		case c == q:
			if l.i+1 < n && src[l.i+1] == q {
				b.WriteByte(q)
				l.i += 2
				continue
			}
			l.i++
			return b.String(), true
		default:
			b.WriteByte(c)
			l.i++
		}
	}
	return b.String(), false
}

// dollar reads a $1 parameter, a $tag$...$tag$ string or a lone $ at l.i.
func (l *lexer) dollar(start int) error {
	src, i, n := l.src, l.i, len(l.src)
	j := i + 1
	for j < n && isDigit(src[j]) {
		j++
	}
	if j > i+1 {
		l.emit(Param, src[i:j], start)
		l.i = j
		return nil
	}
	j = i + 1
	for j < n && IsIdentByte(src[j]) && src[j] != '$' {
		j++
	}
	if j < n && src[j] == '$' && (j == i+1 || IsIdentStart(src[i+1])) {
		tag := src[i : j+1]
		end := strings.Index(src[j+1:], tag)
		if end < 0 {
			return &Error{start, "unterminated dollar-quoted string " + tag}
		}
		body := src[j+1 : j+1+end]
		l.line += strings.Count(body, "\n")
		l.emit(String, body, start)
		l.i = j + 1 + end + len(tag)
		return nil
	}
	l.emit(Punct, "$", start)
	l.i++
	return nil
}

// unicode reads U&"..." or U&'...' at l.i, then an optional UESCAPE 'c',
// and emits the decoded identifier or string.
func (l *lexer) unicode(start int) error {
	q := l.src[l.i+2]
	l.i += 2
	raw, ok := l.quoted(q, false)
	if !ok {
		if q == '"' {
			return &Error{start, "unterminated quoted identifier"}
		}
		return &Error{start, "unterminated string constant"}
	}
	if q == '"' && raw == "" {
		return &Error{start, "zero-length quoted identifier"}
	}
	esc := byte('\\')
	if e, after, ok := l.uescape(); ok {
		l.line += strings.Count(l.src[l.i:after], "\n")
		esc, l.i = e, after
	}
	text, ok := decodeUnicode(raw, esc)
	if !ok {
		return &Error{start, fmt.Sprintf("malformed Unicode escape in U&%c%s%c", q, raw, q)}
	}
	if q == '"' {
		l.emit(QuotedIdent, text, start)
	} else {
		l.emit(String, text, start)
	}
	return nil
}

// uescape looks for UESCAPE 'c' at l.i (after blanks and comments) and
// returns the escape byte and the index after the clause.
func (l *lexer) uescape() (byte, int, bool) {
	s := l.src
	j := skipBlank(s, l.i)
	if len(s)-j < 7 || !strings.EqualFold(s[j:j+7], "uescape") || (j+7 < len(s) && IsIdentByte(s[j+7])) {
		return 0, 0, false
	}
	j = skipBlank(s, j+7)
	if j+2 >= len(s) || s[j] != '\'' || s[j+2] != '\'' {
		return 0, 0, false
	}
	return s[j+1], j + 3, true
}

// skipBlank returns the index of the first byte at or after i that is not
// white space or inside a comment.
func skipBlank(s string, i int) int {
	for i < len(s) {
		switch {
		case isSpace(s[i]):
			i++
		case strings.HasPrefix(s[i:], "--"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			depth := 0
			for i < len(s) {
				if strings.HasPrefix(s[i:], "/*") {
					depth++
					i += 2
				} else if strings.HasPrefix(s[i:], "*/") {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
		default:
			return i
		}
	}
	return i
}

// decodeUnicode decodes the escapes of a U& literal: esc followed by four
// hex digits, esc+ followed by six, and esc esc for esc itself.
func decodeUnicode(raw string, esc byte) (string, bool) {
	var out strings.Builder
	for i := 0; i < len(raw); {
		if raw[i] != esc {
			out.WriteByte(raw[i])
			i++
			continue
		}
		switch {
		case i+1 < len(raw) && raw[i+1] == esc:
			out.WriteByte(esc)
			i += 2
		case i+7 < len(raw) && raw[i+1] == '+' && isHex(raw[i+2:i+8]):
			r, _ := strconv.ParseUint(raw[i+2:i+8], 16, 32)
			out.WriteRune(rune(r))
			i += 8
		case i+4 < len(raw) && isHex(raw[i+1:i+5]):
			r, _ := strconv.ParseUint(raw[i+1:i+5], 16, 32)
			out.WriteRune(rune(r))
			i += 5
		default:
			return "", false
		}
	}
	return out.String(), true
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(isDigit(s[i]) || s[i] >= 'a' && s[i] <= 'f' || s[i] >= 'A' && s[i] <= 'F') {
			return false
		}
	}
	return s != ""
}
