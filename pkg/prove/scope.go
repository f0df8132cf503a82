package prove

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// A setup builds the case: it adds rows (the caller, their records, a third
// party), and may change or delete the caller's own rows. A setup that
// reaches past the case (rewrites other callers' rows, the shop's reference
// data, every row of a table) makes the act refused, or carried out, for a
// reason that has nothing to do with the case, in a world that is no longer
// the contract's. Rows the case names (a key in the instruction, the opening
// or a call's arguments) are the case's, whoever owns them.

// plainInsert is an INSERT of one row whose every value is a $n argument: it
// adds exactly that row, so what it does is read without a database.
var plainInsert = regexp.MustCompile(`(?is)^\s*insert\s+into\s+([a-z_][a-z0-9_]*)\s*\(([^)]*)\)\s*values\s*\(\s*((?:\$\d+\s*,\s*)*\$\d+)\s*\)\s*;?\s*$`)

// setupRow is one row a setup leaves different from the frozen world.
type setupRow struct {
	table string
	row   map[string]any // the row after setup (added, changed) or before (removed)
	how   string         // "adds", "changes", "deletes"
}

// overreach says which rows the setup touches beyond the case ("" when
// none). A setup of plain inserts is read from its text; any other is
// compared with the frozen world on the copy right after it ran.
func (pr *proof) overreach(ctx context.Context, cp *world.Copy) (string, error) {
	if len(pr.sc.Setup) == 0 {
		return "", nil
	}
	rows, plain := plainRows(pr.sc.Setup)
	if !plain {
		frozen, err := pr.p.frozen(ctx)
		if err != nil {
			return "", err
		}
		after, err := cp.Snapshot(ctx)
		if err != nil {
			return "", err
		}
		d, err := world.DiffSnapshots(frozen, after)
		if err != nil {
			return "", err
		}
		rows = nil
		for _, t := range d.Tables {
			for _, r := range t.Added {
				rows = append(rows, setupRow{t.Table, r, "adds"})
			}
			for _, ch := range t.Changed {
				rows = append(rows, setupRow{t.Table, ch.Before, "changes"})
			}
			for _, r := range t.Removed {
				rows = append(rows, setupRow{t.Table, r, "deletes"})
			}
		}
	}
	return pr.beyondCase(rows), nil
}

// plainRows reads the rows a setup of plain inserts adds; false when some
// statement is not one.
func plainRows(setup []scenario.Statement) ([]setupRow, bool) {
	var out []setupRow
	for _, st := range setup {
		m := plainInsert.FindStringSubmatch(st.SQL)
		if m == nil {
			return nil, false
		}
		cols := strings.Split(m[2], ",")
		vals := strings.Split(m[3], ",")
		if len(cols) != len(vals) {
			return nil, false
		}
		row := map[string]any{}
		for i, col := range cols {
			n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(vals[i]), "$"))
			if err != nil || n < 1 || n > len(st.Args) {
				return nil, false
			}
			row[strings.ToLower(strings.TrimSpace(col))] = st.Args[n-1]
		}
		out = append(out, setupRow{strings.ToLower(m[1]), row, "adds"})
	}
	return out, true
}

// setupRows is addedRows of the scenario's setup, read once a proof.
func (pr *proof) setupRows() map[string][]map[string]any {
	if pr.added == nil {
		pr.added = addedRows(pr.sc.Setup)
	}
	return pr.added
}

// callersRow reports whether row of table is the scenario's caller's.
func (pr *proof) callersRow(table string, row map[string]any) bool {
	caller := ground.Text(pr.sc.CallerID)
	owner, owned := pr.p.ownerOf(table, row, pr.setupRows(), caller)
	return owned && owner == caller
}

// addedRows are the rows the setup's plain inserts add, by table.
func addedRows(setup []scenario.Statement) map[string][]map[string]any {
	added := map[string][]map[string]any{}
	for _, r := range insertedRows(setup) {
		added[r.table] = append(added[r.table], r.row)
	}
	return added
}

// insertedRows are the rows the setup's plain inserts add, its other
// statements passed over.
func insertedRows(setup []scenario.Statement) []setupRow {
	var out []setupRow
	for _, st := range setup {
		rows, _ := plainRows([]scenario.Statement{st})
		out = append(out, rows...)
	}
	return out
}

// beyondCase names the rows a setup touches that are not the case's: a row
// changed or deleted that is neither the caller's nor named by the case, a
// row added to an existing person other than the caller that the case does
// not name.
func (pr *proof) beyondCase(rows []setupRow) string {
	p := pr.p
	cl := p.c.Caller
	caller := ground.Text(pr.sc.CallerID)
	added := map[string][]map[string]any{}
	people := map[string]bool{} // persons this setup adds
	for _, r := range rows {
		if r.how != "adds" {
			continue
		}
		added[r.table] = append(added[r.table], r.row)
		if cl != nil && r.table == cl.Table {
			people[ground.Text(r.row[cl.Key])] = true
		}
	}
	named := pr.namedValues()
	var bad []string
	n := 0
	for _, r := range rows {
		owner, owned := p.ownerOf(r.table, r.row, added, caller)
		switch {
		case p.namesRow(r.table, r.row, named):
			continue
		case r.how == "adds" && (!owned || owner == caller || people[owner]):
			continue
		case r.how != "adds" && owned && owner == caller:
			continue
		}
		n++
		if len(bad) < 3 {
			whose := "rows nobody owns (reference data)"
			if owned {
				whose = fmt.Sprintf("%s %s's", cl.Key, owner)
			}
			bad = append(bad, fmt.Sprintf("%s a %s row (%s) of %s", r.how, r.table, p.keyText(r.table, r.row), whose))
		}
	}
	if n == 0 {
		return ""
	}
	more := ""
	if n > len(bad) {
		more = fmt.Sprintf(", and %d more", n-len(bad))
	}
	return fmt.Sprintf("the setup %s%s: a setup adds the case's rows and may change or delete only the caller's rows or rows the case names (instruction, opening, call arguments), never other callers' or the reference data around the act", strings.Join(bad, "; "), more)
}

// namedValues are the values the case names: every argument of its calls
// and the caller, as text (the instruction and opening are searched whole).
func (pr *proof) namedValues() map[string]bool {
	named := map[string]bool{}
	for _, calls := range [][]scenario.Call{pr.sc.Solution, pr.sc.Tempting, pr.sc.Missing} {
		for _, c := range calls {
			ground.AddValues(named, map[string]any(c.Args))
		}
	}
	if pr.sc.CallerID != nil {
		named[ground.Text(pr.sc.CallerID)] = true
	}
	return named
}

// namesRow reports a row whose key the case names.
func (p *Prover) namesRow(table string, row map[string]any, named map[string]bool) bool {
	t := p.c.Table(table)
	if t == nil {
		return false
	}
	for _, k := range t.PrimaryKey {
		v := ground.Text(row[k])
		if v != "" && named[v] {
			return true
		}
	}
	return false
}

// keyText is a row's primary key as text.
func (p *Prover) keyText(table string, row map[string]any) string {
	t := p.c.Table(table)
	if t == nil || len(t.PrimaryKey) == 0 {
		return js(row)
	}
	parts := make([]string, len(t.PrimaryKey))
	for i, k := range t.PrimaryKey {
		parts[i] = ground.Text(row[k])
	}
	return strings.Join(parts, ", ")
}

// ownerOf follows foreign keys from a row up to the caller table and returns
// the caller key it belongs to; owned is false for rows of nobody (reference
// data). Parents are looked up among the rows the setup adds, then the seed.
// A row whose table names callers in two columns (a parcel's sender and
// recipient) belongs to each: it is prefer's (the scenario's caller) when
// prefer is one of them, else the first's.
func (p *Prover) ownerOf(table string, row map[string]any, added map[string][]map[string]any, prefer string) (string, bool) {
	cl := p.c.Caller
	if cl == nil {
		return "", false
	}
	for depth := 0; depth < 6 && row != nil; depth++ {
		if table == cl.Table {
			return ground.Text(row[cl.Key]), true
		}
		var next map[string]any
		nextTable := ""
		fks := slices.Clone(p.g.FKs(table))
		sort.SliceStable(fks, func(i, j int) bool { return fks[i].RefTable == cl.Table && fks[j].RefTable != cl.Table })
		first := ""
		for _, fk := range fks {
			v := row[fk.Column]
			if v == nil {
				continue
			}
			if fk.RefTable == cl.Table && fk.RefColumn == cl.Key {
				if ground.Text(v) == prefer && prefer != "" {
					return prefer, true
				}
				if first == "" {
					first = ground.Text(v)
				}
				continue
			}
			if first != "" {
				break // the callers named come first; parents do not matter
			}
			parent := findRow(added[fk.RefTable], fk.RefColumn, v)
			if parent == nil {
				parent = p.g.Find(fk.RefTable, fk.RefColumn, v)
			}
			if parent != nil && next == nil {
				next, nextTable = parent, fk.RefTable
			}
		}
		if first != "" {
			return first, true
		}
		row, table = next, nextTable
	}
	return "", false
}

func findRow(rows []map[string]any, col string, v any) map[string]any {
	want := ground.Text(v)
	for _, r := range rows {
		if ground.Text(r[col]) == want {
			return r
		}
	}
	return nil
}

// frozenState is the frozen world's snapshot, read once per prover: what a
// setup is compared with.
type frozenState struct {
	mu   sync.Mutex
	snap *world.Snapshot
}

func (p *Prover) frozen(ctx context.Context) (world.Snapshot, error) {
	p.pristine.mu.Lock()
	defer p.pristine.mu.Unlock()
	if p.pristine.snap != nil {
		return *p.pristine.snap, nil
	}
	var snap world.Snapshot
	err := p.w.Copy(ctx, func(cp *world.Copy) error {
		var err error
		snap, err = cp.Snapshot(ctx)
		return err
	})
	if err != nil {
		return world.Snapshot{}, fmt.Errorf("frozen world: %w", err)
	}
	p.pristine.snap = &snap
	return snap, nil
}
