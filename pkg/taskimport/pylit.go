package taskimport

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The published τ-bench task lists are Python modules: imports, then a
// list of Task(...) calls. They are read here, never executed, by a parser
// of the literal subset they use: calls with keyword arguments, dicts,
// lists, strings (implicit concatenation, escapes, raw and triple-quoted),
// numbers, True, False and None. Anything else is a *SyntaxError naming
// its line and column, so a changed upstream file is noticed, not guessed.

// MaxSource is the largest task file read (τ-bench's largest is under 1 MB).
const MaxSource = 16 << 20

// maxDepth bounds nesting, so hostile input cannot exhaust the stack.
const maxDepth = 100

// SyntaxError is source the parser does not accept, at a 1-based line and
// column (in runes).
type SyntaxError struct {
	Line, Col int
	Msg       string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// Call is a call expression of the source: Func(name=value, ...).
type Call struct {
	Func   string
	Kwargs map[string]any
	// Order is the keyword arguments in the order written.
	Order     []string
	Line, Col int
}

// Assign is a top-level NAME = value statement.
type Assign struct {
	Name      string
	Value     any
	Line, Col int
}

// ParsePython reads a module of imports and assignments of literals. Values
// are string, int64, float64, bool, nil, []any, map[string]any and *Call.
func ParsePython(src []byte) ([]Assign, error) {
	if len(src) > MaxSource {
		return nil, &SyntaxError{1, 1, fmt.Sprintf("file of %d bytes is over the %d accepted", len(src), MaxSource)}
	}
	if !utf8.Valid(src) {
		p := &parser{src: src, line: 1, col: 1}
		for p.pos < len(src) {
			r, n := utf8.DecodeRune(src[p.pos:])
			if r == utf8.RuneError && n <= 1 {
				return nil, p.errf("invalid UTF-8")
			}
			p.advance(n)
		}
	}
	p := &parser{src: src, line: 1, col: 1}
	var out []Assign
	for {
		p.skipBlank()
		if p.pos >= len(p.src) {
			return out, nil
		}
		line, col := p.line, p.col
		name, ok := p.ident()
		if !ok {
			return nil, p.errf("expected a statement, found %s", p.describe())
		}
		switch name {
		case "from", "import":
			if err := p.importStmt(name); err != nil {
				return nil, err
			}
			continue
		}
		p.skipSpace()
		if !p.eat('=') {
			return nil, p.errf("expected '=' after %s, found %s", name, p.describe())
		}
		v, err := p.value(0)
		if err != nil {
			return nil, err
		}
		if err := p.endStatement(); err != nil {
			return nil, err
		}
		out = append(out, Assign{Name: name, Value: v, Line: line, Col: col})
	}
}

type parser struct {
	src       []byte
	pos       int
	line, col int
}

func (p *parser) errf(format string, args ...any) *SyntaxError {
	return &SyntaxError{p.line, p.col, fmt.Sprintf(format, args...)}
}

func (p *parser) advance(n int) {
	for range n {
		if p.pos >= len(p.src) {
			return
		}
		c := p.src[p.pos]
		p.pos++
		switch {
		case c == '\n':
			p.line++
			p.col = 1
		case c&0xC0 != 0x80: // count runes, not continuation bytes
			p.col++
		}
	}
}

func (p *parser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) eat(c byte) bool {
	if p.peek() == c && p.pos < len(p.src) {
		p.advance(1)
		return true
	}
	return false
}

func (p *parser) describe() string {
	if p.pos >= len(p.src) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.src[p.pos:])
	return strconv.QuoteRune(r)
}

// skipSpace skips spaces, tabs and a comment on the current line, and a
// backslash line continuation.
func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\f':
			p.advance(1)
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.advance(1)
			}
		case c == '\\' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '\n':
			p.advance(2)
		case c == '\\' && p.pos+2 < len(p.src) && p.src[p.pos+1] == '\r' && p.src[p.pos+2] == '\n':
			p.advance(3)
		default:
			return
		}
	}
}

// skipBlank skips spaces, comments and newlines (inside brackets newlines
// do not end anything; at the top level they separate statements).
func (p *parser) skipBlank() {
	for {
		p.skipSpace()
		if c := p.peek(); p.pos < len(p.src) && (c == '\n' || c == '\r' || c == ';') {
			p.advance(1)
			continue
		}
		return
	}
}

func (p *parser) endStatement() error {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return nil
	}
	switch p.peek() {
	case '\n', '\r', ';':
		return nil
	}
	return p.errf("expected the end of the statement, found %s", p.describe())
}

func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentPart(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func (p *parser) ident() (string, bool) {
	start := p.pos
	for p.pos < len(p.src) {
		r, n := utf8.DecodeRune(p.src[p.pos:])
		if p.pos == start && !isIdentStart(r) || p.pos > start && !isIdentPart(r) {
			break
		}
		p.advance(n)
	}
	return string(p.src[start:p.pos]), p.pos > start
}

// importStmt accepts `from a.b import X, Y [as Z]` and `import a.b`.
func (p *parser) importStmt(kw string) error {
	dotted := func() error {
		for {
			p.skipSpace()
			if _, ok := p.ident(); !ok {
				return p.errf("expected a module name, found %s", p.describe())
			}
			if !p.eat('.') {
				return nil
			}
		}
	}
	if kw == "from" {
		p.skipSpace()
		for p.eat('.') {
		}
		if p.peek() != ' ' {
			if err := dotted(); err != nil {
				return err
			}
		}
		p.skipSpace()
		if w, _ := p.ident(); w != "import" {
			return p.errf("expected 'import', found %s", p.describe())
		}
		paren := false
		p.skipSpace()
		if p.eat('(') {
			paren = true
		}
		for {
			if paren {
				p.skipBlank()
			} else {
				p.skipSpace()
			}
			if _, ok := p.ident(); !ok {
				return p.errf("expected a name to import, found %s", p.describe())
			}
			p.skipSpace()
			save := *p
			if w, _ := p.ident(); w == "as" {
				p.skipSpace()
				if _, ok := p.ident(); !ok {
					return p.errf("expected a name after 'as', found %s", p.describe())
				}
			} else {
				*p = save
			}
			if paren {
				p.skipBlank()
			}
			if !p.eat(',') {
				break
			}
			if paren {
				p.skipBlank()
				if p.peek() == ')' {
					break
				}
			}
		}
		if paren && !p.eat(')') {
			return p.errf("expected ')' closing the import, found %s", p.describe())
		}
		return p.endStatement()
	}
	if err := dotted(); err != nil {
		return err
	}
	return p.endStatement()
}

func (p *parser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("nested deeper than %d", maxDepth)
	}
	p.skipBlank()
	line, col := p.line, p.col
	c := p.peek()
	if p.pos >= len(p.src) {
		return nil, p.errf("expected a value, found end of file")
	}
	switch {
	case c == '[':
		p.advance(1)
		var out []any
		err := p.items(']', func() error {
			v, err := p.value(depth + 1)
			out = append(out, v)
			return err
		})
		if out == nil {
			out = []any{}
		}
		return out, err
	case c == '{':
		p.advance(1)
		out := map[string]any{}
		err := p.items('}', func() error {
			p.skipBlank()
			kl, kc := p.line, p.col
			k, err := p.value(depth + 1)
			if err != nil {
				return err
			}
			ks, ok := k.(string)
			if !ok {
				return &SyntaxError{kl, kc, "a dict key must be a string"}
			}
			if _, dup := out[ks]; dup {
				return &SyntaxError{kl, kc, fmt.Sprintf("key %q given twice", ks)}
			}
			p.skipBlank()
			if !p.eat(':') {
				return p.errf("expected ':' after a dict key, found %s", p.describe())
			}
			v, err := p.value(depth + 1)
			out[ks] = v
			return err
		})
		return out, err
	case c == '(':
		// A parenthesised value, usually strings concatenated over lines;
		// a tuple is not part of the subset.
		p.advance(1)
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.skipBlank()
		if p.peek() == ',' {
			return nil, p.errf("tuples are not accepted")
		}
		if !p.eat(')') {
			return nil, p.errf("expected ')', found %s", p.describe())
		}
		return v, nil
	case c == '"' || c == '\'':
		return p.strings()
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		return p.number()
	}
	name, ok := p.ident()
	if !ok {
		return nil, p.errf("expected a value, found %s", p.describe())
	}
	if len(name) <= 2 && (p.peek() == '"' || p.peek() == '\'') {
		switch strings.ToLower(name) {
		case "r", "u":
			p.pos, p.line, p.col = p.pos-len(name), line, col
			return p.strings()
		}
		return nil, &SyntaxError{line, col, fmt.Sprintf("string prefix %q is not accepted", name)}
	}
	switch name {
	case "True":
		return true, nil
	case "False":
		return false, nil
	case "None":
		return nil, nil
	}
	p.skipSpace()
	if !p.eat('(') {
		return nil, &SyntaxError{line, col, fmt.Sprintf("name %s is not a literal", name)}
	}
	call := &Call{Func: name, Kwargs: map[string]any{}, Line: line, Col: col}
	err := p.items(')', func() error {
		p.skipBlank()
		kl, kc := p.line, p.col
		k, ok := p.ident()
		if !ok {
			return p.errf("expected a keyword argument of %s, found %s", name, p.describe())
		}
		p.skipSpace()
		if !p.eat('=') || p.peek() == '=' {
			return &SyntaxError{kl, kc, fmt.Sprintf("%s takes keyword arguments only", name)}
		}
		if _, dup := call.Kwargs[k]; dup {
			return &SyntaxError{kl, kc, fmt.Sprintf("keyword argument %s given twice", k)}
		}
		v, err := p.value(depth + 1)
		call.Kwargs[k] = v
		call.Order = append(call.Order, k)
		return err
	})
	return call, err
}

// items reads comma-separated items up to close, a trailing comma allowed.
func (p *parser) items(close byte, item func() error) error {
	for {
		p.skipBlank()
		if p.eat(close) {
			return nil
		}
		if p.pos >= len(p.src) {
			return p.errf("expected %q, found end of file", close)
		}
		if err := item(); err != nil {
			return err
		}
		p.skipBlank()
		if p.eat(close) {
			return nil
		}
		if !p.eat(',') {
			return p.errf("expected ',' or %q, found %s", close, p.describe())
		}
	}
}

// strings reads one string literal or several adjacent ones, concatenated.
func (p *parser) strings() (any, error) {
	var b strings.Builder
	for {
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
		save := *p
		p.skipBlank()
		if !p.startsString() {
			*p = save
			return b.String(), nil
		}
	}
}

func (p *parser) startsString() bool {
	rest := p.src[p.pos:]
	for i := 0; i < len(rest) && i < 3; i++ {
		switch c := rest[i]; {
		case c == '"' || c == '\'':
			return true
		case i < 2 && strings.IndexByte("rRuUbBfF", c) >= 0:
		default:
			return false
		}
	}
	return false
}

func (p *parser) str() (string, error) {
	line, col := p.line, p.col
	raw := false
	for p.pos < len(p.src) && p.peek() != '"' && p.peek() != '\'' {
		switch p.peek() {
		case 'r', 'R':
			raw = true
		case 'u', 'U':
		default:
			return "", p.errf("string prefix %q is not accepted", p.peek())
		}
		p.advance(1)
	}
	q := p.peek()
	if q != '"' && q != '\'' {
		return "", p.errf("expected a string, found %s", p.describe())
	}
	triple := p.pos+2 < len(p.src) && p.src[p.pos+1] == q && p.src[p.pos+2] == q
	if triple {
		p.advance(3)
	} else {
		p.advance(1)
	}
	var b strings.Builder
	for {
		if p.pos >= len(p.src) {
			return "", &SyntaxError{line, col, "string not closed"}
		}
		c := p.src[p.pos]
		switch {
		case c == q && (!triple || p.pos+2 < len(p.src) && p.src[p.pos+1] == q && p.src[p.pos+2] == q):
			if triple {
				p.advance(3)
			} else {
				p.advance(1)
			}
			return b.String(), nil
		case c == '\n' && !triple:
			return "", &SyntaxError{line, col, "string not closed on its line"}
		case c == '\\' && raw:
			// A raw string keeps the backslash, and it still hides the
			// quote after it.
			b.WriteByte('\\')
			p.advance(1)
			if p.pos < len(p.src) {
				r, n := utf8.DecodeRune(p.src[p.pos:])
				b.WriteRune(r)
				p.advance(n)
			}
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		default:
			r, n := utf8.DecodeRune(p.src[p.pos:])
			b.WriteRune(r)
			p.advance(n)
		}
	}
}

// escape reads one backslash escape as Python does.
func (p *parser) escape(b *strings.Builder) error {
	line, col := p.line, p.col
	p.advance(1)
	if p.pos >= len(p.src) {
		return &SyntaxError{line, col, "string not closed"}
	}
	c := p.src[p.pos]
	simple := map[byte]string{'\\': "\\", '\'': "'", '"': "\"", 'a': "\a", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v"}
	if s, ok := simple[c]; ok {
		b.WriteString(s)
		p.advance(1)
		return nil
	}
	switch c {
	case '\n':
		p.advance(1)
		return nil
	case '\r':
		p.advance(1)
		p.eat('\n')
		return nil
	case 'x', 'u', 'U':
		n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
		if p.pos+1+n > len(p.src) {
			return &SyntaxError{line, col, fmt.Sprintf("truncated \\%c escape", c)}
		}
		v, err := strconv.ParseUint(string(p.src[p.pos+1:p.pos+1+n]), 16, 32)
		if err != nil {
			return &SyntaxError{line, col, fmt.Sprintf("truncated \\%c escape", c)}
		}
		if v > unicode.MaxRune || v >= 0xD800 && v <= 0xDFFF {
			return &SyntaxError{line, col, fmt.Sprintf("\\%c escape out of range", c)}
		}
		b.WriteRune(rune(v))
		p.advance(1 + n)
		return nil
	case 'N':
		return &SyntaxError{line, col, "\\N{...} escapes are not accepted"}
	}
	if c >= '0' && c <= '7' {
		v, n := 0, 0
		for n < 3 && p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '7' {
			v = v*8 + int(p.src[p.pos]-'0')
			p.advance(1)
			n++
		}
		b.WriteRune(rune(v))
		return nil
	}
	// Python keeps an unknown escape as written.
	b.WriteByte('\\')
	return nil
}

func (p *parser) number() (any, error) {
	line, col := p.line, p.col
	neg := false
	for p.peek() == '-' || p.peek() == '+' {
		if p.peek() == '-' {
			neg = !neg
		}
		p.advance(1)
		p.skipSpace()
	}
	start := p.pos
	float := false
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c >= '0' && c <= '9' || c == '_':
		case c == '.' || c == 'e' || c == 'E':
			float = true
		case (c == '-' || c == '+') && p.pos > start && (p.src[p.pos-1] == 'e' || p.src[p.pos-1] == 'E'):
		default:
			goto done
		}
		p.advance(1)
	}
done:
	text := strings.ReplaceAll(string(p.src[start:p.pos]), "_", "")
	if text == "" || strings.Contains(string(p.src[start:p.pos]), "__") || strings.HasSuffix(string(p.src[start:p.pos]), "_") {
		return nil, &SyntaxError{line, col, "not a number"}
	}
	if r, _ := utf8.DecodeRune(p.src[p.pos:]); p.pos < len(p.src) && isIdentPart(r) {
		return nil, &SyntaxError{line, col, "only decimal numbers are accepted"}
	}
	if !float {
		if len(text) > 1 && text[0] == '0' && strings.Trim(text, "0") != "" {
			return nil, &SyntaxError{line, col, "leading zeros in a decimal number"}
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if errors.Is(err, strconv.ErrRange) {
			return nil, &SyntaxError{line, col, "integer out of range"}
		}
		if err != nil {
			return nil, &SyntaxError{line, col, "not a number"}
		}
		if neg {
			v = -v
		}
		return v, nil
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(v, 0) {
		return nil, &SyntaxError{line, col, "not a number"}
	}
	if neg {
		v = -v
	}
	return v, nil
}
