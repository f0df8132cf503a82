package ground

import (
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
)

// Bound is what a case is about: the target row, the caller, and every row
// they reach through foreign keys (their parents, the rows that hang off
// them, and those rows' parents), by table, the target and the caller first.
// Arguments are filled from these.
type Bound struct {
	Table  string // the target's table
	Target Row
	Caller Row
	// Rows holds every row the case reaches, by table, in a stable order.
	Rows map[string][]Row
	// Ordinal rotates choices (enum values, shared records) between
	// sibling cases.
	Ordinal int
	// Variant picks, in every table the case reaches several rows of (a
	// child's two guardians, a user's three cards), which one it uses: row
	// Variant mod n. The target and the caller are always themselves.
	Variant int
	// Person is who calls, and where the case's fresh values come from.
	Person Person
	// Outside, when set, names a table whose record arguments come from
	// outside the case (Graph.Outsider): someone else's rows of an owned
	// table (another customer's card, another rider's trip), or a row
	// under another parent where the case takes a sibling (another
	// product's variant): what a caller asks about a record that is not
	// theirs, or not of a kind the act allows.
	Outside string
	// Swap, where Outside names a table the act takes a sibling of the
	// case's row from (a variant to swap to), says which row it takes
	// instead; SwapWorld, where Outside names a table no one owns, that the
	// arguments take the seed's Other-th row of it (Graph.Neighbours).
	Swap  Swap
	Other int
	// Leave is an argument of the act, one its schema does not require
	// and that names a record, which the case leaves out: a minor who
	// calls alone names no guardian.
	Leave string
	// copied holds, per table, the keys of the seed rows the case minted
	// copies of: the originals are not the case's (nor its siblings).
	copied map[string]map[string]bool
}

// Swap is which row an argument that takes a sibling of the case's row
// (another variant of the product the case holds) names instead, when the
// caller asks for a swap the act may refuse.
type Swap string

const (
	// SwapStranger: a row under another parent (Graph.Outsider), another
	// product's variant.
	SwapStranger Swap = ""
	// SwapItself: the case's own row, a swap to what it already is.
	SwapItself Swap = "itself"
	// SwapHeld: another row of the table the case already holds, a swap to
	// what it already has.
	SwapHeld Swap = "held"
	// SwapTaken: an argument that takes a fresh value (a new email) takes
	// instead the one another row of its column holds (an email in use).
	SwapTaken Swap = "taken"
	// SwapUnchanged: an argument that takes a fresh value takes instead the
	// one the case's row already holds (the email already on the account).
	SwapUnchanged Swap = "unchanged"
	// SwapMore: a number an argument takes from a column of the table
	// (an amount to refund) is asked for Mores[Bound.Other] times over:
	// the caller asks for more than the world may give.
	SwapMore Swap = "more"
	// SwapWorld: one of the world's rows of a table no one owns (a slot, a
	// flight), the seed's Bound.Other-th: the caller asks for a record of
	// the world's that the act may refuse (a slot of a provider on leave).
	SwapWorld Swap = "world"
	// SwapPast: a number an argument takes from no record (a new limit) is
	// asked just past the value a number of the case's own record holds
	// (the limit it has): Other/2 is that column's place in the case's
	// table, an even Other asks above it, an odd one below (Past). A rule
	// may forbid only one way (a raise), which the one value the plan
	// grounds may never take.
	SwapPast Swap = "past"
	// SwapDay: a day the world's clock grounds (FromClock: a start date a
	// week ahead), or one written from its format (FromPattern), is asked for on another day the caller names: for an
	// Other below len(DayOffsets), DayOffsets[Other] days from the clock;
	// past them, k = Other-len(DayOffsets) asks the day before (even k) or
	// after (odd k) the date column k/2 of the case's own record holds (a
	// policy's start). A handler may refuse a day by the clock (in the
	// past, too far ahead, a weekend) or by the record (outside its
	// period): a real request, which the caller states.
	SwapDay Swap = "day"
	// SwapAkin: an argument that takes a sibling of the case's row takes
	// instead the Bound.Other-th row of its table most like the case's own
	// row of it (Graph.Akin): the rarest values in common first (a member
	// at the caller's postal code before one of the caller's tier). A
	// rule's check may hold only for a record that shares something with
	// the caller (a household member), which a sibling picked by its
	// parent rarely is.
	SwapAkin Swap = "akin"
)

// DayOffsets are the days from the world's clock SwapDay asks for, by
// Bound.Other: a week and a day back, the clock's own day, each day of
// the week ahead (one of them falls on each weekday), and a month and a
// half and a year ahead.
var DayOffsets = []int{-7, -1, 0, 1, 2, 3, 4, 5, 6, 7, 45, 400}

// maxReach bounds the rows of one table a case reaches.
const maxReach = 40

// Pick returns the row of a table the case uses, or nil when it reaches none.
func (b Bound) Pick(table string) Row {
	rows := b.Rows[table]
	if len(rows) == 0 {
		return nil
	}
	if table == b.Table && b.Target != nil {
		return b.Target
	}
	if b.Caller != nil && len(rows) > 0 && sameRow(rows[0], b.Caller) {
		return rows[0]
	}
	return rows[b.Variant%len(rows)]
}

// PickWith returns the row of a table the case uses among those holding a
// value in column.
func (b Bound) PickWith(table, column string) Row {
	if r := b.Pick(table); r != nil && r[column] != nil {
		return r
	}
	var with []Row
	for _, r := range b.Rows[table] {
		if r[column] != nil {
			with = append(with, r)
		}
	}
	if len(with) == 0 {
		return nil
	}
	return with[b.Variant%len(with)]
}

// Variants is how many distinct row choices the case has: the most rows it
// reaches in any one table other than the target's and the caller's.
func (b Bound) Variants() int {
	n := 1
	for t, rows := range b.Rows {
		if t == b.Table || b.Caller != nil && len(rows) > 0 && sameRow(rows[0], b.Caller) {
			continue
		}
		if len(rows) > n {
			n = len(rows)
		}
	}
	return n
}

func sameRow(a, b Row) bool {
	if a == nil || b == nil || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if Text(b[k]) != Text(v) {
			return false
		}
	}
	return true
}

// Bind returns the rows a case made from a seed row of table reaches.
func (g *Graph) Bind(table string, target Row) Bound { return g.bindAs(table, target, "") }

// bindAs is Bind for the owner the target has through role (OwnerAs).
func (g *Graph) bindAs(table string, target Row, role string) Bound {
	rc := &reaching{g: g, table: table, seen: map[string]map[string]bool{},
		b: Bound{Table: table, Target: target, Caller: g.OwnerAs(table, target, role), Rows: map[string][]Row{}}}
	b := &rc.b
	rc.add(table, target)
	cl := g.C.Caller
	if cl != nil && b.Caller != nil {
		rc.add(cl.Table, b.Caller)
	}
	rc.parents(table, target, 3)
	roots := []item{{table, target}}
	if b.Caller != nil && cl.Table != table {
		roots = append(roots, item{cl.Table, b.Caller})
	}
	// Rows hanging off the target and the caller, two levels down, and
	// their parents (a child's guardians, an order item's variant).
	level := roots
	for depth := 0; depth < 2; depth++ {
		next := rc.children(level)
		for _, it := range next {
			rc.parents(it.table, it.row, 2)
		}
		level = next
	}
	return rc.b
}

// reaching is a case being bound: the rows it reaches so far.
type reaching struct {
	g     *Graph
	table string
	b     Bound
	seen  map[string]map[string]bool // table -> row key
}

// add takes r into the case unless it is there already or its table is
// full, and reports whether it did.
func (rc *reaching) add(t string, r Row) bool {
	if r == nil {
		return false
	}
	k := rowKey(rc.g, t, r)
	if rc.seen[t] == nil {
		rc.seen[t] = map[string]bool{}
	}
	if rc.seen[t][k] || len(rc.b.Rows[t]) >= maxReach {
		return false
	}
	rc.seen[t][k] = true
	rc.b.Rows[t] = append(rc.b.Rows[t], r)
	return true
}

// own reports whether t is the target's or the caller's table: only the
// target and the caller are rows of their own tables (another order of the
// same user, another patient, is not this case).
func (rc *reaching) own(t string) bool {
	cl := rc.g.C.Caller
	return t == rc.table || cl != nil && rc.b.Caller != nil && t == cl.Table
}

// parents adds the rows r refers to, breadth first, depth levels up.
func (rc *reaching) parents(t string, r Row, depth int) {
	type step struct {
		t     string
		r     Row
		depth int
	}
	queue := []step{{t, r, depth}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.depth == 0 {
			continue
		}
		for _, fk := range rc.g.fks[s.t] {
			p := rc.g.Find(fk.RefTable, fk.RefColumn, s.r[fk.Column])
			if p == nil || rc.own(fk.RefTable) {
				continue
			}
			if rc.add(fk.RefTable, p) {
				queue = append(queue, step{fk.RefTable, p, s.depth - 1})
			}
		}
	}
}

// children adds the rows of other tables that refer to a row of level, and
// returns those it added.
func (rc *reaching) children(level []item) []item {
	var next []item
	for _, t := range rc.g.C.Tables {
		if rc.own(t.Name) {
			continue
		}
		for _, fk := range rc.g.fks[t.Name] {
			for _, it := range level {
				if fk.RefTable != it.table {
					continue
				}
				for _, r := range rc.g.Where(t.Name, fk.Column, it.row[fk.RefColumn]) {
					if rc.add(t.Name, r) {
						next = append(next, item{t.Name, r})
					}
				}
			}
		}
	}
	return next
}

// Remap returns the case with every row it reaches replaced by its minted
// copy, where the setup minted one.
func (b Bound) Remap(g *Graph, s *Setup) Bound {
	out := b
	out.Rows = make(map[string][]Row, len(b.Rows))
	out.copied = map[string]map[string]bool{}
	for t, rows := range b.Rows {
		nr := make([]Row, len(rows))
		for i, r := range rows {
			if m, ok := s.Minted[t][rowKey(g, t, r)]; ok {
				nr[i] = m
			} else {
				nr[i] = r
			}
		}
		out.Rows[t] = nr
	}
	for t, m := range s.Minted {
		out.copied[t] = map[string]bool{}
		for k := range m {
			out.copied[t][k] = true
		}
	}
	if s.Target != nil && b.Target != nil {
		if m, ok := s.Minted[b.Table][rowKey(g, b.Table, b.Target)]; ok {
			out.Target = m
		}
	}
	if s.Caller != nil {
		out.Caller = s.Caller
	}
	return out
}

// Case makes the case a scenario is about, for the p-th scenario of a run.
// A target that belongs to someone (an order, a trip), or is the caller, is
// minted with its owner; without callers every target is. A shared record (a
// product, a clinic, a slot) stays as it is; the caller is then a minted copy
// of callerTemplate, when the contract has callers and a template is given.
func (g *Graph) Case(table string, target, callerTemplate Row, p Person) (*Setup, Bound, error) {
	return g.CaseAs(table, target, callerTemplate, p, "")
}

// CaseAs is Case with the target's owner taken through role, one of its
// table's OwnerRoles (the recipient of a parcel rather than its sender):
// that person is minted as the caller, and the other owners stay the seed's.
func (g *Graph) CaseAs(table string, target, callerTemplate Row, p Person, role string) (*Setup, Bound, error) {
	cl := g.C.Caller
	if !g.Shared(table, target) {
		s, err := g.mintAs(table, target, p, role)
		if err != nil {
			return nil, Bound{}, err
		}
		b := g.bindAs(table, target, role).Remap(g, s)
		b.Person = p
		return s, b, nil
	}
	callerTemplate = g.TiedCaller(table, target, callerTemplate)
	b := g.Bind(table, target)
	b.Person = p
	if callerTemplate == nil || cl == nil {
		return &Setup{Target: target, Minted: map[string]map[string]Row{}}, b, nil
	}
	s, err := g.Mint(cl.Table, callerTemplate, p)
	if err != nil {
		return nil, Bound{}, err
	}
	cb := g.Bind(cl.Table, callerTemplate).Remap(g, s)
	for t, rows := range cb.Rows {
		if t == table {
			continue
		}
		b.Rows[t] = append(append([]Row(nil), rows...), b.Rows[t]...)
	}
	b.Caller = s.Caller
	b.copied = cb.copied
	s.Target = target
	return s, b, nil
}

// TiedCaller is the caller a case about target, a shared row of table, is
// played for: template when it is tied to target, else the first caller
// that is, else template. A caller is tied to a row when the caller's own
// row names it (a resident's home) or a table that names both holds a row
// for them, keyed by the two (a member of a council-tax account, through
// the account's members): a shared record reached through such a link is the caller's
// only through it, and a caller taken from elsewhere would act on, and
// read, a record that is someone else's.
func (g *Graph) TiedCaller(table string, target, template Row) Row {
	tied := g.tiedCallers(table, target)
	if len(tied) == 0 || template == nil {
		return template
	}
	cl := g.C.Caller
	for _, r := range tied {
		if Text(r[cl.Key]) == Text(template[cl.Key]) {
			return template
		}
	}
	return tied[0]
}

// tiedCallers are the caller rows tied to target (TiedCaller), in seed
// order, each once.
func (g *Graph) tiedCallers(table string, target Row) []Row {
	cl := g.C.Caller
	if cl == nil || target == nil || table == cl.Table {
		return nil
	}
	var out []Row
	seen := map[string]bool{}
	add := func(r Row) {
		if k := Text(r[cl.Key]); r != nil && !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	for _, fk := range g.fks[cl.Table] {
		if fk.RefTable == table && target[fk.RefColumn] != nil {
			for _, r := range g.Where(cl.Table, fk.Column, target[fk.RefColumn]) {
				add(r)
			}
		}
	}
	for _, t := range g.C.Tables {
		if t.Name == cl.Table || t.Name == table {
			continue
		}
		var toCaller, toTarget []FK
		for _, fk := range g.fks[t.Name] {
			switch {
			case fk.RefTable == cl.Table && fk.RefColumn == cl.Key:
				toCaller = append(toCaller, fk)
			case fk.RefTable == table && target[fk.RefColumn] != nil:
				toTarget = append(toTarget, fk)
			}
		}
		// A link names one of each and is keyed by them: a row naming two
		// callers (a parcel's sender and recipient) is a record of
		// theirs, and one with a key of its own (an appointment on a
		// slot) a record the caller made of the target, not a tie to it.
		if len(toCaller) != 1 || len(toTarget) != 1 || !slices.Contains(t.PrimaryKey, toCaller[0].Column) || !slices.Contains(t.PrimaryKey, toTarget[0].Column) {
			continue
		}
		for _, l := range g.Where(t.Name, toTarget[0].Column, target[toTarget[0].RefColumn]) {
			add(g.Find(cl.Table, cl.Key, l[toCaller[0].Column]))
		}
	}
	return out
}

// Shared reports whether a case about a row of table mints no copy of it:
// a row no caller owns, or, in a world without callers (where every other
// case is a copy), a row of a table no copy can stand beside.
func (g *Graph) Shared(table string, target Row) bool {
	cl := g.C.Caller
	if cl == nil {
		return g.listKeyed(table)
	}
	return table != cl.Table && g.Owner(table, target) == nil
}

// listKeyed reports whether a column that is unique by itself in table is
// held to a list of values the seed rows all hold (a tier table keyed by its
// codes): a copy of any of its rows would need a key the list does not have,
// so it is a catalog every case shares.
func (g *Graph) listKeyed(table string) bool {
	t := g.C.Table(table)
	if t == nil {
		return false
	}
	sets := t.Unique
	if len(t.PrimaryKey) > 0 {
		sets = append([][]string{t.PrimaryKey}, sets...)
	}
	for _, set := range sets {
		if len(set) != 1 {
			continue
		}
		list := listOf(t, set[0])
		if list == nil {
			continue
		}
		all := true
		for _, v := range list {
			all = all && g.Holds(table, set[0], v)
		}
		if all {
			return true
		}
	}
	return false
}

// SeedCase is the case of a seed row without minting anything: the row
// itself, with callerRow as its caller when the row is shared (planning
// rehearses on these).
func (g *Graph) SeedCase(table string, target, callerRow Row) Bound {
	return g.SeedCaseAs(table, target, callerRow, "")
}

// SeedCaseAs is SeedCase with the target's owner taken through role (CaseAs).
func (g *Graph) SeedCaseAs(table string, target, callerRow Row, role string) Bound {
	b := g.bindAs(table, target, role)
	cl := g.C.Caller
	if !g.Shared(table, target) || callerRow == nil || cl == nil {
		return b
	}
	callerRow = g.TiedCaller(table, target, callerRow)
	cb := g.Bind(cl.Table, callerRow)
	for t, rows := range cb.Rows {
		if t == table {
			continue
		}
		b.Rows[t] = append(append([]Row(nil), rows...), b.Rows[t]...)
	}
	b.Caller = callerRow
	return b
}

// sameNamed returns the case's caller or target when it holds a value in a
// column of that name, the caller first.
func (b Bound) sameNamed(col string) Row {
	for _, r := range []Row{b.Caller, b.Target} {
		if r != nil && r[col] != nil {
			return r
		}
	}
	return nil
}

// Outsider is the row of a table (not the caller's own) the case's
// arguments take when b.Outside names it. Of an owned table, a seed row
// that belongs to someone other than the case's caller (nor the person the
// caller was copied from); of a table no one owns, a row under another
// parent than the case's own (another product's variant, where the case
// swaps for a variant of its product). Either way the one most like the
// case's own row of the table, so that whose it is is what differs. nil
// when the world has none.
func (g *Graph) Outsider(table string, b Bound) Row {
	cl := g.C.Caller
	if cl != nil && table == cl.Table {
		// The caller identifies as themselves by its rows, so its
		// arguments are theirs.
		return nil
	}
	if !g.OwnedTable(table) {
		return g.stranger(table, b)
	}
	mine := map[string]bool{}
	for _, r := range b.Rows[table] {
		mine[rowKey(g, table, r)] = true
	}
	notTheirs := func(owner Row) bool {
		k := Text(owner[cl.Key])
		return owner != nil && (b.Caller == nil || k != Text(b.Caller[cl.Key])) && !b.copied[cl.Table][k]
	}
	own, pk := b.Pick(table), g.PK(table)
	var best Row
	bestScore := -1
	for _, r := range g.Rows(table) {
		k := rowKey(g, table, r)
		if mine[k] || b.copied[table][k] || !notTheirs(g.Owner(table, r)) || g.owns(table, r, b.Caller) {
			continue
		}
		score := 0
		for c, v := range own {
			if c != pk && Text(r[c]) == Text(v) {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = r, score
		}
	}
	return best
}

// Sibling reports a swap of a sibling of the case's row (Outsider,
// swapped): what a choice's Outside means to an argument that takes a
// record, as opposed to a fresh value or one of the world's rows.
func (s Swap) Sibling() bool {
	return s == SwapStranger || s == SwapItself || s == SwapHeld || s == SwapAkin
}

// Mores are the factors SwapMore asks for, by Bound.Other. A number an
// argument takes from no column is asked over under the case's own table.
// The last asks for a tenth: less than the world may take (a payment
// under its smallest).
var Mores = []float64{2, 10, 100, 0.1}

// Stated reports an argument the case asks to take a value of its own
// choosing (SwapTaken, SwapUnchanged, SwapMore): the value stands as
// filled, never freshened, since it is what the caller asks for.
func (b Bound) Stated(bd Binding) bool {
	switch {
	case b.Outside == "":
		return false
	case b.Swap == SwapDay:
		// A day the clock grounds, or one written from the argument's
		// format that no column holds (an incident's date), under the
		// case's own table; dayAsked changes only a value that is a day.
		// Never a day a record holds (a date of birth that identifies).
		return b.Outside == b.Table && (bd.How == FromClock || bd.How == FromPattern)
	case (b.Swap == SwapMore || b.Swap == SwapPast) && bd.Table == "":
		// A number no column grounds counts as the case's own record's.
		return b.Outside == b.Table && bd.How != Fresh && bd.How != ByEnum
	}
	return b.Outside == bd.Table &&
		(bd.How == Fresh && (b.Swap == SwapTaken || b.Swap == SwapUnchanged) || (b.Swap == SwapMore || b.Swap == SwapPast) && bd.How != Fresh)
}

// asked is v as the case asks for it: over (SwapMore) or past its
// record's value (SwapPast) when the case states it, v otherwise.
func (g *Graph) asked(bd Binding, v any, typ string, ps map[string]any, b Bound) any {
	if b.Swap == SwapDay {
		if d, ok := g.dayAsked(bd, v, b); ok {
			return d
		}
		return v
	}
	if b.Swap != SwapPast {
		return b.more(bd, v, typ)
	}
	t := g.C.Table(b.Table)
	if !b.Stated(bd) || t == nil || b.Other < 0 || b.Other/2 >= len(t.Columns) {
		return v
	}
	r := b.Pick(b.Table)
	if r == nil {
		return v
	}
	held, ok := asFloat(r[t.Columns[b.Other/2].Name])
	if !ok {
		return v
	}
	if p, ok := Past(held, b.Other%2 == 1, typ, ps); ok {
		return p
	}
	return v
}

// States reports an argument whose value v the case states as its own
// choice (Stated), where under SwapDay only a day is asked another way.
func (b Bound) States(bd Binding, v any) bool {
	if b.Swap == SwapDay {
		s, ok := v.(string)
		_, day := dayOf(s)
		return ok && day && b.Stated(bd)
	}
	return b.Stated(bd)
}

// dayAsked is the day v (a day, or a moment, the clock grounds) is asked
// for under SwapDay, in v's own layout; false when b does not state it or
// the case's record holds no date in the column Other names.
func (g *Graph) dayAsked(bd Binding, v any, b Bound) (any, bool) {
	s, ok := v.(string)
	if !ok || !b.Stated(bd) || b.Other < 0 {
		return nil, false
	}
	layout := "2006-01-02"
	at, err := time.Parse(layout, s)
	if err != nil {
		if at, err = time.Parse(time.RFC3339, s); err != nil {
			return nil, false
		}
		layout = time.RFC3339
	}
	if b.Other < len(DayOffsets) {
		y, m, d := g.C.Clock().Date()
		day := time.Date(y, m, d, at.Hour(), at.Minute(), at.Second(), 0, at.Location())
		return day.AddDate(0, 0, DayOffsets[b.Other]).Format(layout), true
	}
	k := b.Other - len(DayOffsets)
	t, r := g.C.Table(b.Table), b.Pick(b.Table)
	if t == nil || r == nil || k/2 >= len(t.Columns) {
		return nil, false
	}
	held, ok := dayOf(Text(r[t.Columns[k/2].Name]))
	if !ok {
		return nil, false
	}
	hd, err := time.Parse("2006-01-02", held)
	if err != nil {
		return nil, false
	}
	day := time.Date(hd.Year(), hd.Month(), hd.Day(), at.Hour(), at.Minute(), at.Second(), 0, at.Location())
	if k%2 == 0 {
		return day.AddDate(0, 0, -1).Format(layout), true
	}
	return day.AddDate(0, 0, 1).Format(layout), true
}

// Past is a value a fifth (at least one) above held, or below it when
// below, for an argument of JSON type typ whose schema ps may bound it
// (minimum, maximum): clamped into those bounds, and false when they leave
// no value on that side of held. A fifth keeps it near what the record
// holds, where the act's own caps (a card's highest limit) rarely reach.
func Past(held float64, below bool, typ string, ps map[string]any) (any, bool) {
	step := math.Max(math.Abs(held)/5, 1)
	if below {
		step = -step
	}
	x := held + step
	if typ == "integer" {
		x = math.Round(x)
	} else {
		x = math.Round(x*100) / 100
	}
	if lo, ok := asFloat(ps["minimum"]); ok && x < lo {
		x = lo
	}
	if hi, ok := asFloat(ps["maximum"]); ok && x > hi {
		x = hi
	}
	if lo, ok := asFloat(ps["exclusiveMinimum"]); ok && x <= lo || below && x >= held || !below && x <= held {
		return nil, false
	}
	if hi, ok := asFloat(ps["exclusiveMaximum"]); ok && x >= hi {
		return nil, false
	}
	if typ == "integer" {
		return int64(x), true
	}
	return x, true
}

// more is v asked for Mores[b.Other] times over, for an argument of JSON
// type typ under SwapMore; v as it is otherwise.
func (b Bound) more(bd Binding, v any, typ string) any {
	if !b.Stated(bd) || b.Swap != SwapMore || b.Other < 0 || b.Other >= len(Mores) {
		return v
	}
	f, ok := asFloat(v)
	if !ok {
		return v
	}
	switch typ {
	case "integer":
		return int64(f * Mores[b.Other])
	case "number":
		return math.Round(f*Mores[b.Other]*100) / 100
	}
	return v
}

// taken is the value a fresh argument takes under b.Swap (SwapTaken or
// SwapUnchanged): the case's own row's, or the first other row's holding
// one; nil when there is none.
func (g *Graph) taken(bd Binding, b Bound) any {
	own := b.PickWith(bd.Table, bd.Column)
	if b.Swap == SwapUnchanged {
		if own == nil {
			return nil
		}
		return own[bd.Column]
	}
	for _, r := range g.Rows(bd.Table) {
		if r[bd.Column] != nil && (own == nil || Text(r[bd.Column]) != Text(own[bd.Column])) && !b.copied[bd.Table][rowKey(g, bd.Table, r)] {
			return r[bd.Column]
		}
	}
	return nil
}

// swapped is the row an argument that takes a sibling of the case's row of
// table names instead, by b.Swap; nil when the case has none.
func (g *Graph) swapped(table string, b Bound) Row {
	switch b.Swap {
	case SwapItself:
		return b.Pick(table)
	case SwapAkin:
		return g.Akin(table, b)
	case SwapHeld:
		own := b.Pick(table)
		for _, r := range b.Rows[table] {
			if own != nil && rowKey(g, table, r) != rowKey(g, table, own) {
				return r
			}
		}
		return nil
	}
	return g.Outsider(table, b)
}

// akinRows bounds the rows Graph.Akin ranks a case's row's likeness to.
const akinRows = 8

// Akin is the b.Other-th (mod the ranked rows) row of table most like the
// case's own row of it, nil when the case has none or the table holds no
// other: each value the two share counts the more, the fewer rows of the
// table hold it (a postal code two accounts share outweighs a tier twenty
// do), on a tie the seed's order. Only values a minted copy keeps count
// (not a unique column, nor a person's name, email or phone, which minting
// gives the copy anew): the ranking is the same for a seed case and for
// its minted copy. Never the case's own row, nor one it was copied from.
func (g *Graph) Akin(table string, b Bound) Row {
	ranked := g.akinRanked(table, b)
	if len(ranked) == 0 {
		return nil
	}
	return ranked[max(b.Other, 0)%len(ranked)]
}

// AkinRows is how many rows Graph.Akin ranks for case b (at most akinRows):
// the choices SwapAkin has.
func (g *Graph) AkinRows(table string, b Bound) int { return len(g.akinRanked(table, b)) }

func (g *Graph) akinRanked(table string, b Bound) []Row {
	t, own, pk := g.C.Table(table), b.Pick(table), g.PK(table)
	if t == nil || own == nil || pk == "" {
		return nil
	}
	type scored struct {
		r     Row
		score float64
	}
	var cols []string
	for _, c := range t.Columns {
		if c.Name != pk && own[c.Name] != nil && !t.IsUnique(c.Name) && g.renamed(table, c.Name) == "" {
			cols = append(cols, c.Name)
		}
	}
	held := map[string]float64{} // column and value -> how many rows hold it
	for _, r := range g.Rows(table) {
		for _, c := range cols {
			if r[c] != nil {
				held[c+"\x00"+Text(r[c])]++
			}
		}
	}
	var out []scored
	for _, r := range g.Rows(table) {
		k := rowKey(g, table, r)
		if Text(r[pk]) == Text(own[pk]) || b.copied[table][k] {
			continue
		}
		score := 0.0
		for _, c := range cols {
			if r[c] != nil && Text(r[c]) == Text(own[c]) {
				score += 1 / held[c+"\x00"+Text(r[c])]
			}
		}
		if score > 0 {
			out = append(out, scored{r, score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	var rows []Row
	for _, s := range out[:min(len(out), akinRows)] {
		rows = append(rows, s.r)
	}
	return rows
}

// stranger is the row of a table no one owns most like the case's own row
// of it, under another parent: its first foreign key the case's row fills
// holds another value. nil when the case reaches no row of the table, the
// table hangs off nothing, or every row shares the parent.
func (g *Graph) stranger(table string, b Bound) Row {
	own, pk := b.Pick(table), g.PK(table)
	if own == nil {
		return nil
	}
	for _, fk := range g.fks[table] {
		parent := own[fk.Column]
		if parent == nil {
			continue
		}
		var best Row
		bestScore := -1
		for _, r := range g.Rows(table) {
			if r[fk.Column] == nil || Text(r[fk.Column]) == Text(parent) {
				continue
			}
			score := 0
			for c, v := range own {
				if c != pk && c != fk.Column && Text(r[c]) == Text(v) {
					score++
				}
			}
			if score > bestScore {
				best, bestScore = r, score
			}
		}
		return best
	}
	return nil
}

// neighbourRows bounds Graph.Neighbours.
const neighbourRows = 16

// Neighbours are the seed rows of a table no one owns (by their place in
// the seed) that differ from own in one trait each: for each low-cardinality
// column of the table or of a parent it references (a slot's mode, its
// provider's status) and each value own does not hold, the row holding that
// value that is otherwise most like own (the most traits and references in
// common, then the longest common prefixes of its other values: the
// nearest date). What the world says to each is what that one difference
// decides, where a row picked for variety would be refused first for
// something else (a slot in the past). At most 16, own columns first.
func (g *Graph) Neighbours(table string, own Row) []int {
	t := g.C.Table(table)
	rows := g.Rows(table)
	if t == nil || own == nil {
		return nil
	}
	type trait struct{ fk, col string } // fk "" for the table's own column
	traitOf := func(r Row, tr trait) (string, bool) {
		if tr.fk == "" {
			return Text(r[tr.col]), r[tr.col] != nil
		}
		fk, _ := g.fkOf(table, tr.fk)
		p := g.Find(fk.RefTable, fk.RefColumn, r[fk.Column])
		if p == nil || p[tr.col] == nil {
			return "", false
		}
		return Text(p[tr.col]), true
	}
	var traits []trait
	low := g.LowCardinality(table, 8)
	for _, c := range t.Columns {
		if _, ok := low[c.Name]; ok {
			traits = append(traits, trait{col: c.Name})
		}
	}
	for _, fk := range g.fks[table] {
		pl := g.LowCardinality(fk.RefTable, 8)
		if pt := g.C.Table(fk.RefTable); pt != nil {
			for _, c := range pt.Columns {
				if _, ok := pl[c.Name]; ok {
					traits = append(traits, trait{fk: fk.Column, col: c.Name})
				}
			}
		}
	}
	values := make([][]string, len(rows)) // trait values by row
	for i, r := range rows {
		values[i] = make([]string, len(traits))
		for j, tr := range traits {
			values[i][j], _ = traitOf(r, tr)
		}
	}
	mine := make([]string, len(traits))
	for j, tr := range traits {
		mine[j], _ = traitOf(own, tr)
	}
	pk := g.PK(table)
	isLow := map[string]bool{}
	for c := range low {
		isLow[c] = true
	}
	like := func(i int) (int, int) {
		same, near := 0, 0
		for j := range traits {
			if values[i][j] == mine[j] {
				same++
			}
		}
		for _, fk := range g.fks[table] {
			if Text(rows[i][fk.Column]) == Text(own[fk.Column]) {
				same++
			}
		}
		for c, v := range own {
			if c != pk && !isLow[c] {
				a, b := Text(rows[i][c]), Text(v)
				n := 0
				for n < len(a) && n < len(b) && a[n] == b[n] {
					n++
				}
				near += n
			}
		}
		return same, near
	}
	ownKey := rowKey(g, table, own)
	picked := map[int]bool{}
	var out []int
	for j := range traits {
		best, bestSame, bestNear := map[string]int{}, map[string]int{}, map[string]int{}
		for i := range rows {
			v := values[i][j]
			if v == mine[j] || v == "" || rowKey(g, table, rows[i]) == ownKey {
				continue
			}
			same, near := like(i)
			if _, ok := best[v]; !ok || same > bestSame[v] || same == bestSame[v] && near > bestNear[v] {
				best[v], bestSame[v], bestNear[v] = i, same, near
			}
		}
		for _, v := range slices.Sorted(maps.Keys(best)) {
			if i := best[v]; !picked[i] && len(out) < neighbourRows {
				picked[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}

// world is the row of table a case takes under SwapWorld: the seed's
// Other-th, or nil.
func (g *Graph) world(table string, b Bound) Row {
	rows := g.Rows(table)
	if b.Swap != SwapWorld || b.Outside != table || b.Other < 0 || b.Other >= len(rows) {
		return nil
	}
	return rows[b.Other]
}

// DayParam reports an argument of t whose schema takes a calendar day or a
// moment on one.
func DayParam(t *contract.Tool, p string) bool {
	ps := paramSchema(t, p)
	return isDay(ps) || isMoment(ps)
}
