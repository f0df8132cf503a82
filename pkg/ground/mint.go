package ground

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// maxMintRows bounds one case's copy: a template whose rows reach further is
// not a case but half the world.
const maxMintRows = 200

// DefaultStride is the stride of a table a Person does not name: as many
// fresh values as a mint may copy rows, so a lone mint never runs short.
const DefaultStride = maxMintRows

// Setup is what Mint produces: statements that insert fresh copies of a target
// record, its owner and their dependent rows, and the new keys.
type Setup struct {
	Statements []scenario.Statement
	// Target and Caller are the minted rows (new keys, new person).
	Target, Caller Row
	// Minted maps table -> old row key -> new row, for every row minted.
	Minted map[string]map[string]Row
	// Codes are the new keys and identifiers a caller may be handed.
	Codes []string
	// index is the scenario's index in the run (Person.Index): Carry
	// spaces the keys of rows a plan added by it.
	index int
}

// Person is who a minted caller becomes, and where the case's fresh values
// come from.
type Person struct {
	First, Last string
	// Number is unique to the scenario in the run; it marks the caller's
	// email address and key ("ava_lee_7012").
	Number int
	// Index is the scenario's index in the run. With Strides it deals every
	// fresh value the case takes: the n-th row of table t minted for index i
	// takes slot i*stride(t)+n, so no two scenarios ever share a value.
	Index int
	// Strides is, per table, how many fresh values one scenario may take (the
	// most rows of the table one mint copies, plus one for a fresh argument),
	// the same for every case of a run (plan.Plan.Strides). Without them a
	// mint spaces its own rows only: values stay unique within the case and
	// against the seed, not across cases minted from other templates.
	Strides map[string]int
	// own is the stride a mint without Strides uses, set by Mint.
	own map[string]int
}

func (p Person) stride(table string) int64 {
	if n, ok := p.Strides[table]; ok && n > 0 {
		return int64(n)
	}
	if n, ok := p.own[table]; ok && n > 0 {
		return int64(n)
	}
	return DefaultStride
}

// slot is the fresh-value slot of the n-th row of a table minted for p.
func (p Person) slot(table string, n int) (int64, error) {
	st := p.stride(table)
	if int64(n) >= st {
		return 0, fmt.Errorf("ground: one case mints more than %d rows of %s (its stride); plan strides from the templates", st, table)
	}
	return int64(p.Index)*st + int64(n), nil
}

// FreshSlot is the slot a case's fresh argument of a table takes: the last of
// the scenario's slots, after the rows it mints.
func (p Person) FreshSlot(table string) int64 {
	st := p.stride(table)
	return int64(p.Index)*st + st - 1
}

type item struct {
	table string
	row   Row
}

// minting is a copy being planned: which seed rows are copied, and which of
// their columns must take fresh values so that the copies can coexist with
// the rows they copy.
type minting struct {
	table      string
	target     Row
	owner      Row
	restricted map[string]bool            // tables only the target or the owner are copied from
	chosen     map[string]map[string]bool // table -> row key
	order      []item
	fresh      map[string]map[string][]string // table -> row key -> columns to refresh
}

func (m *minting) add(g *Graph, t string, r Row) bool {
	key := rowKey(g, t, r)
	if m.chosen[t] == nil {
		m.chosen[t] = map[string]bool{}
	}
	if m.chosen[t][key] {
		return false
	}
	m.chosen[t][key] = true
	m.order = append(m.order, item{t, r})
	return true
}

func (m *minting) copied(g *Graph, t string, r Row) bool {
	return r != nil && m.chosen[t][rowKey(g, t, r)]
}

// Mint copies the target row (and its owner and the rows that hang off them)
// under fresh keys, renaming the owner to p, so that the copy coexists with
// every seed row and with every other scenario's copy: primary keys, unique
// columns (not only keys) and the foreign keys that follow them all take
// values no one else has, in the shapes the schema's CHECKs ask for. The
// copies are returned as INSERT statements, parents first.
func (g *Graph) Mint(table string, target Row, p Person) (*Setup, error) {
	return g.mintAs(table, target, p, "")
}

// mintAs is Mint with the target's owner taken through role (CaseAs).
func (g *Graph) mintAs(table string, target Row, p Person, role string) (*Setup, error) {
	if target == nil {
		return nil, fmt.Errorf("ground: no %s row to mint from", table)
	}
	m := g.collect(table, target, role)
	g.closeUnique(m)
	if len(m.order) > maxMintRows {
		return nil, fmt.Errorf("ground: minting %s would copy %d rows", table, len(m.order))
	}
	if p.Strides == nil {
		p.own = map[string]int{}
		for _, it := range m.order {
			p.own[it.table]++
		}
		for t := range p.own {
			p.own[t]++
		}
	}
	s, err := g.assign(m, p)
	if err != nil {
		return nil, err
	}
	s.Statements = g.render(m, s)
	return s, nil
}

// collect chooses the rows to copy: the target, its owner, then every row
// that points at a copied row, except rows that also point at an uncopied row
// of the target's or the caller's table (a payment of the owner's other
// order), and rows whose copy could not get a key of its own (a composite key
// none of whose columns is re-keyed).
func (g *Graph) collect(table string, target Row, role string) *minting {
	cl := g.C.Caller
	m := &minting{table: table, target: target, owner: g.OwnerAs(table, target, role),
		restricted: map[string]bool{table: true}, chosen: map[string]map[string]bool{}, fresh: map[string]map[string][]string{}}
	if cl != nil {
		m.restricted[cl.Table] = true
	}
	m.add(g, table, target)
	if m.owner != nil && cl != nil && cl.Table != table {
		m.add(g, cl.Table, m.owner)
	}
	// Until nothing changes: every row of an unrestricted table that hangs
	// off a copied row, and may be copied, is.
	for changed := true; changed; {
		var full bool
		changed, full = g.collectChildren(m)
		if full {
			break
		}
	}
	return m
}

// collectChildren adds, table by table, the rows that refer to a copied
// row and are eligible. It reports whether it added any, and whether the
// copy passed maxMintRows (then it stops).
func (g *Graph) collectChildren(m *minting) (changed, full bool) {
	for _, t := range g.C.Tables {
		if m.restricted[t.Name] {
			continue
		}
		for _, fk := range g.fks[t.Name] {
			parents := m.chosen[fk.RefTable]
			if len(parents) == 0 {
				continue
			}
			// The parents' referenced values, as a set: comparing each
			// row with each parent would make minting quadratic.
			refs := map[string]bool{}
			for _, it := range m.order {
				if it.table == fk.RefTable && it.row[fk.RefColumn] != nil {
					refs[Text(it.row[fk.RefColumn])] = true
				}
			}
			col := g.column(t.Name, fk.Column)
			for i, r := range g.Rows(t.Name) {
				if col.isNil[i] || !refs[col.text[i]] {
					continue
				}
				if m.eligible(g, t.Name, r) && m.add(g, t.Name, r) {
					changed = true
				}
			}
			if len(m.order) > maxMintRows {
				return changed, true
			}
		}
	}
	return changed, false
}

// eligible reports whether row r of table t may join the copy: no parent
// it refers to of a restricted table, or of a table whose rows belong to a
// caller, is left uncopied (a minted product's variants stay out of other
// callers' orders) unless it is a link to another person that may be null
// (the copy drops it), and it has a key of its own or one made of copied
// parents' keys.
func (m *minting) eligible(g *Graph, t string, r Row) bool {
	for _, fk := range g.fks[t] {
		if r[fk.Column] == nil || !m.restricted[fk.RefTable] && !g.OwnedTable(fk.RefTable) {
			continue
		}
		if p := g.Find(fk.RefTable, fk.RefColumn, r[fk.Column]); p != nil && !m.copied(g, fk.RefTable, p) && !g.otherPerson(fk) {
			return false
		}
	}
	if g.PK(t) != "" {
		return true
	}
	tb := g.C.Table(t)
	if len(tb.PrimaryKey) == 0 {
		return true
	}
	for _, k := range tb.PrimaryKey {
		if fk, ok := g.fkOf(t, k); ok && g.PK(fk.RefTable) == fk.RefColumn && m.copied(g, fk.RefTable, g.Find(fk.RefTable, fk.RefColumn, r[k])) {
			return true
		}
	}
	return false
}

// otherPerson reports whether a foreign key is a link a copy may drop: to a
// row of the caller's table, in a column that may be null (a guardian who is
// also a patient of their own). A copy keeps every other link, or is not
// made (a promo used on another trip stays used).
func (g *Graph) otherPerson(fk FK) bool {
	cl := g.C.Caller
	if cl == nil || fk.RefTable != cl.Table {
		return false
	}
	c := g.C.Table(fk.Table).Column(fk.Column)
	return c != nil && !c.NotNull
}

// closeUnique makes sure every unique column set (the primary key included)
// of every copied row takes at least one new value. A set that nothing
// changes gets a fresh value in one of its own columns (the last that can
// take one); when it has only foreign keys, the parent one of them points
// at is copied too (an appointment's slot), and that copy is closed in turn.
func (g *Graph) closeUnique(m *minting) {
	for i := 0; i < len(m.order) && len(m.order) <= maxMintRows; i++ {
		it := m.order[i]
		t := g.C.Table(it.table)
		if t == nil {
			continue
		}
		sets := t.Unique
		if len(t.PrimaryKey) > 0 {
			sets = append([][]string{t.PrimaryKey}, sets...)
		}
		for _, set := range sets {
			if g.setChanges(m, it, set) {
				continue
			}
			if col := g.freshable(t, set); col != "" {
				key := rowKey(g, it.table, it.row)
				if m.fresh[it.table] == nil {
					m.fresh[it.table] = map[string][]string{}
				}
				m.fresh[it.table][key] = append(m.fresh[it.table][key], col)
				continue
			}
			parent := false
			for _, c := range set {
				fk, ok := g.fkOf(it.table, c)
				if !ok || m.restricted[fk.RefTable] {
					continue
				}
				if p := g.Find(fk.RefTable, fk.RefColumn, it.row[c]); p != nil {
					m.add(g, fk.RefTable, p)
					parent = true
					break
				}
			}
			// Else a column held to a list takes another of its values
			// (mintRow picks one no row holds, or says there is none).
			if col := g.listed(t, set); !parent && col != "" {
				key := rowKey(g, it.table, it.row)
				if m.fresh[it.table] == nil {
					m.fresh[it.table] = map[string][]string{}
				}
				m.fresh[it.table][key] = append(m.fresh[it.table][key], col)
			}
		}
	}
}

// setChanges reports whether a copied row will take a new value in some
// column of a unique set, or holds a NULL there (NULLs never collide).
func (g *Graph) setChanges(m *minting, it item, set []string) bool {
	cl := g.C.Caller
	t := g.C.Table(it.table)
	key := rowKey(g, it.table, it.row)
	for _, c := range set {
		v, present := it.row[c]
		if !present || v == nil {
			return true // generated by the database, or NULL
		}
		if len(set) == 1 && g.PK(it.table) == c {
			if _, isFK := g.fkOf(it.table, c); !isFK {
				return true // re-keyed
			}
		}
		if fk, ok := g.fkOf(it.table, c); ok && m.copied(g, fk.RefTable, g.Find(fk.RefTable, fk.RefColumn, v)) {
			return true // follows a copied parent
		}
		if cl != nil && it.table == cl.Table && (g.renamed(it.table, c) != "" || t.IsUnique(c) && c == cl.Key) {
			return true
		}
		for _, f := range m.fresh[it.table][key] {
			if f == c {
				return true
			}
		}
	}
	return false
}

// freshable picks the column of a unique set that can take a fresh value in
// its shape: not a foreign key, not held to a list of values, not a flag.
func (g *Graph) freshable(t *contract.Table, set []string) string {
	for i := len(set) - 1; i >= 0; i-- {
		c := set[i]
		if _, isFK := g.fkOf(t.Name, c); isFK {
			continue
		}
		col := t.Column(c)
		if col == nil || strings.HasPrefix(col.Type, "bool") {
			continue
		}
		if listOf(t, c) == nil {
			return c
		}
	}
	return ""
}

// listed picks the column of a unique set held to a list of values (a tier's
// code, a document's kind), the last one not a foreign key: when nothing
// else in the set can change, a copy takes another value of the list.
func (g *Graph) listed(t *contract.Table, set []string) string {
	for i := len(set) - 1; i >= 0; i-- {
		if _, isFK := g.fkOf(t.Name, set[i]); !isFK && listOf(t, set[i]) != nil {
			return set[i]
		}
	}
	return ""
}

// listOf is the list of values a CHECK holds a column to, or nil.
func listOf(t *contract.Table, col string) []string {
	for _, ck := range t.ChecksOn(col) {
		if ck.Op == "in" && len(ck.Values) > 0 {
			return ck.Values
		}
	}
	return nil
}

// freshValue is a fresh value for column col of a copy nr of a seed row
// whose value was old: from the column's list when a CHECK holds it to one,
// else in its shape.
func (g *Graph) freshValue(a *assignment, table, col string, nr Row, old any, slot int64) (any, error) {
	t := g.C.Table(table)
	if t == nil || listOf(t, col) == nil {
		return g.Fresh(table, col, old, slot)
	}
	return g.freshListed(a, t, col, nr, old, slot)
}

// freshListed is a value of the list col is held to that no seed row, nor
// an earlier copy of this case, holds beside nr's other values in any unique
// set of col: the slot-th such value, so that other scenarios' copies take
// others. A list every value of which is taken leaves the copy without one,
// and that is an error naming the list (a tier table whose codes are all in
// use cannot be copied).
func (g *Graph) freshListed(a *assignment, t *contract.Table, col string, nr Row, old any, slot int64) (any, error) {
	list := listOf(t, col)
	sets := t.Unique
	if len(t.PrimaryKey) > 0 {
		sets = append([][]string{t.PrimaryKey}, sets...)
	}
	var mine [][]string
	for _, set := range sets {
		if slices.Contains(set, col) {
			mine = append(mine, set)
		}
	}
	// held reports whether some row of rows holds v in col beside nr's
	// values in the other columns of one of col's unique sets.
	held := func(rows []Row, v string) bool {
		for _, r := range rows {
			if Text(r[col]) != v {
				continue
			}
			for _, set := range mine {
				same := true
				for _, c := range set {
					same = same && (c == col || r[c] != nil && Text(r[c]) == Text(nr[c]))
				}
				if same {
					return true
				}
			}
		}
		return false
	}
	var copies []Row
	for _, r := range a.s.Minted[t.Name] {
		copies = append(copies, r)
	}
	seed := g.Rows(t.Name)
	var free []string
	for _, v := range list {
		if !held(seed, v) {
			free = append(free, v)
		}
	}
	for i := slot; i >= 0 && i < int64(len(free)); i++ {
		if held(copies, free[i]) {
			continue
		}
		return listValue(free[i], old), nil
	}
	if len(free) == 0 {
		return nil, fmt.Errorf("%w: %s.%s is held to (%s) and rows hold every one: no copy can take a value of its own",
			ErrCodeSpace, t.Name, col, strings.Join(list, ", "))
	}
	return nil, fmt.Errorf("%w: %s.%s is held to (%s) and %d of them are free, too few for slot %d",
		ErrCodeSpace, t.Name, col, strings.Join(list, ", "), len(free), slot)
}

// listValue is v, a value of a CHECK's list, as a value of old's type.
func listValue(v string, old any) any {
	switch old.(type) {
	case int64, int:
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case float64:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	}
	return v
}

// assign gives every copy its values, parents first, so a child's foreign
// keys (and a key that is itself a foreign key, like a code keyed by phone
// number) follow the values their parents were given.
func (g *Graph) assign(m *minting, p Person) (*Setup, error) {
	order := append([]item(nil), m.order...)
	sortByTable(g, order, func(it item) string { return it.table })
	a := &assignment{
		remap:    map[string]map[string]any{},
		seq:      map[string]int{},
		personal: map[string]any{},
		s:        &Setup{Minted: map[string]map[string]Row{}, index: p.Index},
	}
	for _, it := range order {
		nr, err := g.mintRow(m, a, it, p)
		if err != nil {
			return nil, err
		}
		g.record(m, a, it, nr)
	}
	if cl := g.C.Caller; cl != nil && m.table == cl.Table {
		a.s.Caller = a.s.Target
	}
	return a.s, nil
}

// assignment is what minting the rows of a copy, parents first, carries
// from one row to the next.
type assignment struct {
	remap map[string]map[string]any // "table.column" -> old text -> new value
	seq   map[string]int            // table -> rows of it minted so far
	// personal maps the caller's old names, email and phone to the new
	// person's, for the other rows that repeat them.
	personal map[string]any
	s        *Setup
}

// mintRow is the copy of one seed row: its foreign keys follow the parents
// already minted, the caller's row is renamed to p and the others repeat
// its new names, and its key and the columns that must be unique take
// fresh values in p's slot.
func (g *Graph) mintRow(m *minting, a *assignment, it item, p Person) (Row, error) {
	cl := g.C.Caller
	nr := Row{}
	for k, v := range it.row {
		nr[k] = v
	}
	for _, fk := range g.fks[it.table] {
		if it.row[fk.Column] == nil {
			continue
		}
		if nv, ok := a.remap[fk.RefTable+"."+fk.RefColumn][Text(it.row[fk.Column])]; ok {
			nr[fk.Column] = nv
		} else if g.otherPerson(fk) {
			// A link to someone else's record that stays behind (a
			// guardian who is also a patient of their own): the copy
			// does not carry it.
			nr[fk.Column] = nil
		}
	}
	n := a.seq[it.table]
	a.seq[it.table]++
	slot, err := p.slot(it.table, n)
	if err != nil {
		return nil, err
	}
	pk := g.PK(it.table)
	isCaller := cl != nil && it.table == cl.Table
	if isCaller {
		if err := g.rename(it.table, nr, p, n); err != nil {
			return nil, err
		}
		for k, v := range nr {
			if g.renamed(it.table, k) != "" && Text(it.row[k]) != Text(v) {
				a.personal[Text(it.row[k])] = v
			}
		}
	} else if err := g.personalise(it.table, it.row, nr, a.personal, p, n); err != nil {
		return nil, err
	}
	if pk != "" && Text(nr[pk]) == Text(it.row[pk]) && it.row[pk] != nil {
		var nv any
		if isCaller && pk == cl.Key {
			nv, err = g.personKey(a, it.table, pk, nr, it.row[pk], p, slot)
		} else {
			nv, err = g.freshValue(a, it.table, pk, nr, it.row[pk], slot)
		}
		if err != nil {
			return nil, fmt.Errorf("ground: minting %s: %w", m.table, err)
		}
		nr[pk] = nv
	}
	for _, c := range m.fresh[it.table][rowKey(g, it.table, it.row)] {
		if Text(nr[c]) != Text(it.row[c]) {
			continue
		}
		nv, err := g.freshValue(a, it.table, c, nr, it.row[c], slot)
		if err != nil {
			return nil, fmt.Errorf("ground: minting %s: %w", m.table, err)
		}
		nr[c] = nv
	}
	return nr, nil
}

// record keeps the copy nr of a seed row: the values it changed (for the
// rows that refer to them), its code, and whether it is the target or the
// caller.
func (g *Graph) record(m *minting, a *assignment, it item, nr Row) {
	cl := g.C.Caller
	s := a.s
	for k, v := range nr {
		if Text(it.row[k]) == Text(v) {
			continue
		}
		key := it.table + "." + k
		if a.remap[key] == nil {
			a.remap[key] = map[string]any{}
		}
		a.remap[key][Text(it.row[k])] = v
	}
	if pk := g.PK(it.table); pk != "" && Text(nr[pk]) != "" {
		s.Codes = append(s.Codes, Text(nr[pk]))
	}
	if s.Minted[it.table] == nil {
		s.Minted[it.table] = map[string]Row{}
	}
	s.Minted[it.table][rowKey(g, it.table, it.row)] = nr
	if it.table == m.table && rowKey(g, m.table, it.row) == rowKey(g, m.table, m.target) {
		s.Target = nr
	}
	isCaller := cl != nil && it.table == cl.Table
	if isCaller && (m.owner != nil && rowKey(g, it.table, it.row) == rowKey(g, it.table, m.owner) || m.table == cl.Table && s.Caller == nil) {
		s.Caller = nr
	}
}

// render writes the copies as inserts in schema order, so parents land before
// children.
func (g *Graph) render(m *minting, s *Setup) []scenario.Statement {
	byTable := map[string][]Row{}
	for _, it := range m.order {
		byTable[it.table] = append(byTable[it.table], s.Minted[it.table][rowKey(g, it.table, it.row)])
	}
	var out []scenario.Statement
	for _, t := range g.C.Tables {
		for _, r := range byTable[t.Name] {
			out = append(out, insert(t, r))
		}
	}
	return out
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

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// personKey makes a caller key for a new person: "ava_lee_4821" style keys
// take the person's name and number, others a fresh value in their shape.
func (g *Graph) personKey(a *assignment, table, col string, nr Row, old any, p Person, slot int64) (any, error) {
	if s, isStr := old.(string); isStr && strings.Contains(s, "_") && strings.IndexFunc(s, isDigit) >= 0 {
		k := strings.ToLower(slug(p.First) + "_" + slug(p.Last) + "_" + strconv.Itoa(p.Number))
		if t := g.C.Table(table); !g.Holds(table, col, k) && (t == nil || listOf(t, col) == nil) {
			return k, nil
		}
	}
	return g.freshValue(a, table, col, nr, old, slot)
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

// Renamed says which part of a person a caller's column holds: "first",
// "last", "full", "email", "phone", or "" (minting renames those). The
// column's name proposes and its seed values decide: a phone_type column of
// "mobile" and "landline" holds no phone number, and renaming it would break
// its CHECK.
func (g *Graph) Renamed(table, col string) string { return g.renamed(table, col) }

// renamed reads the seed once per column: minting asks it of every column
// of every row it copies, and a column's answer never changes.
func (g *Graph) renamed(table, col string) string {
	key := table + "\x00" + col
	if k, ok := g.renames.Load(key); ok {
		return k.(string)
	}
	k := g.renamedNow(table, col)
	g.renames.Store(key, k)
	return k
}

func (g *Graph) renamedNow(table, col string) string {
	kind := renamedByName(col)
	if kind == "" {
		// A column whose name says nothing is a way of reaching someone
		// when its values say so: what a column holds, not what it is
		// called.
		return g.reachByValues(table, col)
	}
	c := g.column(table, col)
	seen, fit := 0, 0
	for i, v := range c.text {
		if c.isNil[i] {
			continue
		}
		seen++
		if valueFits(kind, v) {
			fit++
		}
	}
	// A column with no seed value keeps its name's word; one whose values
	// mostly do not look like its kind holds something else.
	if seen > 0 && fit*5 < seen*4 {
		return ""
	}
	return kind
}

// reachByValues is "email" or "phone" when nearly every seed value of a
// text column is unmistakably one (an address with @ and a domain, a
// number written with + or separators, as ids and dates never are), else "".
func (g *Graph) reachByValues(table, col string) string {
	t := g.C.Table(table)
	if t == nil {
		return ""
	}
	if cc := t.Column(col); cc == nil || !strings.HasPrefix(cc.Type, "text") && !strings.HasPrefix(cc.Type, "varchar") && !strings.HasPrefix(cc.Type, "character") {
		return ""
	}
	c := g.column(table, col)
	seen, email, phone := 0, 0, 0
	for i, v := range c.text {
		if c.isNil[i] {
			continue
		}
		seen++
		if at := strings.IndexByte(v, '@'); at > 0 && strings.Contains(v[at:], ".") && !strings.ContainsAny(v, " ,;") {
			email++
		}
		if valueFits("phone", v) && strings.ContainsAny(v, "+-(). ") && !dateShape.MatchString(v) {
			phone++
		}
	}
	switch {
	case seen < 2:
		return ""
	case email*5 >= seen*4:
		return "email"
	case phone*5 >= seen*4:
		return "phone"
	}
	return ""
}

// dateShape is a date or time written with digits and separators only.
var dateShape = regexp.MustCompile(`^\d{1,4}[-./]\d{1,2}[-./]\d{1,4}$|^\d{1,2}[:.]\d{2}([:.]\d{2})?$`)

// valueFits says whether v looks like a value of a person's detail.
func valueFits(kind, v string) bool {
	switch kind {
	case "email":
		return strings.Contains(v, "@")
	case "phone":
		digits := 0
		for _, r := range v {
			switch {
			case r >= '0' && r <= '9':
				digits++
			case strings.ContainsRune("+-(). /x", r):
			default:
				return false
			}
		}
		return digits >= 7
	}
	return strings.IndexFunc(v, func(r rune) bool { return r >= '0' && r <= '9' }) < 0
}

func renamedByName(col string) string {
	k := strings.ToLower(strings.ReplaceAll(col, "_", ""))
	switch k {
	case "firstname", "givenname", "forename":
		return "first"
	case "lastname", "surname", "familyname":
		return "last"
	case "name", "fullname", "displayname":
		return "full"
	}
	switch {
	case strings.Contains(k, "email"):
		return "email"
	case strings.Contains(k, "phone") || strings.Contains(k, "mobile") || k == "cell" || k == "tel" || k == "telephone":
		return "phone"
	}
	return ""
}

// personalise gives a copied row that is not the caller the new person's
// details where it repeats the old person's (a passenger who is the
// caller), and fresh phone numbers and email addresses of its own elsewhere:
// a copy never shares a way of reaching someone with the seed (a line's
// number that a lookup by phone would also find on the original).
func (g *Graph) personalise(table string, old, nr Row, personal map[string]any, p Person, n int) error {
	for k, v := range nr {
		s, isStr := v.(string)
		kind := g.renamed(table, k)
		if !isStr || kind == "" || Text(old[k]) != Text(v) {
			continue // not a person's detail, or already remapped (a key)
		}
		if _, isFK := g.fkOf(table, k); isFK {
			continue
		}
		if nv, ok := personal[s]; ok {
			nr[k] = nv
			continue
		}
		switch kind {
		case "phone":
			nv, err := g.freshPhone(table, s, p, n)
			if err != nil {
				return fmt.Errorf("ground: minting %s.%s: %w", table, k, err)
			}
			nr[k] = nv
		case "email":
			domain := "mail.com"
			if _, d, ok := strings.Cut(s, "@"); ok {
				domain = d
			}
			e := fmt.Sprintf("%s.%s%d.%s%d@%s", slug(p.First), slug(p.Last), p.Number, slug(table), n, domain)
			for g.Holds(table, k, e) {
				e = "x" + e
			}
			nr[k] = e
		}
	}
	return nil
}

// rename makes a caller row be p: name columns, email and phone. An email is
// the person's, marked with their number; a phone number is a fresh value in
// the shape of the old one.
func (g *Graph) rename(table string, r Row, p Person, n int) error {
	full := p.First + " " + p.Last
	for k, v := range r {
		s, isStr := v.(string)
		if !isStr {
			continue
		}
		switch g.renamed(table, k) {
		case "first":
			r[k] = p.First
		case "last":
			r[k] = p.Last
		case "full":
			r[k] = full
		case "email":
			domain := "mail.com"
			if _, d, ok := strings.Cut(s, "@"); ok {
				domain = d
			}
			e := fmt.Sprintf("%s.%s%d@%s", slug(p.First), slug(p.Last), p.Number, domain)
			for g.Holds(table, k, e) {
				e = "x" + e
			}
			r[k] = e
		case "phone":
			nv, err := g.freshPhone(table, s, p, n)
			if err != nil {
				return fmt.Errorf("ground: renaming the caller: %w", err)
			}
			r[k] = nv
		}
	}
	return nil
}

// MintCounts is how many rows of each table minting row (of table) copies.
func (g *Graph) MintCounts(table string, row Row) map[string]int {
	m := g.collect(table, row, "")
	g.closeUnique(m)
	out := map[string]int{}
	for _, it := range m.order {
		out[it.table]++
	}
	return out
}

// phoneTables are the tables with a phone number column, in schema order:
// phone numbers are one space across them (a lookup by phone may read any).
func (g *Graph) phoneTables() []string {
	var out []string
	for _, t := range g.C.Tables {
		for _, c := range t.Columns {
			if g.renamed(t.Name, c.Name) == "phone" {
				out = append(out, t.Name)
				break
			}
		}
	}
	return out
}

// freshPhone is a phone number for the n-th row of table minted for p: in
// the shape of old, held by no phone column of the seed, and dealt from one
// space for every table with phone numbers, each table its own share of
// every scenario's slots.
func (g *Graph) freshPhone(table, old string, p Person, n int) (string, error) {
	var total, offset int64
	for _, t := range g.phoneTables() {
		if t == table {
			offset = total
		}
		total += p.stride(t)
	}
	if int64(n) >= p.stride(table) {
		return "", fmt.Errorf("ground: one case mints more than %d rows of %s (its stride)", p.stride(table), table)
	}
	slot := int64(p.Index)*total + offset + int64(n)
	sp := g.phoneSpace(old)
	v, err := sp.at(slot)
	if err != nil {
		return "", fmt.Errorf("phone numbers: %w", err)
	}
	return v, nil
}

// phoneSpace is the space of phone numbers in the shape of old, past every
// phone number of every table of the seed.
func (g *Graph) phoneSpace(old string) *space {
	var patterns []*regexp.Regexp
	for _, t := range g.C.Tables {
		for _, c := range t.Columns {
			if g.renamed(t.Name, c.Name) == "phone" {
				patterns = append(patterns, g.patterns(t.Name, c.Name)...)
			}
		}
	}
	sh := shapeOf(old, nil)
	// A character is fixed when any phone column's pattern fixes it.
	for _, re := range patterns {
		if !re.MatchString(old) {
			continue
		}
		fixed := shapeOf(old, []*regexp.Regexp{re})
		for i := range sh.class {
			if fixed.class[i] == 0 {
				sh.class[i] = 0
			}
		}
	}
	key := "phone\x00" + sh.key()
	if v, ok := g.spaces.Load(key); ok {
		return v.(*space)
	}
	sp := &space{shape: sh, size: sh.size()}
	seen := map[int64]bool{}
	for _, t := range g.C.Tables {
		for _, c := range t.Columns {
			if g.renamed(t.Name, c.Name) != "phone" {
				continue
			}
			for _, r := range g.Rows(t.Name) {
				v, ok := r[c.Name].(string)
				if !ok || !sh.fits(v) {
					continue
				}
				x := sh.number(v)
				if !seen[x] {
					seen[x] = true
					sp.seeds = append(sp.seeds, x)
				}
				if x+1 > sp.start {
					sp.start = x + 1
				}
			}
		}
	}
	sort.Slice(sp.seeds, func(i, j int) bool { return sp.seeds[i] < sp.seeds[j] })
	if sp.start > sp.size {
		sp.start = sp.size
	}
	got, _ := g.spaces.LoadOrStore(key, sp)
	return got.(*space)
}

// addedRow reads a statement the plan wrote for a row an act added
// (probe's RehearseWrites): INSERT INTO table (columns) VALUES ($1, ...),
// one argument per column, in order.
var addedRow = regexp.MustCompile(`^INSERT INTO (\w+) \(([^)]*)\) VALUES \([^)]*\)$`)

// AddedRow reads st as a row an act added: its table and columns, one
// argument each; ok is false for any other statement.
func AddedRow(st scenario.Statement) (table string, cols []string, ok bool) {
	m := addedRow.FindStringSubmatch(st.SQL)
	if m == nil {
		return "", nil, false
	}
	cols = strings.Split(m[2], ", ")
	if len(cols) != len(st.Args) {
		return "", nil, false
	}
	return m[1], cols, true
}

// AlignAdded makes each row an act once added (stmts, as AddedRow reads
// them) one of the case whose act is act: every column an argument of act
// is bound to holds the value that argument now has (a case fills its act's
// fresh values anew: a member number, as it did when the plan rehearsed
// it), and the row's key is fresh for person. The key the handler numbered
// next from the seed's highest is the one the case's own minted rows take,
// so carried as it was it would collide with them, and two scenarios of a
// run would hand out the same record.
func (g *Graph) AlignAdded(stmts []scenario.Statement, act scenario.Call, binds Bindings, person Person) {
	for i := range stmts {
		table, cols, ok := AddedRow(stmts[i])
		if !ok {
			continue
		}
		args := slices.Clone(stmts[i].Args)
		for param, v := range act.Args {
			if bd, ok := binds.Of(act.Tool, param); ok && bd.Table == table && v != nil {
				if k := slices.Index(cols, bd.Column); k >= 0 && args[k] != nil {
					args[k] = v
				}
			}
		}
		if k := slices.Index(cols, g.PK(table)); k >= 0 && args[k] != nil {
			if fresh, err := g.Fresh(table, cols[k], args[k], person.FreshSlot(table)); err == nil {
				args[k] = fresh
			}
		}
		stmts[i].Args = args
	}
}

// AddedHolds are the arguments of act whose values a row an act once added
// (stmts, as AddedRow reads them) holds: in the column the argument is
// bound to, or, for one bound to no column (a day written from a format,
// a value from a list), in any column. A refusal of the act asked for
// again (a claim for an incident one is already open for) turns on them,
// so the caller states them.
func AddedHolds(stmts []scenario.Statement, act scenario.Call, binds Bindings) map[string]bool {
	out := map[string]bool{}
	for _, st := range stmts {
		table, cols, ok := AddedRow(st)
		if !ok {
			continue
		}
		for param, v := range act.Args {
			bd, _ := binds.Of(act.Tool, param)
			if v == nil || bd.Table != "" && bd.Table != table {
				continue
			}
			for k, a := range st.Args {
				if a != nil && (bd.Table == "" || cols[k] == bd.Column) && Text(a) == Text(v) {
					out[param] = true
				}
			}
		}
	}
	return out
}

// Carry maps statements written on seed rows (what an act wrote on a
// template's own records) onto this case: every value a minted row took in
// place of its seed row's (a key, a phone, a name) is replaced by the
// minted one, so that the statements write on the case's records.
func (s *Setup) Carry(g *Graph, stmts []scenario.Statement) []scenario.Statement {
	repl := map[string]any{}
	for table, rows := range s.Minted {
		pk := g.PK(table)
		for old, nr := range rows {
			or := g.Find(table, pk, old)
			for col, nv := range nr {
				ov := or[col]
				if ov != nil && nv != nil && Text(ov) != Text(nv) {
					repl[Text(ov)] = nv
				}
			}
		}
	}
	out := make([]scenario.Statement, len(stmts))
	for i, st := range stmts {
		args := make([]any, len(st.Args))
		keys := g.addedKeys(st)
		for j, a := range st.Args {
			args[j] = a
			if nv, ok := repl[Text(a)]; ok && a != nil {
				args[j] = nv
			} else if keys[j] {
				args[j] = spaceKey(a, s.index)
			}
		}
		out[i] = scenario.Statement{SQL: st.SQL, Args: args}
	}
	return out
}

// AddedStride is how many rows of one table a plan may add to one case's
// setup (plan.adds): Carry moves the keys of such rows by the case's index
// times it, so that every case of a run holds rows of its own.
const AddedStride = 8

// castValues finds each value of an INSERT written as CAST($n::text AS
// type) or CAST(NULL AS type), in column order.
var castValues = regexp.MustCompile(`CAST\((?:\$(\d+)::text|NULL) AS `)

// addedInsert reads an INSERT of rows a plan added (plan.insertRows): its
// table, columns and VALUES.
var addedInsert = regexp.MustCompile(`^INSERT INTO (\w+) \(([^)]*)\) VALUES (\(CAST.*)$`)

// addedKeys are the positions of st's arguments that are keys of rows a
// plan added (of a table keyed by one column, a key no seed row holds): the
// same added row carried onto every case would be one record handed out
// by many scenarios.
func (g *Graph) addedKeys(st scenario.Statement) map[int]bool {
	m := addedInsert.FindStringSubmatch(st.SQL)
	if m == nil {
		return nil
	}
	table, cols := m[1], strings.Split(m[2], ", ")
	pk := g.PK(table)
	at := slices.Index(cols, pk)
	if pk == "" || at < 0 {
		return nil
	}
	out := map[int]bool{}
	for n, v := range castValues.FindAllStringSubmatch(m[3], -1) {
		if n%len(cols) != at || v[1] == "" {
			continue
		}
		j, err := strconv.Atoi(v[1])
		if err != nil || j < 1 || j > len(st.Args) || st.Args[j-1] == nil {
			continue
		}
		if g.Find(table, pk, st.Args[j-1]) == nil {
			out[j-1] = true
		}
	}
	return out
}

// spaceKey is an added row's key moved by index*AddedStride, in its own
// shape (digits, or a prefix and digits of the same width); a key the move
// would widen past its digits stays as it was.
func spaceKey(k any, index int) any {
	if index <= 0 {
		return k
	}
	m := addedKeyShape.FindStringSubmatch(Text(k))
	if m == nil {
		return k
	}
	n, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil {
		return k
	}
	moved := strconv.FormatInt(n+int64(index)*AddedStride, 10)
	if m[1] != "" || m[2][0] == '0' {
		if len(moved) > len(m[2]) {
			return k
		}
		moved = strings.Repeat("0", len(m[2])-len(moved)) + moved
	}
	return m[1] + moved
}

// addedKeyShape is a key of a fixed prefix and digits.
var addedKeyShape = regexp.MustCompile(`^([^0-9]*)([0-9]{1,15})$`)
