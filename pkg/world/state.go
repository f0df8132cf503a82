package world

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

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
// of any size is a few of them. A table the copy never touched is the
// frozen world's text, shared by every snapshot, and not sent again.
type Snapshot struct{ tables []rawTable }

type rawTable struct {
	name string
	key  []string
	doc  string
	// touched: the copy's transaction changed rows of the table (or may
	// have); an untouched table's doc is the frozen world's.
	touched bool
}

// same reports whether two snapshots of a table hold the same rows.
func (t rawTable) same(o rawTable) bool {
	return !t.touched && !o.touched || t.doc == o.doc
}

// frozenDocs is the frozen world's text of each table, learnt from the
// first snapshots, in which a table no copy had touched is rendered in
// full. Once every table is known, snapshots ask only for touched tables.
type frozenDocs struct {
	mu       sync.Mutex
	docs     map[string]string
	complete bool
}

// known reports whether every table's frozen text is held.
func (f *frozenDocs) known() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.complete
}

// fill completes snap: an untouched table the query did not render takes
// the frozen text; one it rendered teaches it.
func (f *frozenDocs) fill(snap *Snapshot, tables int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range snap.tables {
		t := &snap.tables[i]
		if t.touched {
			continue
		}
		if t.doc == "" {
			d, ok := f.docs[t.name]
			if !ok {
				return fmt.Errorf("world state: table %s was not rendered and its frozen rows are not known", t.name)
			}
			t.doc = d
			continue
		}
		if d, ok := f.docs[t.name]; ok {
			t.doc = d // one string shared by every snapshot
			continue
		}
		if f.docs == nil {
			f.docs = map[string]string{}
		}
		f.docs[t.name] = t.doc
	}
	f.complete = len(f.docs) >= tables
	return nil
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
	if err := cp.w.frozen.fill(&snap, len(cp.w.tables)); err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// queueSnapshot queues the world's state query on b, reading into snap;
// failed (when not nil) is set if the query itself fails. The caller fills
// snap's untouched tables (frozenDocs.fill) once the batch ran.
func (cp *Copy) queueSnapshot(b *pgx.Batch, snap *Snapshot, failed *bool) {
	all := !cp.w.frozen.known()
	b.Queue(cp.w.stateSQL, all).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		i := 0
		for rows.Next() {
			var t rawTable
			var doc *string
			if err := rows.Scan(&t.name, &t.touched, &doc); err != nil {
				return err
			}
			if doc != nil {
				t.doc = *doc
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
		rows, err := decodeRows(t.name, []byte(t.doc))
		if err != nil {
			return State{}, err
		}
		st.Tables = append(st.Tables, TableState{Name: t.name, Key: t.key, Rows: rows})
	}
	return st, nil
}

func decodeRows(table string, doc []byte) ([]map[string]any, error) {
	v, err := script.DecodeJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("world state: %s: %w", table, err)
	}
	list, _ := v.([]any)
	rows := make([]map[string]any, 0, len(list))
	for _, r := range list {
		if m, ok := r.(map[string]any); ok {
			rows = append(rows, m)
		}
	}
	return rows, nil
}

// DiffSnapshots is Diff of the two states, decoding only what differs: a
// table rendered the same has the same rows, and within a table that
// changed, a row rendered the same on both sides is matched to itself by
// Diff and adds nothing, so only the other rows are decoded.
func DiffSnapshots(before, after Snapshot) (StateDiff, error) {
	old := make(map[string]rawTable, len(before.tables))
	for _, t := range before.tables {
		old[t.name] = t
	}
	var d StateDiff
	seen := make(map[string]bool, len(after.tables))
	for _, at := range after.tables {
		seen[at.name] = true
		bt, ok := old[at.name]
		if ok && bt.same(at) {
			continue
		}
		if !ok {
			bt = rawTable{name: at.name, key: at.key, doc: "[]"}
		}
		td, err := diffRaw(bt, at)
		if err != nil {
			return StateDiff{}, err
		}
		if td != nil {
			d.Tables = append(d.Tables, *td)
		}
	}
	for _, bt := range before.tables { // tables only before has
		if seen[bt.name] {
			continue
		}
		td, err := diffRaw(bt, rawTable{name: bt.name, key: bt.key, doc: "[]"})
		if err != nil {
			return StateDiff{}, err
		}
		if td != nil {
			d.Tables = append(d.Tables, *td)
		}
	}
	return d, nil
}

// diffRaw is diffTable of two renderings of a table, decoding only the rows
// whose text is not on the other side.
func diffRaw(before, after rawTable) (*TableDiff, error) {
	b, err := splitRows(before.name, before.doc)
	if err != nil {
		return nil, err
	}
	a, err := splitRows(after.name, after.doc)
	if err != nil {
		return nil, err
	}
	inB := make(map[string]bool, len(b))
	for _, r := range b {
		inB[r] = true
	}
	inA := make(map[string]bool, len(a))
	for _, r := range a {
		inA[r] = true
	}
	bs, err := decodeOnly(before.name, b, inA)
	if err != nil {
		return nil, err
	}
	as, err := decodeOnly(after.name, a, inB)
	if err != nil {
		return nil, err
	}
	return diffTable(TableState{Name: before.name, Key: before.key, Rows: bs}, TableState{Name: after.name, Key: after.key, Rows: as}), nil
}

// splitRows cuts a json_agg array into its rows' texts without decoding
// them: one pass that tracks strings and nesting, the cost of reading the
// text once.
func splitRows(table, doc string) ([]string, error) {
	bad := func(why string) error { return fmt.Errorf("world state: %s: rows are not a JSON array: %s", table, why) }
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '[' {
		return nil, bad("no opening bracket")
	}
	var rows []string
	depth, start, inString := 0, -1, false
	for i++; i < len(doc); i++ {
		ch := doc[i]
		if inString {
			switch ch {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch ch {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				if ch != ']' {
					return nil, bad("unbalanced")
				}
				if start >= 0 {
					rows = append(rows, strings.TrimRight(doc[start:i], " \t\n\r"))
				}
				if skipSpace(doc, i+1) != len(doc) {
					return nil, bad("text after the array")
				}
				return rows, nil
			}
			depth--
			continue
		case ',':
			if depth == 0 {
				if start < 0 {
					return nil, bad("empty element")
				}
				rows = append(rows, strings.TrimRight(doc[start:i], " \t\n\r"))
				start = -1
				continue
			}
		}
		if start < 0 {
			start = i
		}
	}
	return nil, bad("no closing bracket")
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// decodeOnly decodes the rows whose text other does not hold, in order.
func decodeOnly(table string, rows []string, other map[string]bool) ([]map[string]any, error) {
	out := []map[string]any{}
	for _, r := range rows {
		if other[r] {
			continue
		}
		v, err := script.DecodeJSON([]byte(r))
		if err != nil {
			return nil, fmt.Errorf("world state: %s: %w", table, err)
		}
		if m, ok := v.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out, nil
}

// ChangedTables lists the tables whose rows differ between two snapshots,
// in after's order then those only before has, without decoding any: a
// table rendered the same has the same rows.
func ChangedTables(before, after Snapshot) []string {
	old := make(map[string]rawTable, len(before.tables))
	for _, t := range before.tables {
		old[t.name] = t
	}
	var out []string
	for _, t := range after.tables {
		if o, ok := old[t.name]; !ok || !o.same(t) {
			out = append(out, t.name)
		}
		delete(old, t.name)
	}
	for _, t := range before.tables {
		if _, ok := old[t.name]; ok {
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
