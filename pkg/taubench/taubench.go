package taubench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/world"
)

// Format is the export's name on the command line.
const Format = "tau-bench"

// MapFile is where a contract directory keeps its tau-bench data map.
const MapFile = "tau-bench.json"

// Task is one tau-bench task. Data holds, by collection and key, the
// documents to load over the benchmark's own data before the task runs
// (null: remove the document); the benchmark's Task model ignores the
// fields it does not have (id, annotator, data).
type Task struct {
	ID          string                                `json:"id"`
	Annotator   string                                `json:"annotator"`
	UserID      string                                `json:"user_id"`
	Instruction string                                `json:"instruction"`
	Actions     []Action                              `json:"actions"`
	Outputs     []string                              `json:"outputs"`
	Data        map[string]map[string]json.RawMessage `json:"data"`
	// Judged lists what the task asks that no code proved: its judged
	// sub-goals, for a grader to judge from the transcript.
	Judged []JudgedGoal `json:"judged,omitempty"`
	// Tempting, on a scenario that expects a refusal, a question or a
	// hand-over, is the wrong agent's calls the export scored: the reference
	// calls that do not end the conversation, then the tempting ones, with
	// their references resolved. The benchmark's reward gives them 0.
	Tempting []Action `json:"tempting,omitempty"`
}

// JudgedGoal is a judged sub-goal of a task, with what it means (from
// catalogue.json, when the suite has one).
type JudgedGoal struct {
	Name   string         `json:"name"`
	What   string         `json:"what,omitempty"`
	Params map[string]any `json:"params,omitempty"`
}

// Action is one step of a task's reference solution.
type Action struct {
	Name   string         `json:"name"`
	Kwargs map[string]any `json:"kwargs"`
}

// Map says how the world's rows become the data dictionary a tau-bench
// environment loads: each collection is a top-level key of that dictionary
// ("users"), holding one document per row of a table, keyed by a column, and
// written as the answer of a tool that reads one document. A collection
// without a tool is named so that changes to it are refused, not lost.
type Map struct {
	Collections []Collection `json:"collections"`
}

// Collection is one top-level collection of the benchmark's data.
type Collection struct {
	Name  string `json:"name"`
	Table string `json:"table"`
	Key   string `json:"key"`
	Tool  string `json:"tool,omitempty"`
	Arg   string `json:"arg,omitempty"` // the tool's argument naming the key; default: key
}

// LoadMap reads a data map and checks it against the contract; an
// error names the field at fault.
func LoadMap(path string, c *contract.Contract) (*Map, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tau-bench data map: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m Map
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("tau-bench data map %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("tau-bench data map %s: trailing data", path)
	}
	if err := m.check(c); err != nil {
		return nil, fmt.Errorf("tau-bench data map %s: %w", path, err)
	}
	return &m, nil
}

func (m *Map) check(c *contract.Contract) error {
	if len(m.Collections) == 0 {
		return errors.New("collections: none given")
	}
	names := map[string]bool{}
	for i := range m.Collections {
		col := &m.Collections[i]
		at := fmt.Sprintf("collections[%d]", i)
		if col.Name == "" {
			return fmt.Errorf("%s.name: empty", at)
		}
		if names[col.Name] {
			return fmt.Errorf("%s.name: %q given twice", at, col.Name)
		}
		names[col.Name] = true
		t := c.Table(col.Table)
		if t == nil {
			return fmt.Errorf("%s.table: no table %q in the contract", at, col.Table)
		}
		if t.Column(col.Key) == nil {
			return fmt.Errorf("%s.key: no column %q in table %s", at, col.Key, col.Table)
		}
		if col.Tool == "" {
			if col.Arg != "" {
				return fmt.Errorf("%s.arg: given without a tool", at)
			}
			continue
		}
		tool := c.Tool(col.Tool)
		if tool == nil {
			return fmt.Errorf("%s.tool: no tool %q in the contract", at, col.Tool)
		}
		if col.Arg == "" {
			col.Arg = col.Key
		}
		if tool.Param(col.Arg) == nil {
			return fmt.Errorf("%s.arg: tool %s has no argument %q", at, col.Tool, col.Arg)
		}
	}
	return nil
}

// Rehearser plays a solution after a setup on a throwaway copy of the world,
// with references to earlier results resolved ("$2.user_id"), and returns each
// call's result and what the calls changed (*prove.Prover).
type Rehearser interface {
	Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, diff bool) ([]world.CallResult, *world.StateDiff, error)
}

// Copier opens throwaway copies of the world (*world.World).
type Copier interface {
	Copy(ctx context.Context, fn func(cp *world.Copy) error) error
}

// Source is what the tau-bench export needs besides the written suite:
// the contract it was written for, its world, and the data map.
type Source struct {
	Contract  *contract.Contract
	World     Copier
	Rehearser Rehearser
	Map       *Map
}

// Code says why a scenario was not exported.
type Code string

// Why a scenario cannot become a tau-bench task.
const (
	// WorldMismatch: the scenario was written for another world than the
	// contract's (its setup and actions may mean something else here).
	WorldMismatch Code = "world-mismatch"
	// SetupFailed: the setup no longer runs on the world.
	SetupFailed Code = "setup-failed"
	// ActionFailed: a solution call is not answered ok on replay, so the
	// benchmark's reference run would differ from the proof.
	ActionFailed Code = "action-failed"
	// CannotCarry: the setup changes rows no collection of the data map
	// can render, so the task's starting data cannot be written.
	CannotCarry Code = "cannot-carry"
	// Vacuous: the actions change no document of the benchmark's data and
	// the task has no outputs: an agent that does nothing would pass it.
	Vacuous Code = "vacuous"
	// TemptingPasses: the scenario expects a refusal, a question or a
	// hand-over, and its tempting move, made after the reference calls,
	// leaves the benchmark's data as the reference calls leave it: the
	// benchmark's reward cannot tell the agent that makes it.
	TemptingPasses Code = "tempting-passes"
)

// Codes is every refusal code, in the order docs/EXPORT.md lists them.
var Codes = []Code{TemptingPasses, Vacuous, CannotCarry, ActionFailed, SetupFailed, WorldMismatch}

// Refusal is a scenario left out of the export, and why.
type Refusal struct {
	Scenario string `json:"scenario"`
	UseCase  string `json:"use_case"`
	Expects  string `json:"expects"`
	Code     Code   `json:"code"`
	Reason   string `json:"reason"`
}

// Report is what an export wrote and what it refused.
type Report struct {
	Exported int       `json:"exported"`
	Refused  []Refusal `json:"refused"`
}

// ByCode counts the refusals per code.
func (r Report) ByCode() map[Code]int {
	out := map[Code]int{}
	for _, x := range r.Refused {
		out[x.Code]++
	}
	return out
}

// Export writes the suite saved under out (index.json order) to w as a
// JSON array of tau-bench tasks. Each task carries, under "data", the
// documents its setup created or changed, by collection and key (null: the
// setup removed it); loaded over the benchmark's own data they are the world
// the scenario was proved in. A scenario that cannot be expressed that way,
// or whose task an agent doing nothing would pass, is left out and reported.
func Export(ctx context.Context, out string, src Source, w io.Writer) (Report, error) {
	var rep Report
	if src.Contract == nil || src.World == nil || src.Rehearser == nil || src.Map == nil {
		return rep, errors.New("taubench: the contract, its world and a data map are required")
	}
	scs, err := suite.Scenarios(out)
	if err != nil {
		return rep, fmt.Errorf("taubench: %w", err)
	}
	x := &exporter{src: src, g: ground.New(src.Contract)}
	whats := judgedWhats(out)
	tasks := []Task{}
	for _, sc := range scs {
		t, why, err := x.task(ctx, sc)
		if err != nil {
			return rep, fmt.Errorf("taubench: %s: %w", sc.Name, err)
		}
		if why != nil {
			rep.Refused = append(rep.Refused, Refusal{Scenario: sc.Name, UseCase: sc.UseCase, Expects: sc.Expects, Code: why.code, Reason: why.reason})
			continue
		}
		t.Judged = judgedOf(sc, whats)
		tasks = append(tasks, t)
	}
	rep.Exported = len(tasks)
	b, err := suite.Encode(tasks)
	if err != nil {
		return rep, fmt.Errorf("taubench: %w", err)
	}
	bw := bufio.NewWriter(w)
	bw.Write(b)
	if err := bw.Flush(); err != nil {
		return rep, fmt.Errorf("taubench: %w", err)
	}
	return rep, nil
}

// judgedWhats reads what each judged sub-goal of a suite's catalogue means;
// a suite without a readable catalogue exports names alone.
func judgedWhats(out string) map[string]string {
	whats := map[string]string{}
	raw, err := os.ReadFile(filepath.Join(out, "catalogue.json"))
	if err != nil {
		return whats
	}
	var cat []suite.SubGoalInfo
	if json.Unmarshal(raw, &cat) != nil {
		return whats
	}
	for _, g := range cat {
		if g.Judged {
			whats[g.Name] = g.What
		}
	}
	return whats
}

// judgedOf is a scenario's judged sub-goals as a task lists them.
func judgedOf(sc *scenario.Scenario, whats map[string]string) []JudgedGoal {
	var out []JudgedGoal
	for _, g := range sc.SubGoals {
		if g.Judged {
			out = append(out, JudgedGoal{Name: g.Name, What: whats[g.Name], Params: g.Params})
		}
	}
	return out
}

type exporter struct {
	src Source
	g   *ground.Graph
	// seed is the untouched world's snapshot, taken once: every task's setup
	// is diffed against it.
	seed *world.Snapshot
	// parents caches lookup while the copy's state stands still.
	parents map[string]map[string]any
}

type refusal struct {
	code   Code
	reason string
}

func refuse(code Code, format string, a ...any) *refusal {
	return &refusal{code, fmt.Sprintf(format, a...)}
}

func vacuous(actions int) *refusal {
	if actions == 0 {
		return refuse(Vacuous, "the right answer takes no action and says nothing the benchmark can check; an agent that does nothing would pass")
	}
	return refuse(Vacuous, "its %d actions change nothing in the benchmark's data and it has no outputs; an agent that does nothing would pass", actions)
}

// docRef is one document of the benchmark's data.
type docRef struct {
	coll int
	key  any
}

func (d docRef) id() string { return fmt.Sprintf("%d\x00%s", d.coll, ground.Text(d.key)) }

// owners is what a set of changed rows touches: the documents that can be
// rendered, changes inside collections that cannot be (the benchmark's data
// holds them, the export cannot write them) and changes to tables no
// collection holds (the benchmark never sees them).
type owners struct {
	docs       map[string]docRef
	unrendered []string
	unmapped   []string
}

func (o *owners) blocked() []string {
	return append(append([]string{}, o.unrendered...), o.unmapped...)
}

func (o *owners) add(d docRef) {
	if o.docs == nil {
		o.docs = map[string]docRef{}
	}
	o.docs[d.id()] = d
}

func (o *owners) sorted() []docRef {
	keys := make([]string, 0, len(o.docs))
	for k := range o.docs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]docRef, len(keys))
	for i, k := range keys {
		out[i] = o.docs[k]
	}
	return out
}

// task reads the scenario as one request (suite.AsOneRequest), once per
// request not to be carried out, and keeps the first reading the benchmark
// can score; none kept, the first reading's refusal says why.
func (x *exporter) task(ctx context.Context, sc *scenario.Scenario) (Task, *refusal, error) {
	return suite.FirstScored(sc, func(one *scenario.Scenario, _ []int) (Task, *refusal, error) { return x.taskOf(ctx, one) })
}

func (x *exporter) taskOf(ctx context.Context, sc *scenario.Scenario) (Task, *refusal, error) {
	c := x.src.Contract
	if ws := sc.Provenance.WorldSHA256; ws != "" && ws != c.WorldSHA256 {
		return Task{}, refuse(WorldMismatch, "written for world %s, the contract's world is %s", short(ws), short(c.WorldSHA256)), nil
	}
	results, acted, err := x.src.Rehearser.Rehearse(ctx, sc.Setup, sc.Solution, true)
	var se *scenario.SetupError
	switch {
	case errors.As(err, &se):
		return Task{}, refuse(SetupFailed, "%v", se), nil
	case err != nil:
		return Task{}, nil, err
	}
	actions := make([]Action, 0, len(results))
	for i, r := range results {
		if !r.OK {
			return Task{}, refuse(ActionFailed, "action %d (%s) was answered %s", i+1, r.Tool, suite.Clip(r.Error, 200)), nil
		}
		kw := r.Args
		if kw == nil {
			kw = map[string]any{}
		}
		actions = append(actions, Action{Name: r.Tool, Kwargs: kw})
	}

	// The benchmark looks for an output in the agent's words with their
	// commas removed, as τ²-bench does.
	outputs := append([]string{}, suite.Communicate(sc.Outputs)...)
	if len(outputs) == 0 && (acted == nil || acted.Empty()) && (sc.Expects == scenario.OutcomeSucceed || len(sc.Tempting) == 0) {
		// Nothing changes and nothing need be said: no data makes this a
		// task that doing nothing fails.
		return Task{}, vacuous(len(actions)), nil
	}

	var why *refusal
	data := map[string]map[string]json.RawMessage{}
	visible := false
	err = x.src.World.Copy(ctx, func(cp *world.Copy) error {
		why, visible = nil, false
		clear(data)
		if x.seed == nil {
			seed, err := cp.Snapshot(ctx)
			if err != nil {
				return err
			}
			x.seed = &seed
		}
		clear(x.parents)
		set, err := cp.ExecBatchSnapshot(ctx, sc.Setup)
		if err != nil {
			var stErr *scenario.SetupError
			if errors.As(err, &stErr) {
				why = refuse(SetupFailed, "%v", err)
				return nil
			}
			return err
		}
		setup, err := world.DiffSnapshots(*x.seed, set)
		if err != nil {
			return err
		}
		carried, err := x.owners(ctx, cp, setup)
		if err != nil {
			return err
		}
		if b := carried.blocked(); len(b) > 0 {
			why = refuse(CannotCarry, "the setup changes what the data map cannot write: %s", strings.Join(b, "; "))
			return nil
		}
		for _, d := range carried.sorted() {
			doc, err := x.render(ctx, cp, d)
			if err != nil {
				return err
			}
			coll := x.src.Map.Collections[d.coll].Name
			if data[coll] == nil {
				data[coll] = map[string]json.RawMessage{}
			}
			data[coll][ground.Text(d.key)] = doc
		}
		changed := owners{}
		if acted != nil {
			if changed, err = x.owners(ctx, cp, *acted); err != nil {
				return err
			}
		}
		// A change inside a collection the map cannot render is still seen by
		// the benchmark, whose own tools make it; a change to a table no
		// collection holds is not.
		visible = len(changed.unrendered) > 0
		refs := changed.sorted()
		before := make([]json.RawMessage, len(refs))
		for i, d := range refs {
			if before[i], err = x.render(ctx, cp, d); err != nil {
				return err
			}
		}
		clear(x.parents)
		for i, a := range actions {
			r := cp.Call(ctx, a.Name, a.Kwargs)
			if !r.OK {
				why = refuse(ActionFailed, "action %d (%s) was answered %s", i+1, a.Name, suite.Clip(r.Error, 200))
				return nil
			}
		}
		for i, d := range refs {
			after, err := x.render(ctx, cp, d)
			if err != nil {
				return err
			}
			if !sameDoc(before[i], after) {
				visible = true
			}
		}
		return nil
	})
	if err != nil {
		return Task{}, nil, err
	}
	if why != nil {
		return Task{}, why, nil
	}
	// Who the task must fail: an agent that does nothing when the caller's
	// request is to be carried out; the agent that makes the scenario's
	// tempting move when it is to be refused, asked about or handed over. A
	// succeeding scenario's tempting move (the act without its look-ups) is
	// a matter of order, which the reward does not grade.
	var wrong []Action
	if (sc.Expects == scenario.OutcomeSucceed || len(sc.Tempting) == 0) && !visible && len(outputs) == 0 {
		return Task{}, vacuous(len(actions)), nil
	}
	if sc.Expects != scenario.OutcomeSucceed && len(sc.Tempting) > 0 {
		var why *refusal
		if wrong, why, err = x.temptingSeen(ctx, sc, actions); err != nil || why != nil {
			return Task{}, why, err
		}
	}
	user := ground.Text(sc.CallerID)
	return Task{ID: sc.Name, Annotator: "suitegen", UserID: user, Instruction: sc.Instruction,
		Actions: actions, Outputs: outputs, Data: data, Tempting: wrong}, nil, nil
}

// owners walks each changed row up its foreign keys to the documents it is
// part of or refers to. A row no collection reaches, or one contained in a
// collection that cannot be rendered, blocks carrying the change.
func (x *exporter) owners(ctx context.Context, cp *world.Copy, d world.StateDiff) (owners, error) {
	var o owners
	seen := map[string]bool{}
	for _, td := range d.Tables {
		var rows []map[string]any
		rows = append(rows, td.Added...)
		rows = append(rows, td.Removed...)
		for _, ch := range td.Changed {
			rows = append(rows, ch.Before, ch.After)
		}
		for _, r := range rows {
			found := false
			if err := x.walk(ctx, cp, td.Table, r, true, 0, &o, &found); err != nil {
				return o, err
			}
			if !found && !seen[td.Table] {
				seen[td.Table] = true
				o.unmapped = append(o.unmapped, fmt.Sprintf("table %s is in no collection of the data map", td.Table))
			}
		}
	}
	return o, nil
}

// maxDepth bounds the walk up foreign keys (a table that refers to itself).
const maxDepth = 8

func (x *exporter) walk(ctx context.Context, cp *world.Copy, table string, row map[string]any, contained bool, depth int, o *owners, found *bool) error {
	for i, col := range x.src.Map.Collections {
		if col.Table != table || row[col.Key] == nil {
			continue
		}
		*found = true
		d := docRef{coll: i, key: row[col.Key]}
		switch {
		case col.Tool != "":
			o.add(d)
		case contained:
			msg := fmt.Sprintf("collection %s (%s %s) has no tool to write it", col.Name, col.Key, ground.Text(d.key))
			if !containsString(o.unrendered, msg) {
				o.unrendered = append(o.unrendered, msg)
			}
		}
	}
	if depth >= maxDepth {
		return nil
	}
	t := x.src.Contract.Table(table)
	for _, fk := range x.g.FKs(table) {
		v := row[fk.Column]
		if v == nil || fk.RefTable == table {
			continue
		}
		// A row is part of its parent's document when the foreign key is
		// part of its own key (a reservation's flights); otherwise it only
		// refers to it (a reservation's flight number).
		in := contained && t != nil && containsString(t.PrimaryKey, fk.Column)
		parent, err := x.lookup(ctx, cp, fk.RefTable, fk.RefColumn, v)
		if err != nil {
			return err
		}
		if parent == nil {
			// Gone from the copy (removed with it): its key still names the document.
			parent = map[string]any{fk.RefColumn: v}
		}
		if err := x.walk(ctx, cp, fk.RefTable, parent, in, depth+1, o, found); err != nil {
			return err
		}
	}
	return nil
}

func (x *exporter) lookup(ctx context.Context, cp *world.Copy, table, column string, v any) (map[string]any, error) {
	key := table + "\x00" + column + "\x00" + ground.Text(v)
	if r, ok := x.parents[key]; ok {
		return r, nil
	}
	rows, err := cp.Query(ctx, fmt.Sprintf("SELECT * FROM %s WHERE %s::text = $1 LIMIT 1", ident(table), ident(column)), ground.Text(v))
	if err != nil {
		return nil, err
	}
	var r map[string]any
	if len(rows) > 0 {
		r = rows[0].Map()
	}
	if x.parents == nil {
		x.parents = map[string]map[string]any{}
	}
	x.parents[key] = r
	return r, nil
}

// render is a document as its collection's tool answers it; null when the
// tool says it does not exist.
func (x *exporter) render(ctx context.Context, cp *world.Copy, d docRef) (json.RawMessage, error) {
	col := x.src.Map.Collections[d.coll]
	r := cp.Call(ctx, col.Tool, map[string]any{col.Arg: d.key})
	switch {
	case r.OK:
		return r.Result, nil
	case r.Refused:
		return json.RawMessage("null"), nil
	}
	return nil, fmt.Errorf("rendering %s %s with %s: %s", col.Name, ground.Text(d.key), col.Tool, r.Error)
}

func sameDoc(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(x, y)
}

func ident(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func containsString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// temptingSeen replays the scenario's wrong move as the benchmark's reward
// sees it: the reference calls that do not end the conversation, then the
// tempting calls, against the reference calls alone (the reward replays the
// gold actions without its terminate tools). The move fails the task when it
// changes a document of the benchmark's data: a document a tool renders
// differently, or a row of a collection the benchmark holds but the map
// cannot render (the benchmark's own tools change it too). Otherwise the
// scenario is refused, with what kept the move unseen.
func (x *exporter) temptingSeen(ctx context.Context, sc *scenario.Scenario, actions []Action) ([]Action, *refusal, error) {
	var gold []scenario.Call
	for _, a := range actions {
		if t := x.src.Contract.Tool(a.Name); t != nil && t.EndsConversation {
			continue
		}
		gold = append(gold, scenario.Call{Tool: a.Name, Args: a.Kwargs})
	}
	move := suite.CallNames(sc.Tempting)
	results, _, err := x.src.Rehearser.Rehearse(ctx, sc.Setup, append(slices.Clone(gold), suite.ShiftRefs(sc.Tempting, len(gold))...), false)
	var se *scenario.SetupError
	switch {
	case errors.As(err, &se):
		return nil, refuse(SetupFailed, "%v", se), nil
	case err != nil:
		return nil, nil, err
	}
	if len(results) < len(gold) {
		return nil, nil, fmt.Errorf("replaying the tempting move: %d results for %d reference calls", len(results), len(gold))
	}
	tempting := results[len(gold):]
	var refusedBy []string
	for _, r := range tempting {
		if !r.OK {
			refusedBy = append(refusedBy, fmt.Sprintf("%s: %s", r.Tool, suite.Clip(r.Error, 120)))
		}
	}
	type state struct{ snap world.Snapshot }
	// The reference calls, then (when then is set) the tempting calls; docs
	// are rendered after both.
	play := func(then bool, fn func(cp *world.Copy, st *state) error) error {
		return x.src.World.Copy(ctx, func(cp *world.Copy) error {
			clear(x.parents)
			if err := cp.ExecBatch(ctx, sc.Setup); err != nil {
				return err
			}
			for _, c := range gold {
				cp.Call(ctx, c.Tool, c.Args)
			}
			var st state
			if then {
				var err error
				if st.snap, err = cp.Snapshot(ctx); err != nil {
					return err
				}
				for _, r := range tempting {
					cp.Call(ctx, r.Tool, r.Args)
				}
			}
			clear(x.parents)
			return fn(cp, &st)
		})
	}
	unseen := func(what string) *refusal {
		if len(refusedBy) == len(tempting) {
			return refuse(TemptingPasses, "the world refuses the wrong move (%s), so an agent that attempts it leaves the benchmark's data as the reference calls do; the benchmark cannot see a call that should not be made", strings.Join(refusedBy, "; "))
		}
		return refuse(TemptingPasses, "the wrong move (%s), made after the reference calls, %s; the benchmark's reward would pass an agent that makes it", move, what)
	}
	var refs []docRef
	var after []json.RawMessage
	var why *refusal
	seen := false
	err = play(true, func(cp *world.Copy, st *state) error {
		now, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		d, err := world.DiffSnapshots(st.snap, now)
		if err != nil {
			return err
		}
		if d.Empty() {
			why = unseen("changes nothing in the world")
			return nil
		}
		o, err := x.owners(ctx, cp, d)
		if err != nil {
			return err
		}
		if len(o.unrendered) > 0 {
			seen = true
			return nil
		}
		refs = o.sorted()
		if len(refs) == 0 {
			why = unseen("changes only what the benchmark's data does not hold (" + strings.Join(o.unmapped, "; ") + ")")
			return nil
		}
		after = make([]json.RawMessage, len(refs))
		for i, r := range refs {
			if after[i], err = x.render(ctx, cp, r); err != nil {
				return err
			}
		}
		return nil
	})
	wrong := make([]Action, 0, len(results))
	for _, r := range results {
		kw := r.Args
		if kw == nil {
			kw = map[string]any{}
		}
		wrong = append(wrong, Action{Name: r.Tool, Kwargs: kw})
	}
	if err != nil || why != nil || seen {
		return wrong, why, err
	}
	err = play(false, func(cp *world.Copy, _ *state) error {
		for i, r := range refs {
			before, err := x.render(ctx, cp, r)
			if err != nil {
				return err
			}
			if !sameDoc(before, after[i]) {
				seen = true
				return nil
			}
		}
		return nil
	})
	if err != nil || seen {
		return wrong, nil, err
	}
	return nil, unseen("changes rows that no document of the benchmark's data shows"), nil
}
