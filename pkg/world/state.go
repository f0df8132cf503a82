package world

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
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

// State reads every table of the copy in one round trip, each rendered
// whole, rows in primary key order.
func (cp *Copy) State(ctx context.Context) (State, error) {
	snap, err := cp.snapshot(ctx, true)
	if err != nil {
		return State{}, err
	}
	return snap.decode(nil)
}

// Snapshot is every table of a copy as Postgres rendered it, not decoded yet:
// DiffSnapshots decodes only the rows that differ, which on a world of any
// size are a few. A table the copy never touched is the frozen world's
// text, shared by every snapshot and not sent again; a table the copy only
// added to is the frozen rows and the copy's own (see stateSQL).
type Snapshot struct{ tables []rawTable }

type rawTable struct {
	name string
	key  []string
	// doc is the table's rows, or when the table is layered, the frozen
	// world's rows (base, split) under ours.
	doc  string
	base []string
	// ours, when layered: the rows the copy's transaction wrote, every
	// frozen row being still there.
	ours    string
	layered bool
	// xminsSeen: the xmins of an untouched table rendered whole, as the
	// query sent them; fill keeps them as the frozen world's.
	xminsSeen *string
	// touched: the copy's transaction changed rows of the table (or may
	// have). An untouched table is layered with no rows of its own.
	touched bool
}

// rows is every row's text; a layered table's are the frozen rows, then its
// own, so not in key order.
func (t rawTable) rows() ([]string, error) {
	if !t.layered {
		return splitRows(t.name, t.doc)
	}
	ours, err := splitRows(t.name, t.ours)
	if err != nil {
		return nil, err
	}
	return append(slices.Clip(t.base), ours...), nil
}

// same reports whether two snapshots of a table hold the same rows.
func (t rawTable) same(o rawTable) (bool, error) {
	switch {
	case t.layered && o.layered:
		return t.ours == o.ours, nil
	case !t.layered && !o.layered:
		return t.doc == o.doc, nil
	}
	a, err := t.rows()
	if err != nil {
		return false, err
	}
	b, err := o.rows()
	if err != nil || len(a) != len(b) {
		return false, err
	}
	in := make(map[string]bool, len(a))
	for _, r := range a {
		in[r] = true
	}
	for _, r := range b {
		if !in[r] {
			return false, nil
		}
	}
	return true, nil
}

// frozenDocs is the frozen world, per schema (the world's and its twin's
// rows were built by different transactions): each table's text, its rows,
// and the xmins of its rows. It is learnt from the first snapshots of the
// schema, in which a table no copy had touched is rendered in full; once
// every table is known, snapshots ask only for what copies changed.
type frozenDocs struct {
	mu       sync.Mutex
	bySchema map[string]*frozenSchema
}

type frozenSchema struct {
	tables   map[string]*frozenTable
	complete bool
	// The query's $2 and $3 once complete: per table the frozen xmins
	// (nil: the table is never sent as layered) and the frozen row count.
	xmins  []*string
	counts []int64
}

type frozenTable struct {
	doc   string
	rows  []string
	xmins *string // '{…}' as Postgres renders a text array; nil for an empty table
}

// maxFrozenXmins bounds the transactions a layered table's frozen rows may
// come from (a world is built in one or two).
const maxFrozenXmins = 64

// params are the state query's parameters for a copy of schema.
func (f *frozenDocs) params(schema string, tables []tableInfo, all bool) []any {
	f.mu.Lock()
	defer f.mu.Unlock()
	fs := f.bySchema[schema]
	if all || fs == nil || !fs.complete {
		return []any{true, make([]*string, len(tables)), make([]int64, len(tables))}
	}
	return []any{false, fs.xmins, fs.counts}
}

// fill completes snap: an untouched table the query did not render takes
// the frozen text, a layered one the frozen rows; an untouched one it
// rendered teaches them.
func (f *frozenDocs) fill(snap *Snapshot, schema string, tables []tableInfo) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fs := f.bySchema[schema]
	if fs == nil {
		fs = &frozenSchema{tables: map[string]*frozenTable{}}
		if f.bySchema == nil {
			f.bySchema = map[string]*frozenSchema{}
		}
		f.bySchema[schema] = fs
	}
	for i := range snap.tables {
		t := &snap.tables[i]
		ft := fs.tables[t.name]
		if t.touched && !t.layered {
			continue
		}
		if ft == nil {
			if t.touched || t.doc == "" {
				return fmt.Errorf("world state: table %s was not rendered and its frozen rows are not known", t.name)
			}
			rows, err := splitRows(t.name, t.doc)
			if err != nil {
				return err
			}
			ft = &frozenTable{doc: t.doc, rows: rows, xmins: t.xminsSeen}
			fs.tables[t.name] = ft
		}
		// One string and one row list shared by every snapshot.
		t.doc, t.base, t.xminsSeen = ft.doc, ft.rows, nil
		if !t.touched {
			t.layered, t.ours = true, "[]"
		}
	}
	if !fs.complete && len(fs.tables) >= len(tables) {
		fs.complete = true
		fs.xmins = make([]*string, len(tables))
		fs.counts = make([]int64, len(tables))
		for i, ti := range tables {
			ft := fs.tables[ti.name]
			if ft == nil {
				fs.complete = false
				break
			}
			fs.counts[i] = int64(len(ft.rows))
			x := ft.xmins
			if x == nil && len(ft.rows) == 0 {
				empty := "{}"
				x = &empty
			}
			if ti.layered && len(ti.key) > 0 && x != nil && strings.Count(*x, ",") < maxFrozenXmins {
				fs.xmins[i] = x
			}
		}
	}
	return nil
}

// learnFrozen reads the frozen world of both schemas with a snapshot of an
// untouched copy of each, so that snapshots send only what copies change
// from the first one on (a table every copy writes, such as the one setups
// insert into, would otherwise never be seen untouched). Failing costs only
// speed: snapshots render whole until a copy that left a table untouched
// teaches it.
func (w *World) learnFrozen(ctx context.Context) {
	for _, schema := range []string{w.schema, w.twin} {
		_ = w.retry(ctx, func() (bool, error) {
			cp, err := w.begin(ctx, schema)
			if err != nil {
				return retryable(err), err
			}
			defer cp.end(ctx)
			_, err = cp.snapshot(ctx, true)
			return cp.retry || retryable(err), err
		})
	}
}

// Snapshot reads every table of the copy in one round trip.
func (cp *Copy) Snapshot(ctx context.Context) (Snapshot, error) {
	return cp.snapshot(ctx, false)
}

func (cp *Copy) snapshot(ctx context.Context, all bool) (Snapshot, error) {
	if cp.broken != nil {
		return Snapshot{}, cp.broken
	}
	var snap Snapshot
	if cp.w.stateSQL == "" {
		return snap, nil
	}
	b := &pgx.Batch{}
	cp.queueSnapshot(b, &snap, nil, all)
	if err := cp.send(ctx, b); err != nil {
		return Snapshot{}, fmt.Errorf("world state: %w", err)
	}
	if err := cp.w.frozen.fill(&snap, cp.schema, cp.w.tables); err != nil {
		return Snapshot{}, err
	}
	return snap, nil
}

// queueSnapshot queues the world's state query on b, reading into snap;
// failed (when not nil) is set if the query itself fails. The caller fills
// snap's untouched tables (frozenDocs.fill) once the batch ran.
func (cp *Copy) queueSnapshot(b *pgx.Batch, snap *Snapshot, failed *bool, all bool) {
	b.Queue(cp.w.stateSQL, cp.w.frozen.params(cp.schema, cp.w.tables, all)...).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		i := 0
		for rows.Next() {
			var t rawTable
			var doc, ours *string
			if err := rows.Scan(&t.name, &t.touched, &doc, &ours, &t.xminsSeen); err != nil {
				return err
			}
			switch {
			case doc != nil:
				t.doc = *doc
			case ours != nil:
				t.ours, t.layered = *ours, true
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
		rows, err := t.rows()
		if err != nil {
			return State{}, err
		}
		ms, err := decodeOnly(t.name, rows, nil)
		if err != nil {
			return State{}, err
		}
		st.Tables = append(st.Tables, TableState{Name: t.name, Key: t.key, Rows: ms})
	}
	return st, nil
}

// DiffSnapshots is Diff of the two states, decoding only what differs: a
// table rendered the same has the same rows, and within a table that
// changed, a row rendered the same on both sides is matched to itself by
// Diff and adds nothing, so only the other rows are decoded. Two layered
// renderings share their frozen rows, none of which a row of either one's
// own has the key of: their diff is that of their own rows.
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
	var b, a []string
	var err error
	switch {
	case before.layered && after.layered:
		if before.ours == after.ours {
			return nil, nil
		}
		if b, err = splitRows(before.name, before.ours); err != nil {
			return nil, err
		}
		if a, err = splitRows(after.name, after.ours); err != nil {
			return nil, err
		}
	case !before.layered && !after.layered && before.doc == after.doc:
		return nil, nil
	default:
		if b, err = before.rows(); err != nil {
			return nil, err
		}
		if a, err = after.rows(); err != nil {
			return nil, err
		}
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
	bad := func(why string) error {
		return fmt.Errorf("world state: %s: rows are not a JSON array: %s", table, why)
	}
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
// in after's order then those only before has, without decoding any.
func ChangedTables(before, after Snapshot) []string {
	old := make(map[string]rawTable, len(before.tables))
	for _, t := range before.tables {
		old[t.name] = t
	}
	var out []string
	for _, t := range after.tables {
		o, ok := old[t.name]
		if same, err := o.same(t); !ok || err != nil || !same {
			out = append(out, t.name) // unreadable text counts as changed
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
