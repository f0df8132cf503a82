package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"time"
)

// Contract is one agent contract directory, loaded and validated.
//
// Field names follow contract.yaml; positions (Line) are kept so that every later
// problem (a probe, a scenario naming a tool) can point back at the file.
type Contract struct {
	// Dir is the directory Load read; empty for a contract LoadFS read.
	Dir string `json:"-"`
	// Files are the files the contract is made of (slash paths relative to
	// its root) and their contents: what SHA256 hashes, and what LoadFS
	// reads back into the same contract.
	Files map[string][]byte `json:"-"`

	Agent     string     `json:"agent"`
	OneLiner  string     `json:"one_liner"`
	Modality  string     `json:"modality"`  // chat | voice
	Direction []string   `json:"direction"` // inbound and/or outbound
	Now       string     `json:"now,omitempty"`
	Notes     string     `json:"notes,omitempty"`
	Caller    *Caller    `json:"caller,omitempty"`
	Rules     []Rule     `json:"rules"`
	UseCases  []UseCase  `json:"use_cases"`
	Tools     []Tool     `json:"tools"`
	Sequences []Sequence `json:"sequences,omitempty"`
	Personas  Personas   `json:"personas,omitempty"`

	// World: schema.sql text and seed rows per table, in schema order.
	SchemaSQL string      `json:"-"`
	Tables    []Table     `json:"-"`
	Seeds     []SeedTable `json:"-"`

	// Starlark sources by path relative to Dir (handlers/*.star, subgoals/*.star, lib/*.star).
	Sources map[string]string `json:"-"`

	SubGoals []SubGoal `json:"-"`

	// SHA256 is the hash of every file the contract is made of (sorted by path);
	// WorldSHA256 covers only what builds the world (schema and seed).
	SHA256      string `json:"-"`
	WorldSHA256 string `json:"-"`
}

// Caller names who the person on the other end is, once identified.
type Caller struct {
	Table string   `json:"table"`
	Key   string   `json:"key"`
	From  []string `json:"from"`
	// Inferred: the contract names no caller; this one was read from the
	// tools other tools require (see inferCaller).
	Inferred bool `json:"inferred,omitempty"`
	Line     int  `json:"-"`
}

// Rule is a hard rule the agent must keep. Check, when set, names a
// code-settled sub-goal of the contract (subgoals/<check>.star) that fails
// when the rule is broken: a machine check, so the rule can ground a refusal
// the world itself would not make. A scenario that names the rule gives the
// check's params in its sub_goals.
type Rule struct {
	ID        string `json:"id"`
	Text      string `json:"text"`
	Check     string `json:"check,omitempty"`
	Line      int    `json:"-"`
	CheckLine int    `json:"-"`
}

// UseCase is one thing the agent is for. Tools, optional, names
// the tools this use case is served by, when the author wants to say so; the
// planner otherwise matches use cases to tools by their words.
//
// Direction says who places the call: inbound (the caller rings the agent)
// or outbound (the agent rings a callee about a record of the world). An
// outbound use case names the table of that record (Purpose), whose owner in
// the caller table is the callee, and optionally the tools the agent calls
// when the call reaches a voicemail box or someone other than the callee
// (MissedCall) and when the callee asks to be called later (CallLater).
type UseCase struct {
	ID         string   `json:"id"`
	Text       string   `json:"text"`
	Tools      []string `json:"tools,omitempty"`
	Direction  string   `json:"direction,omitempty"`
	Purpose    string   `json:"purpose,omitempty"`
	MissedCall string   `json:"missed_call,omitempty"`
	CallLater  string   `json:"call_later,omitempty"`
	Line       int      `json:"-"`
}

// Directions a contract and its use cases may take.
const (
	Inbound  = "inbound"
	Outbound = "outbound"
)

// Outbound reports whether the agent places the use case's calls.
func (u *UseCase) Outbound() bool { return u.Direction == Outbound }

// Tool is one tool the agent can call.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Params      map[string]any `json:"params"` // JSON Schema, an object schema
	// ParamOrder is the order params.properties are written in contract.yaml
	// (a map loses it; prompts and probes want it).
	ParamOrder       []string      `json:"param_order,omitempty"`
	Requires         []Requirement `json:"requires,omitempty"`
	Handler          string        `json:"handler"` // path relative to Dir
	ChangesState     *bool         `json:"changes_state,omitempty"`
	LogOnly          []string      `json:"log_only,omitempty"`
	EndsConversation bool          `json:"ends_conversation,omitempty"`
	Line             int           `json:"-"`
}

// Requirement is one entry of a tool's requires list: at least one of AnyOf
// must have returned ok earlier in the conversation, and when Same is given the
// named arguments must be equal between the two calls.
type Requirement struct {
	AnyOf []string `json:"any_of"`
	Same  []string `json:"same,omitempty"`
	Line  int      `json:"-"`
}

// Sequence is a probe: calls whose end state must hold.
type Sequence struct {
	Name   string         `json:"name"`
	Steps  []SequenceStep `json:"steps"`
	Expect []Expectation  `json:"expect"`
	Line   int            `json:"-"`
}

// SequenceStep is one call of a sequence; Expect is "" (ok) or "refused".
type SequenceStep struct {
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	Expect string         `json:"expect,omitempty"`
	Line   int            `json:"-"`
}

// Expectation is a query whose rows must equal Rows (as JSON values).
type Expectation struct {
	SQL       string           `json:"sql"`
	Rows      []map[string]any `json:"rows"`
	Unordered bool             `json:"unordered,omitempty"`
	Line      int              `json:"-"`
}

// Personas are the vocabularies callers are dealt from; empty lists fall back
// to built-in vocabularies.
type Personas struct {
	Personalities []string `json:"personalities,omitempty"`
	Accents       []string `json:"accents,omitempty"`
	Locations     []string `json:"locations,omitempty"`
	Styles        []string `json:"styles,omitempty"`
	// What a phone line adds, dealt to the scenarios of voice agents: how
	// the line sounds, what can be heard around the person, and how they
	// give names and codes.
	LineQualities    []string `json:"line_qualities,omitempty"`
	BackgroundNoises []string `json:"background_noises,omitempty"`
	Spellings        []string `json:"spellings,omitempty"`
}

// Table is what the loader learnt of one CREATE TABLE in schema.sql.
type Table struct {
	Name       string   `json:"name"`
	Columns    []Column `json:"columns"`
	PrimaryKey []string `json:"primary_key"`
	// Unique lists the column sets that must be unique besides the primary
	// key: UNIQUE on a column, UNIQUE (a, b), CREATE UNIQUE INDEX on plain
	// columns (a partial index counts as if it held for every row).
	Unique [][]string `json:"unique,omitempty"`
	// Checks are the CHECK constraints, inline and table-level, in order.
	Checks []Check `json:"checks,omitempty"`
	Line   int     `json:"-"`
}

// Check is one CHECK constraint. Expr is its expression as SQL text; when it
// asks one simple thing of one column, Column, Op and Values say what:
//
//	status IN ('a', 'b')     Op "in", Values [a b]
//	code ~ '^#W[0-9]{4}$'    Op "~", Values [^#W[0-9]{4}$]
//	year BETWEEN 1990 AND 2027   Op "between", Values [1990 2027]
//	email LIKE '%@%'         Op "like"
//	amount > 0               Op ">" (also >=, <, <=, =, <>)
//	length(vin) = 17         Op "length", Values [17]
//
// Anything else keeps Op "" (Postgres still enforces it).
type Check struct {
	Expr   string   `json:"expr"`
	Column string   `json:"column,omitempty"`
	Op     string   `json:"op,omitempty"`
	Values []string `json:"values,omitempty"`
}

// ChecksOn returns the simple checks that constrain one column of the table.
func (t *Table) ChecksOn(column string) []Check {
	var out []Check
	for _, c := range t.Checks {
		if c.Column == column && c.Op != "" {
			out = append(out, c)
		}
	}
	return out
}

// IsUnique reports whether a column set is the primary key or one of the
// table's unique sets (in any order).
func (t *Table) IsUnique(cols ...string) bool {
	same := func(a []string) bool {
		if len(a) != len(cols) {
			return false
		}
		for _, x := range a {
			found := false
			for _, y := range cols {
				found = found || x == y
			}
			if !found {
				return false
			}
		}
		return true
	}
	if len(t.PrimaryKey) > 0 && same(t.PrimaryKey) {
		return true
	}
	for _, u := range t.Unique {
		if same(u) {
			return true
		}
	}
	return false
}

// Column is one column of a table; References is "table.column" for a foreign key.
type Column struct {
	Name       string `json:"name"`
	Type       string `json:"type"` // lower-case SQL type as written, e.g. "text", "integer", "numeric(10,2)"
	NotNull    bool   `json:"not_null,omitempty"`
	References string `json:"references,omitempty"`
	// Default is the DEFAULT expression as written, "identity" for serial and
	// identity columns, "generated" for generated columns, "" for none: a seed
	// row may leave out a NOT NULL column only when it has one.
	Default string `json:"default,omitempty"`
}

// SeedTable holds the rows of world/seed/<table>.jsonl.
type SeedTable struct {
	Table string           `json:"table"`
	File  string           `json:"file"`
	Rows  []map[string]any `json:"rows"`
	Lines []int            `json:"-"` // line of each row in File
}

// SubGoal is one entry of the sub-goal catalogue (subgoals/<name>.star).
type SubGoal struct {
	Name   string            `json:"name"`
	What   string            `json:"what"`
	Judged bool              `json:"judged"`
	Params map[string]string `json:"params"` // name -> type ("string", "int", "number", "bool", "list", "dict")
	// Tools, of a judged sub-goal, are the tools whose calls it is about: it
	// is graded only on conversations that call one of them (or are tempted
	// to). None: it is about every conversation.
	Tools     []string `json:"tools,omitempty"`
	ToolsLine int      `json:"-"`
	File      string   `json:"file"`
	Source    string   `json:"-"`
}

// Tool returns the tool of that name, or nil.
func (c *Contract) Tool(name string) *Tool {
	for i := range c.Tools {
		if c.Tools[i].Name == name {
			return &c.Tools[i]
		}
	}
	return nil
}

// UseCase returns the use case with that id, or nil.
func (c *Contract) UseCase(id string) *UseCase {
	for i := range c.UseCases {
		if c.UseCases[i].ID == id {
			return &c.UseCases[i]
		}
	}
	return nil
}

// Table returns the table of that name, or nil.
func (c *Contract) Table(name string) *Table {
	for i := range c.Tables {
		if c.Tables[i].Name == name {
			return &c.Tables[i]
		}
	}
	return nil
}

// Rule returns the rule with that id, or nil.
func (c *Contract) Rule(id string) *Rule {
	for i := range c.Rules {
		if c.Rules[i].ID == id {
			return &c.Rules[i]
		}
	}
	return nil
}

// SubGoal returns the catalogue entry of that name, or nil.
func (c *Contract) SubGoal(name string) *SubGoal {
	for i := range c.SubGoals {
		if c.SubGoals[i].Name == name {
			return &c.SubGoals[i]
		}
	}
	return nil
}

// Seed returns the seed rows of a table (nil when it has none).
func (c *Contract) Seed(table string) []map[string]any {
	for _, s := range c.Seeds {
		if s.Table == table {
			return s.Rows
		}
	}
	return nil
}

// Column returns the named column of a table, or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// HashFiles hashes files (path -> content) in path order; used for contract and world hashes.
func HashFiles(files map[string][]byte) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write(files[p])
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// DefaultNow is the world's clock when the contract gives no now. It is
// fixed so that every run of a world sees the same time.
const DefaultNow = "2026-01-01T09:00:00Z"

// Clock is the world's clock: the contract's now (RFC 3339, checked when
// it loads), else DefaultNow.
func (c *Contract) Clock() time.Time {
	if t, err := time.Parse(time.RFC3339, c.Now); err == nil {
		return t
	}
	t, _ := time.Parse(time.RFC3339, DefaultNow)
	return t
}
