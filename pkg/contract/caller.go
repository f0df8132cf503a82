package contract

import (
	"slices"
	"sort"
	"strings"
)

// inferCaller names the caller when the contract does not say who it is:
// the table that the identity check reads its rows from (the requirement
// most tools share, each of its alternatives), keyed by a one-column primary
// key that other tables point at (the records are that person's). Its tools
// are those checks that take no key of it, so their answer is what names the
// caller. A contract that names no such table keeps no caller.
// Identifies reports a tool that identifies the caller (caller.from).
func (c *Contract) Identifies(tool string) bool {
	return c.Caller != nil && slices.Contains(c.Caller.From, tool)
}

func (c *Contract) inferCaller() {
	if c.Caller != nil {
		return
	}
	// The identity check is the requirement most tools share.
	shared := map[string]int{}
	top := ""
	for _, t := range c.Tools {
		for _, r := range t.Requires {
			k := strings.Join(r.AnyOf, "\x00")
			shared[k]++
			if top == "" || shared[k] > shared[top] {
				top = k
			}
		}
	}
	gates := map[string]bool{}
	for _, name := range strings.Split(top, "\x00") {
		gates[name] = name != ""
	}
	pointedAt := map[string]int{}
	for _, t := range c.Tables {
		for _, col := range t.Columns {
			if ref, _, ok := strings.Cut(col.References, "."); ok && ref != t.Name {
				pointedAt[ref]++
			}
		}
	}
	readers := map[string][]string{}
	for _, t := range c.Tools {
		if !gates[t.Name] {
			continue
		}
		for table := range c.handlerReads(&t) {
			tb := c.Table(table)
			if tb == nil || len(tb.PrimaryKey) != 1 || pointedAt[table] == 0 || c.takesKeyOf(&t, tb) {
				continue
			}
			readers[table] = append(readers[table], t.Name)
		}
	}
	best := ""
	for table, tools := range readers {
		if best == "" || len(tools) > len(readers[best]) ||
			len(tools) == len(readers[best]) && (pointedAt[table] > pointedAt[best] || pointedAt[table] == pointedAt[best] && table < best) {
			best = table
		}
	}
	if best == "" {
		return
	}
	from := readers[best]
	order := map[string]int{}
	for i, t := range c.Tools {
		order[t.Name] = i
	}
	sort.Slice(from, func(i, j int) bool { return order[from[i]] < order[from[j]] })
	c.Caller = &Caller{Table: best, Key: c.Table(best).PrimaryKey[0], From: from, Inferred: true}
}

// takesKeyOf reports whether one of the tool's arguments names a record of
// the table (refers to its key or another unique column): a tool that is
// handed the record does not find out whose it is. One that is handed a
// last name or a date of birth to look the record up by does.
func (c *Contract) takesKeyOf(t *Tool, tb *Table) bool {
	for _, p := range t.ParamNames() {
		if table, col, ok := c.RefOf(t.Name, p); ok && table == tb.Name && tb.IsUnique(col) {
			return true
		}
	}
	return false
}
