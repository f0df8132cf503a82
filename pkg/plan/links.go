package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// linked is a record a setting of fills names: its table, the row as the
// seed holds it, and the columns and values that pick it out.
type linked struct {
	t    *contract.Table
	row  ground.Row
	cols []string
	vals []any
	// keyed marks a row named by a key of several columns (keyedBy).
	keyed bool
}

// fills are the settings that give an optional reference a record leaves
// empty a row to name: a trip that already carries a promo, a code on the
// rider's account already used on a trip. The records are the case's own
// row and the rows of tables the callers own, keyed by several columns,
// that an argument names together with records the case reaches (the
// rider's code, by rider and code), whose numbers are also pushed as
// bounds pushes a record named by one column (keyedBounds: a gift card's
// balance lowered). A refusal of a record that already names one (one
// promo per trip, a code used once) is met only so when no seed row that
// holds such a reference lets the act through otherwise. The row named is
// a record the case reaches, else, of a table no one owns, its first seed
// row; never another caller's record.
func (sv *solver) fills(tool, table string, row ground.Row, act scenario.Call, rs []reached) []push {
	g := sv.g
	var ls []linked
	if pk := g.PK(table); pk != "" && row != nil {
		ls = append(ls, linked{t: g.C.Table(table), row: row, cols: []string{pk}, vals: []any{row[pk]}})
	}
	var params []string
	if t := g.C.Tool(tool); t != nil {
		params = t.ParamNames()
	}
	for _, p := range params {
		ls = append(ls, sv.keyedBy(tool, p, act.Args[p], rs)...)
	}
	var out []push
	for _, l := range ls {
		where := keyWhere(l.cols, 2) // $1 is the value set
		if l.keyed {
			out = append(out, sv.keyedBounds(l)...)
		}
		for _, fk := range g.FKs(l.t.Name) {
			c := l.t.Column(fk.Column)
			if c == nil || c.NotNull || slices.Contains(l.t.PrimaryKey, c.Name) || l.row[fk.Column] != nil {
				continue
			}
			to := reachedValue(rs, fk)
			if to == nil && !g.OwnedTable(fk.RefTable) && len(g.Rows(fk.RefTable)) > 0 {
				to = g.Rows(fk.RefTable)[0][fk.RefColumn]
			}
			if to == nil || fk.RefTable == l.t.Name && ground.Text(to) == ground.Text(l.row[fk.RefColumn]) {
				continue // a row named by itself says nothing
			}
			out = append(out, push{
				stmt: scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s = $1 WHERE %s", l.t.Name, fk.Column, where), Args: append([]any{to}, l.vals...)},
				what: fmt.Sprintf("%s of %s filled", strings.ReplaceAll(fk.Column, "_", " "), strings.ReplaceAll(l.t.Name, "_", " ")),
			})
		}
	}
	return out
}

// keyedBounds are the settings of the numbers of l, a row an argument
// names by a key of several columns (a gift card of the user's, by user
// and id), that bounds gives a record named by one column: raised, lowered
// and at the least its CHECK allows.
func (sv *solver) keyedBounds(l linked) []push {
	where := keyWhere(l.cols, 1)
	var out []push
	for _, col := range l.t.Columns {
		if !sv.pushable(l.t, col) || l.row[col.Name] == nil {
			continue
		}
		tos := []string{pushedValue(l.t, col, true), pushedValue(l.t, col, false)}
		if lo, ok := leastValue(l.t, col); ok {
			tos = append(tos, lo)
		}
		for _, to := range tos {
			out = append(out, push{
				stmt: scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s", l.t.Name, col.Name, to, where), Args: slices.Clone(l.vals)},
				what: fmt.Sprintf("%s of %s set to %s", strings.ReplaceAll(col.Name, "_", " "), strings.ReplaceAll(l.t.Name, "_", " "), to),
			})
		}
	}
	return out
}

// keyedBy are the rows of tables the callers own, keyed by several
// columns, whose key is the value v of the act's argument param (bound to
// one key column, or to the column a key column refers to: a coupon's
// code) and, for each other key column, the record of the table it refers
// to that the case reaches: the customer's own coupon of that code.
func (sv *solver) keyedBy(tool, param string, v any, rs []reached) []linked {
	g := sv.g
	bd, ok := sv.bs.Of(tool, param)
	if !ok || v == nil {
		return nil
	}
	if _, many := v.([]any); many {
		return nil
	}
	var out []linked
	for i := range g.C.Tables {
		t := &g.C.Tables[i]
		if len(t.PrimaryKey) < 2 || !g.OwnedTable(t.Name) {
			continue
		}
		for _, col := range t.PrimaryKey {
			fk, isFK := fkColumn(g, t.Name, col)
			if t.Name == bd.Table && col == bd.Column || isFK && fk.RefTable == bd.Table && fk.RefColumn == bd.Column {
				if l, ok := sv.keyRow(t, col, v, rs); ok {
					out = append(out, l)
				}
			}
		}
	}
	return out
}

// keyRow is the seed row of t whose key column col holds v and whose other
// key columns each refer to the record the case reaches of their table.
func (sv *solver) keyRow(t *contract.Table, col string, v any, rs []reached) (linked, bool) {
	g := sv.g
	cols, vals := []string{col}, []any{v}
	for _, kc := range t.PrimaryKey {
		if kc == col {
			continue
		}
		fk, ok := fkColumn(g, t.Name, kc)
		if !ok {
			return linked{}, false
		}
		to := reachedValue(rs, fk)
		if to == nil {
			return linked{}, false
		}
		cols, vals = append(cols, kc), append(vals, to)
	}
	for _, r := range g.Rows(t.Name) {
		held := true
		for i, c := range cols {
			held = held && ground.Text(r[c]) == ground.Text(vals[i])
		}
		if held {
			return linked{t: t, row: r, cols: cols, vals: vals, keyed: true}, true
		}
	}
	return linked{}, false
}

// reachedValue is the value of the record of fk's table, by the column fk
// refers to, that the case reaches; nil when it reaches none.
func reachedValue(rs []reached, fk ground.FK) any {
	for _, r := range rs {
		if !r.many && r.table == fk.RefTable && r.column == fk.RefColumn {
			return r.value
		}
	}
	return nil
}

// keyWhere is the condition that picks a row out by cols, their values the
// statement's arguments from $first on.
func keyWhere(cols []string, first int) string {
	where := make([]string, len(cols))
	for i, c := range cols {
		where[i] = fmt.Sprintf("%s = $%d", c, first+i)
	}
	return strings.Join(where, " AND ")
}
