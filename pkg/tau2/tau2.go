package tau2

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/world"
)

// Format is the export's name, on the command line and in the document.
const Format = "tau2-bench"

// Reward components of a τ²-bench task's reward_basis.
const (
	RewardDB          = "DB"
	RewardCommunicate = "COMMUNICATE"
	RewardAction      = "ACTION"
)

// Replayer plays calls after a setup on a throwaway copy of the world and
// returns each call's result and the state the calls changed (prove.Prover).
type Replayer interface {
	Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, diff bool) ([]world.CallResult, *world.StateDiff, error)
}

// Source is what the export needs besides the written suite: the contract
// the suite was written for, its world, and a replayer over that world.
type Source struct {
	Contract *contract.Contract
	World    *world.World
	Replayer Replayer
	// Map, when given, writes the agent's database in a domain's own
	// layout (LoadMap); nil writes tables as {table: {key: row}}.
	Map *Map
}

// Code says why a scenario was not exported.
type Code string

// Why a scenario cannot become a τ²-bench task.
const (
	// SetupFailed: the setup no longer runs on the world.
	SetupFailed Code = "setup-failed"
	// SetupRemoves: the setup deletes rows; an initial state is merged
	// into the data and can only add or update records.
	SetupRemoves Code = "setup-removes-rows"
	// Keyless: the setup changes a table without a primary key, whose
	// rows have no key to be merged under.
	Keyless Code = "keyless-table"
	// SolutionFailed: a solution call is not answered ok on replay.
	SolutionFailed Code = "solution-failed"
	// NotDeterministic: replaying the solution twice leaves two states.
	NotDeterministic Code = "not-deterministic"
	// NoChange: the solution calls a tool declared to change state
	// but leaves the world as it was (it sets what is already set), so the
	// task would have nothing in the data to judge that call by.
	NoChange Code = "no-state-change"
	// NothingPasses: an agent that does nothing passes every criterion
	// τ²-bench can check, although the scenario expects it to act.
	NothingPasses Code = "nothing-passes"
	// TemptingPasses: the scenario's wrong move passes every criterion
	// τ²-bench can check (typically a call that must not be made but
	// changes nothing: τ²-bench has no criterion for a call not made).
	TemptingPasses Code = "tempting-passes"
	// NotShown: the setup changes rows of the agent's side that no
	// document of the map shows, so the initial state cannot carry them.
	NotShown Code = "not-shown"
	// RandomKey: the reference adds a document whose key the domain's own
	// tools draw at random (the map's random_keys), so τ²-bench's replay of
	// the reference and the agent's run name it differently and its DB
	// comparison fails every agent.
	RandomKey Code = "random-key"
)

// Codes is every refusal code, in the order docs/EXPORT.md lists them.
var Codes = []Code{SetupFailed, SetupRemoves, Keyless, SolutionFailed,
	NotDeterministic, NoChange, NothingPasses, TemptingPasses, NotShown, RandomKey}

// Refusal is a scenario left out of the export, and why.
type Refusal struct {
	Scenario string `json:"scenario"`
	UseCase  string `json:"use_case"`
	Expects  string `json:"expects"`
	Code     Code   `json:"code"`
	Reason   string `json:"reason"`
}

// Summary is what an export wrote and what it refused.
type Summary struct {
	Tasks   int
	Refused []Refusal
}

// ByCode counts the refusals per code.
func (s Summary) ByCode() map[Code]int {
	n := map[Code]int{}
	for _, r := range s.Refused {
		n[r.Code]++
	}
	return n
}

// Document is what the export writes. τ²-bench's task loader reads
// a JSON object through its "tasks" key; "db" is the world's data in the
// layout every task's initial state is merged into: Data (table → key →
// row), or with a document map, Docs (the domain's own lists).
type Document struct {
	Format         string     `json:"format"`
	Domain         string     `json:"domain"`
	ContractSHA256 string     `json:"contract_sha256"`
	WorldSHA256    string     `json:"world_sha256"`
	Policy         string     `json:"policy"`
	Tools          []Tool     `json:"tools"`
	DB             any        `json:"db"`
	Tasks          []Task     `json:"tasks"`
	Refused        []Refusal  `json:"refused"`
	Suitegen       *Extension `json:"suitegen,omitempty"`
}

// Extension is what an export with a document map carries beyond
// τ²-bench's task schema, by task id: what a checker needs to confirm the
// domain's own tools reach the export's state, and the setup's rows of the
// user's side, which the agent's database does not hold.
type Extension struct {
	// FinalAgentDB is, per task, the collections the reference changes,
	// whole, as the export's replay leaves them (merged over the initial
	// state, the agent's database after the reference).
	FinalAgentDB map[string]Docs `json:"final_agent_db"`
	// UserRows is, per task, the rows the setup adds or changes in the
	// map's user tables (table → key → row).
	UserRows map[string]Data `json:"user_rows"`
}

// Tool is one of the agent's tools as a function-calling schema: what a
// τ²-bench toolkit for the domain implements.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Task is one τ²-bench task (tau2.data_model.tasks.Task).
type Task struct {
	ID                 string       `json:"id"`
	Description        Description  `json:"description"`
	UserScenario       UserScenario `json:"user_scenario"`
	InitialState       InitialState `json:"initial_state"`
	EvaluationCriteria Criteria     `json:"evaluation_criteria"`

	final    Docs // with a map: the collections the reference changes
	userRows Data // with a map: the setup's rows of the user's tables
}

// Description is what the task tests, for the evaluator and the reader.
type Description struct {
	Purpose          *string `json:"purpose"`
	RelevantPolicies *string `json:"relevant_policies"`
	Notes            *string `json:"notes"`
}

// UserScenario is what the user simulator is told.
type UserScenario struct {
	Persona      *string      `json:"persona"`
	Instructions Instructions `json:"instructions"`
}

// Instructions is τ²-bench's StructuredUserInstructions.
type Instructions struct {
	Domain           string  `json:"domain"`
	ReasonForCall    string  `json:"reason_for_call"`
	KnownInfo        *string `json:"known_info"`
	UnknownInfo      *string `json:"unknown_info"`
	TaskInstructions string  `json:"task_instructions"`
}

// InitialState carries the scenario's setup as data merged into the
// domain's data before the conversation.
type InitialState struct {
	InitializationData    *InitData `json:"initialization_data"`
	InitializationActions []any     `json:"initialization_actions"`
	MessageHistory        []any     `json:"message_history"`
}

// EnvCall is τ²-bench's EnvFunctionCall: a function of the agent's
// ("assistant") or the user's toolkit run before the conversation.
type EnvCall struct {
	EnvType   string         `json:"env_type"`
	FuncName  string         `json:"func_name"`
	Arguments map[string]any `json:"arguments"`
}

// UpdateDB is the toolkit function (ToolKitBase.update_db) that merges data
// into a toolkit's database, as agent_data is merged.
const UpdateDB = "update_db"

// InitData is τ²-bench's InitializationData.
type InitData struct {
	AgentData any `json:"agent_data"` // Data, or Docs with a document map
	UserData  any `json:"user_data"`
}

// Criteria is τ²-bench's EvaluationCriteria.
type Criteria struct {
	Actions         []Action `json:"actions"`
	EnvAssertions   []any    `json:"env_assertions"`
	CommunicateInfo []string `json:"communicate_info"`
	NLAssertions    []string `json:"nl_assertions"`
	RewardBasis     []string `json:"reward_basis"`
}

// Action is one call of the reference trajectory.
type Action struct {
	ActionID    string         `json:"action_id"`
	Requestor   string         `json:"requestor"`
	Name        string         `json:"name"`
	Arguments   map[string]any `json:"arguments"`
	Info        *string        `json:"info"`
	CompareArgs []string       `json:"compare_args"`
}

// Data is data in the export's layout: tables in world order, each a
// mapping from a row's key to the row, columns in schema order. A key is the
// primary key's value as text; for a key of several columns, the JSON array
// of their values. It decodes as plain maps.
type Data []Table

// Table is one table's rows by key.
type Table struct {
	Name    string
	Columns []string // schema order, for writing
	Rows    []Row
}

// Row is one row under its key.
type Row struct {
	Key    string
	Values map[string]any
}

// MarshalJSON writes {"table": {"key": {"column": value, ...}}} in order.
func (d Data) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, t := range d {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeKey(&buf, t.Name)
		buf.WriteByte('{')
		for j, r := range t.Rows {
			if j > 0 {
				buf.WriteByte(',')
			}
			writeKey(&buf, r.Key)
			if err := writeRow(&buf, t.Columns, r.Values); err != nil {
				return nil, fmt.Errorf("%s %s: %w", t.Name, r.Key, err)
			}
		}
		buf.WriteByte('}')
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeKey(buf *bytes.Buffer, k string) {
	b, _ := json.Marshal(k)
	buf.Write(b)
	buf.WriteByte(':')
}

func writeRow(buf *bytes.Buffer, columns []string, row map[string]any) error {
	buf.WriteByte('{')
	n := 0
	put := func(c string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		writeKey(buf, c)
		buf.Write(b)
		return nil
	}
	seen := map[string]bool{}
	for _, c := range columns {
		if v, ok := row[c]; ok {
			seen[c] = true
			if err := put(c, v); err != nil {
				return err
			}
		}
	}
	// Columns the schema does not list (none, for a world built from its
	// contract) still go out, sorted.
	var rest []string
	for c := range row {
		if !seen[c] {
			rest = append(rest, c)
		}
	}
	sort.Strings(rest)
	for _, c := range rest {
		if err := put(c, row[c]); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// Key is the key a row is merged under.
func Key(key []string, row map[string]any) string {
	if len(key) == 1 {
		if s, ok := row[key[0]].(string); ok {
			return s
		}
		b, _ := json.Marshal(row[key[0]])
		return string(b)
	}
	vals := make([]any, len(key))
	for i, k := range key {
		vals[i] = row[k]
	}
	b, _ := json.Marshal(vals)
	return string(b)
}

// Export writes the suite saved under out as τ²-bench tasks: each
// scenario's setup becomes the task's initial state (the rows it adds or
// changes, merged into db), its solution the reference actions, its outputs
// what the agent must communicate. A task's reward basis is chosen by
// replaying it in the world: the reference must pass, and an agent that does
// nothing (when the scenario expects it to act or hand over) and the
// scenario's wrong move must fail. A scenario no basis can judge that way is
// refused, with its code and reason, in the document and in the summary.
func Export(ctx context.Context, out string, src Source, w io.Writer) (Summary, error) {
	var sum Summary
	c := src.Contract
	if c == nil || src.World == nil || src.Replayer == nil {
		return sum, errors.New("tau2: a contract, its world and a replayer are required")
	}
	scs, err := suite.Scenarios(out)
	if err != nil {
		return sum, fmt.Errorf("tau2: %w", err)
	}
	for _, sc := range scs {
		if sc.Provenance.ContractSHA256 != c.SHA256 {
			return sum, fmt.Errorf("tau2: scenario %s was written for contract %.12s, not %s (%.12s)",
				sc.Name, sc.Provenance.ContractSHA256, c.Agent, c.SHA256)
		}
	}
	x := &exporter{c: c, w: src.World, r: src.Replayer, m: src.Map, tables: map[string]*contract.Table{}}
	for i := range c.Tables {
		x.tables[c.Tables[i].Name] = &c.Tables[i]
	}
	db, err := x.seed(ctx)
	if err != nil {
		return sum, fmt.Errorf("tau2: %w", err)
	}
	doc := Document{Format: Format, Domain: c.Agent, ContractSHA256: c.SHA256, WorldSHA256: c.WorldSHA256,
		Policy: policy(c), Tools: tools(c), DB: db, Tasks: []Task{}, Refused: []Refusal{}}
	if x.m != nil {
		doc.DB = x.seedDocs
		doc.Suitegen = &Extension{FinalAgentDB: map[string]Docs{}, UserRows: map[string]Data{}}
	}
	for _, sc := range scs {
		task, ref, err := x.task(ctx, sc)
		if err != nil {
			return sum, fmt.Errorf("tau2: %s: %w", sc.Name, err)
		}
		if ref != nil {
			doc.Refused = append(doc.Refused, *ref)
			continue
		}
		doc.Tasks = append(doc.Tasks, *task)
		if doc.Suitegen != nil {
			final := task.final
			if final == nil {
				final = Docs{}
			}
			doc.Suitegen.FinalAgentDB[task.ID] = final
			if len(task.userRows) > 0 {
				doc.Suitegen.UserRows[task.ID] = task.userRows
			}
		}
	}
	sum.Tasks, sum.Refused = len(doc.Tasks), doc.Refused
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return sum, fmt.Errorf("tau2: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return sum, fmt.Errorf("tau2: %w", err)
	}
	return sum, nil
}

// policy is the agent's policy as a τ²-bench domain's policy document: the
// contract's notes, then its rules with their ids.
func policy(c *contract.Contract) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n", c.Agent, c.OneLiner)
	if n := strings.TrimSpace(c.Notes); n != "" {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	if len(c.Rules) > 0 {
		b.WriteString("\n## Rules\n\n")
		for _, r := range c.Rules {
			fmt.Fprintf(&b, "- [%s] %s\n", r.ID, r.Text)
		}
	}
	return b.String()
}

// tools is the contract's tools with their parameter schemas, less the
// contract's own keywords (x-ref).
func tools(c *contract.Contract) []Tool {
	out := make([]Tool, 0, len(c.Tools))
	for _, t := range c.Tools {
		params, _ := stripX(t.Params).(map[string]any)
		if params == nil {
			params = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out = append(out, Tool{Name: t.Name, Description: t.Description, Parameters: params})
	}
	return out
}

func stripX(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !strings.HasPrefix(k, "x-") {
				out[k] = stripX(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripX(e)
		}
		return out
	}
	return v
}

type exporter struct {
	c      *contract.Contract
	w      *world.World
	r      Replayer
	tables map[string]*contract.Table

	m        *Map   // nil: the table layout
	seedKeys keySet // with a map: every collection's keys in the seed
	seedDocs Docs   // with a map: the agent's database of the seed
}

func (x *exporter) columns(table string) []string {
	t := x.tables[table]
	if t == nil {
		return nil
	}
	cols := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		cols[i] = col.Name
	}
	return cols
}

// seed is the frozen world's data in the export's layout.
func (x *exporter) seed(ctx context.Context) (Data, error) {
	var st world.State
	err := x.w.Copy(ctx, func(cp *world.Copy) error {
		var err error
		st, err = cp.State(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if x.m != nil {
		x.seedKeys = x.m.keysOf(st)
		if _, x.seedDocs, err = x.docs(ctx, nil, nil, x.seedKeys); err != nil {
			return nil, err
		}
	}
	d := Data{}
	for _, t := range st.Tables {
		tt := Table{Name: t.Name, Columns: x.columns(t.Name), Rows: []Row{}}
		key := t.Key
		for _, r := range t.Rows {
			k := ""
			if len(key) == 0 {
				b, _ := json.Marshal(r) // no key: the row is its own key
				k = string(b)
			} else {
				k = Key(key, r)
			}
			tt.Rows = append(tt.Rows, Row{Key: k, Values: r})
		}
		d = append(d, tt)
	}
	return d, nil
}

// initial is a task's initial state: what the setup adds or changes.
type initial struct {
	agent any  // the agent's data to merge (Data, or Docs with a map); nil: none
	user  Data // with a map: the setup's rows of the user's tables
	keys  keySet
	docs  Docs // with a map: the agent's database after the setup
}

// setupData is what the setup adds or changes, as data to merge; a refusal
// when the setup cannot be said that way.
func (x *exporter) setupData(ctx context.Context, sc *scenario.Scenario) (*initial, *Refusal, error) {
	in := &initial{keys: x.seedKeys, docs: x.seedDocs}
	if len(sc.Setup) == 0 {
		return in, nil, nil
	}
	var diff world.StateDiff
	var setupErr error
	err := x.w.Copy(ctx, func(cp *world.Copy) error {
		setupErr = nil
		before, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		after, err := cp.ExecBatchSnapshot(ctx, sc.Setup)
		if err != nil {
			var se *scenario.SetupError
			if errors.As(err, &se) {
				setupErr = err
				return nil
			}
			return err
		}
		diff, err = world.DiffSnapshots(before, after)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if setupErr != nil {
		return nil, x.refuse(sc, SetupFailed, "the setup does not run on the world: %v", setupErr), nil
	}
	shown := diff.Tables[:0:0] // with a map: the changes the agent's documents show
	if x.m != nil {
		for _, td := range diff.Tables {
			if !x.m.user(td.Table) {
				shown = append(shown, td)
			}
		}
	}
	keys := map[string][]string{}
	for _, t := range x.c.Tables {
		keys[t.Name] = t.PrimaryKey
	}
	var d Data
	for _, td := range diff.Tables {
		if len(td.Removed) > 0 {
			return nil, x.refuse(sc, SetupRemoves, "the setup removes %d row(s) of %s; an initial state can only add or update records", len(td.Removed), td.Table), nil
		}
		key := keys[td.Table]
		// With a map, only the user's tables are written as rows by key;
		// the agent's are written as documents.
		if len(key) == 0 && (x.m == nil || x.m.user(td.Table)) {
			return nil, x.refuse(sc, Keyless, "the setup changes table %s, which has no primary key to merge its rows under", td.Table), nil
		}
		tt := Table{Name: td.Table, Columns: x.columns(td.Table)}
		for _, r := range td.Added {
			tt.Rows = append(tt.Rows, Row{Key: Key(key, r), Values: r})
		}
		for _, ch := range td.Changed {
			tt.Rows = append(tt.Rows, Row{Key: Key(key, ch.After), Values: ch.After})
		}
		sort.SliceStable(tt.Rows, func(i, j int) bool { return tt.Rows[i].Key < tt.Rows[j].Key })
		d = append(d, tt)
	}
	// Tables in world order, so a row lands after the rows it refers to.
	order := map[string]int{}
	for i, t := range x.c.Tables {
		order[t.Name] = i
	}
	sort.SliceStable(d, func(i, j int) bool { return order[d[i].Name] < order[d[j].Name] })
	if x.m == nil {
		if len(d) > 0 {
			in.agent = d
		}
		return in, nil, nil
	}
	for _, t := range d {
		if x.m.user(t.Name) {
			in.user = append(in.user, t)
		}
	}
	if len(shown) == 0 {
		return in, nil, nil
	}
	in.keys = x.m.after(x.seedKeys, &diff)
	if _, in.docs, err = x.docs(ctx, sc.Setup, nil, in.keys); err != nil {
		return nil, nil, err
	}
	changed := in.docs.changedFrom(x.seedDocs)
	if len(changed) == 0 {
		names := make([]string, len(shown))
		for i, td := range shown {
			names[i] = td.Table
		}
		return nil, x.refuse(sc, NotShown, "the setup changes %s, but no document of the agent's database shows the change", strings.Join(names, ", ")), nil
	}
	in.agent = changed
	return in, nil, nil
}

func (x *exporter) refuse(sc *scenario.Scenario, code Code, format string, a ...any) *Refusal {
	return &Refusal{Scenario: sc.Name, UseCase: sc.UseCase, Expects: sc.Expects, Code: code, Reason: fmt.Sprintf(format, a...)}
}

// trajectory is one way an agent could have played the task, as τ²-bench's
// evaluator sees it: the calls it made, the state they left, and whether it
// said every output.
type trajectory struct {
	calls   []world.CallResult
	state   string // the state change after setup, canonical JSON
	saysAll bool
}

func canonical(d *world.StateDiff) (string, error) {
	if d == nil || d.Empty() {
		return "", nil
	}
	b, err := json.Marshal(d)
	return string(b), err
}

// play replays calls after the setup and returns their results and the
// state they change, canonical ("" when none). With a map, the state is
// what τ²-bench compares: the agent's documents (the collections changed,
// returned too) and the rows of the user's tables.
func (x *exporter) play(ctx context.Context, sc *scenario.Scenario, in *initial, calls []scenario.Call) ([]world.CallResult, string, Docs, error) {
	rs, d, err := x.r.Rehearse(ctx, sc.Setup, calls, true)
	if err != nil {
		return nil, "", nil, err
	}
	if x.m == nil {
		s, err := canonical(d)
		return rs, s, nil, err
	}
	_, docs, err := x.docs(ctx, sc.Setup, calls, x.m.after(in.keys, d))
	if err != nil {
		return nil, "", nil, err
	}
	changed := docs.changedFrom(in.docs)
	user := &world.StateDiff{}
	for _, td := range d.Tables {
		if x.m.user(td.Table) {
			user.Tables = append(user.Tables, td)
		}
	}
	if len(changed) == 0 && user.Empty() {
		return rs, "", nil, nil
	}
	b, err := json.Marshal(struct {
		Agent Docs             `json:"agent"`
		User  *world.StateDiff `json:"user"`
	}{changed, user})
	return rs, string(b), changed, err
}

// task builds the scenario's task, or says why it cannot: it reads the
// scenario as one request (suite.AsOneRequest), once per request not to be
// carried out, and keeps the first reading τ²-bench can score; none kept,
// the first reading's refusal says why.
func (x *exporter) task(ctx context.Context, sc *scenario.Scenario) (*Task, *Refusal, error) {
	return suite.FirstScored(sc, func(one *scenario.Scenario, ends []int) (*Task, *Refusal, error) { return x.taskOf(ctx, one, ends) })
}

func (x *exporter) taskOf(ctx context.Context, sc *scenario.Scenario, ends []int) (*Task, *Refusal, error) {
	in, ref, err := x.setupData(ctx, sc)
	if err != nil || ref != nil {
		return nil, ref, err
	}
	refCalls, refState, final, err := x.play(ctx, sc, in, sc.Solution)
	if err != nil {
		var se *scenario.SetupError
		if errors.As(err, &se) {
			return nil, x.refuse(sc, SetupFailed, "the setup does not run on the world: %v", err), nil
		}
		return nil, nil, err
	}
	for i, r := range refCalls {
		if !r.OK {
			return nil, x.refuse(sc, SolutionFailed, "solution step %d (%s) is not answered ok on replay: %s", i+1, r.Tool, r.Error), nil
		}
	}
	if _, again, _, err := x.play(ctx, sc, in, sc.Solution); err != nil {
		return nil, nil, err
	} else if again != refState {
		return nil, x.refuse(sc, NotDeterministic, "replaying the solution twice leaves two different states, so no reference state can be given"), nil
	}
	if x.m != nil {
		if coll, key := x.m.randomAdded(final, in.docs); coll != "" {
			return nil, x.refuse(sc, RandomKey, "the solution adds %s %s, whose key the domain's own tools draw at random: τ²-bench's replay of the reference and any agent's run would name it differently", coll, key), nil
		}
	}
	if refState == "" {
		for _, r := range refCalls {
			if t := x.c.Tool(r.Tool); t != nil && t.ChangesState != nil && *t.ChangesState {
				return nil, x.refuse(sc, NoChange, "the solution calls %s, which changes state, but the world is left as it was (it sets what is already set)", r.Tool), nil
			}
		}
	}
	actions := x.actions(sc, refCalls, ends)
	info := suite.Communicate(sc.Outputs)

	ref0 := trajectory{calls: refCalls, state: refState, saysAll: true}
	wrong := map[string]trajectory{}
	var worldRefuses []string // every tempting call, when the world refuses them all
	if sc.Expects == "succeed" || sc.Expects == "escalate" {
		wrong["doing nothing"] = trajectory{}
	}
	if len(sc.Tempting) > 0 && sc.Expects != scenario.OutcomeSucceed {
		// The wrong move on top of everything right: an agent that follows
		// the solution, but for the hand-over it should have made instead,
		// and then makes the tempting calls. A criterion that fails it fails
		// the wrong move itself, not a missing look-up. A succeeding
		// scenario's tempting move (the act without its look-ups) differs
		// from the solution only in order, which τ²-bench does not grade:
		// there, the agent that must fail is the one that does nothing.
		var kept []scenario.Call
		for _, c := range sc.Solution {
			if t := x.c.Tool(c.Tool); t != nil && t.EndsConversation {
				break
			}
			kept = append(kept, c)
		}
		both := append(kept, suite.ShiftRefs(sc.Tempting, len(kept))...)
		tc, ts, _, err := x.play(ctx, sc, in, both)
		if err != nil {
			return nil, nil, err
		}
		wrong["the tempting calls"] = trajectory{calls: tc, state: ts, saysAll: true}
		if len(tc) >= len(kept) {
			for _, r := range tc[len(kept):] {
				if !r.OK {
					worldRefuses = append(worldRefuses, fmt.Sprintf("%s: %s", r.Tool, suite.Clip(r.Error, 120)))
				}
			}
			if len(worldRefuses) < len(sc.Tempting) {
				worldRefuses = nil
			}
		}
	}
	base := []string{RewardDB}
	if len(info) > 0 {
		base = append(base, RewardCommunicate)
	}
	candidates := [][]string{base}
	if len(actions) > 0 {
		candidates = append(candidates, append(slices.Clone(base), RewardAction))
	}
	var basis []string
	var passing string
	for _, cand := range candidates {
		if !passes(cand, ref0, refState, actions, info) {
			continue
		}
		passing = ""
		for _, name := range []string{"doing nothing", "the tempting calls"} {
			if t, ok := wrong[name]; ok && passes(cand, t, refState, actions, info) {
				passing = name
				break
			}
		}
		if passing == "" {
			basis = cand
			break
		}
	}
	if basis == nil {
		if passing == "doing nothing" {
			return nil, x.refuse(sc, NothingPasses, "an agent that does nothing passes every criterion a τ²-bench task can check (the solution changes no state, says nothing and names no call to require)"), nil
		}
		if len(worldRefuses) > 0 {
			return nil, x.refuse(sc, TemptingPasses, "the world refuses the wrong move (%s), so an agent that attempts it leaves the state, calls and words of the solution; τ²-bench cannot require a call not to be made", strings.Join(worldRefuses, "; ")), nil
		}
		return nil, x.refuse(sc, TemptingPasses, "the wrong move (%s), made after the solution, leaves the same state, calls and words as the solution alone; τ²-bench cannot require a call not to be made, or calls to come in an order", suite.CallNames(sc.Tempting)), nil
	}
	t := x.render(sc, in.agent, actions, info, basis)
	t.final, t.userRows = final, in.user
	return &t, nil, nil
}

// actions is the reference trajectory as τ²-bench actions: the calls that
// changed state, the calls that settle a request (ends: each request's
// last), and any call a "called" sub-goal requires. Look-ups that only lead to them are left out,
// as in τ²-bench's own tasks: they change nothing, and an agent may identify
// the caller another way.
func (x *exporter) actions(sc *scenario.Scenario, calls []world.CallResult, ends []int) []Action {
	out := []Action{}
	n := map[string]int{}
	for i, r := range calls {
		if !r.Wrote && !slices.Contains(ends, i) && !requiredByCalled(sc, r) {
			continue
		}
		id := fmt.Sprintf("%s_%d", r.Tool, n[r.Tool])
		n[r.Tool]++
		args := r.Args
		if args == nil {
			args = map[string]any{}
		}
		out = append(out, Action{ActionID: id, Requestor: "assistant", Name: r.Tool, Arguments: args,
			CompareArgs: x.compareArgs(r.Tool, args)})
	}
	return out
}

// compareArgs are the arguments a matching call must repeat: all but those
// kept only for the record (a summary, a reason), which an agent words its
// own way.
func (x *exporter) compareArgs(tool string, args map[string]any) []string {
	t := x.c.Tool(tool)
	out := []string{}
	names := make([]string, 0, len(args))
	if t != nil {
		for _, p := range t.ParamNames() {
			if _, ok := args[p]; ok {
				names = append(names, p)
			}
		}
	}
	for a := range args {
		if !slices.Contains(names, a) {
			names = append(names, a)
		}
	}
	for _, a := range names {
		if t != nil && t.LogOnlyParam(a) {
			continue
		}
		out = append(out, a)
	}
	return out
}

func requiredByCalled(sc *scenario.Scenario, r world.CallResult) bool {
	for _, g := range sc.SubGoals {
		if g.Name != "called" || g.Params["tool"] != r.Tool {
			continue
		}
		want, _ := g.Params["args"].(map[string]any)
		if includes(r.Args, want) {
			return true
		}
	}
	return false
}

func includes(have, want map[string]any) bool {
	for k, v := range want {
		if !sameJSON(have[k], v) {
			return false
		}
	}
	return true
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// passes is τ²-bench's verdict on a trajectory under a reward basis: the
// state matches the reference's (DB), every output was said (COMMUNICATE),
// every action was matched by a call with the same compared arguments
// (ACTION), whether or not the world answered that call ok.
func passes(basis []string, t trajectory, refState string, actions []Action, info []string) bool {
	for _, b := range basis {
		switch b {
		case RewardDB:
			if t.state != refState {
				return false
			}
		case RewardCommunicate:
			if len(info) > 0 && !t.saysAll {
				return false
			}
		case RewardAction:
			for _, a := range actions {
				if !matched(a, t.calls) {
					return false
				}
			}
		}
	}
	return true
}

func matched(a Action, calls []world.CallResult) bool {
	for _, c := range calls {
		if c.Tool != a.Name {
			continue
		}
		ok := true
		for _, k := range a.CompareArgs {
			if !sameJSON(c.Args[k], a.Arguments[k]) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (x *exporter) render(sc *scenario.Scenario, data any, actions []Action, info []string, basis []string) Task {
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	p := sc.Persona
	var persona []string
	for _, f := range [][2]string{{"Personality", p.Personality}, {"Speaking style", p.Style}, {"Accent", p.Accent}, {"Location", p.Location},
		{"Phone line", p.LineQuality}, {"Background noise", p.BackgroundNoise}, {"Gives names and codes", p.Spelling}} {
		if f[1] != "" {
			persona = append(persona, f[0]+": "+f[1]+".")
		}
	}
	if p.TalksOver {
		persona = append(persona, "Speaks over the agent.")
	}
	known := ""
	if p.Name != "" {
		known = "You are " + p.Name + "."
	}
	instr := "Stay in character and share only what your situation gives you; do not invent other details."
	if p.Opening != "" {
		instr = fmt.Sprintf("Open the conversation with: %q. ", p.Opening) + instr
	}
	notes := fmt.Sprintf("suitegen scenario %s: use case %s, %s, expects %s; %s", sc.Name, sc.UseCase, sc.Kind, sc.Expects, sc.Branch)
	if o := sc.Outbound; o != nil {
		rec, _ := json.Marshal(o.Record)
		notes += fmt.Sprintf("; the agent places the call, about %s %s, answered by %s", o.Purpose, rec, o.AnsweredBy)
	}
	var judged []string
	for _, g := range sc.SubGoals {
		if sg := x.c.SubGoal(g.Name); sg != nil && sg.Judged {
			judged = append(judged, sg.What)
		} else if b := outboundJudged(g.Name); sg == nil && g.Judged && b != "" {
			judged = append(judged, b)
		}
	}
	var init *InitData
	var calls []any
	switch {
	case data != nil && x.m != nil:
		// With a document map, the agent's data is merged by the agent's
		// toolkit itself: τ²-bench's set_state, given agent_data, also
		// points the user's toolkit at the agent's database, which a
		// dual-control domain's user toolkit (its own database) cannot take.
		calls = []any{EnvCall{EnvType: "assistant", FuncName: UpdateDB, Arguments: map[string]any{"update_data": data}}}
	case data != nil:
		init = &InitData{AgentData: data}
	}
	return Task{
		ID:          sc.Name,
		Description: Description{Purpose: str(sc.Tests), Notes: &notes},
		UserScenario: UserScenario{
			Persona: str(strings.Join(persona, " ")),
			Instructions: Instructions{Domain: x.c.Agent, ReasonForCall: sc.Instruction, KnownInfo: str(known),
				TaskInstructions: instr},
		},
		InitialState:       InitialState{InitializationData: init, InitializationActions: calls},
		EvaluationCriteria: Criteria{Actions: actions, CommunicateInfo: info, NLAssertions: judged, RewardBasis: basis},
	}
}

// outboundJudged is what an outbound call's judged built-in sub-goal means
// ("" for any other name).
func outboundJudged(name string) string {
	for _, b := range prove.OutboundBuiltins {
		if b.Name == name {
			return b.What
		}
	}
	return ""
}
