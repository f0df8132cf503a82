package contractgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// table is one table of the generated world: its DDL and its seed rows.
type table struct {
	name string
	ddl  string
	rows []row
}

// row keeps its columns in order, so a seed file reads like a hand-written one.
type row struct {
	cols []string
	vals []any
}

func (r *row) set(col string, v any) {
	for i, c := range r.cols {
		if c == col {
			r.vals[i] = v
			return
		}
	}
	r.cols = append(r.cols, col)
	r.vals = append(r.vals, v)
}

func (r row) get(col string) any {
	for i, c := range r.cols {
		if c == col {
			return r.vals[i]
		}
	}
	return nil
}

func (r row) jsonLine() (string, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range r.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		k, err := json.Marshal(c)
		if err != nil {
			return "", fmt.Errorf("column %s: %w", c, err)
		}
		v, err := json.Marshal(r.vals[i])
		if err != nil {
			return "", fmt.Errorf("column %s: %w", c, err)
		}
		b.Write(k)
		b.WriteString(": ")
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String(), nil
}

// person is the caller table.
type person struct {
	kind                                        personKind
	table, pk, first, last, birth, email, phone string
	status, tier                                string
	rows                                        []row
}

// tiers is the enum-keyed table a person's credit limit comes from.
type tiers struct {
	table, noun string
	codes       []string
}

// resource is a record a caller owns, directly or through its parent.
type resource struct {
	kind                           resourceKind
	table, pk, prefix              string
	owner                          string    // column naming the person (direct)
	parent                         *resource // the record it hangs off (chained)
	parentCol                      string
	kindCol, statusCol, amountCol  string
	startsCol, endsCol, createdCol string
	closedCol                      string
	kinds, statuses                []string
	lines, lineFK                  string // composite-key child table, "" when none
	events, eventFK                string // the credits table
	rows                           []row
}

// rowSQL reads one record with its owner's key as owner_key.
func (r *resource) rowSQL(p *person) string {
	if r.parent == nil {
		return fmt.Sprintf("SELECT *, %s AS owner_key FROM %s WHERE %s = $1", r.owner, r.table, r.pk)
	}
	return fmt.Sprintf("SELECT c.*, p.%s AS owner_key FROM %s c JOIN %s p ON p.%s = c.%s WHERE c.%s = $1",
		r.parent.owner, r.table, r.parent.table, r.parent.pk, r.parentCol, r.pk)
}

// ownerColumn is the table.column that says whose a record is: its owner
// column, or the column naming the record it hangs off.
func (r *resource) ownerColumn() string {
	if r.parent == nil {
		return r.table + "." + r.owner
	}
	return r.table + "." + r.parentCol
}

// listSQL lists a person's records.
func (r *resource) listSQL() string {
	cols := fmt.Sprintf("%s, %s, %s, %s", r.pk, r.statusCol, r.startsCol, r.amountCol)
	if r.parent == nil {
		return fmt.Sprintf("SELECT %s FROM %s WHERE %s = $1 ORDER BY %s DESC LIMIT 10", cols, r.table, r.owner, r.startsCol)
	}
	cs := strings.ReplaceAll("c."+cols, ", ", ", c.")
	return fmt.Sprintf("SELECT %s FROM %s c JOIN %s p ON p.%s = c.%s WHERE p.%s = $1 ORDER BY c.%s DESC LIMIT 10",
		cs, r.table, r.parent.table, r.parent.pk, r.parentCol, r.parent.owner, r.startsCol)
}

func sqlList(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = "'" + v + "'"
	}
	return strings.Join(q, ", ")
}

func day(t time.Time) string { return t.Format("2006-01-02") }

func cents(n int) float64 { return float64(n) / 100 }
