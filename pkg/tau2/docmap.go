package tau2

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// MapFile is the document map's file in a contract directory: how the
// world's rows become a τ²-bench domain's own database document. Without
// it, the export writes tables as {table: {key: row}}.
const MapFile = "tau2-bench.json"

// Map says how the world's rows become the agent's database of a τ²-bench
// domain whose models hold lists (τ²-bench's own TelecomDB: plans,
// customers, lines, …). Each collection is a top-level list of that
// database, one document per row of a table, each document the answer of a
// tool that reads one record by its key. Every table of the world is placed:
// a collection's table, a part of a collection's documents (rows the tool
// nests inside them, such as a bill's line items), or the user's side, which
// the agent's database does not hold.
type Map struct {
	AgentDB    []Collection `json:"agent_db"`
	UserTables []string     `json:"user_tables,omitempty"`
}

// Collection is one top-level list of the agent's database.
type Collection struct {
	Name  string   `json:"name"`
	Table string   `json:"table"`
	Tool  string   `json:"tool"`
	Arg   string   `json:"arg,omitempty"`   // the tool's argument taking the key; default: the key column
	Parts []string `json:"parts,omitempty"` // tables whose rows the documents nest
	// RandomKeys: the domain's own tools draw a new document's key at
	// random (τ²-bench's telecom names a new bill B + 8 random hex
	// digits), so two replays of a task that adds one never agree.
	RandomKeys bool `json:"random_keys,omitempty"`
	key        string
}

// LoadMap reads a document map and checks it against the contract; an
// error names the field at fault.
func LoadMap(path string, c *contract.Contract) (*Map, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tau2-bench document map: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m Map
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("tau2-bench document map %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("tau2-bench document map %s: trailing data", path)
	}
	if err := m.check(c); err != nil {
		return nil, fmt.Errorf("tau2-bench document map %s: %w", path, err)
	}
	return &m, nil
}

func (m *Map) check(c *contract.Contract) error {
	if len(m.AgentDB) == 0 {
		return errors.New("agent_db: no collection given")
	}
	placed := map[string]string{} // table → where the map places it
	place := func(table, at string) error {
		if c.Table(table) == nil {
			return fmt.Errorf("%s: no table %q in the contract", at, table)
		}
		if prev, ok := placed[table]; ok {
			return fmt.Errorf("%s: table %s is already placed by %s", at, table, prev)
		}
		placed[table] = at
		return nil
	}
	names := map[string]bool{}
	for i := range m.AgentDB {
		col := &m.AgentDB[i]
		at := fmt.Sprintf("agent_db[%d]", i)
		if col.Name == "" {
			return fmt.Errorf("%s.name: empty", at)
		}
		if names[col.Name] {
			return fmt.Errorf("%s.name: %q given twice", at, col.Name)
		}
		names[col.Name] = true
		if err := place(col.Table, at+".table"); err != nil {
			return err
		}
		// A document is found by one key: the table's primary key.
		if pk := c.Table(col.Table).PrimaryKey; len(pk) != 1 {
			return fmt.Errorf("%s.table: %s has a primary key of %d columns; a collection's documents need one", at, col.Table, len(pk))
		} else {
			col.key = pk[0]
		}
		tool := c.Tool(col.Tool)
		if tool == nil {
			return fmt.Errorf("%s.tool: no tool %q in the contract", at, col.Tool)
		}
		if col.Arg == "" {
			col.Arg = col.key
		}
		if tool.Param(col.Arg) == nil {
			return fmt.Errorf("%s.arg: tool %s has no argument %q", at, col.Tool, col.Arg)
		}
		for j, p := range col.Parts {
			if err := place(p, fmt.Sprintf("%s.parts[%d]", at, j)); err != nil {
				return err
			}
		}
	}
	for i, t := range m.UserTables {
		if err := place(t, fmt.Sprintf("user_tables[%d]", i)); err != nil {
			return err
		}
	}
	// A table nowhere placed would be changed by setups the export could
	// neither carry nor say it dropped.
	for _, t := range c.Tables {
		if _, ok := placed[t.Name]; !ok {
			return fmt.Errorf("agent_db: table %s is placed nowhere (a collection's table, a collection's parts, or user_tables)", t.Name)
		}
	}
	return nil
}

// user reports whether the map puts the table on the user's side.
func (m *Map) user(table string) bool { return slices.Contains(m.UserTables, table) }

// Docs is an agent database in the domain's own layout: each collection a
// list of documents, in the map's order.
type Docs []DocList

// DocList is one collection's documents, by key order.
type DocList struct {
	Name string
	Keys []string
	Docs []json.RawMessage
}

// MarshalJSON writes {"collection": [document, ...], ...} in order.
func (d Docs) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, l := range d {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeKey(&buf, l.Name)
		buf.WriteByte('[')
		for j, doc := range l.Docs {
			if j > 0 {
				buf.WriteByte(',')
			}
			buf.Write(doc)
		}
		buf.WriteByte(']')
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// changedFrom is the collections of d whose documents differ from base's,
// whole: τ²-bench merges an initial state into its data key by key, and a
// list replaces the list it lands on.
func (d Docs) changedFrom(base Docs) Docs {
	var out Docs
	for i, l := range d {
		if i < len(base) && sameList(l, base[i]) {
			continue
		}
		out = append(out, l)
	}
	return out
}

func sameList(a, b DocList) bool {
	if len(a.Docs) != len(b.Docs) {
		return false
	}
	for i := range a.Docs {
		if a.Keys[i] != b.Keys[i] || !jsonEqual(a.Docs[i], b.Docs[i]) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return sameJSON(x, y)
}

// keySet is each collection's keys in a state of the world.
type keySet map[string][]string

// keysOf is the keys of every collection's table in a world state.
func (m *Map) keysOf(st world.State) keySet {
	ks := keySet{}
	for _, col := range m.AgentDB {
		t := st.Table(col.Table)
		if t == nil {
			continue
		}
		for _, r := range t.Rows {
			ks[col.Name] = append(ks[col.Name], Key([]string{col.key}, r))
		}
		sort.Strings(ks[col.Name])
	}
	return ks
}

// after is the keys once a change is made: rows added, rows removed.
func (m *Map) after(ks keySet, d *world.StateDiff) keySet {
	out := keySet{}
	for name, keys := range ks {
		out[name] = slices.Clone(keys)
	}
	if d == nil {
		return out
	}
	for _, col := range m.AgentDB {
		for _, td := range d.Tables {
			if td.Table != col.Table {
				continue
			}
			for _, r := range td.Removed {
				k := Key([]string{col.key}, r)
				out[col.Name] = slices.DeleteFunc(out[col.Name], func(s string) bool { return s == k })
			}
			for _, r := range td.Added {
				out[col.Name] = append(out[col.Name], Key([]string{col.key}, r))
			}
			sort.Strings(out[col.Name])
		}
	}
	return out
}

// randomAdded is the first collection drawing random keys to which changed
// adds a document that base lacks, and that document's key ("" when none).
func (m *Map) randomAdded(changed, base Docs) (string, string) {
	for _, l := range changed {
		i := slices.IndexFunc(m.AgentDB, func(c Collection) bool { return c.Name == l.Name })
		if i < 0 || !m.AgentDB[i].RandomKeys {
			continue
		}
		var had []string
		for _, b := range base {
			if b.Name == l.Name {
				had = b.Keys
			}
		}
		for _, k := range l.Keys {
			if !slices.Contains(had, k) {
				return l.Name, k
			}
		}
	}
	return "", ""
}

// lookups are the calls that read every document of the keys.
func (m *Map) lookups(ks keySet) []scenario.Call {
	var calls []scenario.Call
	for _, col := range m.AgentDB {
		for _, k := range ks[col.Name] {
			calls = append(calls, scenario.Call{Tool: col.Tool, Args: map[string]any{col.Arg: k}})
		}
	}
	return calls
}

// docs plays the setup and the calls, then reads every document of the
// keys, and returns the calls' results and the database they leave. A
// document tool that refuses a key its table holds is an error of the map.
func (x *exporter) docs(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, ks keySet) ([]world.CallResult, Docs, error) {
	looks := x.m.lookups(ks)
	rs, _, err := x.r.Rehearse(ctx, setup, append(slices.Clone(calls), looks...), false)
	if err != nil {
		return nil, nil, err
	}
	if len(rs) != len(calls)+len(looks) {
		return nil, nil, fmt.Errorf("document map: %d call(s) played of %d", len(rs), len(calls)+len(looks))
	}
	out := Docs{}
	i := len(calls)
	for _, col := range x.m.AgentDB {
		l := DocList{Name: col.Name, Keys: []string{}, Docs: []json.RawMessage{}}
		for _, k := range ks[col.Name] {
			r := rs[i]
			i++
			if !r.OK {
				return nil, nil, fmt.Errorf("document map: %s(%s=%q) is not answered ok: %s", col.Tool, col.Arg, k, r.Error)
			}
			l.Keys = append(l.Keys, k)
			l.Docs = append(l.Docs, r.Result)
		}
		out = append(out, l)
	}
	return rs[:len(calls)], out, nil
}
