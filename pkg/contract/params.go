package contract

import (
	"slices"
	"sort"
	"strings"
	"unicode"
)

// ParamNames returns the tool's argument names in the order contract.yaml declares them.
func (t *Tool) ParamNames() []string {
	if t.ParamOrder != nil {
		return t.ParamOrder
	}
	// A Tool built in code, not loaded: fall back to sorted names.
	var names []string
	for name := range properties(t.Params) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Required returns the names params.required lists.
func (t *Tool) Required() []string {
	var out []string
	switch req := t.Params["required"].(type) {
	case []any:
		for _, v := range req {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
	case []string:
		out = append(out, req...)
	}
	return out
}

// Param returns the schema of one argument, or nil.
func (t *Tool) Param(name string) map[string]any {
	p, _ := properties(t.Params)[name].(map[string]any)
	return p
}

// Enum returns the values an argument's schema permits (its enum, or for a
// list its items' enum), or nil.
func (t *Tool) Enum(param string) []any {
	ps := t.Param(param)
	if items, ok := ps["items"].(map[string]any); ok && ps["type"] == "array" && ps["enum"] == nil {
		ps = items // a list of choices: its items' enum
	}
	switch e := ps["enum"].(type) {
	case []any:
		return e
	case []string:
		out := make([]any, len(e))
		for i, s := range e {
			out[i] = s
		}
		return out
	}
	return nil
}

// LogOnlyParam reports whether an argument exists for the record only: one
// log_only lists, or free text of a hand-off (a tool that ends the
// conversation and requires nothing before it, callable for anyone): its
// summary is the agent's account of the call for the person taking it, not
// a value only the caller could give. A tool that ends the call but
// requires an identification first (an adverse reaction reported on the
// patient's record) is an act: what it records (the symptoms) is the
// caller's.
func (t *Tool) LogOnlyParam(name string) bool {
	if slices.Contains(t.LogOnly, name) {
		return true
	}
	if !t.EndsConversation || len(t.Requires) > 0 {
		return false
	}
	ps := t.Param(name)
	_, ref := ps["x-ref"]
	_, pat := ps["pattern"]
	_, format := ps["format"]
	return ps != nil && ps["type"] == "string" && !ref && !pat && !format && len(t.Enum(name)) == 0
}

// Gated returns the names of the tools that have requires, in contract order.
func (c *Contract) Gated() []string {
	var out []string
	for _, t := range c.Tools {
		if len(t.Requires) > 0 {
			out = append(out, t.Name)
		}
	}
	return out
}

// RefOf says which record an argument names (docs/contract.md, "x-ref"):
//
//  1. its x-ref when it has one ("x-ref: false" says it names none);
//  2. else the one table whose single-column primary key has the argument's
//     name, when the name ends in _id or the table is named after it
//     (user_id -> users.user_id; an "email" that happens to be some table's
//     key is still free text);
//  3. else <noun>_id -> <nouns>.id (order_id -> orders.id);
//  4. else the column a same-named foreign-key column references (user_id ->
//     users.id when some table's user_id references it).
//
// A camelCase name is read in snake_case (chargeId as charge_id).
//
// Anything else (a member number, an email) is free text: ok is false. An
// array argument names records of its items: the items' x-ref, else the
// rules above on its singular name (item_ids -> item_id).
func (c *Contract) RefOf(tool, param string) (table, column string, ok bool) {
	t := c.Tool(tool)
	if t == nil {
		return "", "", false
	}
	p := t.Param(param)
	if p == nil {
		return "", "", false
	}
	// A camelCase argument names what its snake_case form names (chargeId
	// is charges.charge_id): the schema's columns are snake_case.
	param = snakeCase(param)
	if p["type"] == "array" {
		items, _ := p["items"].(map[string]any)
		if _, has := items["x-ref"]; has {
			p = items
		} else if one, plural := strings.CutSuffix(param, "s"); plural {
			param = one
		}
	}
	switch ref := p["x-ref"].(type) {
	case string:
		table, column, ok = strings.Cut(ref, ".")
		return table, column, ok && table != "" && column != ""
	case bool:
		return "", "", false
	}
	stem, isID := strings.CutSuffix(param, "_id")
	var pkMatches []string
	for _, tab := range c.Tables {
		if len(tab.PrimaryKey) == 1 && tab.PrimaryKey[0] == param && (isID || tableNamedFor(tab.Name, stem)) {
			pkMatches = append(pkMatches, tab.Name)
		}
	}
	if len(pkMatches) == 1 {
		return pkMatches[0], param, true
	}
	// Several tables share the key name: only a table named after the
	// argument settles which.
	for _, name := range pkMatches {
		if tableNamedFor(name, stem) {
			return name, param, true
		}
	}
	// 3. <noun>_id -> <nouns>.id
	if prefix, found := strings.CutSuffix(param, "_id"); found && prefix != "" {
		for _, tab := range c.Tables {
			if tableNamedFor(tab.Name, prefix) && len(tab.PrimaryKey) == 1 && tab.PrimaryKey[0] == "id" {
				return tab.Name, "id", true
			}
		}
	}
	// 4. A foreign-key column of that name anywhere.
	for _, tab := range c.Tables {
		if col := tab.Column(param); col != nil && col.References != "" {
			table, column, ok = strings.Cut(col.References, ".")
			if ok {
				return table, column, true
			}
		}
	}
	return "", "", false
}

// snakeCase writes a camelCase name in snake_case (chargeId -> charge_id);
// a name without capitals is returned as it is.
func snakeCase(name string) string {
	if strings.ToLower(name) == name {
		return name
	}
	return strings.Join(NameWords(name), "_")
}

// NameWords splits an identifier into its lower-case words, as a person
// would say it: "dateOfBirth", "date_of_birth" and "DateOfBirth" are all
// [date of birth].
func NameWords(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// tableNamedFor reports whether table is noun, or a plural of it.
func tableNamedFor(table, noun string) bool {
	if table == noun || table == noun+"s" || table == noun+"es" {
		return true
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && table == stem+"ies" {
		return true
	}
	return false
}

// Hop is one foreign key followed from a row to the row it references.
type Hop struct {
	Table, Column       string // the referencing column
	RefTable, RefColumn string // what it references
}

// CalleePath is the shortest chain of foreign keys from a table to the
// caller table (the first found in schema order among the shortest): how an
// outbound call's purpose record leads to the callee who owns it. A record
// of the caller table itself leads there in no hop (an empty, non-nil path);
// nil when no chain exists or the contract names no caller table.
func (c *Contract) CalleePath(table string) []Hop {
	if c.Caller == nil || c.Table(table) == nil || c.Table(c.Caller.Table) == nil {
		return nil
	}
	type node struct {
		table string
		path  []Hop
	}
	seen := map[string]bool{table: true}
	queue := []node{{table, []Hop{}}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.table == c.Caller.Table {
			return n.path
		}
		t := c.Table(n.table)
		if t == nil {
			continue
		}
		for _, col := range t.Columns {
			rt, rc, ok := strings.Cut(col.References, ".")
			if !ok || seen[rt] {
				continue
			}
			seen[rt] = true
			path := append(append([]Hop{}, n.path...), Hop{Table: n.table, Column: col.Name, RefTable: rt, RefColumn: rc})
			queue = append(queue, node{rt, path})
		}
	}
	return nil
}
