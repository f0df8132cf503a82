package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Overlays a bucket may carry.
var Overlays = []string{"none", "pressure", "impersonation", "injection", "fraud", "emergency"}

// Axis is a state axis: a column whose level changes the right answer of a use case.
type Axis struct {
	UseCase string            `json:"use_case"`
	Table   string            `json:"table"`
	Column  string            `json:"column"`
	Levels  map[string]string `json:"levels"` // level -> outcome (succeed | refuse)
}

// Spec is what a writer needs of a bucket beyond its columns.
type Spec struct {
	Tools []string `json:"tools"`           // serving the use case, the acting tool last
	Tool  string   `json:"tool"`            // the acting tool
	Then  string   `json:"then,omitempty"`  // a tool that must follow it (a handoff after a report)
	Gated []string `json:"gated,omitempty"` // precondition tools the solution calls first, in call order
	// Identify are other tools of caller.from that stand in for the one
	// Gated identifies the caller with, rehearsed as it was: the cases
	// take Gated's and these in turn (IdentifyAs).
	Identify []string `json:"identify,omitempty"`
	// Lookups are the use case's retrieval tools a solution calls after the
	// preconditions and before the act (the record looked up before it is
	// changed), each rehearsed ok on the plan's cases.
	Lookups []string `json:"lookups,omitempty"`
	Handoff string   `json:"handoff,omitempty"` // tool for escalations
	Table   string   `json:"table,omitempty"`   // the target's table
	Column  string   `json:"column,omitempty"`  // the axis column ("" without an axis)
	Level   string   `json:"level,omitempty"`   // the axis level
	// Refusal is the way the world says no that the bucket's cases meet:
	// a handler's refusal branch (file:line) or a rule ("rule:ID") whose
	// check fails on an act the world carries out; "" when the level is
	// not dealt for one.
	Refusal   string   `json:"refusal,omitempty"`
	Templates []string `json:"templates,omitempty"` // keys of seed rows at that level, in order
	// Choices says, per template, the choices a case of it makes
	// (absent: none), as the plan rehearsed it.
	Choices map[string]Choice `json:"choices,omitempty"`
	// Prior says, per template, what the world holds beyond the seed for
	// the level: what the act already wrote on the template's own records
	// (the case asks for the act once more), or a number, date or state of
	// a record it reaches pushed past a bound (pushLevels), as statements
	// on the seed's values: a case carries them into its setup, mapped
	// onto its minted records (ground.Setup.Carry).
	Prior map[string][]scenario.Statement `json:"prior,omitempty"`
	// Ask is, on a bucket a revision deals (suitegen revise), what the user
	// asked of the scenarios it replaces, in their words: the bucket was
	// chosen for it, and a model reads it as what its cases are to be.
	Ask string `json:"ask,omitempty"`
	// Noisy: the revision asked for callers on a worse phone line
	// (Noisier), a voice agent's.
	Noisy bool `json:"noisy,omitempty"`
	// Callers are keys of caller rows a case about a shared record (a
	// product, a slot) mints its caller from, in turn.
	Callers []string `json:"callers,omitempty"`
	// Owner is, for a target table with several columns naming a caller
	// (ground.Graph.OwnerRoles: a parcel's sender_id and recipient_id), the
	// one whose person a case's caller is; "" for the first.
	Owner string `json:"owner,omitempty"`
	// Binds say where each argument of the bucket's tools comes from.
	Binds ground.Bindings `json:"binds,omitempty"`
	// Strides is, per table, how many fresh values one scenario may take
	// (ground.Person.Strides): the same for every bucket of a plan.
	Strides map[string]int `json:"strides,omitempty"`
	Rules   []string       `json:"rules,omitempty"` // hard rules this bucket tests
	Base    int            `json:"base"`            // index of this bucket's first scenario in the suite
	// Capacity is the bucket's derived want before the plan was sized to the
	// ask; Sized its want then. A top-up raises want up to Capacity; the
	// scenarios it adds take the indices of Spans. TopUp, without Spans, is
	// one span from Sized on that reserved every index up to Capacity.
	Capacity int    `json:"capacity"`
	Sized    int    `json:"sized"`
	TopUp    int    `json:"top_up,omitempty"`
	Spans    []Span `json:"spans,omitempty"`
	// Outbound use cases: who answers the call (scenario.Answers), the
	// purpose table whose record the call is about, and the tools for a
	// missed call and a call put off. Gated then starts with the tool that
	// identifies the callee.
	Answer     scenario.Answer `json:"answer,omitempty"`
	Purpose    string          `json:"purpose,omitempty"`
	MissedCall string          `json:"missed_call,omitempty"`
	CallLater  string          `json:"call_later,omitempty"`
	// Next is, on a bucket of two requests, the caller's second request in
	// the same conversation, on the same record (see requests.go).
	Next *Next `json:"next,omitempty"`
}

// Span is where a top-up's scenarios take their suite-wide indices: the
// bucket's K-th scenario and those after it take Index on, until the next
// span. A top-up reserves exactly what it raises, so indices, bounded by
// what the code spaces hold (Plan.Most), are not spent on room never used.
type Span struct {
	K     int `json:"k"`
	Index int `json:"index"`
}

// Index is the suite-wide index of a bucket's k-th scenario: it deals the
// caller and the numbers of minted codes, so it is unique in a run.
func (s Spec) Index(k int) int {
	if k < s.Sized {
		return s.Base + k
	}
	for i := len(s.Spans) - 1; i >= 0; i-- {
		if sp := s.Spans[i]; k >= sp.K {
			return sp.Index + (k - sp.K)
		}
	}
	return s.TopUp + (k - s.Sized)
}

// End is one past the last suite-wide index the bucket holds at want.
func (s Spec) End(want int) int {
	end := s.Base + s.Sized
	if len(s.Spans) == 0 && s.TopUp > 0 {
		end = max(end, s.TopUp+max(s.Capacity-s.Sized, 0))
	}
	for i, sp := range s.Spans {
		last := want
		if i+1 < len(s.Spans) {
			last = s.Spans[i+1].K
		}
		end = max(end, sp.Index+max(last-sp.K, 0))
	}
	return end
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
	// repeat is, for an outbound bucket, how many earlier levels of its use
	// case dealt a bucket of the same answer, outcome and overlay: a small
	// ask reaches every answer before a second level of one.
	repeat int
}

// Plan is the whole plan of a run.
type Plan struct {
	Cells    []Cell   `json:"cells"`
	Axes     []Axis   `json:"axes"`
	Buckets  []Bucket `json:"buckets"`
	Themes   []string `json:"themes"`
	Capacity int      `json:"capacity"` // what the agent supports: the sum of every bucket's derived want, at most Most
	Asked    int      `json:"asked"`
	// Bindings ground every tool argument (ground.Discover); Unanswered
	// are the tools no rehearsal answered ok.
	Bindings   ground.Bindings   `json:"bindings"`
	Unanswered map[string]string `json:"unanswered,omitempty"`
	// Gaps are the use cases the plan has no bucket for, and why.
	Gaps []Gap `json:"gaps,omitempty"`
	// RefusalsOnly are use cases planned with refusals only: their act
	// never answered ok on the world, and why.
	RefusalsOnly []Gap `json:"refusals_only,omitempty"`
	// EveryCaseBreaks are use cases whose act broke a rule's check on every
	// case the world carried it out on, as the plan played them: their
	// successes are refused (rule-broken) unless the reference does more
	// than the plan played, and the check may be one that does not hold
	// where its rule does not apply.
	EveryCaseBreaks []Gap `json:"every_case_breaks,omitempty"`
	// Strides is, per table, how many fresh values one scenario may take.
	Strides map[string]int `json:"strides,omitempty"`
	// Reuse is how many scenarios each template row serves (on fresh
	// minted copies: new keys, new callers) so that the plan holds the ask;
	// 1 when the distinct rows suffice.
	Reuse int `json:"reuse"`
	// Reserve is how many more uses of the templates the plan holds at
	// want 0 past the ask, so that a top-up has room when buckets block
	// (a fifth of the ask, within Most).
	Reserve int `json:"reserve,omitempty"`
	// Most is the most scenarios a run of this contract can mint without
	// two sharing a value (0: no limit), and MostWhy the column that bounds
	// it.
	Most    int    `json:"most,omitempty"`
	MostWhy string `json:"most_why,omitempty"`
	// Crashes are the places in the handlers' code that crashed on calls
	// the plan rehearsed (every Derive of the contract in this process).
	Crashes []Crash `json:"crashes,omitempty"`
	// Cached says the plan was read from Options.Cache, not derived.
	Cached bool `json:"-"`
}

// TooMany is an ask larger than the contract can mint distinct cases for.
type TooMany struct {
	Asked, Most int
	Why         string
}

func (e *TooMany) Error() string {
	return fmt.Sprintf("plan: %d scenarios asked, but the contract supports at most %d distinct ones: %s", e.Asked, e.Most, e.Why)
}

// Unplanned is a plan that leaves use cases without a bucket: running it
// would spend on a suite that cannot cover them.
// UseCases and Capacity say what the rest would deliver.
type Unplanned struct {
	Gaps               []Gap
	UseCases, Capacity int
}

func (e *Unplanned) Error() string {
	parts := make([]string, len(e.Gaps))
	for i, g := range e.Gaps {
		parts[i] = fmt.Sprintf("use case %s: %s", g.UseCase, g.Reason)
	}
	rest := ""
	if e.UseCases > 0 {
		rest = fmt.Sprintf("; --allow-partial writes the other %d of %d use cases (up to %d distinct scenarios)", e.UseCases-len(e.Gaps), e.UseCases, e.Capacity)
	}
	return fmt.Sprintf("plan: %d use case(s) cannot be planned (--allow-partial writes the rest): %s%s", len(e.Gaps), strings.Join(parts, "; "), rest)
}

// Choice is how a case of a template fills its arguments
// (ground.Bound.Variant and Ordinal): which of several rows it reaches it
// uses, and which enum value or shared row it takes.
type Choice struct {
	Variant int `json:"variant,omitempty"`
	Ordinal int `json:"ordinal,omitempty"`
	// Outside names a table whose records the case's arguments take from
	// outside the case (ground.Bound.Outside): the caller asks about
	// another person's card or order, or to swap to another product's
	// variant.
	Outside string `json:"outside,omitempty"`
	// Swap, where the act takes a sibling of the case's row of Outside
	// (a variant to swap to), is which row it takes instead
	// (ground.Bound.Swap).
	Swap ground.Swap `json:"swap,omitempty"`
	// Other, with Swap world, is which of the world's rows of Outside the
	// act takes (ground.Bound.Other).
	Other int `json:"other,omitempty"`
	// Leave is the act's argument the case leaves out (ground.Bound.Leave).
	Leave string `json:"leave,omitempty"`
}

// Apply makes the case fill its arguments with this choice.
func (ch Choice) Apply(b *ground.Bound) {
	b.Variant, b.Ordinal, b.Outside, b.Swap, b.Other, b.Leave = ch.Variant, ch.Ordinal, ch.Outside, ch.Swap, ch.Other, ch.Leave
}

// Gap is a use case the plan could not give a bucket, and why: an argument
// no column grounds, a requires chain no case meets, a constraint every
// minted copy broke.
type Gap struct {
	UseCase string `json:"use_case"`
	Reason  string `json:"reason"`
}

// Options steer derivation.
type Options struct {
	Asked int
	// MaxWant caps a bucket's derived want (distinct template rows). Given,
	// it also caps reuse: no template serves more than one scenario.
	MaxWant int
	// MaxProbe caps how many rows per use case are rehearsed to find axes.
	MaxProbe int
	// Steer is a user's plan (--plan FILE); nil: even split.
	Steer []Steer
	// Grounding, when set, is the contract's grounding already discovered
	// on this world (validate probes first); nil: Derive discovers it.
	Grounding *ground.Grounding
	// Rules, when set, reads the contract's rule checks on the act's
	// rehearsals: a record the world would act on but a rule forbids is a
	// refusal level of its own (prove.Prover is one). nil: only the
	// handlers' refusals count.
	Rules RuleJudge
	// Mutants, when set, rehearses on the world without one refusal branch
	// (probe.Mutants): a refusal level's templates that branch alone
	// refuses are dealt first. nil: templates keep the sample's order.
	Mutants Mutants
	// Cache, when set, keeps the plan before sizing for the next Derive of
	// the contract with the same options, in this process or another; it
	// is not read when Grounding is given.
	Cache Cache
	// replay: rehearse every time, one row at a time, without the memo
	// (tests compare the two plans).
	replay bool
}

// Mutants rehearses on the world with the refusal branch at (file:line)
// removed; a nil Rehearser when the contract has no branch there.
type Mutants interface {
	Without(at string) (ground.Rehearser, error)
}

// RuleJudge says which of the contract's rules a run of calls breaks, as
// the caller with that key (prove.Prover.RulesBroken).
type RuleJudge interface {
	RulesBroken(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, caller any) ([]string, error)
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

type level struct {
	column, level, outcome string
	templates              []string
	// branch is the handler's refusal branch (file:line) every template of
	// a refusal level takes when it was dealt for that branch, and refusal
	// its message as the handler writes it ("" when not a literal).
	branch, refusal string
	// choices are, when set, the argument choices each template's case
	// makes at this level instead of the solution's (a refusal the world
	// gives only to another choice).
	choices map[string]Choice
	// elsewhere says, for a level whose cases take a record from outside
	// the case (Choice.Outside), what that record is to the case.
	elsewhere string
	// prior is, per template, what the act already wrote on its records
	// (againLevels: the case asks for what is done), or a setting that
	// pushes a record past a bound (pushLevels).
	prior map[string][]scenario.Statement
	// pushed says, for a level whose prior pushes a record past a bound
	// (pushLevels), which value and which way.
	pushed string
	// act names, for a level of a use case's further act (moreActs), that
	// act: the use case's angles of its acts stay apart.
	act string
}

// RuleRefusal prefixes a Spec.Refusal that is a rule's ID.
const RuleRefusal = "rule:"

// choice is the argument choice a case of template key makes at lv.
func (lv level) choice(sol solution, key string) Choice {
	if lv.choices != nil {
		return lv.choices[key]
	}
	return sol.choices[key]
}

// Derive builds the plan. It grounds every tool argument by rehearsal, then
// for each use case solves the chain of calls its acting tool requires (the
// alternatives that work), rehearses the chain on rows of its target table
// to find the levels that change the answer, checks that a case at each
// level can be minted, and lays out buckets over outcomes and overlays,
// sized to the ask. A use case that gets no bucket is a Gap with its reason.
func Derive(ctx context.Context, c *contract.Contract, r ground.Rehearser, opts Options) (*Plan, error) {
	capped := opts.MaxWant > 0 // a user's cap on a bucket's want: no reuse past it
	opts.defaults()
	g := ground.New(c)
	key := cacheKey(c.SHA256, opts)
	if opts.cached() {
		if p, ok := cachedPlan(opts.Cache, key); ok {
			return p.sized(g, opts, capped), nil
		}
		// A miss derives while holding the key; one that waited for
		// another's derivation reads it.
		release, err := opts.Cache.Claim(ctx, key)
		if err != nil {
			return nil, err
		}
		defer release()
		if p, ok := cachedPlan(opts.Cache, key); ok {
			return p.sized(g, opts, capped), nil
		}
	}
	kept := lessonsOf(c, opts.MaxProbe, opts.Rules != nil, opts.Mutants != nil)
	kept.mu.Lock()
	defer kept.mu.Unlock()
	r = newMemo(r, !opts.replay, &kept.crashes)
	gr, err := grounding(ctx, g, r, opts, kept)
	if err != nil {
		return nil, err
	}
	d := &deriver{
		c: c, opts: opts, gr: &gr,
		p:       &Plan{Cells: Grid(c), Asked: opts.Asked},
		sv:      &solver{g: g, r: &wanting{r: r, bs: &gr.Bindings}, workers: probeWorkers, bs: gr.Bindings, unanswered: gr.Unanswered, wrote: gr.Wrote, max: opts.MaxProbe, solved: kept.solved, rules: opts.Rules, mutants: opts.Mutants},
		handoff: Handoff(c),
		cellOf:  map[string]string{},
	}
	if opts.replay {
		d.sv.workers = 1
	}
	for _, cell := range d.p.Cells {
		for _, tn := range cell.Tools {
			d.cellOf[tn] = cell.ID()
		}
	}
	var all []Bucket
	for ui := range c.UseCases {
		bs, err := d.useCase(ctx, &c.UseCases[ui])
		if err != nil {
			return nil, fmt.Errorf("plan: use case %s: %w", c.UseCases[ui].ID, err)
		}
		all = append(all, bs...)
	}
	orderBuckets(all)
	assignRules(c, all)
	p := d.p
	p.Bindings, p.Unanswered, p.Crashes, p.Buckets = gr.Bindings, gr.Unanswered, kept.crashes.list(), all
	if opts.cached() {
		// The plan is sized as read back, so that one derived here and one
		// a later process reads are laid out alike, to the value's type.
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("plan: cache: %w", err)
		}
		if p, _ = unsized(b); p == nil {
			return nil, fmt.Errorf("plan: cache: the plan does not read back")
		}
		opts.Cache.Put(key, b)
	}
	return p.sized(g, opts, capped), nil
}

// sized is p, whose Buckets are every bucket the use cases gave, laid out
// and sized to the ask.
func (p *Plan) sized(g *ground.Graph, opts Options, capped bool) *Plan {
	all := p.Buckets
	p.Buckets, p.Asked = nil, opts.Asked
	p.sizeBuckets(g, all, opts, capped)
	p.pairRequests(g.C)
	return p
}

// grounding is the contract's grounding on this world: the one given, the
// one an earlier Derive discovered, or a new discovery. The plan gets its
// own copy to confirm tools in.
func grounding(ctx context.Context, g *ground.Graph, r ground.Rehearser, opts Options, kept *lessons) (ground.Grounding, error) {
	var gr ground.Grounding
	switch {
	case opts.Grounding != nil:
		gr = *opts.Grounding
	case kept.grounding != nil:
		gr = *kept.grounding
	default:
		var err error
		if gr, err = g.Discover(ctx, r); err != nil {
			return gr, fmt.Errorf("plan: %w", err)
		}
		kept.grounding = &gr
	}
	gr.Unanswered = maps.Clone(gr.Unanswered)
	gr.Bindings = slices.Clone(gr.Bindings)
	return gr, nil
}

// deriver holds what planning each use case shares.
type deriver struct {
	c       *contract.Contract
	opts    Options
	gr      *ground.Grounding
	p       *Plan
	sv      *solver
	handoff string
	cellOf  map[string]string // tool -> the grid cell it is in
}

// useCase solves a use case's acting tool and returns its buckets; a use
// case nothing can be planned for is recorded as a gap of the plan.
func (d *deriver) useCase(ctx context.Context, u *contract.UseCase) ([]Bucket, error) {
	c, p := d.c, d.p
	tools := UseCaseTools(c, u, d.gr.Wrote)
	pin, pinned := RuleChoice{}, false
	if len(tools) == 0 {
		if pin, pinned = RuleTools(c, u); pinned {
			tools = []string{pin.Tool}
		}
	}
	if len(tools) == 0 {
		p.Gaps = append(p.Gaps, Gap{u.ID, "no tool serves it: no tool's name shares a word with it, and no rule it is named after names a value of a tool's; list its tools in use_cases[].tools"})
		return nil, nil
	}
	acting, then := actingTool(c, tools, d.gr.Wrote)
	tool := c.Tool(acting)
	if tool == nil {
		return nil, nil
	}
	further := d.sv.further(tool, tools)
	out, err := d.actBuckets(ctx, u, tools, tool, then, further, pin, pinned, true)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	// The use case's further check serves its other acts alike ("a parent
	// books, moves or cancels a child's appointment"): each is planned
	// behind it too.
	for _, t := range d.moreActs(tools, tool, further) {
		more, err := d.actBuckets(ctx, u, tools, t, "", further, pin, false, false)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// moreActs are the use case's tools besides its acting one that change
// state and that the same further checks serve (further is not empty and
// each names exactly it): a cancellation as well as a booking for a child.
func (d *deriver) moreActs(tools []string, acting *contract.Tool, further []string) []*contract.Tool {
	if len(further) == 0 {
		return nil
	}
	var out []*contract.Tool
	for _, name := range tools {
		t := d.c.Tool(name)
		if t == nil || name == acting.Name || t.EndsConversation || !Changes(d.c, t, d.gr.Wrote) {
			continue
		}
		if slices.Equal(d.sv.further(t, tools), further) {
			out = append(out, t)
		}
	}
	return out
}

// actBuckets are the buckets of use case u on one act, behind the further
// checks; main says the act is the use case's own (its gaps, refusals-only
// note and axis are the use case's).
func (d *deriver) actBuckets(ctx context.Context, u *contract.UseCase, tools []string, tool *contract.Tool, then string, further []string,
	pin RuleChoice, pinned, main bool) ([]Bucket, error) {
	c, p := d.c, d.p
	acting := tool.Name
	kept := keptArgs(d.sv.g, tools, tool, d.sv.targetTable(tool), d.sv.bs)
	if len(kept) > 0 {
		// The act is rehearsed, and its cases filled, keeping what the
		// use case asks no change of.
		saved := d.sv.bs
		d.sv.bs = keeping(saved, acting, kept)
		defer func() { d.sv.bs = saved }()
	}
	sol, err := d.sv.solve(ctx, tool, further)
	if err != nil {
		return nil, err
	}
	sol.choices = maps.Clone(sol.choices) // the cache keeps its own
	if len(sol.levels) == 0 {
		if main {
			p.Gaps = append(p.Gaps, Gap{u.ID, sol.why})
		}
		return nil, nil
	}
	if sol.answered {
		d.gr.Confirm(append(append([]string{}, sol.chain...), acting)...)
	} else if main {
		p.RefusalsOnly = append(p.RefusalsOnly, Gap{u.ID, sol.refusalsOnly})
	}
	if main {
		for _, id := range sol.everyRow {
			p.EveryCaseBreaks = append(p.EveryCaseBreaks, Gap{u.ID, fmt.Sprintf("rule %s's check (%s) failed on every case the world carried %s out on, after %s", id, c.Rule(id).Check, acting, chainText(sol.chain))})
		}
	}
	lookups, err := d.sv.lookups(ctx, tool, tools, sol)
	if err != nil {
		return nil, err
	}
	spec := Spec{Tools: tools, Tool: acting, Then: then, Gated: sol.chain, Lookups: lookups, Handoff: d.handoff, Table: sol.table, Callers: sol.callers, Owner: sol.owner}
	ob := outboundOf(c, u, tools, d.gr.Unanswered)
	if ob == nil {
		if spec.Identify, err = d.sv.identities(ctx, tool, sol, lookups); err != nil {
			return nil, err
		}
	} else {
		spec = ob.spec(c, spec)
		// The call's chain identifies the callee first: a tool it holds is
		// no lookup as well.
		spec.Lookups = slices.DeleteFunc(slices.Clone(spec.Lookups), func(l string) bool { return slices.Contains(spec.Gated, l) })
		if len(spec.Lookups) == 0 {
			spec.Lookups = nil
		}
	}
	spec.Binds = keeping(d.gr.Bindings.For(specTools(spec)...), acting, kept)
	namedTeams(c, u, spec.Binds)
	if pinned {
		// What the rule names is the choice the use case is about.
		for i := range spec.Binds {
			if b := &spec.Binds[i]; b.Tool == pin.Tool && b.Param == pin.Param {
				b.How, b.Table, b.Column, b.Source, b.Picks, b.Fill = ground.ByEnum, "", "", "", []any{pin.Value}, true
			}
		}
	}
	if sol.axis != nil && main {
		sol.axis.UseCase = u.ID
		p.Axes = append(p.Axes, *sol.axis)
	}
	var out []Bucket
	if ob != nil {
		anySucceed := slices.ContainsFunc(sol.levels, func(lv level) bool { return lv.outcome == "succeed" })
		dealtBefore := map[outboundBucket]int{}
		for li, lv := range sol.levels {
			if !main {
				lv.act = tool.Name
			}
			out = append(out, d.outboundLevelBuckets(ob, u, tool, spec, sol, lv, li == 0, anySucceed, dealtBefore)...)
		}
		return out, nil
	}
	for _, lv := range sol.levels {
		if !main {
			lv.act = tool.Name
		}
		out = append(out, d.levelBuckets(u, tool, spec, sol, lv)...)
	}
	return out, nil
}

// actingTool is the tool a use case's scenarios are about: its last tool,
// unless that only ends the conversation after an act ("file a report,
// then hand over"), which then follows the act.
func actingTool(c *contract.Contract, tools []string, wrote map[string]bool) (acting, then string) {
	acting = tools[len(tools)-1]
	if t := c.Tool(acting); t != nil && t.EndsConversation && len(tools) > 1 {
		if prev := c.Tool(tools[len(tools)-2]); prev != nil && Changes(c, prev, wrote) {
			acting, then = prev.Name, acting
		}
	}
	return acting, then
}

// levelBuckets are the buckets of one level of a use case's axis: each
// outcome the level allows, plain and under each overlay that fits it.
func (d *deriver) levelBuckets(u *contract.UseCase, tool *contract.Tool, spec Spec, sol solution, lv level) []Bucket {
	lspec, axes, want := d.levelSpec(spec, sol, lv)
	if want == 0 {
		return nil
	}
	var out []Bucket
	add := func(outcome, overlay string) {
		out = append(out, Bucket{
			Theme: u.ID, Cell: d.cellOf[spec.Tool], UseCase: u.ID,
			Outcome: outcome, Overlay: overlay, Kind: kindOf(outcome, overlay),
			Axes: axes, Want: want, Spec: lspec,
			Angle: angle(u, tool, lv, outcome, overlay),
		})
	}
	changes := tool.ChangesState == nil || *tool.ChangesState
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
		// itself: an act the world refuses at this level (and it
		// means nothing when the act is the handover).
		if changes && d.handoff != "" && d.handoff != spec.Tool && !tool.EndsConversation {
			add("escalate", "fraud")
			add("escalate", "emergency")
		}
	}
	return out
}

// levelSpec is what the buckets of one level share: the spec at that
// level, its axes and the want of each bucket.
func (d *deriver) levelSpec(spec Spec, sol solution, lv level) (Spec, map[string]string, int) {
	lspec := spec
	templates := alikeTemplates(sol, lv)
	lspec.Column, lspec.Level, lspec.Templates, lspec.Refusal = lv.column, lv.level, templates, lv.branch
	for _, k := range templates {
		if pr := lv.prior[k]; len(pr) > 0 {
			if lspec.Prior == nil {
				lspec.Prior = map[string][]scenario.Statement{}
			}
			lspec.Prior[k] = pr
		}
	}
	day := false
	for _, k := range templates {
		if ch := lv.choice(sol, k); ch != (Choice{}) {
			if lspec.Choices == nil {
				lspec.Choices = map[string]Choice{}
			}
			lspec.Choices[k] = ch
			day = day || ch.Swap == ground.SwapDay
		}
	}
	if day {
		// A look-up that takes the day the caller names (whether it is
		// free) meets the refusal before the act: the case's reference
		// makes the act, which the world refuses for that day.
		lspec.Lookups = slices.DeleteFunc(slices.Clone(lspec.Lookups), func(l string) bool {
			return slices.ContainsFunc(spec.Binds, func(b ground.Binding) bool { return b.Tool == l && b.How == ground.FromClock })
		})
		if len(lspec.Lookups) == 0 {
			lspec.Lookups = nil
		}
	}
	axes := map[string]string{}
	if lv.column != "" {
		axes[sol.table+"."+lv.column] = lv.level
	}
	return lspec, axes, min(len(templates), d.opts.MaxWant)
}

// alikeTemplates are the templates of a level whose cases ask about whose
// record alike (the same Outside, Swap and Leave), the most common such
// group, first met on a tie. A level built from the solution's rows can mix
// them (most rows reserve a title of their own, one succeeded only on a
// title of the world's), and a bucket's scenarios, its angle and its brief
// describe one kind of case.
func alikeTemplates(sol solution, lv level) []string {
	group := func(k string) Choice {
		ch := lv.choice(sol, k)
		return Choice{Outside: ch.Outside, Swap: ch.Swap, Leave: ch.Leave}
	}
	count := map[Choice]int{}
	var most Choice
	for _, k := range lv.templates {
		g := group(k)
		count[g]++
		if count[g] > count[most] {
			most = g
		}
	}
	if len(count) < 2 {
		return lv.templates
	}
	var out []string
	for _, k := range lv.templates {
		if group(k) == most {
			out = append(out, k)
		}
	}
	return out
}

// outboundLevelBuckets are the buckets of one level of an outbound use
// case: who answers, with the outcome and overlay each answer brings.
// dealtBefore counts each answer's buckets at earlier levels.
func (d *deriver) outboundLevelBuckets(ob *outbound, u *contract.UseCase, tool *contract.Tool, spec Spec, sol solution, lv level,
	first, anySucceed bool, dealtBefore map[outboundBucket]int) []Bucket {
	lspec, axes, want := d.levelSpec(spec, sol, lv)
	// A case is a call about a record of the purpose table: a template
	// whose case reaches none (a student with no hold, for a call about
	// holds) has nothing to call about, and no scenario is written from it.
	lspec.Templates = slices.DeleteFunc(slices.Clone(lspec.Templates), func(k string) bool { return !d.reachesPurpose(lspec, k) })
	if want = min(want, len(lspec.Templates)); want == 0 {
		return nil
	}
	changes := tool.ChangesState == nil || *tool.ChangesState
	var out []Bucket
	for _, ab := range ob.buckets(lv, first, anySucceed, changes, d.handoff, spec.Tool, tool) {
		oaxes := maps.Clone(axes)
		oaxes[AnswerAxis] = string(ab.answer)
		ospec := lspec
		ospec.Answer = ab.answer
		out = append(out, Bucket{
			Theme: u.ID, Cell: d.cellOf[spec.Tool], UseCase: u.ID,
			Outcome: ab.outcome, Overlay: ab.overlay, Kind: outboundKind(ab.answer, ab.outcome, ab.overlay),
			Axes: oaxes, Want: want, Spec: ospec,
			Angle: outboundAngle(u, tool, lv, ab), repeat: dealtBefore[ab],
		})
		dealtBefore[ab]++
	}
	return out
}

// reachesPurpose reports whether the case of template key reaches a row of
// the spec's purpose table (the writer calls about the first it reaches):
// the target is one, or one of the rows it leads to. A target no caller owns
// is served to a minted caller whose rows the case reaches too, so it is
// kept when any caller template reaches one.
func (d *deriver) reachesPurpose(spec Spec, key string) bool {
	g := d.sv.g
	if spec.Purpose == "" || spec.Purpose == spec.Table {
		return true
	}
	target := g.Find(spec.Table, g.PK(spec.Table), key)
	if target == nil {
		return false
	}
	if len(g.Bind(spec.Table, target).Rows[spec.Purpose]) > 0 {
		return true
	}
	cl := d.c.Caller
	if cl == nil || !g.Shared(spec.Table, target) {
		return false
	}
	return slices.ContainsFunc(spec.Callers, func(k string) bool {
		row := g.Find(cl.Table, cl.Key, k)
		return row != nil && len(g.Bind(cl.Table, row).Rows[spec.Purpose]) > 0
	})
}

// orderBuckets puts, within a use case, plain cases before overlays and
// outcomes in a fixed order, so a small ask gets each use case's ordinary
// success and refusal first.
//
// A kind of case (outcome, overlay) its use case already has at an earlier
// level comes after every kind's first: then the plain refusals of further
// levels, those dealt for a way the world says no (Spec.Refusal) no
// earlier bucket of the use case is refused at first, and last the rest. A small ask gets each outcome of a use case,
// then each way its act is refused, before a second case of either.
func orderBuckets(all []Bucket) {
	ranks := make([]int, len(all))
	seen := map[string]bool{}
	for i := range all {
		b := &all[i]
		r := bucketRank(*b)
		kind := b.UseCase + "\x00" + b.Outcome + "\x00" + b.Overlay + "\x00" + string(b.Spec.Answer)
		way := b.UseCase + "\x00refusal\x00" + b.Spec.Refusal
		switch {
		case b.Spec.Answer != "" || !seen[kind]:
		case b.Outcome == "refuse" && b.Overlay == "none" && b.Spec.Refusal != "" && !seen[way]:
			r += 200
		case b.Outcome == "refuse" && b.Overlay == "none":
			r += 300
		default:
			r += 1000
		}
		seen[kind] = true
		if b.Outcome == "refuse" && b.Spec.Refusal != "" {
			seen[way] = true
		}
		ranks[i] = r
	}
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool {
		a, b := idx[i], idx[j]
		if all[a].UseCase != all[b].UseCase {
			return false
		}
		return ranks[a] < ranks[b]
	})
	sorted := make([]Bucket, len(all))
	for i, k := range idx {
		sorted[i] = all[k]
	}
	copy(all, sorted)
}

// sizeBuckets gives the plan its code strides, its reuse of templates and its
// capacity, then sizes the buckets to the ask and names its themes.
func (p *Plan) sizeBuckets(g *ground.Graph, all []Bucket, opts Options, capped bool) {
	p.Strides = strides(g, all)
	for _, b := range p.Bindings {
		if b.How == ground.Fresh && p.Strides[b.Table] == 0 {
			p.Strides[b.Table] = 1 // the fresh argument's own slot
		}
	}
	p.Most, p.MostWhy = most(g, all, p.Strides)
	p.lay(all, opts, capped)
	rehomeRules(g.C, p.Buckets)
}

// lay lays the buckets out over the uses of their templates the ask needs
// and the reserve past it, gives the plan its capacity, sizes the buckets to
// the ask and names its themes.
func (p *Plan) lay(all []Bucket, opts Options, capped bool) {
	p.Reuse = 1
	spare := 0
	if !capped {
		p.Reuse = reuse(all, opts.Asked, p.Most)
		spare = reserve(all, p.Reuse, opts.Asked, p.Most)
	}
	p.Reserve = spare
	all = uses(all, p.Reuse+spare)
	planned := len(all) / (p.Reuse + spare) * p.Reuse
	for i := range all {
		all[i].Ord = i
		all[i].ID = fmt.Sprintf("b%04d", i)
		all[i].Spec.Capacity = all[i].Want
		all[i].Spec.Strides = p.Strides
		p.Capacity += all[i].Want
	}
	if p.Most > 0 && p.Capacity > p.Most {
		p.Capacity = p.Most // what the code spaces hold, however often templates serve
	}
	// The ask is dealt over the uses it needs; the reserve's uses stay at
	// want 0, room a top-up raises when buckets block.
	p.Buckets = append(size(all[:planned], opts.Asked, opts.Steer), all[planned:]...)
	base := 0
	for i := range p.Buckets {
		if i >= planned {
			p.Buckets[i].Want = 0
		}
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
}

// rehomeRules gives each hard rule that only buckets the ask left at want 0
// were given (assignRules, before sizing) to the buckets the ask deals, the
// adversarial ones in turn, else any: a rule of how to talk ("one tool call
// at a time") names no tool, and the adversarial bucket it fell to may be
// one a small ask never reaches.
func rehomeRules(c *contract.Contract, bs []Bucket) {
	tested := map[string]bool{}
	var adversarial, dealt []int
	for i, b := range bs {
		if b.Want == 0 {
			continue
		}
		dealt = append(dealt, i)
		if b.Overlay != "none" {
			adversarial = append(adversarial, i)
		}
		for _, r := range b.Spec.Rules {
			tested[r] = true
		}
	}
	to := adversarial
	if len(to) == 0 {
		to = dealt
	}
	next := 0
	for _, r := range c.Rules {
		if tested[r.ID] || len(to) == 0 {
			continue
		}
		b := &bs[to[next%len(to)]]
		next++
		b.Spec.Rules = append(b.Spec.Rules, r.ID)
	}
}

// uses lays out each bucket n times, one bucket per use of its templates,
// all first uses first. Each use is a bucket of its own, no larger than the
// first, so a slice never asks one session for more than a bucket's worth
// of scenarios however large the ask; a later use starts its templates
// where the previous use left off, so every template serves before any
// serves again.
func uses(bs []Bucket, n int) []Bucket {
	if n <= 1 {
		return bs
	}
	out := make([]Bucket, 0, len(bs)*n)
	for u := range n {
		for _, b := range bs {
			if u > 0 {
				t := b.Spec.Templates
				shift := (u * b.Want) % max(len(t), 1)
				b.Spec.Templates = append(slices.Clone(t[shift:]), t[:shift]...)
				// A scenario's branch is its angle and its place in the
				// bucket: another use is another branch.
				b.Angle = fmt.Sprintf("%s (use %d)", b.Angle, u+1)
			}
			out = append(out, b)
		}
	}
	return out
}

// reuse is how many scenarios each template serves: 1 when the plan's
// distinct rows hold the ask, else enough reuses to hold it.
func reuse(bs []Bucket, asked, most int) int {
	capacity := 0
	for _, b := range bs {
		capacity += b.Want
	}
	if capacity == 0 || asked <= capacity {
		return 1
	}
	// Enough reuses to hold the ask, even when that many would overrun the
	// code spaces: size trims the plan to the ask, which Prepare holds to
	// most, so the last reuse is partial rather than dropped whole.
	return (asked + capacity - 1) / capacity
}

// headroom is the fraction of an ask (1/headroom) a plan keeps as spare
// capacity beyond it: what a top-up deals when buckets block short of their
// want, so that blocked buckets do not leave a large run short.
const headroom = 5

// reserve is how many more uses of every template the plan lays out, at want
// 0, so that its spare capacity past the ask is at least a fifth of the ask:
// none when the planned uses already leave that much, and none past the
// code spaces (most), which a top-up never deals beyond.
func reserve(bs []Bucket, reuse, asked, most int) int {
	distinct := 0
	for _, b := range bs {
		distinct += b.Want
	}
	if distinct == 0 || asked <= 0 {
		return 0
	}
	spare := distinct*reuse - asked
	margin := max(asked/headroom, 1)
	if spare >= margin {
		return 0
	}
	n := (margin - spare + distinct - 1) / distinct
	// A reserve use that would start at or past most could never be dealt.
	for n > 0 && most > 0 && distinct*(reuse+n-1) >= most {
		n--
	}
	return n
}

// most is the most scenarios a run can mint without two sharing a value:
// for each table a case mints rows of, the room of its key's shape (and of
// the caller's phone) over the table's stride; the smallest, and why.
func most(g *ground.Graph, bs []Bucket, strides map[string]int) (int, string) {
	best, why := 0, ""
	cl := g.C.Caller
	for table, stride := range strides {
		t := g.C.Table(table)
		rows := g.Rows(table)
		if t == nil || len(rows) == 0 || stride <= 0 {
			continue
		}
		var cols []string
		if pk := g.PK(table); pk != "" {
			if _, isFK := fkColumn(g, table, pk); !isFK && !(cl != nil && table == cl.Table && strings.Contains(ground.Text(rows[0][pk]), "_")) {
				cols = append(cols, pk)
			}
		}
		for _, col := range t.Columns {
			if cl != nil && table == cl.Table && t.IsUnique(col.Name) && g.Renamed(table, col.Name) == "phone" {
				cols = append(cols, col.Name)
			}
		}
		for _, col := range cols {
			v := rows[0][col]
			if v == nil {
				continue
			}
			room := g.Room(table, col, v)
			n := int(min(room/int64(stride), int64(1<<31-1)))
			if best == 0 || n < best {
				best = n
				why = fmt.Sprintf("%s.%s has room for %d fresh values in the shape of %v, and a scenario takes up to %d", table, col, room, v, stride)
			}
		}
	}
	return best, why
}

func fkColumn(g *ground.Graph, table, col string) (ground.FK, bool) {
	for _, fk := range g.FKs(table) {
		if fk.Column == col {
			return fk, true
		}
	}
	return ground.FK{}, false
}

// lessons is what rehearsal taught about one contract: its grounding and
// each acting tool's solution. A contract's hash names its world, which is
// frozen (every rehearsal is rolled back), so what it answers never changes:
// a resumed planner, a reviewer or another run in the same process derives
// the same plan without rehearsing it again.
type lessons struct {
	mu        sync.Mutex
	grounding *ground.Grounding
	solved    map[string]solution
	crashes   crashLog
}

var learnt sync.Map // contract sha256 and probe size -> *lessons

func lessonsOf(c *contract.Contract, maxProbe int, rules, mutants bool) *lessons {
	// A solution read with the rules' checks holds refusals one read
	// without them does not; one read with the mutants deals a level's
	// templates in another order (teeth first). A lesson learnt under other
	// options would make the same contract plan differently by which
	// derivation of the process came first.
	key := fmt.Sprintf("%s\x00%d\x00%t\x00%t", c.SHA256, maxProbe, rules, mutants)
	v, _ := learnt.LoadOrStore(key, &lessons{solved: map[string]solution{}})
	return v.(*lessons)
}

// keptArgs are the arguments of a use case's act it asks no change of,
// read from what its tools do, not from what they are called. A list of
// objects the use case searches the world for (one of its other tools,
// that changes nothing, reads in its own handler a table the list may be
// renewed from: a flight search) is what it changes; the act's enums of a
// column of the target's table (its cabin) then keep the target's value.
// Where it searches for no list, its lists take no row of the world's
// (a cabin change keeps the flights).
func keptArgs(g *ground.Graph, tools []string, t *contract.Tool, table string, bs ground.Bindings) []string {
	c := g.C
	if t.ChangesState != nil && !*t.ChangesState {
		return nil
	}
	searched := func(p string) bool {
		for _, name := range tools {
			o := c.Tool(name)
			if o == nil || name == t.Name || o.ChangesState == nil || *o.ChangesState {
				continue
			}
			for _, tb := range g.WorldTables(t, p) {
				if g.Names(o, tb) {
					return true
				}
			}
		}
		return false
	}
	var lists, enums, about []string
	tb := c.Table(table)
	for _, p := range t.ParamNames() {
		bd, ok := bs.Of(t.Name, p)
		switch {
		case !ok, len(bd.Picks) > 0:
		case bd.How == ground.FromRows && len(g.WorldTables(t, p)) > 0:
			if searched(p) {
				about = append(about, p)
			} else {
				lists = append(lists, p)
			}
		case len(t.Enum(p)) > 0 && bd.Table == "" && tb != nil && tb.Column(p) != nil:
			enums = append(enums, p)
		}
	}
	if len(about) > 0 {
		return enums
	}
	return lists
}

// keeping is bs with the given arguments of tool kept (Binding.Keep).
func keeping(bs ground.Bindings, tool string, kept []string) ground.Bindings {
	out := slices.Clone(bs)
	for i := range out {
		if out[i].Tool == tool && slices.Contains(kept, out[i].Param) {
			out[i].Keep = true
		}
	}
	return out
}

// namedTeams settles a hand-off's choice of team where the use case's text
// names one of its enum's values and no other ("which only the credit team
// can decide": credit), so a case is handed to the team the use case says.
func namedTeams(c *contract.Contract, u *contract.UseCase, bs ground.Bindings) {
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	text := " " + strings.Join(words(u.Text), " ") + " "
	for i := range bs {
		b := &bs[i]
		t := c.Tool(b.Tool)
		if t == nil || !t.EndsConversation || b.How != ground.ByEnum || len(b.Picks) > 0 {
			continue
		}
		var named []any
		for _, e := range t.Enum(b.Param) {
			if w := words(ground.Text(e)); len(w) > 0 && strings.Contains(text, " "+strings.Join(w, " ")+" ") {
				named = append(named, e)
			}
		}
		if len(named) == 1 {
			b.Picks = named
		}
	}
}

// IdentifyAs is the chain the scenario of suite index i calls before its
// act: Gated, with the tool that identifies the caller taken from Gated and
// Identify in turn over the suite's scenarios.
func (s Spec) IdentifyAs(c *contract.Contract, i int) []string {
	out := slices.Clone(s.Gated)
	at := slices.IndexFunc(out, c.Identifies)
	if n := i % (len(s.Identify) + 1); at >= 0 && n > 0 {
		out[at] = s.Identify[n-1]
	}
	return out
}

// specTools are the tools a bucket's scenarios may call.
func specTools(s Spec) []string {
	out := append(append(append(append(append([]string{}, s.Gated...), s.Identify...), s.Lookups...), s.Tools...), outboundTools(s)...)
	for _, t := range []string{s.Tool, s.Then, s.Handoff} {
		if t != "" {
			out = append(out, t)
		}
	}
	seen := map[string]bool{}
	var uniq []string
	for _, t := range out {
		if !seen[t] {
			seen[t] = true
			uniq = append(uniq, t)
		}
	}
	return uniq
}

// strides is, per table, the most rows of it one bucket template's case
// mints, plus one for a fresh argument: how many fresh values a scenario
// may take of that table, so none is ever dealt twice in a run.
func strides(g *ground.Graph, bs []Bucket) map[string]int {
	out := map[string]int{}
	seen := map[string]bool{}
	for _, b := range bs {
		for _, key := range append(append([]string{}, b.Spec.Templates...), b.Spec.Callers...) {
			table := b.Spec.Table
			if !containsKey(b.Spec.Templates, key) {
				table = g.C.Caller.Table
			}
			if seen[table+"\x00"+key] {
				continue
			}
			seen[table+"\x00"+key] = true
			row := g.Find(table, g.PK(table), key)
			if row == nil || g.Shared(table, row) {
				continue
			}
			for t, n := range g.MintCounts(table, row) {
				if n+1 > out[t] {
					out[t] = n + 1
				}
			}
		}
	}
	return out
}

func containsKey(xs []string, k string) bool {
	for _, x := range xs {
		if x == k {
			return true
		}
	}
	return false
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
	if r, plain := answerRank(b); plain {
		return r
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

func angle(u *contract.UseCase, t *contract.Tool, lv level, outcome, overlay string) string {
	at, limit := "", 90
	if lv.act != "" {
		at = fmt.Sprintf(" (%s)", strings.ReplaceAll(lv.act, "_", " "))
	}
	if lv.column != "" {
		at += fmt.Sprintf(" (%s %s)", strings.ReplaceAll(lv.column, "_", " "), lv.level)
	}
	if lv.branch != "" {
		// Each way the world says no is its own angle: the message tells a
		// writer which, the place keeps two alike apart.
		why := lv.branch
		if id, ok := strings.CutPrefix(lv.branch, RuleRefusal); ok {
			why = "rule " + id
		} else if lv.refusal != "" {
			why = clipRunes(lv.refusal, 40) + " at " + lv.branch
		}
		if lv.elsewhere != "" {
			why += ", on " + lv.elsewhere
		}
		if lv.pushed != "" {
			why += ", with the " + lv.pushed
		}
		at += " (refused: " + why + ")"
		limit = 0 // cut, two places could read alike
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
	if limit > 0 && len(s) > limit {
		s = s[:limit]
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
	d := newDealer(all)
	total := d.dealSteered(steerQuota(steer, asked), angled(all, d.byUC, steer))
	// What the steer leaves out is filled evenly; steered use cases take more
	// only once the others are full.
	steeredUC := map[string]bool{}
	for _, s := range steer {
		steeredUC[s.UseCase] = true
	}
	d.fillEvenly(total, asked, steeredUC)
	// Buckets granted nothing stay in the plan with want 0: a top-up may
	// need them when others block.
	out := make([]Bucket, len(all))
	for i, b := range all {
		b.Want = d.granted[i]
		out[i] = b
	}
	return out
}

// steerQuota is, per use case, the scenarios a user's plan grants it, in
// the plan's order; over-asks are trimmed from the end.
func steerQuota(steer []Steer, asked int) map[string]int {
	quota := map[string]int{}
	steered := 0
	for _, s := range steer {
		if s.Count <= 0 || steered >= asked {
			continue
		}
		n := min(s.Count, asked-steered)
		quota[s.UseCase] += n
		steered += n
	}
	return quota
}

// angled is, per use case, the buckets a steer's angle picks: those whose
// angle, outcome or overlay share a word with it. They are dealt first.
func angled(all []Bucket, byUC map[string][]int, steer []Steer) map[string][]int {
	out := map[string][]int{}
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
					out[st.UseCase] = append(out[st.UseCase], i)
					break
				}
			}
		}
	}
	return out
}

// dealer grants scenarios to buckets one at a time, round robin within a
// use case, never past a bucket's want.
type dealer struct {
	all     []Bucket
	granted []int
	order   []string         // use cases in plan order
	byUC    map[string][]int // use case -> its buckets' indexes
	cursor  map[string]int   // deal key -> next index to try
	ways    map[string]int   // Spec.Refusal -> scenarios granted to its buckets
}

func newDealer(all []Bucket) *dealer {
	d := &dealer{all: all, granted: make([]int, len(all)), byUC: map[string][]int{}, cursor: map[string]int{}, ways: map[string]int{}}
	for i, b := range all {
		if _, ok := d.byUC[b.UseCase]; !ok {
			d.order = append(d.order, b.UseCase)
		}
		d.byUC[b.UseCase] = append(d.byUC[b.UseCase], i)
	}
	return d
}

// dealFrom grants one scenario to the next bucket of idx with room; key
// keeps its place in idx between calls. When that bucket is a refusal of a
// way the world says no that some bucket already has (another use case of
// the same act), the scenario goes instead to the next refusal of the same
// overlay whose way no bucket has yet: a small ask then reaches every way
// before a second case of one, with the same mix of outcomes and overlays.
func (d *dealer) dealFrom(key string, idx []int) bool {
	for tries := 0; tries < len(idx); tries++ {
		at := d.cursor[key] % len(idx)
		i := idx[at]
		d.cursor[key]++
		if d.granted[i] >= d.all[i].Want {
			continue
		}
		if d.taken(i) {
			for k := 1; k < len(idx); k++ {
				j := idx[(at+k)%len(idx)]
				if d.granted[j] < d.all[j].Want && d.all[j].Overlay == d.all[i].Overlay && d.way(j) != "" && !d.taken(j) {
					i = j
					break
				}
			}
		}
		d.granted[i]++
		if w := d.way(i); w != "" {
			d.ways[w]++
		}
		return true
	}
	return false
}

// way is the way the world says no that bucket i's cases meet, if it is
// a refusal dealt for one.
func (d *dealer) way(i int) string {
	if b := d.all[i]; b.Outcome == "refuse" {
		return b.Spec.Refusal
	}
	return ""
}

// taken reports a refusal bucket whose way some bucket already has.
func (d *dealer) taken(i int) bool {
	w := d.way(i)
	return w != "" && d.ways[w] > 0
}

func (d *dealer) deal(uc string) bool { return d.dealFrom(uc, d.byUC[uc]) }

// dealSteered grants each use case its quota, angled buckets first, and
// returns how many it granted.
func (d *dealer) dealSteered(quota map[string]int, angled map[string][]int) int {
	total := 0
	for _, uc := range d.order {
		for quota[uc] > 0 && (d.dealFrom("angle:"+uc, angled[uc]) || d.deal(uc)) {
			quota[uc]--
			total++
		}
	}
	return total
}

// fillEvenly deals round robin over the use cases until asked are granted
// or every bucket is full: first those no steer named, then all of them.
func (d *dealer) fillEvenly(total, asked int, steered map[string]bool) {
	for pass := 0; pass < 2 && total < asked; pass++ {
		for total < asked {
			progress := false
			for _, uc := range d.order {
				if total >= asked {
					break
				}
				if pass == 0 && steered[uc] {
					continue
				}
				if d.deal(uc) {
					total++
					progress = true
				}
			}
			if !progress {
				break
			}
		}
	}
}
