package ground

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
)

// Fill chooses arguments for a tool call of a case, as its bindings say: a
// bound argument takes the value of the row the case reaches (or a sibling
// of it, or a shared row rehearsal found), a fresh one takes a value no one
// else has, an enum rotates with the case's ordinal. Optional arguments are
// filled only when they name the case's records or their binding asks. The
// boolean is false when a required argument could not be filled.
func (g *Graph) Fill(t *contract.Tool, b Bound, bs Bindings) (map[string]any, bool) {
	args := map[string]any{}
	req := map[string]bool{}
	for _, r := range t.Required() {
		req[r] = true
	}
	complete := true
	for _, name := range t.ParamNames() {
		bd, ok := bs.Of(t.Name, name)
		if !ok {
			bd, _ = g.Declared().Of(t.Name, name)
		}
		if !req[name] && !bd.Fill && !(bd.Source == FromCase && (bd.How == ByXRef || bd.How == ByName)) {
			continue // optional arguments are the caller's to give
		}
		v, ok := g.Value(t, name, bd, b)
		if !ok {
			if req[name] {
				complete = false
			}
			continue
		}
		args[name] = v
	}
	return args, complete
}

// FillAll is Fill with every optional argument too (probes read them all).
func (g *Graph) FillAll(t *contract.Tool, b Bound, bs Bindings) (map[string]any, bool) {
	args, ok := g.Fill(t, b, bs)
	for _, name := range t.ParamNames() {
		if _, has := args[name]; has {
			continue
		}
		bd, found := bs.Of(t.Name, name)
		if !found {
			bd, _ = g.Declared().Of(t.Name, name)
		}
		if v, ok := g.Value(t, name, bd, b); ok {
			args[name] = v
		}
	}
	return args, ok
}

// Value is one argument's value for a case under its binding.
func (g *Graph) Value(t *contract.Tool, name string, bd Binding, b Bound) (any, bool) {
	ps := paramSchema(t, name)
	typ, _ := ps["type"].(string)
	if items, ok := ps["items"].(map[string]any); ok && typ == "array" && items["type"] == "object" {
		return g.fillObjects(items, b)
	}
	if v, ok := g.kept(t, name, bd, b); ok {
		return v, true
	}
	var v any
	switch {
	case bd.How == FromClock && len(bd.Picks) > 0:
		v = bd.Picks[0]
	case bd.How == ByEnum || bd.How != Fresh && bd.Table == "" && len(t.Enum(name)) > 0:
		e := t.Enum(name)
		if bd.How == ByEnum && len(bd.Picks) > 0 {
			e = bd.Picks // the plan settled the choice
		}
		if len(e) == 0 {
			return nil, false
		}
		if typ == "array" {
			return []any{e[b.Ordinal%len(e)]}, true
		}
		return e[b.Ordinal%len(e)], true
	case bd.How == Fresh && b.Stated(bd):
		// Not a fresh value, as the case asks.
		v = g.taken(bd, b)
	case bd.How == Fresh:
		fv, err := g.freshArg(bd, b)
		if err != nil {
			return nil, false
		}
		v = fv
	case bd.Table != "" && bd.How != Unbound:
		switch {
		case b.Swap == SwapWorld && b.Outside == bd.Table:
			// One of the world's records, as the case asks.
			if r := g.world(bd.Table, b); r != nil {
				v = r[bd.Column]
			}
		case bd.Source == FromShared:
			if len(bd.Picks) == 0 {
				return nil, false
			}
			v = bd.Picks[b.Ordinal%len(bd.Picks)]
		case bd.Source == FromSibling:
			r := g.related(bd.Table, b)
			if b.Outside == bd.Table && b.Swap.Sibling() {
				// Not a sibling, as the case asks.
				r = g.swapped(bd.Table, b)
			}
			if r != nil {
				v = r[bd.Column]
			}
		default:
			key := g.C.Table(bd.Table).IsUnique(bd.Column)
			if b.Outside != "" && b.Outside == bd.Table && b.Swap == SwapStranger && g.OwnedTable(bd.Table) {
				// A record that is not the caller's, as the case asks.
				if r := g.Outsider(bd.Table, b); r != nil {
					v = r[bd.Column]
				}
			} else if r := b.PickWith(bd.Table, bd.Column); r != nil {
				v = r[bd.Column]
			} else if key && !slices.Contains(t.Required(), name) {
				// An optional record the case has none of (an adult's
				// guardian) is left out, not taken from someone else.
				return nil, false
			} else if r := b.sameNamed(bd.Column); r != nil && !g.ownKey(b, r, bd) {
				// The case has no row of the table, but its own record or
				// caller holds a column of that name (a customer's own
				// phone_number where the case has no line). Never the
				// row's own key: a patient's id is no guardian's.
				v = r[bd.Column]
			} else if r := g.related(bd.Table, b); r != nil {
				// Not a row the case reaches: one of the world's.
				v = r[bd.Column]
			}
			if v == nil && !g.C.Table(bd.Table).IsUnique(bd.Column) {
				// The case's row holds none (a rating not given yet): a
				// value the column holds elsewhere.
				v = g.valueOf(bd.Table, bd.Column, b.Ordinal)
			}
		}
		if v == nil {
			return nil, false
		}
	default:
		v, ok := g.guess(name, typ, ps, b)
		return g.asked(bd, v, typ, ps, b), ok
	}
	return g.asked(bd, coerce(v, typ, ps), typ, ps, b), true
}

// kept is, for an enum argument the use case asks no change of
// (Binding.Keep), the value the case's target holds in the column of the
// argument's name, when the enum lists it.
func (g *Graph) kept(t *contract.Tool, name string, bd Binding, b Bound) (any, bool) {
	if !bd.Keep || b.Target == nil || b.Target[name] == nil {
		return nil, false
	}
	for _, e := range t.Enum(name) {
		if Text(e) == Text(b.Target[name]) {
			return e, true
		}
	}
	return nil, false
}

// ownKey reports whether r (the case's caller or target) holds bd's column
// as its own table's primary key, while bd names another table's.
func (g *Graph) ownKey(b Bound, r Row, bd Binding) bool {
	table := b.Table
	if cl := g.C.Caller; cl != nil && b.Caller != nil && rowKey(g, cl.Table, r) == rowKey(g, cl.Table, b.Caller) {
		table = cl.Table
	}
	return table != bd.Table && g.PK(table) == bd.Column
}

// coerce fits a column's value to the argument's JSON type.
func coerce(v any, typ string, ps map[string]any) any {
	switch typ {
	case "array":
		if xs, ok := v.([]any); ok {
			return xs
		}
		items, _ := ps["items"].(map[string]any)
		it, _ := items["type"].(string)
		return []any{coerce(v, it, items)}
	case "string":
		s, ok := v.(string)
		if !ok {
			s = Text(v)
		}
		if d, isMoment := dayOf(s); isMoment && len(s) > 10 && isDay(ps) {
			return d
		}
		if t, ok := endOf(s, ps); ok {
			return t
		}
		return s
	case "integer":
		if n, ok := asInt(v); ok {
			return n
		}
	}
	return v
}

// freshArg is a fresh value for an argument bound Fresh: a person's new email
// or phone, or a value in the column's shape no one else has.
func (g *Graph) freshArg(bd Binding, b Bound) (any, error) {
	p := b.Person
	switch g.renamed(bd.Table, bd.Column) {
	case "email":
		domain := "mail.com"
		if tmpl := g.template(bd, b); tmpl != nil {
			if _, d, ok := strings.Cut(Text(tmpl), "@"); ok {
				domain = d
			}
		}
		first, last := p.First, p.Last
		if first == "" {
			first, last = "new", "address"
		}
		return fmt.Sprintf("%s.%s.%d@%s", slug(first), slug(last), p.Number, domain), nil
	}
	tmpl := g.template(bd, b)
	if tmpl == nil {
		return nil, fmt.Errorf("ground: no value of %s to shape a fresh one on", bd.Ref())
	}
	return g.Fresh(bd.Table, bd.Column, tmpl, p.FreshSlot(bd.Table))
}

// template is a value of the binding's column to shape a fresh one on: the
// case's own, else the seed's first.
func (g *Graph) template(bd Binding, b Bound) any {
	if r := b.PickWith(bd.Table, bd.Column); r != nil {
		return r[bd.Column]
	}
	for _, r := range g.Rows(bd.Table) {
		if r[bd.Column] != nil {
			return r[bd.Column]
		}
	}
	return nil
}

// guess fills an argument no column grounds: a same-named column of the
// case's rows, then of the seed, then words or a plain value of its type.
func (g *Graph) guess(name, typ string, ps map[string]any, b Bound) (any, bool) {
	for _, r := range []Row{b.Caller, b.Target} {
		if r != nil && r[name] != nil {
			return coerce(r[name], typ, ps), true
		}
	}
	for _, tb := range g.C.Tables {
		for _, r := range b.Rows[tb.Name] {
			if r[name] != nil {
				return coerce(r[name], typ, ps), true
			}
		}
	}
	switch typ {
	case "string", "":
		today := g.today()
		pat, _ := ps["pattern"].(string)
		switch f, _ := ps["format"].(string); {
		case f == "date":
			return today, true
		case f == "email":
			v, err := g.freshArg(Binding{Column: "email"}, b)
			return v, err == nil
		case f != "":
			return nil, false
		case pat != "":
			// A date the pattern takes is today; anything else is
			// written from the pattern itself.
			if ok, _ := regexp.MatchString(pat, today); ok {
				return today, true
			}
			if v := fromPattern(pat, b.Ordinal); v != "" {
				return v, true
			}
			return nil, false
		}
		if d, ok := ps["description"].(string); ok && d != "" {
			return "As the caller asked: " + strings.TrimSuffix(d, "."), true
		}
		return "As the caller asked: " + strings.ReplaceAll(name, "_", " "), true
	case "integer":
		if m, ok := asInt(ps["minimum"]); ok {
			return m, true
		}
		return int64(1), true
	case "number":
		if m, ok := ps["minimum"].(float64); ok {
			return m, true
		}
		return float64(1), true
	case "boolean":
		return true, true
	}
	return nil, false
}

// fillObjects fills an array of objects ({flight_number, date} items) with
// one object per row of a table whose columns hold every required property:
// first the case's rows that hang off its target (the flights of the
// reservation), then the case's rows of any such table in schema order, all
// sharing the first row's parents (one reservation's flights, not two).
// When the case has none, one related seed row stands in.
func (g *Graph) fillObjects(items map[string]any, b Bound) (any, bool) {
	props, _ := items["properties"].(map[string]any)
	need := objectKeys(items, props)
	if len(need) == 0 {
		return nil, false
	}
	tables := g.tablesWith(need)
	objects := func(tb contract.Table, rows []Row) []any {
		out := make([]any, len(rows))
		for i, r := range rows {
			out[i] = rowObject(tb, r, props)
		}
		return out
	}
	if tb, rows := g.targetChildren(tables, b); len(rows) > 0 {
		return objects(tb, rows), true
	}
	if tb, rows, ok := g.caseSiblings(tables, b); ok {
		return objects(tb, rows), true
	}
	for _, tb := range tables {
		if r := g.related(tb.Name, b); r != nil {
			return []any{rowObject(tb, r, props)}, true
		}
	}
	return nil, false
}

// objectKeys are the keys an object of items must have: its required
// properties, or else all of them.
func objectKeys(items, props map[string]any) []string {
	var need []string
	if req, ok := items["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				need = append(need, s)
			}
		}
	}
	if len(need) == 0 {
		for k := range props {
			need = append(need, k)
		}
		sort.Strings(need)
	}
	return need
}

// tablesWith are the tables that have a column of every name in need.
func (g *Graph) tablesWith(need []string) []contract.Table {
	var tables []contract.Table
	for _, tb := range g.C.Tables {
		covers := true
		for _, n := range need {
			if tb.Column(n) == nil {
				covers = false
				break
			}
		}
		if covers {
			tables = append(tables, tb)
		}
	}
	return tables
}

// rowObject is the object of props a row holds.
func rowObject(tb contract.Table, r Row, props map[string]any) map[string]any {
	o := map[string]any{}
	for k := range props {
		if tb.Column(k) != nil && r[k] != nil {
			o[k] = r[k]
		}
	}
	return o
}

// targetChildren are the case's rows of the first of tables that hang off
// the case's target.
func (g *Graph) targetChildren(tables []contract.Table, b Bound) (contract.Table, []Row) {
	if b.Target == nil {
		return contract.Table{}, nil
	}
	for _, tb := range tables {
		for _, fk := range g.fks[tb.Name] {
			if fk.RefTable != b.Table || fk.RefTable == tb.Name {
				continue
			}
			var rows []Row
			for _, r := range b.Rows[tb.Name] {
				if Text(r[fk.Column]) == Text(b.Target[fk.RefColumn]) {
					rows = append(rows, r)
				}
			}
			if len(rows) > 0 {
				return tb, rows
			}
		}
	}
	return contract.Table{}, nil
}

// caseSiblings are, for the first of tables the case has rows of, the rows
// that share every foreign key with its first one.
func (g *Graph) caseSiblings(tables []contract.Table, b Bound) (contract.Table, []Row, bool) {
	for _, tb := range tables {
		rows := b.Rows[tb.Name]
		if len(rows) == 0 {
			continue
		}
		var siblings []Row
		for _, r := range rows {
			same := true
			for _, fk := range g.fks[tb.Name] {
				if Text(r[fk.Column]) != Text(rows[0][fk.Column]) {
					same = false
					break
				}
			}
			if same {
				siblings = append(siblings, r)
			}
		}
		return tb, siblings, true
	}
	return contract.Table{}, nil, false
}

// Renew makes a state-changing call's lists of objects name a change: a
// list that is the case's own rows (a reservation's passengers) gets its
// last object from another table that holds the same fields and that the
// case reaches (one of the caller's saved passengers), so the act does not
// set what is already there. Where no row the case reaches differs, the
// last object is replaced by another of the world's rows the list's objects
// are (Graph.replacement: the same flight on another day), so an act that
// replaces a record's references moves it to another existing one. A list
// the use case asks no change of (Binding.Keep in bs) takes no row of the
// world's; an enum it does ask a change of, where it keeps another argument
// of the act (a cabin change keeps the flights), takes another of its values
// than the target holds in the column of its name (Graph.changed). Other
// arguments are left as they are.
func (g *Graph) Renew(t *contract.Tool, args map[string]any, b Bound, bs Bindings) map[string]any {
	out, copied := args, false
	set := func(name string, v any) {
		if !copied {
			out, copied = make(map[string]any, len(args)), true
			for k, v := range args {
				out[k] = v
			}
		}
		out[name] = v
	}
	for _, name := range t.ParamNames() {
		if v, ok := g.changed(t, name, args[name], b, bs); ok {
			set(name, v)
			continue
		}
		ps := paramSchema(t, name)
		items, ok := ps["items"].(map[string]any)
		if !ok || ps["type"] != "array" || items["type"] != "object" {
			continue
		}
		list, ok := args[name].([]any)
		if !ok || len(list) == 0 {
			continue
		}
		bd, _ := bs.Of(t.Name, name)
		props, _ := items["properties"].(map[string]any)
		nl, ok := g.renewed(g.coveringTables(items), list, props, b, !bd.Keep)
		if !ok {
			continue
		}
		set(name, nl)
	}
	return out
}

// changed is, for an enum argument v of the act that holds the value the
// case's target holds in the column of its name, another of the enum's
// values (the case's ordinal choosing), where the use case keeps another
// argument of the act (Binding.Keep) and so is about this one: an act that
// leaves the value it is about as it was changes nothing. An argument the
// plan settled (Binding.Picks) or kept is left as it is.
func (g *Graph) changed(t *contract.Tool, name string, v any, b Bound, bs Bindings) (any, bool) {
	bd, ok := bs.Of(t.Name, name)
	if !ok || bd.Keep || len(bd.Picks) > 0 || v == nil || b.Target == nil || b.Target[name] == nil ||
		Text(v) != Text(b.Target[name]) || !slices.ContainsFunc(bs.For(t.Name), func(o Binding) bool { return o.Keep }) {
		return nil, false
	}
	var other []any
	for _, e := range t.Enum(name) {
		if Text(e) != Text(v) {
			other = append(other, e)
		}
	}
	if len(other) == 0 {
		return nil, false
	}
	k := b.Ordinal
	if k < 0 {
		k = -k
	}
	return other[k%len(other)], true
}

// renewed is list with its last object replaced by one of another row:
// one the case reaches of the first of tables that gives a new object, else,
// where world says so, one of the world's (Graph.replacement).
func (g *Graph) renewed(tables []contract.Table, list []any, props map[string]any, b Bound, world bool) ([]any, bool) {
	last, _ := list[len(list)-1].(map[string]any)
	with := func(pick Row) ([]any, bool) {
		o := map[string]any{}
		for k := range props {
			if pick[k] != nil {
				o[k] = pick[k]
			} else if last[k] != nil {
				o[k] = last[k]
			}
		}
		for _, x := range list[:len(list)-1] {
			if m, _ := x.(map[string]any); Text(m) == Text(o) {
				return nil, false
			}
		}
		return append(append([]any{}, list[:len(list)-1]...), o), true
	}
	for _, tb := range tables {
		for _, r := range b.Rows[tb.Name] {
			differs := false
			for k := range props {
				if r[k] != nil && Text(r[k]) != Text(last[k]) {
					differs = true
				}
			}
			if differs {
				if nl, ok := with(r); ok {
					return nl, true
				}
				break
			}
		}
	}
	for _, tb := range tables {
		if !world {
			break
		}
		if pick := g.replacement(tb, list, props, b); pick != nil {
			if nl, ok := with(pick); ok {
				return nl, true
			}
		}
	}
	return nil, false
}

// replacement is a row of the world's table tb to put in place of the row
// the last object of list is (a flight on a day), or nil. It is a sibling
// of that row (every foreign key the same: the same flight, another day),
// not one of someone's records (tb is no owned table), named by no object
// of the list, that keeps the list's order (a segment later than the one
// before it stays later), of the row's own kind where some are (the same
// value in each of tb's low-cardinality columns: a flight still on sale),
// the case's ordinal choosing among several.
func (g *Graph) replacement(tb contract.Table, list []any, props map[string]any, b Bound) Row {
	if g.OwnedTable(tb.Name) {
		return nil
	}
	last, _ := list[len(list)-1].(map[string]any)
	var fields []string
	for k := range props {
		if tb.Column(k) != nil && last[k] != nil {
			fields = append(fields, k)
		}
	}
	sort.Strings(fields)
	if len(fields) == 0 {
		return nil
	}
	is := func(r Row, o map[string]any) bool {
		for _, k := range fields {
			if Text(r[k]) != Text(o[k]) {
				return false
			}
		}
		return true
	}
	var cur Row
	for _, r := range g.Rows(tb.Name) {
		if is(r, last) {
			cur = r
			break
		}
	}
	if cur == nil {
		return nil
	}
	var prev map[string]any
	if len(list) > 1 {
		prev, _ = list[len(list)-2].(map[string]any)
	}
	var fit []Row
next:
	for _, r := range g.Rows(tb.Name) {
		for _, fk := range g.fks[tb.Name] {
			if Text(r[fk.Column]) != Text(cur[fk.Column]) {
				continue next
			}
		}
		for _, x := range list {
			if m, _ := x.(map[string]any); is(r, m) {
				continue next
			}
		}
		for _, k := range fields {
			if prev == nil || prev[k] == nil {
				continue
			}
			// The list's order is kept: a later leg stays later, one on
			// the same day may stay on it.
			switch o := order(prev[k], last[k]); {
			case o < 0 && order(r[k], prev[k]) <= 0, o == 0 && order(r[k], prev[k]) < 0:
				continue next
			}
		}
		fit = append(fit, r)
	}
	var alike []Row
	low := g.LowCardinality(tb.Name, 8)
	for _, r := range fit {
		same := true
		for col := range low {
			same = same && Text(r[col]) == Text(cur[col])
		}
		if same {
			alike = append(alike, r)
		}
	}
	if len(alike) > 0 {
		fit = alike
	}
	if len(fit) == 0 {
		return nil
	}
	k := b.Ordinal
	if k < 0 {
		k = -k
	}
	return fit[k%len(fit)]
}

// WorldTables are the tables a list argument's objects may be renewed from
// by the world's rows (Graph.replacement): those holding every required
// field of its objects that no caller owns.
func (g *Graph) WorldTables(t *contract.Tool, param string) []string {
	items, _ := paramSchema(t, param)["items"].(map[string]any)
	var out []string
	for _, tb := range g.coveringTables(items) {
		if !g.OwnedTable(tb.Name) {
			out = append(out, tb.Name)
		}
	}
	return out
}

// Names reports whether a tool's own handler (not the files it loads)
// names a table: a search of that table's rows.
func (g *Graph) Names(t *contract.Tool, table string) bool {
	return identWords(g.C.Sources[t.Handler])[strings.ToLower(table)]
}

// order compares two values, as numbers where both are, else as text.
func order(a, b any) int {
	x, okA := asFloat(a)
	y, okB := asFloat(b)
	if okA && okB {
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	return strings.Compare(Text(a), Text(b))
}

// coveringTables are the tables holding every required field of a list's
// objects, in schema order.
func (g *Graph) coveringTables(items map[string]any) []contract.Table {
	var need []string
	if req, ok := items["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				need = append(need, s)
			}
		}
	}
	var out []contract.Table
	for _, tb := range g.C.Tables {
		covers := len(need) > 0
		for _, n := range need {
			covers = covers && tb.Column(n) != nil
		}
		if covers {
			out = append(out, tb)
		}
	}
	return out
}

// related finds a row of table tb next to the case: a sibling (same parent,
// another row) of the row of tb the case uses, so that a "new" choice
// differs from the current one: among the case's own rows first (another
// card of the same caller), then the seed's (another variant of the same
// product), the case's ordinal choosing among several. Of a table no parent
// groups (a catalog of plans), every other row is a sibling. Without a row
// of tb in the case, a seed row in turn.
func (g *Graph) related(tb string, b Bound) Row {
	pk := g.PK(tb)
	cur := b.Pick(tb)
	if cur == nil || pk == "" {
		rows := g.Rows(tb)
		if len(rows) > 0 {
			return rows[b.Ordinal%len(rows)]
		}
		return nil
	}
	if len(g.fks[tb]) == 0 {
		var others []Row
		for _, r := range g.Rows(tb) {
			if Text(r[pk]) != Text(cur[pk]) && !b.copied[tb][rowKey(g, tb, r)] {
				others = append(others, r)
			}
		}
		if len(others) > 0 {
			return others[b.Ordinal%len(others)]
		}
		return cur
	}
	var sibs []Row
	for _, fk := range g.fks[tb] {
		if cur[fk.Column] == nil {
			continue
		}
		for _, r := range b.Rows[tb] {
			if Text(r[fk.Column]) == Text(cur[fk.Column]) && Text(r[pk]) != Text(cur[pk]) {
				sibs = append(sibs, r)
			}
		}
		if len(sibs) == 0 {
			for _, r := range g.Where(tb, fk.Column, cur[fk.Column]) {
				if Text(r[pk]) != Text(cur[pk]) && !b.copied[tb][rowKey(g, tb, r)] {
					sibs = append(sibs, r)
				}
			}
		}
		if len(sibs) > 0 {
			return sibs[b.Ordinal%len(sibs)]
		}
	}
	return cur
}

// valueOf is the n-th distinct value a column holds in the seed (in turn).
func (g *Graph) valueOf(table, col string, n int) any {
	var vals []any
	seen := map[string]bool{}
	for _, r := range g.Rows(table) {
		if v := r[col]; v != nil && !seen[Text(v)] {
			seen[Text(v)] = true
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return nil
	}
	return vals[n%len(vals)]
}

// today is the world's date (the contract's clock), as YYYY-MM-DD.
func (g *Graph) today() string { return g.C.Clock().Format("2006-01-02") }
