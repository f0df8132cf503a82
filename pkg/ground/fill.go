package ground

import (
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
)

// Bound is what a case is about: rows by table (the target first), and the
// caller row. Arguments are filled from these before anything else.
type Bound struct {
	Table  string // the target's table
	Target Row
	Caller Row
	// Rows holds every row the case owns (minted or seed), by table, in a stable order.
	Rows map[string][]Row
	// Ordinal rotates choices (enum values) between sibling cases.
	Ordinal int
}

// Bind returns the rows of a case made from a target row of the seed, without minting.
func (g *Graph) Bind(table string, target Row) Bound {
	b := Bound{Table: table, Target: target, Caller: g.Owner(table, target), Rows: map[string][]Row{}}
	b.Rows[table] = []Row{target}
	if cl := g.C.Caller; cl != nil && b.Caller != nil && cl.Table != table {
		b.Rows[cl.Table] = []Row{b.Caller}
	}
	// Rows hanging off the target and the caller, one level down.
	for _, t := range g.C.Tables {
		for _, fk := range g.fks[t.Name] {
			for _, parent := range b.Rows[fk.RefTable] {
				if fk.RefTable != table && (g.C.Caller == nil || fk.RefTable != g.C.Caller.Table) {
					continue
				}
				if t.Name == table {
					continue
				}
				b.Rows[t.Name] = append(b.Rows[t.Name], g.Where(t.Name, fk.Column, parent[fk.RefColumn])...)
			}
		}
	}
	return b
}

// BindMinted returns the rows of a case from a minted setup.
func (g *Graph) BindMinted(table string, s *Setup, ordinal int) Bound {
	b := Bound{Table: table, Target: s.Target, Caller: s.Caller, Rows: map[string][]Row{}, Ordinal: ordinal}
	for _, t := range g.C.Tables {
		m := s.Minted[t.Name]
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.Rows[t.Name] = append(b.Rows[t.Name], m[k])
		}
	}
	if s.Target != nil {
		// The target first among its table's rows.
		rows := []Row{s.Target}
		for _, r := range b.Rows[table] {
			if rowKey(g, table, r) != rowKey(g, table, s.Target) {
				rows = append(rows, r)
			}
		}
		b.Rows[table] = rows
	}
	return b
}

// ParamType returns the JSON Schema type of a tool parameter ("" when unsaid).
func ParamType(t *contract.Tool, name string) string {
	p := paramSchema(t, name)
	if s, ok := p["type"].(string); ok {
		return s
	}
	return ""
}

func paramSchema(t *contract.Tool, name string) map[string]any {
	props, _ := t.Params["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return p
}

// ParamNames returns a tool's parameter names in a stable order: required
// first as declared, then the rest sorted.
func ParamNames(t *contract.Tool) []string {
	props, _ := t.Params["properties"].(map[string]any)
	seen := map[string]bool{}
	var out []string
	if req, ok := t.Params["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok && !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	var rest []string
	for k := range props {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// Required returns the required parameter names of a tool.
func Required(t *contract.Tool) map[string]bool {
	out := map[string]bool{}
	if req, ok := t.Params["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				out[s] = true
			}
		}
	}
	return out
}

// Ref says which table and column a parameter names: x-ref first, then a
// parameter named like a key column ("order_id" -> orders.id, "user_id" ->
// users.user_id), else ok=false (free text).
func (g *Graph) Ref(t *contract.Tool, name string) (table, column string, ok bool) {
	p := paramSchema(t, name)
	if p == nil {
		return "", "", false
	}
	if p["type"] == "array" {
		if items, ok := p["items"].(map[string]any); ok {
			if x, ok := items["x-ref"].(string); ok {
				tb, col, _ := strings.Cut(x, ".")
				return tb, col, true
			}
		}
	}
	if x, ok := p["x-ref"].(string); ok {
		tb, col, _ := strings.Cut(x, ".")
		return tb, col, true
	}
	base := strings.TrimSuffix(strings.TrimSuffix(name, "_ids"), "_id")
	if base == name {
		return "", "", false
	}
	for _, tb := range g.C.Tables {
		if len(tb.PrimaryKey) != 1 {
			continue
		}
		pk := tb.PrimaryKey[0]
		if pk == name || pk == strings.TrimSuffix(name, "s") {
			return tb.Name, pk, true
		}
		if (tb.Name == base || tb.Name == base+"s" || tb.Name == base+"es" || strings.TrimSuffix(tb.Name, "s") == base) && pk == "id" {
			return tb.Name, pk, true
		}
	}
	return "", "", false
}

// Fill chooses arguments for a tool call from the rows a case owns. Values the
// case cannot supply come from the seed (so they exist in the world); enum
// values rotate with the case's ordinal. The boolean is false when a required
// argument could not be filled.
func (g *Graph) Fill(t *contract.Tool, b Bound) (map[string]any, bool) {
	return g.fill(t, b, false)
}

// Owns reports whether every required argument of a tool can be filled from
// the case's own rows alone (no stand-in from elsewhere in the seed): among
// alternative ways to satisfy a precondition, the one the case can answer.
func (g *Graph) Owns(t *contract.Tool, b Bound) bool {
	_, ok := g.fill(t, b, true)
	return ok
}

func (g *Graph) fill(t *contract.Tool, b Bound, strict bool) (map[string]any, bool) {
	args := map[string]any{}
	req := Required(t)
	complete := true
	for _, name := range ParamNames(t) {
		v, ok := g.fillOne(t, name, b, strict)
		if !ok {
			if req[name] {
				complete = false
			}
			continue
		}
		if !req[name] && !g.isKeyLike(t, name) {
			// Optional free arguments are left to the agent.
			continue
		}
		args[name] = v
	}
	return args, complete
}

func (g *Graph) isKeyLike(t *contract.Tool, name string) bool {
	_, _, ok := g.Ref(t, name)
	return ok
}

func (g *Graph) fillOne(t *contract.Tool, name string, b Bound, strict bool) (any, bool) {
	p := paramSchema(t, name)
	typ, _ := p["type"].(string)
	if items, ok := p["items"].(map[string]any); ok && typ == "array" && items["type"] == "object" {
		return g.fillObjects(items, b, strict)
	}
	if tb, col, ok := g.Ref(t, name); ok {
		rows := b.Rows[tb]
		if typ == "array" {
			if len(rows) > 0 && rows[0][col] != nil {
				return []any{rows[0][col]}, true
			}
			if r := g.related(tb, b); !strict && r != nil && r[col] != nil {
				return []any{r[col]}, true
			}
			return nil, false
		}
		if len(rows) > 0 && rows[0][col] != nil {
			return rows[0][col], true
		}
		// Not owned by the case: a seed row linked to the case's rows.
		if strict {
			return nil, false
		}
		if r := g.related(tb, b); r != nil && r[col] != nil {
			return r[col], true
		}
		return nil, false
	}
	if enum, ok := p["enum"].([]any); ok && len(enum) > 0 {
		return enum[b.Ordinal%len(enum)], true
	}
	for _, r := range []Row{b.Caller, b.Target} {
		if r != nil && r[name] != nil {
			return r[name], true
		}
	}
	for _, tb := range g.C.Tables {
		for _, r := range b.Rows[tb.Name] {
			if r[name] != nil {
				return r[name], true
			}
		}
	}
	if strict {
		return nil, false
	}
	switch typ {
	case "string", "":
		for _, tb := range g.C.Tables {
			for _, r := range g.Rows(tb.Name) {
				if s, ok := r[name].(string); ok && s != "" {
					return s, true
				}
			}
		}
		if d, ok := p["description"].(string); ok && d != "" {
			return "As the caller asked: " + strings.TrimSuffix(d, "."), true
		}
		return "as the caller asked", true
	case "integer":
		return int64(1), true
	case "number":
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
// When the case has none, one related seed row stands in (not when strict).
func (g *Graph) fillObjects(items map[string]any, b Bound, strict bool) (any, bool) {
	props, _ := items["properties"].(map[string]any)
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
	if len(need) == 0 {
		return nil, false
	}
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
	object := func(tb contract.Table, r Row) map[string]any {
		o := map[string]any{}
		for k := range props {
			if tb.Column(k) != nil && r[k] != nil {
				o[k] = r[k]
			}
		}
		return o
	}
	objects := func(tb contract.Table, rows []Row) []any {
		out := make([]any, len(rows))
		for i, r := range rows {
			out[i] = object(tb, r)
		}
		return out
	}
	// Rows that hang off the case's target.
	if b.Target != nil {
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
					return objects(tb, rows), true
				}
			}
		}
	}
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
		return objects(tb, siblings), true
	}
	if strict {
		return nil, false
	}
	for _, tb := range tables {
		if r := g.related(tb.Name, b); r != nil {
			return []any{object(tb, r)}, true
		}
	}
	return nil, false
}

// related finds a seed row of table tb tied to the case: one its rows point at
// through a foreign key, preferring a sibling (same parent, different row) of a
// row already pointed at, so "new" choices differ from current ones.
func (g *Graph) related(tb string, b Bound) Row {
	var current []Row
	for _, t := range g.C.Tables {
		for _, fk := range g.fks[t.Name] {
			if fk.RefTable != tb {
				continue
			}
			for _, r := range b.Rows[t.Name] {
				if p := g.Find(tb, fk.RefColumn, r[fk.Column]); p != nil {
					current = append(current, p)
				}
			}
		}
	}
	pk := g.PK(tb)
	if len(current) > 0 && pk != "" {
		for _, fk := range g.fks[tb] {
			for _, r := range g.Rows(tb) {
				if Text(r[fk.Column]) == Text(current[0][fk.Column]) && Text(r[pk]) != Text(current[0][pk]) {
					return r
				}
			}
		}
		return current[0]
	}
	rows := g.Rows(tb)
	if len(rows) > 0 {
		return rows[b.Ordinal%len(rows)]
	}
	return nil
}
