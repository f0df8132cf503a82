package script

import (
	"strings"

	"github.com/suitegen/suitegen/internal/pgsql"
	"go.starlark.net/syntax"
)

// A read that names no table is arithmetic the database does for the
// handler: SELECT to_char(make_date($1, $2, 1) + ($3 - 1), 'YYYY-MM-DD')
// answers from its parameters alone, as a Starlark expression would. Its
// answer is argument-derived when its parameters are. Anything that could
// reach the world's rows or the clock keeps it the world's: a FROM (or any
// clause that names a relation), a function not known to be a pure
// built-in (a schema's own function may read tables), a quoted name, the
// clock (now(), current_date, 'today'::date), a sequence, the session.

// pureFuncs are PostgreSQL built-ins whose result depends on their operands
// alone, with the keywords and type names that may stand before a "(".
var pureFuncs = wordSet(`
	select cast in not and or any some all array row when then else is distinct between like ilike
	similar to escape overlaps case
	numeric decimal varchar char character varying time timestamp interval bit float
	to_char to_date to_number make_date make_time make_timestamp make_interval date_part date_trunc
	isfinite justify_days justify_hours justify_interval
	coalesce nullif greatest least
	upper lower initcap length char_length character_length octet_length substr replace translate
	trim btrim ltrim rtrim lpad rpad left right split_part strpos concat concat_ws format repeat reverse
	regexp_replace regexp_match regexp_like starts_with md5
	abs round floor ceil ceiling trunc mod power sqrt sign div
	array_length cardinality array_position
	jsonb_typeof json_typeof jsonb_array_length json_array_length to_jsonb to_json
`)

// impureWords reach the world, the clock or the session without a "(":
// clauses that name a relation or change one, the clock's keywords, the
// session's, and casts that read the catalog.
var impureWords = wordSet(`
	from into insert update delete merge with table returning lateral copy call do lock set
	current_date current_time current_timestamp localtime localtimestamp
	user current_user session_user current_role current_catalog current_schema system_user
	regclass regproc regprocedure regoper regoperator regtype regconfig regdictionary
	regnamespace regrole regcollation
`)

// clockLiterals are the special values a date or time cast reads the
// clock for.
var clockLiterals = wordSet(`now today tomorrow yesterday`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// pureSQL reports whether text is one SELECT that names no table and reads
// neither the clock nor the session: its answer is a function of its
// parameters.
func pureSQL(text string) bool {
	toks, err := pgsql.Lex(text)
	if err != nil || len(toks) == 0 || !toks[0].Keyword("select") {
		return false
	}
	for i, t := range toks {
		switch t.Kind {
		case pgsql.QuotedIdent:
			return false
		case pgsql.String:
			if clockLiterals[strings.ToLower(strings.TrimSpace(t.Text))] {
				return false
			}
		case pgsql.Punct:
			if t.Text == ";" || t.Text == "." {
				return false // a second statement; a qualified name
			}
		case pgsql.Ident:
			if impureWords[t.Text] {
				return false
			}
			if i+1 < len(toks) && toks[i+1].Punct("(") && !pureFuncs[t.Text] {
				return false
			}
		}
	}
	return true
}

// sqlText is the text of a query given as a string literal, a constant
// bound to one, or a sum of those; ok is false for anything built at run
// time (a table name formatted in).
func (at *argTaint) sqlText(file string, x syntax.Expr, depth int) (string, bool) {
	if depth > 8 {
		return "", false
	}
	switch x := unparen(x).(type) {
	case *syntax.Literal:
		s, ok := x.Value.(string)
		return s, ok
	case *syntax.BinaryExpr:
		if x.Op != syntax.PLUS {
			return "", false
		}
		a, ok1 := at.sqlText(file, x.X, depth+1)
		b, ok2 := at.sqlText(file, x.Y, depth+1)
		return a + b, ok1 && ok2
	case *syntax.Ident:
		if file, v := at.ix.constExpr(file, x.Name); v != nil {
			return at.sqlText(file, v, depth+1)
		}
	}
	return "", false
}
