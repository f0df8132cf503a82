// Package ground ties scenarios to real records. It reads a contract's seed as
// a graph of rows joined by foreign keys, picks the records a case is about,
// fills tool arguments from them, and mints fresh copies of them (new keys, new
// people) as setup statements, so that no two scenarios share a record the
// agent will look up and every value handed to a caller exists in the world.
package ground

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Row is one seed row.
type Row = map[string]any

// Graph is the seed of one contract with its keys.
type Graph struct {
	C *contract.Contract
	// fks[child table] = foreign keys of that table.
	fks map[string][]FK
	// owned are the tables whose rows belong to a caller (OwnedTable).
	owned map[string]bool
	// cols indexes the frozen seed by column: table+"\x00"+column ->
	// *column. Minting looks values up many times per scenario, and writers
	// share one Graph, so entries are built once, on first use.
	cols sync.Map
}

// column is one seed column, as text, row by row.
type column struct {
	text  []string       // Text of each row's value, in seed order
	isNil []bool         // the row has no value there
	first map[string]int // text -> first row holding it
}

func (g *Graph) column(table, name string) *column {
	key := table + "\x00" + name
	if c, ok := g.cols.Load(key); ok {
		return c.(*column)
	}
	rows := g.Rows(table)
	c := &column{text: make([]string, len(rows)), isNil: make([]bool, len(rows)), first: make(map[string]int, len(rows))}
	for i, r := range rows {
		v := r[name]
		c.isNil[i] = v == nil
		c.text[i] = Text(v)
		if _, ok := c.first[c.text[i]]; !ok {
			c.first[c.text[i]] = i
		}
	}
	got, _ := g.cols.LoadOrStore(key, c)
	return got.(*column)
}

// FK is one foreign key column.
type FK struct {
	Table, Column       string // child
	RefTable, RefColumn string // parent
}

// New reads the contract's tables and seed.
func New(c *contract.Contract) *Graph {
	g := &Graph{C: c, fks: map[string][]FK{}}
	for _, t := range c.Tables {
		for _, col := range t.Columns {
			if col.References == "" {
				continue
			}
			rt, rc, _ := strings.Cut(col.References, ".")
			if rc == "" {
				if pt := c.Table(rt); pt != nil && len(pt.PrimaryKey) == 1 {
					rc = pt.PrimaryKey[0]
				}
			}
			g.fks[t.Name] = append(g.fks[t.Name], FK{Table: t.Name, Column: col.Name, RefTable: rt, RefColumn: rc})
		}
	}
	g.owned = g.ownedTables()
	return g
}

// FKs returns the foreign keys of a table.
func (g *Graph) FKs(table string) []FK { return g.fks[table] }

// PK returns the single-column primary key of a table, or "".
func (g *Graph) PK(table string) string {
	t := g.C.Table(table)
	if t == nil || len(t.PrimaryKey) != 1 {
		return ""
	}
	return t.PrimaryKey[0]
}

// Rows returns the seed rows of a table.
func (g *Graph) Rows(table string) []Row { return g.C.Seed(table) }

// Find returns the row of table whose column equals v (compared as text).
func (g *Graph) Find(table, column string, v any) Row {
	if i, ok := g.column(table, column).first[Text(v)]; ok {
		return g.Rows(table)[i]
	}
	return nil
}

// Where returns the rows of table whose column equals v (as text), in seed order.
func (g *Graph) Where(table, column string, v any) []Row {
	want := Text(v)
	var out []Row
	for _, r := range g.Rows(table) {
		if Text(r[column]) == want {
			out = append(out, r)
		}
	}
	return out
}

// Owner follows foreign keys from a row up to the caller table and returns the
// caller row, or nil when the row belongs to nobody.
func (g *Graph) Owner(table string, r Row) Row {
	cl := g.C.Caller
	if cl == nil || r == nil {
		return nil
	}
	seen := map[string]bool{}
	for depth := 0; depth < 4; depth++ {
		if table == cl.Table {
			return r
		}
		if seen[table] {
			return nil
		}
		seen[table] = true
		var next Row
		var nextTable string
		for _, fk := range g.fks[table] {
			if r[fk.Column] == nil {
				continue
			}
			p := g.Find(fk.RefTable, fk.RefColumn, r[fk.Column])
			if p == nil {
				continue
			}
			if fk.RefTable == cl.Table {
				return p
			}
			if next == nil {
				next, nextTable = p, fk.RefTable
			}
		}
		if next == nil {
			return nil
		}
		r, table = next, nextTable
	}
	return nil
}

// OwnedTable reports a table whose rows belong to a caller: the caller table
// or one with a chain of foreign keys up to it.
func (g *Graph) OwnedTable(table string) bool { return g.owned[table] }

// ownedTables finds the tables OwnedTable reports, once.
func (g *Graph) ownedTables() map[string]bool {
	owned := map[string]bool{}
	cl := g.C.Caller
	if cl == nil {
		return owned
	}
	var up func(t string, seen map[string]bool) bool
	up = func(t string, seen map[string]bool) bool {
		if t == cl.Table {
			return true
		}
		if seen[t] {
			return false
		}
		seen[t] = true
		for _, fk := range g.fks[t] {
			if up(fk.RefTable, seen) {
				return true
			}
		}
		return false
	}
	for _, t := range g.C.Tables {
		owned[t.Name] = up(t.Name, map[string]bool{})
	}
	return owned
}

// Text renders a JSON-like value as the text the agent would read or say.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		return fmt.Sprint(x)
	}
}

// LowCardinality returns the columns of a table whose seed values fall into 2..max
// distinct text levels, with the levels sorted; keys, foreign keys and free text
// are left out. These are the candidate state axes.
func (g *Graph) LowCardinality(table string, max int) map[string][]string {
	t := g.C.Table(table)
	rows := g.Rows(table)
	out := map[string][]string{}
	if t == nil || len(rows) < 2 {
		return out
	}
	isKey := map[string]bool{}
	for _, k := range t.PrimaryKey {
		isKey[k] = true
	}
	for _, fk := range g.fks[table] {
		isKey[fk.Column] = true
	}
	for _, col := range t.Columns {
		if isKey[col.Name] {
			continue
		}
		ty := strings.ToLower(col.Type)
		if !(strings.HasPrefix(ty, "text") || strings.HasPrefix(ty, "varchar") || strings.HasPrefix(ty, "character") || strings.HasPrefix(ty, "bool")) {
			continue
		}
		levels := map[string]bool{}
		for _, r := range rows {
			v, ok := r[col.Name]
			if !ok || v == nil {
				continue
			}
			if _, isStr := v.(string); !isStr {
				if _, isBool := v.(bool); !isBool {
					levels = nil
					break
				}
			}
			levels[Text(v)] = true
			if len(levels) > max {
				break
			}
		}
		if len(levels) >= 2 && len(levels) <= max {
			ls := make([]string, 0, len(levels))
			for l := range levels {
				ls = append(ls, l)
			}
			sort.Strings(ls)
			out[col.Name] = ls
		}
	}
	return out
}

type item struct {
	table string
	row   Row
}

// sortByTable orders items by their table's place in schema.sql, stably.
func sortByTable[T any](g *Graph, xs []T, table func(T) string) {
	pos := map[string]int{}
	for i, t := range g.C.Tables {
		pos[t.Name] = i
	}
	sort.SliceStable(xs, func(i, j int) bool { return pos[table(xs[i])] < pos[table(xs[j])] })
}

// Setup is what Mint produces: statements that insert fresh copies of a target
// record, its owner and their dependent rows, and the new keys.
type Setup struct {
	Statements []scenario.Statement
	// Target and Caller are the minted rows (new keys, new person).
	Target, Caller Row
	// Minted maps table -> old key text -> new row, for every row minted.
	Minted map[string]map[string]Row
	// Codes are the new keys and identifiers a caller may be handed.
	Codes []string
}

// Person is who a minted caller becomes.
type Person struct {
	First, Last string
	Number      int // a number unique to this scenario in the run: keys and codes derive from it
}

// Mint copies the target row (and its owner and the rows that hang off them)
// under new keys derived from p.Number, renaming the owner to p. The copies are
// returned as INSERT statements in schema order.
func (g *Graph) Mint(table string, target Row, p Person) (*Setup, error) {
	if target == nil {
		return nil, fmt.Errorf("ground: no %s row to mint from", table)
	}
	cl := g.C.Caller
	owner := g.Owner(table, target)
	// Collect the rows to copy: target, owner, then every row that points at a
	// copied row, except other rows of the target's table and other callers.
	chosen := map[string]map[string]Row{}
	var order []item
	add := func(t string, r Row) bool {
		key := rowKey(g, t, r)
		if chosen[t] == nil {
			chosen[t] = map[string]Row{}
		}
		if _, ok := chosen[t][key]; ok {
			return false
		}
		chosen[t][key] = r
		order = append(order, item{t, r})
		return true
	}
	add(table, target)
	if owner != nil && cl != nil && cl.Table != table {
		add(cl.Table, owner)
	}
	// A row is copied when it points at a copied row, unless it also points
	// at a row of the target's or the caller's table that is not copied (a
	// payment of the owner's other order), or when its copy could not get a
	// key of its own (a composite key none of whose columns is re-keyed).
	restricted := map[string]bool{table: true}
	if cl != nil {
		restricted[cl.Table] = true
	}
	// Nor is a row copied that points at someone's row left behind: a minted
	// product's variants stay out of other callers' orders.
	eligible := func(t string, r Row) bool {
		for _, fk := range g.fks[t] {
			if r[fk.Column] == nil || !restricted[fk.RefTable] && !g.OwnedTable(fk.RefTable) {
				continue
			}
			if p := g.Find(fk.RefTable, fk.RefColumn, r[fk.Column]); p != nil {
				if _, ok := chosen[fk.RefTable][rowKey(g, fk.RefTable, p)]; !ok {
					return false
				}
			}
		}
		if g.PK(t) != "" {
			return true
		}
		tb := g.C.Table(t)
		for _, k := range tb.PrimaryKey {
			for _, fk := range g.fks[t] {
				if fk.Column == k && len(chosen[fk.RefTable]) > 0 && g.PK(fk.RefTable) == fk.RefColumn {
					if p := g.Find(fk.RefTable, fk.RefColumn, r[k]); p != nil {
						if _, ok := chosen[fk.RefTable][rowKey(g, fk.RefTable, p)]; ok {
							return true
						}
					}
				}
			}
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		for _, t := range g.C.Tables {
			if restricted[t.Name] {
				continue
			}
			for _, fk := range g.fks[t.Name] {
				parents := chosen[fk.RefTable]
				if len(parents) == 0 {
					continue
				}
				// The parents' referenced values, as a set: comparing each
				// row with each parent made minting quadratic. A table that
				// refers to itself grows its parents as it goes, so it keeps
				// the row-by-parent walk.
				var refs map[string]bool
				if fk.RefTable != t.Name {
					refs = make(map[string]bool, len(parents))
					for _, p := range parents {
						refs[Text(p[fk.RefColumn])] = true
					}
				}
				col := g.column(t.Name, fk.Column)
				for i, r := range g.Rows(t.Name) {
					if col.isNil[i] {
						continue
					}
					if refs != nil {
						if refs[col.text[i]] && eligible(t.Name, r) && add(t.Name, r) {
							changed = true
						}
						continue
					}
					for _, p := range parents {
						if Text(r[fk.Column]) == Text(p[fk.RefColumn]) && eligible(t.Name, r) {
							if add(t.Name, r) {
								changed = true
							}
						}
					}
				}
			}
		}
	}
	if len(order) > 200 {
		return nil, fmt.Errorf("ground: minting %s would copy %d rows", table, len(order))
	}

	// Copy rows parents first, so a child's foreign keys (and a key that is
	// itself a foreign key, like a code keyed by phone number) follow the
	// values their parents were given.
	sortByTable(g, order, func(it item) string { return it.table })
	remap := map[string]map[string]any{} // "table.column" -> old text -> new value
	note := func(t, col string, old, nu any) {
		if Text(old) == Text(nu) {
			return
		}
		k := t + "." + col
		if remap[k] == nil {
			remap[k] = map[string]any{}
		}
		remap[k][Text(old)] = nu
	}
	seq := map[string]int{} // rows minted per table: the first keeps the scenario's number as is
	s := &Setup{Minted: map[string]map[string]Row{}}
	byTable := map[string][]Row{}
	for _, it := range order {
		nr := Row{}
		for k, v := range it.row {
			nr[k] = v
		}
		for _, fk := range g.fks[it.table] {
			if nv, ok := remap[fk.RefTable+"."+fk.RefColumn][Text(it.row[fk.Column])]; ok && it.row[fk.Column] != nil {
				nr[fk.Column] = nv
			}
		}
		pk := g.PK(it.table)
		switch {
		case cl != nil && it.table == cl.Table:
			rename(nr, p)
			if pk != "" {
				nr[pk] = personKey(it.row[pk], p)
			}
		case pk != "" && Text(nr[pk]) == Text(it.row[pk]):
			nr[pk] = mintValue(it.row[pk], p.Number, seq[it.table])
			seq[it.table]++
		}
		for k, v := range nr {
			note(it.table, k, it.row[k], v)
		}
		if pk != "" && Text(nr[pk]) != "" {
			s.Codes = append(s.Codes, Text(nr[pk]))
		}
		if s.Minted[it.table] == nil {
			s.Minted[it.table] = map[string]Row{}
		}
		s.Minted[it.table][rowKey(g, it.table, it.row)] = nr
		byTable[it.table] = append(byTable[it.table], nr)
		if it.table == table && rowKey(g, table, it.row) == rowKey(g, table, target) {
			s.Target = nr
		}
		if owner != nil && cl != nil && it.table == cl.Table {
			s.Caller = nr
		}
	}
	if cl != nil && table == cl.Table {
		s.Caller = s.Target
	}
	// Inserts in schema order so parents land before children.
	for _, t := range g.C.Tables {
		for _, r := range byTable[t.Name] {
			s.Statements = append(s.Statements, insert(t, r))
		}
	}
	return s, nil
}

func rowKey(g *Graph, table string, r Row) string {
	t := g.C.Table(table)
	if t == nil || len(t.PrimaryKey) == 0 {
		return fmt.Sprintf("%p", r)
	}
	parts := make([]string, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		parts[i] = Text(r[k])
	}
	return strings.Join(parts, "\x00")
}

func insert(t contract.Table, r Row) scenario.Statement {
	var cols, marks []string
	var args []any
	for _, c := range t.Columns {
		v, ok := r[c.Name]
		if !ok {
			continue
		}
		cols = append(cols, c.Name)
		args = append(args, v)
		marks = append(marks, "$"+strconv.Itoa(len(args)))
	}
	return scenario.Statement{
		SQL:  fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t.Name, strings.Join(cols, ", "), strings.Join(marks, ", ")),
		Args: args,
	}
}

// mintValue derives a fresh key from an old one, keeping its shape: the last
// run of digits becomes the scenario's number (the n-th extra row of a table
// appends n), cut to the run's length when the number is longer, so a code
// checked against a pattern ("#W" and four digits) still fits. Integers move
// into a range the seed does not use.
func mintValue(old any, number, n int) any {
	switch old.(type) {
	case int64, int, float64:
		v := int64(900_000_000 + number*100 + n)
		if _, isFloat := old.(float64); isFloat {
			return float64(v)
		}
		return v
	}
	s := Text(old)
	digits := strconv.Itoa(number)
	if n > 0 {
		digits += strconv.Itoa(n)
	}
	end := strings.LastIndexFunc(s, isDigit)
	if end < 0 {
		return s + "-" + digits
	}
	start := end
	for start > 0 && isDigit(rune(s[start-1])) {
		start--
	}
	switch width := end + 1 - start; {
	case width >= 4 && len(digits) > width:
		// Too long for a fixed-width code: the n-th extra row moves by a
		// stride instead, so sibling scenarios' rows rarely meet.
		mod := 1
		for i := 0; i < width; i++ {
			mod *= 10
		}
		digits = fmt.Sprintf("%0*d", width, (number+n*3001)%mod)
	case len(digits) < width:
		digits = strings.Repeat("0", width-len(digits)) + digits
	}
	return s[:start] + digits + s[end+1:]
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// personKey makes a caller key for a new person in the shape of the old one.
func personKey(old any, p Person) any {
	switch old.(type) {
	case int64, int, float64:
		return mintValue(old, p.Number, 0)
	}
	s := Text(old)
	if strings.Contains(s, "_") && strings.IndexFunc(s, isDigit) >= 0 {
		return strings.ToLower(slug(p.First) + "_" + slug(p.Last) + "_" + strconv.Itoa(p.Number))
	}
	return mintValue(old, p.Number, 0)
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// rename makes a caller row be p: name columns, email and phone.
func rename(r Row, p Person) {
	full := p.First + " " + p.Last
	for k, v := range r {
		s, isStr := v.(string)
		if !isStr {
			continue
		}
		lk := strings.ToLower(k)
		switch {
		case lk == "first_name" || lk == "firstname" || lk == "given_name":
			r[k] = p.First
		case lk == "last_name" || lk == "lastname" || lk == "surname" || lk == "family_name":
			r[k] = p.Last
		case lk == "name" || lk == "full_name" || lk == "fullname" || lk == "display_name":
			r[k] = full
		case strings.Contains(lk, "email"):
			domain := "mail.com"
			if _, d, ok := strings.Cut(s, "@"); ok {
				domain = d
			}
			r[k] = fmt.Sprintf("%s.%s%d@%s", slug(p.First), slug(p.Last), p.Number%1000, domain)
		case strings.Contains(lk, "phone"):
			r[k] = rephone(s, p.Number)
		}
	}
}

// rephone keeps a phone number's punctuation and replaces its last digits.
func rephone(s string, number int) string {
	digits := []rune(fmt.Sprintf("%07d", number%10_000_000))
	out := []rune(s)
	j := len(digits) - 1
	for i := len(out) - 1; i >= 0 && j >= 0; i-- {
		if isDigit(out[i]) {
			out[i] = digits[j]
			j--
		}
	}
	return string(out)
}
