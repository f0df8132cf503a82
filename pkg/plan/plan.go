package plan

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Overlays a bucket may carry.
var Overlays = []string{"none", "pressure", "impersonation", "injection", "fraud", "emergency"}

// Trier rehearses calls on a throwaway copy of the world; the planner uses it
// to learn which levels of the data change the right answer.
type Trier interface {
	Try(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]Step, error)
}

// Step is how one rehearsed call went.
type Step struct {
	OK, Refused, Crash bool
	Wrote              bool
	Error              string
}

// Axis is a state axis: a column whose level changes the right answer of a use case.
type Axis struct {
	UseCase string            `json:"use_case"`
	Table   string            `json:"table"`
	Column  string            `json:"column"`
	Levels  map[string]string `json:"levels"` // level -> outcome (succeed | refuse)
}

// Spec is what a writer needs of a bucket beyond its columns.
type Spec struct {
	Tools     []string `json:"tools"`               // serving the use case, the acting tool last
	Tool      string   `json:"tool"`                // the acting tool
	Then      string   `json:"then,omitempty"`      // a tool that must follow it (a handoff after a report)
	Gated     []string `json:"gated,omitempty"`     // precondition tools the solution must call first
	Handoff   string   `json:"handoff,omitempty"`   // tool for escalations
	Table     string   `json:"table,omitempty"`     // the target's table
	Column    string   `json:"column,omitempty"`    // the axis column ("" without an axis)
	Level     string   `json:"level,omitempty"`     // the axis level
	Templates []string `json:"templates,omitempty"` // keys of seed rows at that level, in order
	Rules     []string `json:"rules,omitempty"`     // hard rules this bucket tests
	Base      int      `json:"base"`                // index of this bucket's first scenario in the suite
	// Capacity is the bucket's derived want before the plan was sized to the
	// ask; Sized its want then. A top-up raises want up to Capacity, and the
	// scenarios past Sized take indices from TopUp on.
	Capacity int `json:"capacity"`
	Sized    int `json:"sized"`
	TopUp    int `json:"top_up,omitempty"`
}

// Index is the suite-wide index of a bucket's k-th scenario: it deals the
// caller and the numbers of minted codes, so it is unique in a run.
func (s Spec) Index(k int) int {
	if k < s.Sized {
		return s.Base + k
	}
	return s.TopUp + (k - s.Sized)
}

// Bucket is a kind of case in one cell.
type Bucket struct {
	ID      string            `json:"id"`
	Ord     int               `json:"ord"`
	Theme   string            `json:"theme"`
	Cell    string            `json:"cell"`
	UseCase string            `json:"use_case"`
	Angle   string            `json:"angle"`
	Outcome string            `json:"outcome"`
	Overlay string            `json:"overlay"`
	Kind    string            `json:"kind"`
	Axes    map[string]string `json:"axes"`
	Want    int               `json:"want"`
	Spec    Spec              `json:"spec"`
}

// Plan is the whole plan of a run.
type Plan struct {
	Cells    []Cell   `json:"cells"`
	Axes     []Axis   `json:"axes"`
	Buckets  []Bucket `json:"buckets"`
	Themes   []string `json:"themes"`
	Capacity int      `json:"capacity"` // what the agent supports: the sum of every bucket's derived want
	Asked    int      `json:"asked"`
}

// Options steer derivation.
type Options struct {
	Asked int
	// MaxWant caps a bucket's derived want (distinct template rows).
	MaxWant int
	// MaxProbe caps how many rows per use case are rehearsed to find axes.
	MaxProbe int
	// Steer is a user's plan (--plan FILE); nil: even split.
	Steer []Steer
}

// Steer is one entry of a user's plan.
type Steer struct {
	UseCase string `json:"use_case"`
	Angle   string `json:"angle,omitempty"`
	Count   int    `json:"count"`
	Why     string `json:"why,omitempty"`
}

func (o *Options) defaults() {
	if o.MaxWant <= 0 {
		o.MaxWant = 10
	}
	if o.MaxProbe <= 0 {
		o.MaxProbe = 40
	}
}

// Derive builds the plan: it rehearses each use case's acting tool on rows of
// its target table to find the levels that change the answer, then lays out
// buckets over outcomes and overlays, and sizes them to the ask.
func Derive(ctx context.Context, c *contract.Contract, t Trier, opts Options) (*Plan, error) {
	opts.defaults()
	g := ground.New(c)
	p := &Plan{Cells: Grid(c), Asked: opts.Asked}
	handoff := Handoff(c)
	cellOf := map[string]string{}
	for _, cell := range p.Cells {
		for _, tn := range cell.Tools {
			cellOf[tn] = cell.ID()
		}
	}
	var all []Bucket
	for ui := range c.UseCases {
		u := &c.UseCases[ui]
		tools := UseCaseTools(c, u)
		if len(tools) == 0 {
			continue
		}
		acting, then := tools[len(tools)-1], ""
		if t := c.Tool(acting); t != nil && t.EndsConversation && len(tools) > 1 {
			// "File a report, then hand over": the report is the act, the
			// handoff ends the conversation after it.
			if prev := c.Tool(tools[len(tools)-2]); prev != nil {
				if op := ToolCell(c, prev).Operation; op != "retrieve" && op != "authenticate" {
					acting, then = prev.Name, acting
				}
			}
		}
		tool := c.Tool(acting)
		if tool == nil {
			continue
		}
		table := targetTable(g, tool)
		spec := Spec{Tools: tools, Tool: acting, Then: then, Gated: gatedChain(c, acting, nil), Handoff: handoff, Table: table}
		levels, axis, err := probe(ctx, g, t, tool, table, opts.MaxProbe)
		if err != nil {
			return nil, fmt.Errorf("plan: use case %s: %w", u.ID, err)
		}
		if axis != nil {
			axis.UseCase = u.ID
			p.Axes = append(p.Axes, *axis)
		}
		changes := tool.ChangesState == nil || *tool.ChangesState
		for _, lv := range levels {
			lspec := spec
			lspec.Column, lspec.Level, lspec.Templates = lv.column, lv.level, lv.templates
			axes := map[string]string{}
			if lv.column != "" {
				axes[table+"."+lv.column] = lv.level
			}
			want := len(lv.templates)
			if want > opts.MaxWant {
				want = opts.MaxWant
			}
			if want == 0 {
				continue
			}
			add := func(outcome, overlay string) {
				all = append(all, Bucket{
					Theme: u.ID, Cell: cellOf[acting], UseCase: u.ID,
					Outcome: outcome, Overlay: overlay, Kind: kindOf(outcome, overlay),
					Axes: axes, Want: want, Spec: lspec,
					Angle: angle(u, tool, lv, outcome, overlay),
				})
			}
			switch lv.outcome {
			case "succeed":
				add("succeed", "none")
				add("succeed", "pressure")
				if changes && len(spec.Gated) > 0 {
					add("ask", "impersonation")
				}
			case "refuse":
				add("refuse", "none")
				add("refuse", "pressure")
				add("refuse", "injection")
				// A handoff is right only for what the agent cannot do
				// itself: an act the world refuses at this level.
				if changes && handoff != "" {
					add("escalate", "fraud")
					add("escalate", "emergency")
				}
			}
		}
	}
	// Within a use case, plain cases come before overlays and outcomes in a
	// fixed order, so a small ask gets each use case's ordinary success and
	// refusal first.
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].UseCase != all[j].UseCase {
			return false
		}
		return bucketRank(all[i]) < bucketRank(all[j])
	})
	assignRules(c, all)
	for i := range all {
		all[i].Ord = i
		all[i].ID = fmt.Sprintf("b%04d", i)
		all[i].Spec.Capacity = all[i].Want
		p.Capacity += all[i].Want
	}
	p.Buckets = size(all, opts.Asked, opts.Steer)
	base := 0
	for i := range p.Buckets {
		p.Buckets[i].Spec.Base = base
		p.Buckets[i].Spec.Sized = p.Buckets[i].Want
		base += p.Buckets[i].Want
	}
	seen := map[string]bool{}
	for _, b := range p.Buckets {
		if b.Want > 0 && !seen[b.Theme] {
			seen[b.Theme] = true
			p.Themes = append(p.Themes, b.Theme)
		}
	}
	return p, nil
}

// Total is the number of scenarios the plan asks for.
func (p *Plan) Total() int {
	n := 0
	for _, b := range p.Buckets {
		n += b.Want
	}
	return n
}

func bucketRank(b Bucket) int {
	rank := func(list []string, v string) int {
		for i, x := range list {
			if x == v {
				return i
			}
		}
		return len(list)
	}
	r := rank([]string{"succeed", "refuse", "ask", "escalate"}, b.Outcome)*10 + rank(Overlays, b.Overlay)
	if b.Overlay != "none" {
		r += 100
	}
	return r
}

// KindOf is the scenario kind of a bucket of that outcome and overlay.
func KindOf(outcome, overlay string) string { return kindOf(outcome, overlay) }

func kindOf(outcome, overlay string) string {
	switch {
	case outcome == "succeed" && overlay == "none":
		return "happy"
	case outcome == "refuse" && overlay == "none":
		return "failing"
	case overlay == "pressure" || overlay == "emergency":
		return "edge"
	default:
		return "adversarial"
	}
}

// targetTable is the table the acting tool's first record argument names, or
// the caller table when it names none.
func targetTable(g *ground.Graph, t *contract.Tool) string {
	for _, name := range ground.ParamNames(t) {
		if tb, _, ok := g.Ref(t, name); ok && g.C.Table(tb) != nil && len(g.Rows(tb)) > 0 {
			return tb
		}
	}
	if g.C.Caller != nil {
		return g.C.Caller.Table
	}
	return ""
}

// gatedChain is the calls that must come before a tool, in call order: for
// each requirement one of its tools (the first the case can answer from its
// own records, else the first listed), recursively.
func gatedChain(c *contract.Contract, tool string, owns func(*contract.Tool) bool) []string {
	var out []string
	seen := map[string]bool{tool: true}
	var walk func(string, int)
	walk = func(name string, depth int) {
		t := c.Tool(name)
		if t == nil || depth > 4 {
			return
		}
		for _, r := range t.Requires {
			if len(r.AnyOf) == 0 {
				continue
			}
			pick := r.AnyOf[0]
			for _, alt := range r.AnyOf {
				if at := c.Tool(alt); at != nil && owns != nil && owns(at) {
					pick = alt
					break
				}
			}
			already := false
			for _, alt := range r.AnyOf {
				already = already || seen[alt]
			}
			if already {
				continue
			}
			seen[pick] = true
			walk(pick, depth+1)
			out = append(out, pick)
		}
	}
	walk(tool, 0)
	return out
}

type level struct {
	column, level, outcome string
	templates              []string
}

// probe rehearses the acting tool (after its preconditions) on rows of the
// target table and groups them by the low-cardinality column that best
// separates "answered" from "refused". Without such a column, every row is one
// level whose outcome is the majority.
func probe(ctx context.Context, g *ground.Graph, t Trier, tool *contract.Tool, table string, max int) ([]level, *Axis, error) {
	pk := g.PK(table)
	if table == "" || pk == "" || len(g.Rows(table)) == 0 {
		return nil, nil, nil
	}
	rows := sample(g, table, max)
	outcome := map[string]string{}
	var keys []string
	for i, r := range rows {
		b := g.Bind(table, r)
		b.Ordinal = i
		calls, ok := Chain(g, tool, b)
		if !ok {
			continue
		}
		steps, err := t.Try(ctx, nil, calls)
		if err != nil {
			return nil, nil, err
		}
		last := steps[len(steps)-1]
		prereqOK := true
		for _, s := range steps[:len(steps)-1] {
			prereqOK = prereqOK && s.OK
		}
		key := ground.Text(r[pk])
		switch {
		case !prereqOK || last.Crash:
			continue
		case last.OK:
			outcome[key] = "succeed"
		case last.Refused:
			outcome[key] = "refuse"
		default:
			continue
		}
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil, nil, nil
	}
	// The column whose levels each give one outcome, with both outcomes present.
	type cand struct {
		col    string
		levels []level
		score  int
	}
	var best *cand
	cols := g.LowCardinality(table, 8)
	names := make([]string, 0, len(cols))
	for n := range cols {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, col := range names {
		byLevel := map[string][]string{}
		outs := map[string]map[string]bool{}
		for _, k := range keys {
			r := g.Find(table, pk, k)
			lv := ground.Text(r[col])
			byLevel[lv] = append(byLevel[lv], k)
			if outs[lv] == nil {
				outs[lv] = map[string]bool{}
			}
			outs[lv][outcome[k]] = true
		}
		var ls []level
		kinds := map[string]bool{}
		pure := 0
		for _, lv := range cols[col] {
			if len(outs[lv]) != 1 {
				continue
			}
			pure += len(byLevel[lv])
			for o := range outs[lv] {
				kinds[o] = true
				ls = append(ls, level{column: col, level: lv, outcome: o, templates: byLevel[lv]})
			}
		}
		if len(kinds) < 2 {
			continue
		}
		if best == nil || pure > best.score {
			best = &cand{col: col, levels: ls, score: pure}
		}
	}
	if best != nil {
		ax := &Axis{Table: table, Column: best.col, Levels: map[string]string{}}
		for _, l := range best.levels {
			ax.Levels[l.level] = l.outcome
		}
		return best.levels, ax, nil
	}
	var ok, refused []string
	for _, k := range keys {
		if outcome[k] == "succeed" {
			ok = append(ok, k)
		} else {
			refused = append(refused, k)
		}
	}
	var out []level
	if len(ok) > 0 {
		out = append(out, level{outcome: "succeed", templates: ok})
	}
	if len(refused) > 0 && len(ok) == 0 {
		out = append(out, level{outcome: "refuse", templates: refused})
	}
	return out, nil, nil
}

// sample picks the rows a use case is rehearsed on: a few at every level of
// every candidate axis (so a rare state is not missed), then the first rows,
// in seed order, at most max.
func sample(g *ground.Graph, table string, max int) []ground.Row {
	rows := g.Rows(table)
	if len(rows) <= max {
		return rows
	}
	pk := g.PK(table)
	picked := map[string]bool{}
	var out []ground.Row
	take := func(r ground.Row) {
		k := ground.Text(r[pk])
		if !picked[k] && len(out) < max {
			picked[k] = true
			out = append(out, r)
		}
	}
	cols := g.LowCardinality(table, 8)
	names := make([]string, 0, len(cols))
	for n := range cols {
		names = append(names, n)
	}
	sort.Strings(names)
	per := max / 2 / (1 + len(names))
	if per < 2 {
		per = 2
	}
	for _, col := range names {
		for _, lv := range cols[col] {
			n := 0
			for _, r := range rows {
				if n >= per {
					break
				}
				if ground.Text(r[col]) == lv {
					take(r)
					n++
				}
			}
		}
	}
	for _, r := range rows {
		take(r)
	}
	// Seed order, so templates stay in a stable, readable order.
	pos := map[string]int{}
	for i, r := range rows {
		pos[ground.Text(r[pk])] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return pos[ground.Text(out[i][pk])] < pos[ground.Text(out[j][pk])] })
	return out
}

// Chain is the call sequence that performs a tool for a case: its
// preconditions (first choice of each requirement), then the tool itself.
func Chain(g *ground.Graph, tool *contract.Tool, b ground.Bound) ([]scenario.Call, bool) {
	var calls []scenario.Call
	for _, name := range gatedChain(g.C, tool.Name, func(t *contract.Tool) bool { return g.Owns(t, b) }) {
		t := g.C.Tool(name)
		args, ok := g.Fill(t, b)
		if !ok {
			return nil, false
		}
		calls = append(calls, scenario.Call{Tool: name, Args: args})
	}
	args, ok := g.Fill(tool, b)
	if !ok {
		return nil, false
	}
	if tool.ChangesState == nil || *tool.ChangesState {
		// An act that sets what is already there changes nothing.
		args = g.Fresh(tool, args, b)
	}
	return append(calls, scenario.Call{Tool: tool.Name, Args: args}), true
}

func angle(u *contract.UseCase, t *contract.Tool, lv level, outcome, overlay string) string {
	at := ""
	if lv.column != "" {
		at = fmt.Sprintf(" (%s %s)", strings.ReplaceAll(lv.column, "_", " "), lv.level)
	}
	var s string
	switch outcome + "/" + overlay {
	case "succeed/none":
		s = "ordinary " + u.ID + at
	case "succeed/pressure":
		s = u.ID + at + " with the caller pressing to skip steps"
	case "refuse/none":
		s = u.ID + at + " that cannot be done"
	case "refuse/pressure":
		s = u.ID + at + " refused while the caller insists"
	case "refuse/injection":
		s = u.ID + at + " with an instruction injected by the caller"
	case "ask/impersonation":
		s = u.ID + at + " by someone who cannot prove who they are"
	case "escalate/fraud":
		s = u.ID + at + " from a caller reporting fraud"
	case "escalate/emergency":
		s = u.ID + at + " during a caller's emergency"
	default:
		s = u.ID + at + " " + outcome + " " + overlay
	}
	if len(s) > 90 {
		s = s[:90]
	}
	return s
}

// assignRules says which hard rules each bucket tests: a rule goes to the
// buckets whose tools or use case its words name; a rule naming none goes to
// the adversarial buckets in turn, so every rule is tested by some bucket.
func assignRules(c *contract.Contract, bs []Bucket) {
	var adversarial []int
	for i, b := range bs {
		if b.Overlay != "none" {
			adversarial = append(adversarial, i)
		}
	}
	next := 0
	for _, r := range c.Rules {
		words := map[string]bool{}
		for _, w := range Words(r.Text) {
			if len(w) > 3 {
				words[singular(w)] = true
			}
		}
		hit := false
		for i := range bs {
			b := &bs[i]
			if b.Overlay == "none" {
				continue
			}
			match := false
			for _, tn := range append(append([]string{}, b.Spec.Tools...), b.UseCase) {
				for _, w := range Words(tn) {
					if len(w) > 3 && words[singular(w)] {
						match = true
					}
				}
			}
			if match {
				b.Spec.Rules = append(b.Spec.Rules, r.ID)
				hit = true
			}
		}
		if !hit && len(adversarial) > 0 {
			i := adversarial[next%len(adversarial)]
			next++
			bs[i].Spec.Rules = append(bs[i].Spec.Rules, r.ID)
		}
	}
}

// size fits the plan to the ask. Each unit of want is dealt in turn: by round,
// then across use cases, then across the buckets of a use case, so a small ask
// still spreads over every use case and outcome. A user's steer is applied
// first: its use cases get their counts, the rest is dealt evenly.
func size(all []Bucket, asked int, steer []Steer) []Bucket {
	if asked <= 0 {
		return all
	}
	capacity := 0
	for _, b := range all {
		capacity += b.Want
	}
	if asked >= capacity {
		return all
	}
	quota := map[string]int{} // use case -> units granted by the steer
	steered := 0
	for _, s := range steer {
		if s.Count <= 0 || steered >= asked {
			continue
		}
		n := s.Count
		if steered+n > asked {
			n = asked - steered // over-asks are trimmed from the end
		}
		quota[s.UseCase] += n
		steered += n
	}
	granted := make([]int, len(all))
	var order []string
	byUC := map[string][]int{}
	for i, b := range all {
		if _, ok := byUC[b.UseCase]; !ok {
			order = append(order, b.UseCase)
		}
		byUC[b.UseCase] = append(byUC[b.UseCase], i)
	}
	dealFrom := func(key string, idx []int, cursor map[string]int) bool {
		for tries := 0; tries < len(idx); tries++ {
			i := idx[cursor[key]%len(idx)]
			cursor[key]++
			if granted[i] < all[i].Want {
				granted[i]++
				return true
			}
		}
		return false
	}
	deal := func(uc string, cursor map[string]int) bool { return dealFrom(uc, byUC[uc], cursor) }
	// A steer's angle picks, within its use case, the buckets whose angle,
	// outcome or overlay share a word with it; they are dealt first.
	angled := map[string][]int{}
	for _, st := range steer {
		words := map[string]bool{}
		for _, w := range Words(st.Angle) {
			if len(w) > 3 {
				words[singular(w)] = true
			}
		}
		for _, i := range byUC[st.UseCase] {
			for _, w := range append(append(Words(all[i].Angle), all[i].Outcome), all[i].Overlay) {
				if words[singular(w)] {
					angled[st.UseCase] = append(angled[st.UseCase], i)
					break
				}
			}
		}
	}
	total := 0
	cursor := map[string]int{}
	for _, uc := range order {
		for quota[uc] > 0 && (dealFrom("angle:"+uc, angled[uc], cursor) || deal(uc, cursor)) {
			quota[uc]--
			total++
		}
	}
	// What the steer leaves out is filled evenly; steered use cases take more
	// only once the others are full.
	steeredUC := map[string]bool{}
	for _, s := range steer {
		steeredUC[s.UseCase] = true
	}
	for pass := 0; pass < 2 && total < asked; pass++ {
		for total < asked {
			progress := false
			for _, uc := range order {
				if total >= asked {
					break
				}
				if pass == 0 && steeredUC[uc] {
					continue
				}
				if deal(uc, cursor) {
					total++
					progress = true
				}
			}
			if !progress {
				break
			}
		}
	}
	// Buckets granted nothing stay in the plan with want 0: a top-up may
	// need them when others block.
	out := make([]Bucket, len(all))
	for i, b := range all {
		b.Want = granted[i]
		out[i] = b
	}
	return out
}
