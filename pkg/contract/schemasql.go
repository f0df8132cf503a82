package contract

import (
	"strings"
)

// SchemaFile is the world's DDL, relative to the contract directory.
const SchemaFile = "world/schema.sql"

// ParseSchemaSQL reads the CREATE TABLE statements of a world's schema.sql.
//
// It is not a SQL parser: it understands exactly what a world may contain
// (CREATE TABLE and CREATE INDEX, unqualified) well enough to know tables,
// columns, types, NOT NULL, defaults, primary keys, foreign keys, unique
// column sets and CHECK constraints (their simple forms read, see Check), and
// reports anything else as a schema-sql problem. Postgres remains the judge of
// the rest when the world is built.
func ParseSchemaSQL(src string) ([]Table, Problems) {
	var ps Problems
	r := report{&ps}
	toks, err := lexSQL(src)
	if err != nil {
		r.add(SchemaFile, err.line, CodeSchemaSQL, "%s", err.msg)
		return nil, ps
	}
	p := &schemaParser{r: r}
	for _, stmt := range splitStatements(toks) {
		p.statement(stmt)
	}
	if len(p.tables) == 0 && len(ps) == 0 {
		r.add(SchemaFile, 0, CodeSchemaSQL, "no CREATE TABLE statement: a world needs at least one table")
	}
	return p.tables, ps
}

type sqlKind int

const (
	tkIdent  sqlKind = iota // unquoted identifier or keyword, lower-cased
	tkQIdent                // "quoted identifier", case kept
	tkString                // string constant (any quoting)
	tkNumber
	tkParam // $1
	tkPunct // one character of punctuation or operator
)

type sqlTok struct {
	kind sqlKind
	text string // lower-cased for tkIdent; unquoted for tkQIdent; raw otherwise
	line int
}

// is reports whether t is the unquoted keyword kw.
func (t sqlTok) is(kw string) bool { return t.kind == tkIdent && t.text == kw }

func (t sqlTok) punct(c string) bool { return t.kind == tkPunct && t.text == c }

// name reports whether t can be an identifier, and its name.
func (t sqlTok) name() (string, bool) {
	if t.kind == tkIdent || t.kind == tkQIdent {
		return t.text, true
	}
	return "", false
}

type lexError struct {
	line int
	msg  string
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

// lexSQL splits src into tokens, dropping comments; it knows Postgres quoting:
// ” strings (E” with backslash escapes), "" identifiers, $tag$ strings and
// nested /* */ comments.
func lexSQL(src string) ([]sqlTok, *lexError) {
	var toks []sqlTok
	line := 1
	i := 0
	n := len(src)
	// quoted reads a string closed by q, where a doubled q is an escaped q;
	// backslash escapes when bs.
	quoted := func(q byte, bs bool) (string, bool) {
		var b strings.Builder
		i++ // opening quote
		for i < n {
			c := src[i]
			switch {
			case c == '\n':
				line++
				b.WriteByte(c)
				i++
			case bs && c == '\\' && i+1 < n:
				if src[i+1] == '\n' {
					line++
				}
				b.WriteByte(src[i+1])
				i += 2
			case c == q:
				if i+1 < n && src[i+1] == q {
					b.WriteByte(q)
					i += 2
					continue
				}
				i++
				return b.String(), true
			default:
				b.WriteByte(c)
				i++
			}
		}
		return b.String(), false
	}
	for i < n {
		c := src[i]
		start := line
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < n && src[i+1] == '-':
			for i < n && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			depth := 0
			for i < n {
				if src[i] == '/' && i+1 < n && src[i+1] == '*' {
					depth++
					i += 2
				} else if src[i] == '*' && i+1 < n && src[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					if src[i] == '\n' {
						line++
					}
					i++
				}
			}
			if depth != 0 {
				return nil, &lexError{start, "unterminated /* comment"}
			}
		case c == '\'':
			s, ok := quoted('\'', false)
			if !ok {
				return nil, &lexError{start, "unterminated string constant"}
			}
			toks = append(toks, sqlTok{tkString, s, start})
		case c == '"':
			s, ok := quoted('"', false)
			if !ok {
				return nil, &lexError{start, "unterminated quoted identifier"}
			}
			if s == "" {
				return nil, &lexError{start, "zero-length quoted identifier"}
			}
			toks = append(toks, sqlTok{tkQIdent, s, start})
		case c == '$':
			j := i + 1
			for j < n && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			if j > i+1 { // $1: a parameter
				toks = append(toks, sqlTok{tkParam, src[i:j], start})
				i = j
				continue
			}
			j = i + 1
			for j < n && isIdentChar(src[j]) && src[j] != '$' {
				j++
			}
			if j < n && src[j] == '$' && (j == i+1 || isIdentStart(src[i+1])) {
				tag := src[i : j+1]
				end := strings.Index(src[j+1:], tag)
				if end < 0 {
					return nil, &lexError{start, "unterminated dollar-quoted string " + tag}
				}
				body := src[j+1 : j+1+end]
				line += strings.Count(body, "\n")
				toks = append(toks, sqlTok{tkString, body, start})
				i = j + 1 + end + len(tag)
				continue
			}
			toks = append(toks, sqlTok{tkPunct, "$", start})
			i++
		case isIdentStart(c):
			j := i
			for j < n && isIdentChar(src[j]) {
				j++
			}
			word := src[i:j]
			// E'..', B'..', X'..', N'..': prefixed string constants.
			if j-i == 1 && j < n && src[j] == '\'' && strings.ContainsRune("eEbBxXnN", rune(c)) {
				i = j
				s, ok := quoted('\'', c == 'e' || c == 'E')
				if !ok {
					return nil, &lexError{start, "unterminated string constant"}
				}
				toks = append(toks, sqlTok{tkString, s, start})
				continue
			}
			toks = append(toks, sqlTok{tkIdent, strings.ToLower(word), start})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < n && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < n && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == '_' ||
				src[j] == 'e' || src[j] == 'E' ||
				(src[j] == '+' || src[j] == '-') && j > i && (src[j-1] == 'e' || src[j-1] == 'E')) {
				j++
			}
			toks = append(toks, sqlTok{tkNumber, src[i:j], start})
			i = j
		default:
			toks = append(toks, sqlTok{tkPunct, string(c), start})
			i++
		}
	}
	return toks, nil
}

// splitStatements cuts tokens at semicolons.
func splitStatements(toks []sqlTok) [][]sqlTok {
	var out [][]sqlTok
	startAt := 0
	for i, t := range toks {
		if t.punct(";") {
			if i > startAt {
				out = append(out, toks[startAt:i])
			}
			startAt = i + 1
		}
	}
	if startAt < len(toks) {
		out = append(out, toks[startAt:])
	}
	return out
}

type schemaParser struct {
	r      report
	tables []Table
}

func (p *schemaParser) table(name string) *Table {
	for i := range p.tables {
		if p.tables[i].Name == name {
			return &p.tables[i]
		}
	}
	return nil
}

func (p *schemaParser) errorf(line int, format string, args ...any) {
	p.r.add(SchemaFile, line, CodeSchemaSQL, format, args...)
}

// cursor walks one statement's tokens; reading past the end yields a zero token.
type cursor struct {
	toks []sqlTok
	i    int
}

func (c *cursor) peek(k int) sqlTok {
	if c.i+k < len(c.toks) && c.i+k >= 0 {
		return c.toks[c.i+k]
	}
	line := 0
	if len(c.toks) > 0 {
		line = c.toks[len(c.toks)-1].line
	}
	return sqlTok{kind: tkPunct, text: "", line: line}
}

func (c *cursor) next() sqlTok {
	t := c.peek(0)
	if c.i < len(c.toks) {
		c.i++
	}
	return t
}

func (c *cursor) done() bool { return c.i >= len(c.toks) }

// accept consumes the keywords kws if they come next, all of them.
func (c *cursor) accept(kws ...string) bool {
	for k, kw := range kws {
		if !c.peek(k).is(kw) {
			return false
		}
	}
	c.i += len(kws)
	return true
}

// skipGroup consumes a parenthesised group starting at the current "(".
func (c *cursor) skipGroup() {
	depth := 0
	for !c.done() {
		t := c.next()
		switch {
		case t.punct("("):
			depth++
		case t.punct(")"):
			depth--
		}
		if depth <= 0 {
			return
		}
	}
}

// qualifiedName reads name[.name...]; qualified reports a dot.
func (c *cursor) qualifiedName() (name string, qualified, ok bool) {
	name, ok = c.next().name()
	if !ok {
		return "", false, false
	}
	for c.peek(0).punct(".") {
		c.next()
		part, ok2 := c.next().name()
		if !ok2 {
			return name, true, false
		}
		name, qualified = part, true
	}
	return name, qualified, true
}

// identList reads "(a, b, ...)".
func (c *cursor) identList() ([]string, bool) {
	if !c.next().punct("(") {
		return nil, false
	}
	var names []string
	for {
		n, ok := c.next().name()
		if !ok {
			return names, false
		}
		names = append(names, n)
		t := c.next()
		if t.punct(")") {
			return names, true
		}
		if !t.punct(",") {
			return names, false
		}
	}
}

func (p *schemaParser) statement(toks []sqlTok) {
	c := &cursor{toks: toks}
	first := c.peek(0)
	line := first.line
	if !c.accept("create") {
		p.errorf(line, "only CREATE TABLE and CREATE INDEX statements are accepted, not %s", strings.ToUpper(first.text))
		return
	}
	switch {
	case c.accept("table"), c.accept("unlogged", "table"):
		p.createTable(c, line)
	case c.accept("index"):
		p.createIndex(c, line, false)
	case c.accept("unique", "index"):
		p.createIndex(c, line, true)
	case c.accept("extension"):
		p.errorf(line, "CREATE EXTENSION is not allowed: a world holds only its own tables")
	case c.peek(0).is("schema"):
		p.errorf(line, "CREATE SCHEMA is not allowed: each world gets its own schema")
	default:
		what := c.peek(0).text
		if c.peek(0).is("or") {
			what = "OR " + c.peek(1).text + " " + c.peek(2).text
		}
		p.errorf(line, "CREATE %s is not accepted: only CREATE TABLE and CREATE INDEX", strings.ToUpper(what))
	}
}

func (p *schemaParser) createIndex(c *cursor, line int, unique bool) {
	c.accept("concurrently")
	// Find ON at top level; the index name before it is optional.
	depth := 0
	for !c.done() {
		t := c.peek(0)
		if t.punct("(") {
			depth++
		} else if t.punct(")") {
			depth--
		} else if depth == 0 && t.is("on") {
			break
		}
		c.next()
	}
	if !c.accept("on") {
		p.errorf(line, "CREATE INDEX without ON <table>")
		return
	}
	c.accept("only")
	name, qualified, ok := c.qualifiedName()
	if !ok {
		p.errorf(line, "CREATE INDEX: expected a table name after ON")
		return
	}
	if qualified {
		p.errorf(line, "schema qualifiers are not allowed (index on %s)", name)
	}
	t := p.table(name)
	if t == nil {
		p.errorf(line, "index on unknown table %q (tables must be created before their indexes)", name)
		return
	}
	if !unique {
		return
	}
	if c.accept("using") {
		c.next()
	}
	// Only an index on plain columns is a unique column set; one on
	// expressions is Postgres's business.
	if cols, ok := c.identList(); ok && allColumns(t, cols) {
		t.addUnique(cols)
	}
}

func allColumns(t *Table, cols []string) bool {
	for _, c := range cols {
		if t.Column(c) == nil {
			return false
		}
	}
	return len(cols) > 0
}

// addUnique records a unique column set once; the primary key is not one.
func (t *Table) addUnique(cols []string) {
	if t.IsUnique(cols...) {
		return
	}
	t.Unique = append(t.Unique, cols)
}

func (p *schemaParser) createTable(c *cursor, line int) {
	c.accept("if", "not", "exists")
	name, qualified, ok := c.qualifiedName()
	if !ok {
		p.errorf(line, "CREATE TABLE: expected a table name")
		return
	}
	if qualified {
		p.errorf(line, "schema qualifiers are not allowed (table %s): the world's schema is chosen when it is built", name)
	}
	if p.table(name) != nil {
		p.errorf(line, "table %q is created twice", name)
		return
	}
	if !c.peek(0).punct("(") {
		p.errorf(line, "CREATE TABLE %s: expected a column list in parentheses (AS, OF, PARTITION OF are not accepted)", name)
		return
	}
	// Cut the column list into elements at top-level commas.
	c.next()
	var elems [][]sqlTok
	var cur []sqlTok
	depth := 0
	closed := false
	for !c.done() {
		t := c.next()
		if t.punct("(") {
			depth++
		} else if t.punct(")") {
			if depth == 0 {
				closed = true
				break
			}
			depth--
		} else if t.punct(",") && depth == 0 {
			elems = append(elems, cur)
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		elems = append(elems, cur)
	}
	if !closed {
		p.errorf(line, "CREATE TABLE %s: unbalanced parentheses", name)
		return
	}
	if !c.done() {
		p.errorf(c.peek(0).line, "CREATE TABLE %s: nothing may follow the column list (%s ...)", name, strings.ToUpper(c.peek(0).text))
	}
	t := Table{Name: name, Line: line}
	type fk struct {
		cols, refCols []string
		refTable      string
		line          int
	}
	var fks []fk
	var pk []string
	var uniques [][]string
	pkLine := 0
	setPK := func(cols []string, l int) {
		if pk != nil {
			p.errorf(l, "table %s has more than one primary key", name)
			return
		}
		pk, pkLine = cols, l
	}
	for _, el := range elems {
		if len(el) == 0 {
			p.errorf(line, "CREATE TABLE %s: empty element in the column list", name)
			continue
		}
		ec := &cursor{toks: el}
		l := el[0].line
		if ec.accept("constraint") {
			ec.next() // constraint name
		}
		switch {
		case ec.accept("primary", "key"):
			cols, ok := ec.identList()
			if !ok {
				p.errorf(l, "table %s: PRIMARY KEY expects (column, ...)", name)
				continue
			}
			setPK(cols, l)
		case ec.accept("foreign", "key"):
			cols, ok := ec.identList()
			if !ok || !ec.accept("references") {
				p.errorf(l, "table %s: FOREIGN KEY expects (column, ...) REFERENCES table", name)
				continue
			}
			ref, q, ok := ec.qualifiedName()
			if !ok {
				p.errorf(l, "table %s: REFERENCES expects a table name", name)
				continue
			}
			if q {
				p.errorf(l, "schema qualifiers are not allowed (references %s)", ref)
			}
			var refCols []string
			if ec.peek(0).punct("(") {
				if refCols, ok = ec.identList(); !ok {
					p.errorf(l, "table %s: REFERENCES %s expects (column, ...)", name, ref)
					continue
				}
			}
			fks = append(fks, fk{cols, refCols, ref, l})
		case ec.accept("unique"):
			ec.accept("nulls", "not", "distinct")
			ec.accept("nulls", "distinct")
			if cols, ok := ec.identList(); ok {
				uniques = append(uniques, cols)
			}
		case ec.accept("check"):
			if ec.peek(0).punct("(") {
				start := ec.i
				ec.skipGroup()
				t.Checks = append(t.Checks, readCheck(ec.toks[start:ec.i]))
			}
		case ec.peek(0).is("exclude") && (ec.peek(1).punct("(") || ec.peek(1).is("using")):
			// Enforced by Postgres; nothing the loader needs.
		case ec.peek(0).is("like"):
			p.errorf(l, "table %s: LIKE is not accepted; list the columns", name)
		default:
			col, colFK, ok := p.column(ec, name, l)
			if !ok {
				continue
			}
			if t.Column(col.Name) != nil {
				p.errorf(l, "table %s: column %q is defined twice", name, col.Name)
				continue
			}
			if colFK != nil {
				fks = append(fks, fk{[]string{col.Name}, colFK.refCols, colFK.refTable, l})
			}
			if col.pk {
				setPK([]string{col.Name}, l)
			}
			if col.unique {
				uniques = append(uniques, []string{col.Name})
			}
			t.Checks = append(t.Checks, col.checks...)
			t.Columns = append(t.Columns, col.Column)
		}
	}
	if len(t.Columns) == 0 {
		p.errorf(line, "table %s has no columns", name)
	}
	for _, k := range pk {
		col := t.Column(k)
		if col == nil {
			p.errorf(pkLine, "table %s: primary key names unknown column %q", name, k)
			continue
		}
		col.NotNull = true
	}
	if len(pk) > 0 {
		t.PrimaryKey = pk
	}
	for _, u := range uniques {
		if allColumns(&t, u) {
			t.addUnique(u)
		} else {
			p.errorf(line, "table %s: UNIQUE names an unknown column in %v", name, u)
		}
	}
	// Foreign keys resolve against tables created before this one, or this one.
	p.tables = append(p.tables, t)
	tp := &p.tables[len(p.tables)-1]
	for _, f := range fks {
		ref := p.table(f.refTable)
		if ref == nil {
			p.errorf(f.line, "table %s references unknown table %q (referenced tables must be created first)", name, f.refTable)
			continue
		}
		refCols := f.refCols
		if refCols == nil {
			refCols = ref.PrimaryKey
			if refCols == nil {
				p.errorf(f.line, "table %s references %s, which has no primary key; name the column", name, f.refTable)
				continue
			}
		}
		if len(refCols) != len(f.cols) {
			p.errorf(f.line, "table %s: foreign key has %d columns but references %d", name, len(f.cols), len(refCols))
			continue
		}
		for i, cn := range f.cols {
			if ref.Column(refCols[i]) == nil {
				p.errorf(f.line, "table %s references unknown column %s.%s", name, f.refTable, refCols[i])
				continue
			}
			col := tp.Column(cn)
			if col == nil {
				p.errorf(f.line, "table %s: foreign key names unknown column %q", name, cn)
				continue
			}
			col.References = f.refTable + "." + refCols[i]
		}
	}
}

type parsedColumn struct {
	Column
	pk     bool
	unique bool
	checks []Check
}

type inlineFK struct {
	refTable string
	refCols  []string
}

// columnStops are the words that end a column's type.
var columnStops = map[string]bool{
	"constraint": true, "not": true, "null": true, "primary": true, "references": true,
	"default": true, "check": true, "unique": true, "generated": true, "collate": true,
}

// column reads "name type [constraints]".
func (p *schemaParser) column(c *cursor, table string, line int) (parsedColumn, *inlineFK, bool) {
	var col parsedColumn
	name, ok := c.next().name()
	if !ok {
		p.errorf(line, "table %s: expected a column name", table)
		return col, nil, false
	}
	col.Name = name
	var typ []sqlTok
	depth := 0
	for !c.done() {
		t := c.peek(0)
		if depth == 0 && t.kind == tkIdent && columnStops[t.text] {
			break
		}
		if t.punct("(") || t.punct("[") {
			depth++
		} else if t.punct(")") || t.punct("]") {
			depth--
		}
		typ = append(typ, c.next())
	}
	if len(typ) == 0 {
		p.errorf(line, "table %s: column %s has no type", table, name)
		return col, nil, false
	}
	col.Type = joinTokens(typ)
	switch col.Type {
	case "serial", "serial4", "serial8", "bigserial", "smallserial", "serial2":
		col.Default = "identity"
	}
	var fk *inlineFK
	for !c.done() {
		switch {
		case c.accept("constraint"):
			c.next()
		case c.accept("not", "null"):
			col.NotNull = true
		case c.accept("null"):
		case c.accept("primary", "key"):
			col.pk = true
			col.NotNull = true
		case c.accept("references"):
			ref, q, ok := c.qualifiedName()
			if !ok {
				p.errorf(line, "table %s: column %s: REFERENCES expects a table name", table, name)
				return col, nil, false
			}
			if q {
				p.errorf(line, "schema qualifiers are not allowed (references %s)", ref)
			}
			fk = &inlineFK{refTable: ref}
			if c.peek(0).punct("(") {
				cols, ok := c.identList()
				if !ok || len(cols) != 1 {
					p.errorf(line, "table %s: column %s: REFERENCES %s expects one (column)", table, name, ref)
					return col, nil, false
				}
				fk.refCols = cols
			}
		case c.accept("default"):
			var expr []sqlTok
			d := 0
			for !c.done() {
				t := c.peek(0)
				if d == 0 && t.kind == tkIdent && columnStops[t.text] {
					break
				}
				if t.punct("(") {
					d++
				} else if t.punct(")") {
					d--
				}
				expr = append(expr, c.next())
			}
			if len(expr) == 0 {
				p.errorf(line, "table %s: column %s: DEFAULT without an expression", table, name)
			}
			col.Default = joinTokens(expr)
		case c.accept("generated"):
			// GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(...)] | GENERATED ALWAYS AS (expr) STORED
			identity := false
			for !c.done() && !(c.peek(0).kind == tkIdent && columnStops[c.peek(0).text]) {
				t := c.peek(0)
				if t.is("identity") {
					identity = true
				}
				if t.punct("(") {
					c.skipGroup()
					continue
				}
				c.next()
			}
			if identity {
				col.Default = "identity"
			} else {
				col.Default = "generated"
			}
		case c.accept("unique"):
			col.unique = true
		case c.accept("check"):
			if c.peek(0).punct("(") {
				start := c.i
				c.skipGroup()
				col.checks = append(col.checks, readCheck(c.toks[start:c.i]))
			}
		case c.peek(0).punct("("):
			c.skipGroup()
		default:
			// COLLATE x, ON DELETE ..., DEFERRABLE ...: Postgres's business.
			c.next()
		}
	}
	return col, fk, true
}

// joinTokens writes tokens back as compact lower-case SQL: "numeric(10,2)", "timestamp with time zone".
func joinTokens(toks []sqlTok) string {
	var b strings.Builder
	for i, t := range toks {
		text := t.text
		switch t.kind {
		case tkQIdent:
			text = `"` + strings.ReplaceAll(text, `"`, `""`) + `"`
		case tkString:
			text = "'" + strings.ReplaceAll(text, "'", "''") + "'"
		}
		if i > 0 {
			prev := toks[i-1]
			glue := t.kind == tkPunct && strings.Contains("()[],:.", text) ||
				prev.kind == tkPunct && strings.Contains("([:.,", prev.text)
			if !glue {
				b.WriteByte(' ')
			}
		}
		b.WriteString(text)
	}
	return b.String()
}

// readCheck reads a CHECK's parenthesised expression; its simple forms (see
// Check) say what they ask of their column.
func readCheck(group []sqlTok) Check {
	toks := group
	for len(toks) >= 2 && toks[0].punct("(") && toks[len(toks)-1].punct(")") && balanced(toks[1:len(toks)-1]) {
		toks = toks[1 : len(toks)-1]
	}
	ck := Check{Expr: joinTokens(toks)}
	lit := func(t sqlTok) (string, bool) {
		return t.text, t.kind == tkString || t.kind == tkNumber
	}
	col, isName := sqlTok{}, false
	if len(toks) > 0 {
		col = toks[0]
		_, isName = col.name()
	}
	set := func(op string, vals ...string) Check {
		ck.Column, ck.Op, ck.Values = col.text, op, vals
		return ck
	}
	n := len(toks)
	switch {
	case n == 3 && isName && toks[1].punct("~"):
		if v, ok := lit(toks[2]); ok && toks[2].kind == tkString {
			return set("~", v)
		}
	case n == 3 && isName && toks[1].is("like"):
		if v, ok := lit(toks[2]); ok {
			return set("like", v)
		}
	case n == 5 && isName && toks[1].is("between") && toks[3].is("and"):
		lo, ok1 := lit(toks[2])
		hi, ok2 := lit(toks[4])
		if ok1 && ok2 {
			return set("between", lo, hi)
		}
	case n >= 5 && isName && toks[1].is("in") && toks[2].punct("(") && toks[n-1].punct(")"):
		var vals []string
		for i := 3; i < n-1; i++ {
			if (i-3)%2 == 1 {
				if !toks[i].punct(",") {
					return ck
				}
				continue
			}
			v, ok := lit(toks[i])
			if !ok {
				return ck
			}
			vals = append(vals, v)
		}
		return set("in", vals...)
	case n == 6 && (toks[0].is("length") || toks[0].is("char_length")) && toks[1].punct("(") && toks[3].punct(")") && toks[4].punct("="):
		if name, ok := toks[2].name(); ok {
			if v, ok := lit(toks[5]); ok && toks[5].kind == tkNumber {
				ck.Column, ck.Op, ck.Values = name, "length", []string{v}
				return ck
			}
		}
	case (n == 3 || n == 4) && isName:
		op := toks[1].text
		rest := toks[2:]
		if n == 4 {
			op += toks[2].text
			rest = toks[3:]
		}
		switch {
		case toks[1].kind != tkPunct || n == 4 && toks[2].kind != tkPunct:
		case op == ">" || op == ">=" || op == "<" || op == "<=" || op == "=" || op == "<>" || op == "!=":
			if v, ok := lit(rest[0]); ok {
				if op == "!=" {
					op = "<>"
				}
				return set(op, v)
			}
		}
	}
	return ck
}

// balanced reports whether parentheses pair up within toks.
func balanced(toks []sqlTok) bool {
	depth := 0
	for _, t := range toks {
		switch {
		case t.punct("("):
			depth++
		case t.punct(")"):
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}
