package ground

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
)

// How says how an argument's values were found.
type How string

// The ways an argument is grounded.
const (
	// ByXRef: the argument's x-ref names the column.
	ByXRef How = "x-ref"
	// ByName: the naming rules of contract.RefOf name the column.
	ByName How = "name"
	// ByLikeness: the column looks most like the argument (its words, its
	// type and format, the handler's SQL) among those that fit.
	ByLikeness How = "likeness"
	// Fresh: the argument names something new (a member number, an email
	// to change to); its value is a fresh one in the shape of the column.
	Fresh How = "fresh"
	// ByEnum: the argument's enum lists its values.
	ByEnum How = "enum"
	// FreeText: words, not a record (a reason, a summary).
	FreeText How = "free text"
	// FromPattern: no column holds its values; one is written from its
	// JSON Schema pattern or format (a card's last four digits, a date).
	FromPattern How = "pattern"
	// FromClock: a calendar day counted from the world's clock, held in
	// Picks[0] (a start date a week ahead): a day the caller names that no
	// record holds.
	FromClock How = "clock"
	// FromRows: a list of objects, one per row of a table that holds every
	// field the objects need (a reservation's flights).
	FromRows How = "rows"
	// Unbound: no column of the world fits and the argument is not free
	// text; an x-ref would say where its values live.
	Unbound How = "unbound"
)

// Source says which row of the bound column a case takes a value from.
type Source string

// The sources of a bound argument's value.
const (
	// FromCase: the row of the column's table the case reaches.
	FromCase Source = "case"
	// FromSibling: a row next to the one the case reaches (another variant
	// of the same product): the argument names a change to make.
	FromSibling Source = "sibling"
	// FromShared: one of Picks, rows of the world no case owns (an open
	// slot, a pharmacy) that rehearsal found the handler accepts.
	FromShared Source = "shared"
)

// Binding is how one argument of one tool is grounded in the world.
type Binding struct {
	Tool   string `json:"tool"`
	Param  string `json:"param"`
	Table  string `json:"table,omitempty"`
	Column string `json:"column,omitempty"`
	How    How    `json:"how"`
	Source Source `json:"source,omitempty"`
	// Confirmed: a call filled this way was answered ok by the handler.
	Confirmed bool `json:"confirmed,omitempty"`
	// Picks are the shared rows' values a FromShared binding takes, the
	// enum values a ByEnum binding is settled to, or a FromClock binding's
	// day.
	Picks []any `json:"picks,omitempty"`
	// Optional arguments are filled only when Fill says so.
	Fill bool `json:"fill,omitempty"`
	// Computed: the handler works the value out (a total of the case's
	// rows) and refused the column's own, telling the number it wanted
	// (Answer.Want); the call answered ok with that number. The column
	// only chooses the rows; a rehearsal settles the number.
	Computed bool `json:"computed,omitempty"`
	// Keep: the use case asks no change of this argument of its act (it is
	// about another: "change the flights" keeps the cabin). An enum value
	// is the one the case's target holds in a column of the argument's
	// name, and a list of objects is left as filled (Graph.Renew).
	Keep bool `json:"keep,omitempty"`
}

// Settles reports whether a rehearsal may put the number a refusal wanted
// (Answer.Want) in the argument's place: the handler computes it, or no
// confirmed column grounds it (rows of objects, an unbound or guessed
// number). An argument a column grounds is the caller's or the record's:
// another value of it refused is a way the world says no.
func (b Binding) Settles() bool {
	switch {
	case b.Computed, b.How == FromRows, b.How == Unbound:
		return true
	case b.How == ByLikeness:
		return !b.Confirmed
	}
	return false
}

// Column is "table.column", or "".
func (b Binding) Ref() string {
	if b.Table == "" {
		return ""
	}
	return b.Table + "." + b.Column
}

// Found says how the binding was found, in words.
func (b Binding) Found() string {
	s := string(b.How)
	switch b.Source {
	case FromSibling:
		s += ", a sibling of the case's row"
	case FromShared:
		s += fmt.Sprintf(", shared rows (%d found)", len(b.Picks))
	}
	if b.How == FromClock && len(b.Picks) > 0 {
		s += fmt.Sprintf(" (%v)", b.Picks[0])
	}
	if b.Computed {
		s += ", a number the handler computes"
	}
	if b.Confirmed {
		s += ", confirmed by rehearsal"
	}
	return s
}

// Bindings are a contract's bindings, tool by tool.
type Bindings []Binding

// Of returns the binding of one argument.
func (bs Bindings) Of(tool, param string) (Binding, bool) {
	for _, b := range bs {
		if b.Tool == tool && b.Param == param {
			return b, true
		}
	}
	return Binding{}, false
}

// For returns the bindings of the named tools, in the order given.
func (bs Bindings) For(tools ...string) Bindings {
	var out Bindings
	for _, t := range tools {
		for _, b := range bs {
			if b.Tool == t {
				out = append(out, b)
			}
		}
	}
	return out
}

// Unbound returns the required arguments no rehearsal could ground, and the
// tools no rehearsal answered ok.
func (bs Bindings) Unbound() []Binding {
	var out []Binding
	for _, b := range bs {
		if b.How == Unbound {
			out = append(out, b)
		}
	}
	return out
}

// RecordParam reports whether an argument names a record: it is bound to a
// key or unique column and takes the case's own row (not a fresh or shared
// one). The bogus-record probe and the checks that a record was left alone
// use these.
func (g *Graph) RecordParam(bs Bindings, t *contract.Tool, param string) (table, column string, ok bool) {
	if b, found := bs.Of(t.Name, param); found {
		if b.Table == "" || b.How == Fresh || b.How == Unbound {
			return "", "", false
		}
		tb := g.C.Table(b.Table)
		if tb == nil || !tb.IsUnique(b.Column) || g.partOf(paramSchema(t, param), b.Table, b.Column) || declined(t, param) {
			// The last four digits of a unique phone number name no one.
			return "", "", false
		}
		return b.Table, b.Column, true
	}
	return g.C.RefOf(t.Name, param)
}

// Declared returns the bindings the contract declares without any world: an
// x-ref, the naming rules of contract.RefOf, enums (an enum of a table's
// keys bound to them) and log-only text. The rest is left for Discover.
// The contract and its seed do not change under a graph, so they are read
// once; each caller gets a copy of its own.
func (g *Graph) Declared() Bindings {
	g.declOnce.Do(func() { g.declared = g.declare() })
	return slices.Clone(g.declared)
}

func (g *Graph) declare() Bindings {
	var out Bindings
	for i := range g.C.Tools {
		t := &g.C.Tools[i]
		for _, p := range t.ParamNames() {
			b := Binding{Tool: t.Name, Param: p, How: Unbound}
			ps := paramSchema(t, p)
			if tb, col, ok := g.C.RefOf(t.Name, p); ok {
				b.Table, b.Column, b.How, b.Source = tb, col, ByName, FromCase
				if x, isStr := refSchema(ps)["x-ref"].(string); isStr && x != "" {
					b.How = ByXRef
				}
			} else if x, has := refSchema(ps)["x-ref"]; has && x == false && len(t.Enum(p)) == 0 {
				// The author's word that it names no record: no column is
				// tried, however alike its name.
				b = g.loose(t, p)
			} else if items, ok := ps["items"].(map[string]any); ok && ps["type"] == "array" && items["type"] == "object" {
				b.How = FromRows
			} else if e := t.Enum(p); len(e) > 0 {
				b.How = ByEnum
				b.Table, b.Column = g.keysListed(e, g.touched(t))
			} else if t.LogOnlyParam(p) {
				b.How = FreeText
			}
			out = append(out, b)
		}
	}
	return out
}

// keysListed is the key column (a primary key or a unique column of one
// column) whose seed holds exactly the values an enum lists, no fewer and
// no more: a tier code the schema lists is still a row of the tiers table.
// Where several columns hold them, the one in a table the tool's handler
// reads is taken; where that does not single one out, none is.
func (g *Graph) keysListed(enum []any, touched map[string]bool) (table, column string) {
	if len(enum) < 2 {
		return "", ""
	}
	want := map[string]bool{}
	for _, v := range enum {
		want[Text(v)] = true
	}
	var found, read [][2]string
	for _, tb := range g.C.Tables {
		if len(g.Rows(tb.Name)) != len(want) {
			continue
		}
		for _, col := range tb.Columns {
			if !tb.IsUnique(col.Name) || !g.holdsExactly(tb.Name, col.Name, want) {
				continue
			}
			found = append(found, [2]string{tb.Name, col.Name})
			if touched[strings.ToLower(tb.Name)] {
				read = append(read, [2]string{tb.Name, col.Name})
			}
		}
	}
	switch {
	case len(found) == 1:
		return found[0][0], found[0][1]
	case len(read) == 1:
		return read[0][0], read[0][1]
	}
	return "", ""
}

// holdsExactly reports whether a column's seed values are want, each once.
func (g *Graph) holdsExactly(table, col string, want map[string]bool) bool {
	c := g.column(table, col)
	for i, v := range c.text {
		if c.isNil[i] || !want[v] {
			return false
		}
	}
	return len(c.first) == len(want)
}

// refSchema is the schema that carries an argument's x-ref: its items' for an
// array whose items have one.
func refSchema(ps map[string]any) map[string]any {
	if ps["type"] == "array" {
		if items, ok := ps["items"].(map[string]any); ok {
			if _, has := items["x-ref"]; has {
				return items
			}
		}
	}
	return ps
}

func paramSchema(t *contract.Tool, name string) map[string]any {
	p := t.Param(name)
	if p == nil {
		return map[string]any{}
	}
	return p
}

// sortBindings orders bindings by tool (contract order) then argument
// (declared order).
func (g *Graph) sortBindings(bs Bindings) {
	pos := map[string]int{}
	for i, t := range g.C.Tools {
		pos[t.Name] = i * 1000
		for j, p := range t.ParamNames() {
			pos[t.Name+"\x00"+p] = i*1000 + j
		}
	}
	sort.SliceStable(bs, func(i, j int) bool {
		return pos[bs[i].Tool+"\x00"+bs[i].Param] < pos[bs[j].Tool+"\x00"+bs[j].Param]
	})
}

// XRefHint is the line that would ground an unbound argument of c. Of an
// argument already marked `x-ref: false`, its schema is what must say how
// its values are written.
func XRefHint(c *contract.Contract, b Binding) string {
	if t := c.Tool(b.Tool); t != nil && declined(t, b.Param) {
		return fmt.Sprintf("tools[%s].params.properties.%s has `x-ref: false`, so its values are written from its schema: give it a `pattern`, `format`, `enum` or `minimum` to write them from, or an `x-ref` naming the column they live in", b.Tool, b.Param)
	}
	guess := ""
	if b.Table != "" {
		guess = fmt.Sprintf(" (the closest column, %s, never made its tool answer ok)", b.Ref())
	}
	return fmt.Sprintf("tools[%s].params.properties.%s: add `x-ref: TABLE.COLUMN` naming the column its values live in%s, or `x-ref: false` when it names no record", b.Tool, b.Param, guess)
}

// Confirm marks the bindings of tools as confirmed: a plan's rehearsal of
// them answered ok.
func (gr *Grounding) Confirm(tools ...string) {
	for _, t := range tools {
		delete(gr.Unanswered, t)
		for i := range gr.Bindings {
			b := &gr.Bindings[i]
			if b.Tool == t && b.How != FreeText && b.How != Unbound && b.How != ByEnum && b.Table != "" {
				b.Confirmed = true
			}
		}
	}
}
