package ground

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/contract"
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
	// spaces caches code spaces by table, column and shape (see code.go).
	spaces sync.Map
	// renames caches what part of a person each column holds (renamed).
	renames sync.Map
	// declared is Declared's answer, read once.
	declOnce sync.Once
	declared Bindings
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
		if _, ok := c.first[c.text[i]]; !ok && v != nil {
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

// FKs returns the foreign keys of a table.
func (g *Graph) FKs(table string) []FK { return g.fks[table] }

// fkOf returns the foreign key a column of a table is, if it is one.
func (g *Graph) fkOf(table, column string) (FK, bool) {
	for _, fk := range g.fks[table] {
		if fk.Column == column {
			return fk, true
		}
	}
	return FK{}, false
}

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
	if v == nil {
		return nil
	}
	if i, ok := g.column(table, column).first[Text(v)]; ok {
		return g.Rows(table)[i]
	}
	return nil
}

// Where returns the rows of table whose column equals v (as text), in seed order.
func (g *Graph) Where(table, column string, v any) []Row {
	if v == nil {
		return nil
	}
	want := Text(v)
	col := g.column(table, column)
	var out []Row
	for i, r := range g.Rows(table) {
		if !col.isNil[i] && col.text[i] == want {
			out = append(out, r)
		}
	}
	return out
}

// Holds reports whether some seed row of table has v (as text) in column.
func (g *Graph) Holds(table, column string, v any) bool {
	_, ok := g.column(table, column).first[Text(v)]
	return ok && v != nil
}

// Owner follows foreign keys from a row up to the caller table and returns the
// caller row, or nil when the row belongs to nobody.
func (g *Graph) Owner(table string, r Row) Row {
	cl := g.C.Caller
	if cl == nil || r == nil {
		return nil
	}
	seen := map[string]bool{}
	for depth := 0; depth < 5; depth++ {
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

// OwnerRoles are the columns of table that name a row of the caller table
// straight (a parcel's sender_id and recipient_id), when it has two or more:
// a row of it belongs to the person of each in turn, and what one of them may
// do with it the other may not. nil otherwise: a row has one owner (Owner).
func (g *Graph) OwnerRoles(table string) []string {
	cl := g.C.Caller
	if cl == nil || table == cl.Table {
		return nil
	}
	var out []string
	for _, fk := range g.fks[table] {
		if fk.RefTable == cl.Table {
			out = append(out, fk.Column)
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// OwnerAs is the owner of a row of table through role, one of the table's
// OwnerRoles; its Owner when role is "" or names no caller row.
func (g *Graph) OwnerAs(table string, r Row, role string) Row {
	if cl := g.C.Caller; cl != nil && role != "" && r != nil {
		if fk, ok := g.fkOf(table, role); ok && fk.RefTable == cl.Table {
			if p := g.Find(fk.RefTable, fk.RefColumn, r[role]); p != nil {
				return p
			}
		}
	}
	return g.Owner(table, r)
}

// owns reports whether who owns r by any of its table's roles.
func (g *Graph) owns(table string, r, who Row) bool {
	cl := g.C.Caller
	if cl == nil || who == nil {
		return false
	}
	roles := g.OwnerRoles(table)
	if roles == nil {
		roles = []string{""}
	}
	for _, role := range roles {
		if o := g.OwnerAs(table, r, role); o != nil && Text(o[cl.Key]) == Text(who[cl.Key]) {
			return true
		}
	}
	return false
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

// AddValues adds to set every scalar of a JSON-like value, at any depth,
// as Text renders it (null adds nothing).
func AddValues(set map[string]bool, v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			AddValues(set, e)
		}
	case []any:
		for _, e := range x {
			AddValues(set, e)
		}
	case nil:
	default:
		set[Text(x)] = true
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

// Sample picks up to max rows of a table to learn from: rows at every level
// of every candidate axis first, in rounds (one row of each level of each
// column, then a second...), so that no state is missed for want of room;
// then rows from across the table. Each level's rows are taken spread over
// the seed rather than from its start (seeds are often written in order: of
// date, of owner). Rows are returned in seed order.
func (g *Graph) Sample(table string, max int) []Row {
	rows := g.Rows(table)
	if len(rows) <= max {
		return rows
	}
	picked := map[int]bool{}
	var idx []int
	take := func(i int) {
		if !picked[i] && len(idx) < max {
			picked[i] = true
			idx = append(idx, i)
		}
	}
	levels := g.levelRows(table, len(rows))
	per := max * 2 / 3 // at most two thirds of the sample go to levels
	for round := 0; len(idx) < per; round++ {
		more := false
		for _, at := range levels {
			if round < len(at) && len(idx) < per {
				take(at[round])
				more = true
			}
		}
		if !more {
			break
		}
	}
	all := make([]int, len(rows))
	for i := range all {
		all[i] = i
	}
	for _, i := range spreadOrder(all) {
		take(i)
	}
	sort.Ints(idx)
	out := make([]Row, len(idx))
	for i, j := range idx {
		out[i] = rows[j]
	}
	return out
}

// levelRows lists, for each level of the table's low-cardinality columns,
// the indexes of its rows, reordered to spread: the middle, then the
// quarters, and so on. Levels are interleaved across columns (every
// column's first level, then every column's second...), so no column waits
// for another's.
func (g *Graph) levelRows(table string, n int) [][]int {
	cols := g.LowCardinality(table, 8)
	// In the schema's order: what a column is called must not decide which
	// rows are sampled.
	var names []string
	if t := g.C.Table(table); t != nil {
		for _, c := range t.Columns {
			if _, ok := cols[c.Name]; ok {
				names = append(names, c.Name)
			}
		}
	}
	var byCol [][][]int
	for _, col := range names {
		c := g.column(table, col)
		var lvs [][]int
		for _, lv := range cols[col] {
			var at []int
			for i := 0; i < n; i++ {
				if !c.isNil[i] && c.text[i] == lv {
					at = append(at, i)
				}
			}
			lvs = append(lvs, spreadOrder(at))
		}
		byCol = append(byCol, lvs)
	}
	var levels [][]int
	for k := 0; ; k++ {
		more := false
		for _, lvs := range byCol {
			if k < len(lvs) {
				levels = append(levels, lvs[k])
				more = true
			}
		}
		if !more {
			return levels
		}
	}
}

// spreadOrder reorders xs so that any prefix is spread over the whole: the
// first, the middle, the quarters, the eighths...
func spreadOrder(xs []int) []int {
	n := len(xs)
	out := make([]int, 0, n)
	seen := make([]bool, n)
	for step := n; step >= 1; step /= 2 {
		for i := 0; i < n; i += step {
			if !seen[i] {
				seen[i] = true
				out = append(out, xs[i])
			}
		}
		if step == 1 {
			break
		}
	}
	for i := range xs {
		if !seen[i] {
			out = append(out, xs[i])
		}
	}
	return out
}

// sortByTable orders items by their table's place in schema.sql, stably.
func sortByTable[T any](g *Graph, xs []T, table func(T) string) {
	pos := map[string]int{}
	for i, t := range g.C.Tables {
		pos[t.Name] = i
	}
	sort.SliceStable(xs, func(i, j int) bool { return pos[table(xs[i])] < pos[table(xs[j])] })
}

// rowKey names a row within its table: its primary key, or the row itself
// when it has none (a table without one, or a key the database generates).
func rowKey(g *Graph, table string, r Row) string {
	t := g.C.Table(table)
	if t == nil || len(t.PrimaryKey) == 0 {
		return fmt.Sprintf("%p", r)
	}
	parts := make([]string, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		if r[k] == nil {
			return fmt.Sprintf("%p", r)
		}
		parts[i] = Text(r[k])
	}
	return strings.Join(parts, "\x00")
}
