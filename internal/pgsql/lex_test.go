package pgsql

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// seeds are texts every test of the lexer starts from: each quoting form,
// each way to leave one open, and the tricks a hostile statement plays.
var seeds = []string{
	"SELECT 1",
	"CREATE TABLE a (id int PRIMARY KEY, b numeric(10,2) DEFAULT 0.5e-3);",
	"select 'it''s', E'it\\'s', B'01', X'ff', N'x', $$a;b$$, $tag$ $$ $tag$, $1, \"Q\"\"x\"",
	"-- c\n/* a /* nested */ b */ x",
	"SELECT U&\"d\\0061t\\+000061\", U&'\\0041', U&\"a!0062\" UESCAPE '!', u&'x' /* c */ uescape\n'#'",
	"SELECT some'x\\' ; set_config('a','b',true) '",
	"'unterminated", "\"unterminated", "$a$ unterminated", "/* unterminated", "E'\\",
	"\"\"", "U&\"\"", "U&\"\\zz\"", "U&'\\12'",
	"\v\f\r\t x.y[1]::int <> $ a",
	"1.5 .5 1e10 1_000 6.02E+23",
}

func TestLex(t *testing.T) {
	cases := []struct {
		src  string
		want string // tokens as kind:text@line, space separated
	}{
		{"SELECT Foo", "ident:select@1 ident:foo@1"},
		{`"Foo"""`, `qident:Foo"@1`},
		{"'a''b' E'a\\'b' e'\\n'", "string:a'b@1 string:a'b@1 string:n@1"},
		// Only a one-letter prefix makes an escape string: some'x\' is the
		// name some then the string x\ (standard_conforming_strings).
		{`some'x\' ;`, `ident:some@1 string:x\@1 punct:;@1`},
		{"B'01' X'ff' N'n'", "string:01@1 string:ff@1 string:n@1"},
		{"$$a\nb$$ x", "string:a\nb@1 ident:x@2"},
		{"$t$ $$ $t$ $1 $ a", "string: $$ @1 param:$1@1 punct:$@1 ident:a@1"},
		{"a$b $1a", "ident:a$b@1 param:$1@1 ident:a@1"},
		{"-- c\n/* a /* b */ c\n */ x", "ident:x@3"},
		{`U&"d\0061t\+000061"`, "qident:data@1"},
		{`U&"a!0062!!" UESCAPE '!'`, "qident:ab!@1"},
		{"u&'x' /* c */ uescape\n'#' y", "string:x@1 ident:y@2"},
		{`U&"x" uescapes`, "qident:x@1 ident:uescapes@1"},
		{"menu&\"x\"", "ident:menu@1 punct:&@1 qident:x@1"},
		{"1.5 .5 1e-10 1_000", "number:1.5@1 number:.5@1 number:1e-10@1 number:1_000@1"},
		{"a\vb\fc", "ident:a@1 ident:b@1 ident:c@1"},
		{"x::int[]", "ident:x@1 punct::@1 punct::@1 ident:int@1 punct:[@1 punct:]@1"},
	}
	for _, c := range cases {
		toks, err := Lex(c.src)
		if err != nil {
			t.Errorf("Lex(%q): %v", c.src, err)
			continue
		}
		if got := show(toks); got != c.want {
			t.Errorf("Lex(%q)\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

func TestLexErrors(t *testing.T) {
	cases := []struct {
		src  string
		line int
		msg  string
		toks int // tokens returned before the error
	}{
		{"a\n'open", 2, "unterminated string constant", 1},
		{"E'\\'", 1, "unterminated string constant", 0},
		{`"open`, 1, "unterminated quoted identifier", 0},
		{`""`, 1, "zero-length quoted identifier", 0},
		{`U&""`, 1, "zero-length quoted identifier", 0},
		{"x $a$ open", 1, "unterminated dollar-quoted string $a$", 1},
		{"x\n/* a /* b */", 2, "unterminated /* comment", 1},
		{`U&"\zz"`, 1, `malformed Unicode escape in U&"\zz"`, 0},
		{`U&'\12'`, 1, `malformed Unicode escape in U&'\12'`, 0},
		{`U&"!zz" UESCAPE '!'`, 1, `malformed Unicode escape in U&"!zz"`, 0},
	}
	for _, c := range cases {
		toks, err := Lex(c.src)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Lex(%q) = %v, want an *Error", c.src, err)
			continue
		}
		if e.Line != c.line || e.Msg != c.msg || len(toks) != c.toks {
			t.Errorf("Lex(%q) = %d tokens, line %d %q; want %d tokens, line %d %q", c.src, len(toks), e.Line, e.Msg, c.toks, c.line, c.msg)
		}
	}
}

func show(toks []Token) string {
	names := map[Kind]string{Ident: "ident", QuotedIdent: "qident", String: "string", Number: "number", Param: "param", Punct: "punct"}
	var parts []string
	for _, t := range toks {
		parts = append(parts, fmt.Sprintf("%s:%s@%d", names[t.Kind], t.Text, t.Line))
	}
	return strings.Join(parts, " ")
}

// render writes tokens back as SQL that lexes to the same kinds and texts.
func render(toks []Token) string {
	var b strings.Builder
	for _, t := range toks {
		switch t.Kind {
		case QuotedIdent:
			b.WriteString(`"` + strings.ReplaceAll(t.Text, `"`, `""`) + `"`)
		case String:
			b.WriteString(`'` + strings.ReplaceAll(t.Text, `'`, `''`) + `'`)
		default:
			b.WriteString(t.Text)
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// FuzzLex checks, for any text, that lexing never panics, that lines only
// grow and stay within the text, that an error is always an *Error, and that
// the tokens written back as SQL lex to the same tokens: every quote the
// lexer opened it also closed where PostgreSQL would.
func FuzzLex(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		toks, err := Lex(src)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("Lex(%q) error %T, want *Error", src, err)
		}
		lines := 1 + strings.Count(src, "\n")
		prev := 1
		for _, tk := range toks {
			if tk.Line < prev || tk.Line > lines {
				t.Fatalf("Lex(%q): token %+v on line %d after line %d of %d", src, tk, tk.Line, prev, lines)
			}
			prev = tk.Line
			if tk.Kind == QuotedIdent && tk.Text == "" {
				t.Fatalf("Lex(%q): empty quoted identifier", src)
			}
		}
		again, err := Lex(render(toks))
		if err != nil {
			t.Fatalf("Lex(%q): tokens %s written back do not lex: %v", src, show(toks), err)
		}
		if len(again) != len(toks) {
			t.Fatalf("Lex(%q): %s\nwritten back: %s", src, show(toks), show(again))
		}
		for i := range toks {
			if again[i].Kind != toks[i].Kind || again[i].Text != toks[i].Text {
				t.Fatalf("Lex(%q): token %d %+v written back as %+v", src, i, toks[i], again[i])
			}
		}
	})
}
