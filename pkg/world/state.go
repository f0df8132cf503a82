package world

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/suitegen/suitegen/pkg/script"
)

// State is every table of a copy, rows ordered by primary key (by the whole
// row when a table has none). Values are as json_agg renders them, decoded
// with integral numbers as int64.
type State struct {
	Tables []TableState `json:"tables"`
}

// TableState is one table's rows.
type TableState struct {
	Name string           `json:"name"`
	Key  []string         `json:"key,omitempty"`
	Rows []map[string]any `json:"rows"`
}

// Table returns the named table's state, or nil.
func (s State) Table(name string) *TableState {
	for i := range s.Tables {
		if s.Tables[i].Name == name {
			return &s.Tables[i]
		}
	}
	return nil
}

// State reads every table of the copy in one round trip.
func (cp *Copy) State(ctx context.Context) (State, error) {
	snap, err := cp.Snapshot(ctx)
	if err != nil {
		return State{}, err
	}
	return snap.decode(nil)
}

// Snapshot is every table of a copy as Postgres rendered it, not decoded yet:
// DiffSnapshots decodes only the tables whose text changed, which on a world
// of any size is a few of them.
type Snapshot struct{ tables []rawTable }

type rawTable struct {
	name string
	key  []string
	doc  string
}

// Snapshot reads every table of the copy in one round trip.
func (cp *Copy) Snapshot(ctx context.Context) (Snapshot, error) {
	if cp.broken != nil {
		return Snapshot{}, cp.broken
	}
	var snap Snapshot
	if cp.w.stateSQL == "" {
		return snap, nil
	}
	b := &pgx.Batch{}
	cp.queueSnapshot(b, &snap, nil)
	if err := cp.send(ctx, b); err != nil {
		return Snapshot{}, fmt.Errorf("world state: %w", err)
	}
	return snap, nil
}

// queueSnapshot queues the world's state query on b, reading into snap;
// failed (when not nil) is set if the query itself fails.
func (cp *Copy) queueSnapshot(b *pgx.Batch, snap *Snapshot, failed *bool) {
	b.Queue(cp.w.stateSQL).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		i := 0
		for rows.Next() {
			var t rawTable
			if err := rows.Scan(&t.name, &t.doc); err != nil {
				return err
			}
			if i < len(cp.w.tables) && cp.w.tables[i].name == t.name {
				t.key = cp.w.tables[i].key
			}
			snap.tables = append(snap.tables, t)
			i++
		}
		err := rows.Err()
		if err != nil && failed != nil {
			*failed = true
		}
		return err
	})
}

// decode turns the tables keep allows (nil: all) into a State.
func (s Snapshot) decode(keep func(name string) bool) (State, error) {
	var st State
	for _, t := range s.tables {
		if keep != nil && !keep(t.name) {
			continue
		}
		v, err := script.DecodeJSON([]byte(t.doc))
		if err != nil {
			return State{}, fmt.Errorf("world state: %s: %w", t.name, err)
		}
		ts := TableState{Name: t.name, Key: t.key, Rows: []map[string]any{}}
		for _, r := range v.([]any) {
			if m, ok := r.(map[string]any); ok {
				ts.Rows = append(ts.Rows, m)
			}
		}
		st.Tables = append(st.Tables, ts)
	}
	return st, nil
}

// DiffSnapshots is Diff of the two states, decoding only the tables whose
// text differs (a table rendered the same has the same rows).
func DiffSnapshots(before, after Snapshot) (StateDiff, error) {
	docs := make(map[string]string, len(before.tables))
	for _, t := range before.tables {
		docs[t.name] = t.doc
	}
	changed := map[string]bool{}
	for _, t := range after.tables {
		if d, ok := docs[t.name]; !ok || d != t.doc {
			changed[t.name] = true
		}
		delete(docs, t.name)
	}
	for name := range docs { // tables only before has
		changed[name] = true
	}
	if len(changed) == 0 {
		return StateDiff{}, nil
	}
	keep := func(name string) bool { return changed[name] }
	b, err := before.decode(keep)
	if err != nil {
		return StateDiff{}, err
	}
	a, err := after.decode(keep)
	if err != nil {
		return StateDiff{}, err
	}
	return Diff(b, a), nil
}

// ChangedTables lists the tables whose rows differ between two snapshots,
// in after's order then those only before has, without decoding any: a
// table rendered the same has the same rows.
func ChangedTables(before, after Snapshot) []string {
	docs := make(map[string]string, len(before.tables))
	for _, t := range before.tables {
		docs[t.name] = t.doc
	}
	var out []string
	for _, t := range after.tables {
		if d, ok := docs[t.name]; !ok || d != t.doc {
			out = append(out, t.name)
		}
		delete(docs, t.name)
	}
	for _, t := range before.tables {
		if _, ok := docs[t.name]; ok {
			out = append(out, t.name)
		}
	}
	return out
}

// StateDiff is what changed between two states, per table.
type StateDiff struct {
	Tables []TableDiff `json:"tables,omitempty"`
}

// TableDiff is one table's changes; rows are keyed by primary key.
type TableDiff struct {
	Table   string           `json:"table"`
	Added   []map[string]any `json:"added,omitempty"`
	Removed []map[string]any `json:"removed,omitempty"`
	Changed []RowChange      `json:"changed,omitempty"`
}

// RowChange is a row present in both states whose values differ.
type RowChange struct {
	Key     map[string]any `json:"key"`
	Columns []string       `json:"columns"` // the columns that changed, sorted
	Before  map[string]any `json:"before"`
	After   map[string]any `json:"after"`
}

// Empty reports whether nothing changed.
func (d StateDiff) Empty() bool { return len(d.Tables) == 0 }

// Diff compares two states table by table (in after's order, then tables
// only before has).
func Diff(before, after State) StateDiff {
	var d StateDiff
	seen := map[string]bool{}
	for _, at := range after.Tables {
		seen[at.Name] = true
		bt := before.Table(at.Name)
		if bt == nil {
			bt = &TableState{Name: at.Name, Key: at.Key}
		}
		if td := diffTable(*bt, at); td != nil {
			d.Tables = append(d.Tables, *td)
		}
	}
	for _, bt := range before.Tables {
		if !seen[bt.Name] {
			if td := diffTable(bt, TableState{Name: bt.Name, Key: bt.Key}); td != nil {
				d.Tables = append(d.Tables, *td)
			}
		}
	}
	return d
}

func rowKey(key []string, row map[string]any) string {
	if len(key) == 0 {
		b, _ := json.Marshal(row)
		return string(b)
	}
	vals := make([]any, len(key))
	for i, k := range key {
		vals[i] = row[k]
	}
	b, _ := json.Marshal(vals)
	return string(b)
}

func diffTable(before, after TableState) *TableDiff {
	key := after.Key
	if len(key) == 0 {
		key = before.Key
	}
	td := &TableDiff{Table: after.Name}
	old := make(map[string]map[string]any, len(before.Rows))
	for _, r := range before.Rows {
		old[rowKey(key, r)] = r
	}
	matched := map[string]bool{}
	for _, r := range after.Rows {
		k := rowKey(key, r)
		o, ok := old[k]
		if !ok {
			td.Added = append(td.Added, r)
			continue
		}
		matched[k] = true
		var cols []string
		for c, v := range r {
			if ov, ok := o[c]; !ok || !reflect.DeepEqual(ov, v) {
				cols = append(cols, c)
			}
		}
		for c := range o {
			if _, ok := r[c]; !ok {
				cols = append(cols, c)
			}
		}
		if len(cols) > 0 {
			sort.Strings(cols)
			km := map[string]any{}
			for _, c := range key {
				km[c] = r[c]
			}
			td.Changed = append(td.Changed, RowChange{Key: km, Columns: cols, Before: o, After: r})
		}
	}
	for _, r := range before.Rows {
		if !matched[rowKey(key, r)] {
			td.Removed = append(td.Removed, r)
		}
	}
	if len(td.Added) == 0 && len(td.Removed) == 0 && len(td.Changed) == 0 {
		return nil
	}
	return td
}
