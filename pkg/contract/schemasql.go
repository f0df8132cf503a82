package contract

import (
	"errors"
	"strings"

	"github.com/suitegen/suitegen/internal/pgsql"
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
	toks, err := pgsql.Lex(src)
	if lexErr := (*pgsql.Error)(nil); errors.As(err, &lexErr) {
		r.add(SchemaFile, lexErr.Line, CodeSchemaSQL, "%s", lexErr.Msg)
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

// splitStatements cuts tokens at semicolons.
func splitStatements(toks []pgsql.Token) [][]pgsql.Token {
	var out [][]pgsql.Token
	startAt := 0
	for i, t := range toks {
		if t.Punct(";") {
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
	toks []pgsql.Token
	i    int
}

func (c *cursor) peek(k int) pgsql.Token {
	if c.i+k < len(c.toks) && c.i+k >= 0 {
		return c.toks[c.i+k]
	}
	line := 0
	if len(c.toks) > 0 {
		line = c.toks[len(c.toks)-1].Line
	}
	return pgsql.Token{Kind: pgsql.Punct, Line: line}
}

func (c *cursor) next() pgsql.Token {
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
		if !c.peek(k).Keyword(kw) {
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
		case t.Punct("("):
			depth++
		case t.Punct(")"):
			depth--
		}
		if depth <= 0 {
			return
		}
	}
}

// qualifiedName reads name[.name...]; qualified reports a dot.
func (c *cursor) qualifiedName() (name string, qualified, ok bool) {
	name, ok = c.next().Name()
	if !ok {
		return "", false, false
	}
	for c.peek(0).Punct(".") {
		c.next()
		part, ok2 := c.next().Name()
		if !ok2 {
			return name, true, false
		}
		name, qualified = part, true
	}
	return name, qualified, true
}

// identList reads "(a, b, ...)".
func (c *cursor) identList() ([]string, bool) {
	if !c.next().Punct("(") {
		return nil, false
	}
	var names []string
	for {
		n, ok := c.next().Name()
		if !ok {
			return names, false
		}
		names = append(names, n)
		t := c.next()
		if t.Punct(")") {
			return names, true
		}
		if !t.Punct(",") {
			return names, false
		}
	}
}

func (p *schemaParser) statement(toks []pgsql.Token) {
	c := &cursor{toks: toks}
	first := c.peek(0)
	line := first.Line
	if !c.accept("create") {
		p.errorf(line, "only CREATE TABLE and CREATE INDEX statements are accepted, not %s", strings.ToUpper(first.Text))
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
	case c.peek(0).Keyword("schema"):
		p.errorf(line, "CREATE SCHEMA is not allowed: each world gets its own schema")
	default:
		what := c.peek(0).Text
		if c.peek(0).Keyword("or") {
			what = "OR " + c.peek(1).Text + " " + c.peek(2).Text
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
		if t.Punct("(") {
			depth++
		} else if t.Punct(")") {
			depth--
		} else if depth == 0 && t.Keyword("on") {
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
	name, ok := p.newTableName(c, line)
	if !ok {
		return
	}
	elems, ok := p.columnList(c, name, line)
	if !ok {
		return
	}
	t := Table{Name: name, Line: line}
	var keys tableKeys
	for _, el := range elems {
		p.element(&t, &keys, el, line)
	}
	p.addTable(t, keys, line)
}

// newTableName reads CREATE TABLE's name: unqualified (a qualifier is
// reported), and not one created before.
func (p *schemaParser) newTableName(c *cursor, line int) (string, bool) {
	c.accept("if", "not", "exists")
	name, qualified, ok := c.qualifiedName()
	if !ok {
		p.errorf(line, "CREATE TABLE: expected a table name")
		return "", false
	}
	if qualified {
		p.errorf(line, "schema qualifiers are not allowed (table %s): the world's schema is chosen when it is built", name)
	}
	if p.table(name) != nil {
		p.errorf(line, "table %q is created twice", name)
		return "", false
	}
	return name, true
}

// columnList cuts the parenthesised column list into its elements at
// top-level commas; nothing may follow it.
func (p *schemaParser) columnList(c *cursor, name string, line int) ([][]pgsql.Token, bool) {
	if !c.peek(0).Punct("(") {
		p.errorf(line, "CREATE TABLE %s: expected a column list in parentheses (AS, OF, PARTITION OF are not accepted)", name)
		return nil, false
	}
	c.next()
	var elems [][]pgsql.Token
	var cur []pgsql.Token
	depth := 0
	closed := false
	for !c.done() {
		t := c.next()
		if t.Punct("(") {
			depth++
		} else if t.Punct(")") {
			if depth == 0 {
				closed = true
				break
			}
			depth--
		} else if t.Punct(",") && depth == 0 {
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
		return nil, false
	}
	if !c.done() {
		p.errorf(c.peek(0).Line, "CREATE TABLE %s: nothing may follow the column list (%s ...)", name, strings.ToUpper(c.peek(0).Text))
	}
	return elems, true
}

// tableKeys are the keys a table's elements declare, resolved once every
// column is known.
type tableKeys struct {
	fks     []tableFK
	pk      []string
	pkLine  int
	uniques [][]string
}

type tableFK struct {
	cols, refCols []string
	refTable      string
	line          int
}

func (p *schemaParser) setPK(t *Table, k *tableKeys, cols []string, l int) {
	if k.pk != nil {
		p.errorf(l, "table %s has more than one primary key", t.Name)
		return
	}
	k.pk, k.pkLine = cols, l
}

// element reads one element of a column list: a table constraint or a
// column.
func (p *schemaParser) element(t *Table, k *tableKeys, el []pgsql.Token, line int) {
	name := t.Name
	if len(el) == 0 {
		p.errorf(line, "CREATE TABLE %s: empty element in the column list", name)
		return
	}
	ec := &cursor{toks: el}
	l := el[0].Line
	if ec.accept("constraint") {
		ec.next() // constraint name
	}
	switch {
	case ec.accept("primary", "key"):
		cols, ok := ec.identList()
		if !ok {
			p.errorf(l, "table %s: PRIMARY KEY expects (column, ...)", name)
			return
		}
		p.setPK(t, k, cols, l)
	case ec.accept("foreign", "key"):
		p.foreignKey(ec, t, k, l)
	case ec.accept("unique"):
		ec.accept("nulls", "not", "distinct")
		ec.accept("nulls", "distinct")
		if cols, ok := ec.identList(); ok {
			k.uniques = append(k.uniques, cols)
		}
	case ec.accept("check"):
		if ec.peek(0).Punct("(") {
			start := ec.i
			ec.skipGroup()
			t.Checks = append(t.Checks, readCheck(ec.toks[start:ec.i]))
		}
	case ec.peek(0).Keyword("exclude") && (ec.peek(1).Punct("(") || ec.peek(1).Keyword("using")):
		// Enforced by Postgres; nothing the loader needs.
	case ec.peek(0).Keyword("like"):
		p.errorf(l, "table %s: LIKE is not accepted; list the columns", name)
	default:
		p.columnElement(ec, t, k, l)
	}
}

// foreignKey reads a table constraint's "(column, ...) REFERENCES table
// [(column, ...)]".
func (p *schemaParser) foreignKey(ec *cursor, t *Table, k *tableKeys, l int) {
	name := t.Name
	cols, ok := ec.identList()
	if !ok || !ec.accept("references") {
		p.errorf(l, "table %s: FOREIGN KEY expects (column, ...) REFERENCES table", name)
		return
	}
	ref, q, ok := ec.qualifiedName()
	if !ok {
		p.errorf(l, "table %s: REFERENCES expects a table name", name)
		return
	}
	if q {
		p.errorf(l, "schema qualifiers are not allowed (references %s)", ref)
	}
	var refCols []string
	if ec.peek(0).Punct("(") {
		if refCols, ok = ec.identList(); !ok {
			p.errorf(l, "table %s: REFERENCES %s expects (column, ...)", name, ref)
			return
		}
	}
	k.fks = append(k.fks, tableFK{cols, refCols, ref, l})
}

// columnElement reads a column and adds it, with the keys and checks it
// declares, to the table.
func (p *schemaParser) columnElement(ec *cursor, t *Table, k *tableKeys, l int) {
	name := t.Name
	col, colFK, ok := p.column(ec, name, l)
	if !ok {
		return
	}
	if t.Column(col.Name) != nil {
		p.errorf(l, "table %s: column %q is defined twice", name, col.Name)
		return
	}
	if colFK != nil {
		k.fks = append(k.fks, tableFK{[]string{col.Name}, colFK.refCols, colFK.refTable, l})
	}
	if col.pk {
		p.setPK(t, k, []string{col.Name}, l)
	}
	if col.unique {
		k.uniques = append(k.uniques, []string{col.Name})
	}
	t.Checks = append(t.Checks, col.checks...)
	t.Columns = append(t.Columns, col.Column)
}

// addTable resolves a table's keys against its columns and adds it; its
// foreign keys resolve against tables created before it, or itself.
func (p *schemaParser) addTable(t Table, k tableKeys, line int) {
	name := t.Name
	if len(t.Columns) == 0 {
		p.errorf(line, "table %s has no columns", name)
	}
	for _, kc := range k.pk {
		col := t.Column(kc)
		if col == nil {
			p.errorf(k.pkLine, "table %s: primary key names unknown column %q", name, kc)
			continue
		}
		col.NotNull = true
	}
	if len(k.pk) > 0 {
		t.PrimaryKey = k.pk
	}
	for _, u := range k.uniques {
		if allColumns(&t, u) {
			t.addUnique(u)
		} else {
			p.errorf(line, "table %s: UNIQUE names an unknown column in %v", name, u)
		}
	}
	p.tables = append(p.tables, t)
	tp := &p.tables[len(p.tables)-1]
	for _, f := range k.fks {
		p.resolveFK(tp, f)
	}
}

// resolveFK points the columns of f at the columns they reference.
func (p *schemaParser) resolveFK(tp *Table, f tableFK) {
	name := tp.Name
	ref := p.table(f.refTable)
	if ref == nil {
		p.errorf(f.line, "table %s references unknown table %q (referenced tables must be created first)", name, f.refTable)
		return
	}
	refCols := f.refCols
	if refCols == nil {
		refCols = ref.PrimaryKey
		if refCols == nil {
			p.errorf(f.line, "table %s references %s, which has no primary key; name the column", name, f.refTable)
			return
		}
	}
	if len(refCols) != len(f.cols) {
		p.errorf(f.line, "table %s: foreign key has %d columns but references %d", name, len(f.cols), len(refCols))
		return
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
	name, ok := c.next().Name()
	if !ok {
		p.errorf(line, "table %s: expected a column name", table)
		return col, nil, false
	}
	col.Name = name
	typ := c.untilStop("(", "[")
	if len(typ) == 0 {
		p.errorf(line, "table %s: column %s has no type", table, name)
		return col, nil, false
	}
	col.Type = joinTokens(typ)
	switch col.Type {
	case "serial", "serial4", "serial8", "bigserial", "smallserial", "serial2":
		col.Default = "identity"
	}
	fk, ok := p.columnConstraints(c, &col, table, line)
	if !ok {
		return col, nil, false
	}
	return col, fk, true
}

// columnConstraints reads what follows a column's type (NOT NULL, PRIMARY
// KEY, REFERENCES, DEFAULT, GENERATED, UNIQUE, CHECK) into col, and returns
// its foreign key; false when it cannot be read.
func (p *schemaParser) columnConstraints(c *cursor, col *parsedColumn, table string, line int) (*inlineFK, bool) {
	name := col.Name
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
			var ok bool
			if fk, ok = p.inlineReferences(c, table, name, line); !ok {
				return nil, false
			}
		case c.accept("default"):
			expr := c.untilStop("(")
			if len(expr) == 0 {
				p.errorf(line, "table %s: column %s: DEFAULT without an expression", table, name)
			}
			col.Default = joinTokens(expr)
		case c.accept("generated"):
			if c.generatedIdentity() {
				col.Default = "identity"
			} else {
				col.Default = "generated"
			}
		case c.accept("unique"):
			col.unique = true
		case c.accept("check"):
			if c.peek(0).Punct("(") {
				start := c.i
				c.skipGroup()
				col.checks = append(col.checks, readCheck(c.toks[start:c.i]))
			}
		case c.peek(0).Punct("("):
			c.skipGroup()
		default:
			// COLLATE x, ON DELETE ..., DEFERRABLE ...: Postgres's business.
			c.next()
		}
	}
	return fk, true
}

// inlineReferences reads a column's "REFERENCES table [(column)]" after
// the keyword.
func (p *schemaParser) inlineReferences(c *cursor, table, column string, line int) (*inlineFK, bool) {
	ref, q, ok := c.qualifiedName()
	if !ok {
		p.errorf(line, "table %s: column %s: REFERENCES expects a table name", table, column)
		return nil, false
	}
	if q {
		p.errorf(line, "schema qualifiers are not allowed (references %s)", ref)
	}
	fk := &inlineFK{refTable: ref}
	if c.peek(0).Punct("(") {
		cols, ok := c.identList()
		if !ok || len(cols) != 1 {
			p.errorf(line, "table %s: column %s: REFERENCES %s expects one (column)", table, column, ref)
			return nil, false
		}
		fk.refCols = cols
	}
	return fk, true
}

// untilStop consumes the tokens up to the next word that ends a column's
// type or expression (columnStops) outside brackets; open names the
// brackets counted ("(" and "[", whose closers are ")" and "]").
func (c *cursor) untilStop(open ...string) []pgsql.Token {
	closer := map[string]string{"(": ")", "[": "]"}
	var out []pgsql.Token
	depth := 0
	for !c.done() {
		t := c.peek(0)
		if depth == 0 && t.Kind == pgsql.Ident && columnStops[t.Text] {
			break
		}
		for _, o := range open {
			if t.Punct(o) {
				depth++
			} else if t.Punct(closer[o]) {
				depth--
			}
		}
		out = append(out, c.next())
	}
	return out
}

// generatedIdentity consumes the rest of a GENERATED clause, {ALWAYS | BY
// DEFAULT} AS IDENTITY [(...)] or ALWAYS AS (expr) STORED, and reports
// whether it is an identity.
func (c *cursor) generatedIdentity() bool {
	identity := false
	for !c.done() && !(c.peek(0).Kind == pgsql.Ident && columnStops[c.peek(0).Text]) {
		t := c.peek(0)
		if t.Keyword("identity") {
			identity = true
		}
		if t.Punct("(") {
			c.skipGroup()
			continue
		}
		c.next()
	}
	return identity
}

// joinTokens writes tokens back as compact lower-case SQL: "numeric(10,2)", "timestamp with time zone".
func joinTokens(toks []pgsql.Token) string {
	var b strings.Builder
	for i, t := range toks {
		text := t.Text
		switch t.Kind {
		case pgsql.QuotedIdent:
			text = `"` + strings.ReplaceAll(text, `"`, `""`) + `"`
		case pgsql.String:
			text = "'" + strings.ReplaceAll(text, "'", "''") + "'"
		}
		if i > 0 {
			prev := toks[i-1]
			glue := t.Kind == pgsql.Punct && strings.Contains("()[],:.", text) ||
				prev.Kind == pgsql.Punct && strings.Contains("([:.,", prev.Text)
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
func readCheck(group []pgsql.Token) Check {
	toks := group
	for len(toks) >= 2 && toks[0].Punct("(") && toks[len(toks)-1].Punct(")") && balanced(toks[1:len(toks)-1]) {
		toks = toks[1 : len(toks)-1]
	}
	ck := Check{Expr: joinTokens(toks)}
	if column, op, values, ok := checkForm(toks); ok {
		ck.Column, ck.Op, ck.Values = column, op, values
	}
	return ck
}

// checkLiteral is a string or number token's text.
func checkLiteral(t pgsql.Token) (string, bool) {
	return t.Text, t.Kind == pgsql.String || t.Kind == pgsql.Number
}

// checkForm recognises the simple forms of a CHECK expression: col ~
// 'regex', col LIKE 'pattern', col BETWEEN lo AND hi, col IN (v, ...),
// length(col) = n and col <op> v.
func checkForm(toks []pgsql.Token) (column, op string, values []string, ok bool) {
	n := len(toks)
	if n == 6 && (toks[0].Keyword("length") || toks[0].Keyword("char_length")) && toks[1].Punct("(") && toks[3].Punct(")") && toks[4].Punct("=") {
		if name, ok := toks[2].Name(); ok {
			if v, ok := checkLiteral(toks[5]); ok && toks[5].Kind == pgsql.Number {
				return name, "length", []string{v}, true
			}
		}
		return "", "", nil, false
	}
	if n == 0 {
		return "", "", nil, false
	}
	if _, isName := toks[0].Name(); !isName {
		return "", "", nil, false
	}
	col := toks[0].Text
	switch {
	case n == 3 && toks[1].Punct("~"):
		if v, ok := checkLiteral(toks[2]); ok && toks[2].Kind == pgsql.String {
			return col, "~", []string{v}, true
		}
	case n == 3 && toks[1].Keyword("like"):
		if v, ok := checkLiteral(toks[2]); ok {
			return col, "like", []string{v}, true
		}
	case n == 5 && toks[1].Keyword("between") && toks[3].Keyword("and"):
		lo, ok1 := checkLiteral(toks[2])
		hi, ok2 := checkLiteral(toks[4])
		if ok1 && ok2 {
			return col, "between", []string{lo, hi}, true
		}
	case n >= 5 && toks[1].Keyword("in") && toks[2].Punct("(") && toks[n-1].Punct(")"):
		if vals, ok := checkList(toks[3 : n-1]); ok {
			return col, "in", vals, true
		}
	case n == 3 || n == 4:
		if op, v, ok := checkComparison(toks); ok {
			return col, op, []string{v}, true
		}
	}
	return "", "", nil, false
}

// checkList reads "v, v, ..." of literals.
func checkList(toks []pgsql.Token) ([]string, bool) {
	var vals []string
	for i, t := range toks {
		if i%2 == 1 {
			if !t.Punct(",") {
				return nil, false
			}
			continue
		}
		v, ok := checkLiteral(t)
		if !ok {
			return nil, false
		}
		vals = append(vals, v)
	}
	return vals, true
}

// checkComparison reads "col <op> v" of three or four tokens (an operator
// may come as two punctuation tokens); != is <>.
func checkComparison(toks []pgsql.Token) (op, value string, ok bool) {
	n := len(toks)
	op = toks[1].Text
	rest := toks[2:]
	if n == 4 {
		op += toks[2].Text
		rest = toks[3:]
	}
	switch {
	case toks[1].Kind != pgsql.Punct || n == 4 && toks[2].Kind != pgsql.Punct:
	case op == ">" || op == ">=" || op == "<" || op == "<=" || op == "=" || op == "<>" || op == "!=":
		if v, ok := checkLiteral(rest[0]); ok {
			if op == "!=" {
				op = "<>"
			}
			return op, v, true
		}
	}
	return "", "", false
}

// balanced reports whether parentheses pair up within toks.
func balanced(toks []pgsql.Token) bool {
	depth := 0
	for _, t := range toks {
		switch {
		case t.Punct("("):
			depth++
		case t.Punct(")"):
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}
