// Package builtin is the deterministic writer model. It needs no network: it
// reads the slice brief and plays the same tools a provider's model would
// (try_calls, submit_scenario, finish), writing real scenarios from the plan's
// grid and the world's records, and correcting them from the gates' reasons.
//
// It is stateless between calls, like a provider: every decision is replayed
// from the conversation so far, so the same conversation always gets the same
// next move. That is what makes a suite byte-identical whatever the number of
// writers, and what lets the provider simulator serve it over HTTP. The
// replay's costly pure parts (parsing the brief, composing a candidate from a
// template record) are memoised per brief text, so replaying a long slice is
// linear in its answers rather than recomposing every past candidate; the
// memo changes no decision, only how often it is computed.
package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Name is the model name in provenance.
const Name = "builtin"

// Model is the builtin writer. It knows contracts by hash: those it is given,
// and those Fetch finds (a writer pod fetches them from the ledger).
type Model struct {
	// Fetch, when set, finds a contract the model was not given.
	Fetch func(ctx context.Context, sha string) (*contract.Contract, error)

	mu     sync.Mutex
	graphs map[string]*ground.Graph
	// memos holds, per brief text, the parsed brief and the candidates
	// composed from it; order is their insertion order, for eviction.
	memos map[string]*memo
	order []string
	// noMemo composes every candidate afresh (tests compare against it).
	noMemo bool
}

// maxMemos bounds the briefs whose work is memoised: a writer holds one slice
// at a time, so a few per writer cover every live conversation; an evicted
// brief is only recomputed.
const maxMemos = 64

// memo is the pure work done for one brief text.
type memo struct {
	b brief.Brief

	mu       sync.Mutex
	composed map[composeKey]composed
}

// composeKey names one candidate of a brief: the bucket's index in the brief,
// the case number and the template record.
type composeKey struct {
	bucket, k int
	key       string
}

type composed struct {
	sc scenario.Scenario
	ok bool
	// try is the try_calls arguments for sc, marshalled once.
	try string
}

// New returns the builtin model for the given contracts.
func New(cs ...*contract.Contract) *Model {
	m := &Model{graphs: map[string]*ground.Graph{}, memos: map[string]*memo{}}
	for _, c := range cs {
		m.graphs[c.SHA256] = ground.New(c)
	}
	return m
}

func (m *Model) graph(ctx context.Context, sha string) (*ground.Graph, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g, ok := m.graphs[sha]; ok {
		return g, nil
	}
	if m.Fetch == nil {
		return nil, fmt.Errorf("unknown contract %s", sha)
	}
	c, err := m.Fetch(ctx, sha)
	if err != nil {
		return nil, err
	}
	g := ground.New(c)
	m.graphs[sha] = g
	return g, nil
}

// Name implements model.Client.
func (m *Model) Name() string { return Name }

// Complete implements model.Client: it replays its policy over the
// conversation and returns the next tool call.
func (m *Model) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	if err := ctx.Err(); err != nil {
		return model.Response{}, err
	}
	var mo *memo
	for _, msg := range req.Messages {
		if msg.Role == model.RoleUser {
			if mo = m.memo(msg.Content); mo != nil {
				break
			}
		}
	}
	if mo == nil {
		return reply(req, "I can only write scenarios from a slice brief."), nil
	}
	b := mo.b
	g, err := m.graph(ctx, b.Contract)
	if err != nil {
		return model.Response{}, fmt.Errorf("builtin: contract of %s: %w", b.Agent, err)
	}
	r := newReplay(req.Messages)
	p := &policy{c: g.C, g: g, b: b, memo: mo}
	if m.noMemo {
		p.memo = nil
	}
	return reply(req, "", p.next(r, model.OutputTokens(req))...), nil
}

// memo returns the memo of a message that holds a brief, parsing it the first
// time; nil when the message holds none.
func (m *Model) memo(text string) *memo {
	m.mu.Lock()
	mo, ok := m.memos[text]
	m.mu.Unlock()
	if ok {
		return mo
	}
	b, found := brief.Parse(text)
	if !found {
		return nil
	}
	mo = &memo{b: b, composed: map[composeKey]composed{}}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.memos[text]; ok {
		return old
	}
	if m.memos == nil {
		m.memos = map[string]*memo{}
	}
	if len(m.order) >= maxMemos {
		delete(m.memos, m.order[0])
		m.order = append(m.order[:0], m.order[1:]...)
	}
	m.memos[text] = mo
	m.order = append(m.order, text)
	return mo
}

func reply(req model.Request, text string, calls ...*model.ToolCall) model.Response {
	msg := model.Message{Role: model.RoleAssistant, Content: text}
	n := 0
	for _, m := range req.Messages {
		n += len(m.ToolCalls)
	}
	for i, call := range calls {
		call.ID = fmt.Sprintf("call_%d", n+1+i)
		msg.ToolCalls = append(msg.ToolCalls, *call)
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(m.Content) / 4
		for _, tc := range m.ToolCalls {
			prompt += len(tc.Arguments) / 4
		}
	}
	completion := len(text) / 4
	for _, call := range calls {
		completion += len(call.Arguments)/4 + 4
	}
	return model.Response{Message: msg, Usage: model.Usage{PromptTokens: prompt + 1, CompletionTokens: completion + 1}}
}

// replay is the conversation as the policy replays it: the cases the
// digests name (kept, or given up, in turns the writer compacted), and the
// calls made since the last digest with their answers, in the order they
// were made (a reply's calls in their order).
type replay struct {
	done  map[string]bool // bucket + "\x00" + case name
	calls []past
	pos   int // the next call to replay
}

type past struct {
	call     model.ToolCall
	answer   string
	answered bool
	// opens is the number of calls of the reply this call opens (0 for
	// a call after the first of its reply).
	opens int
}

func newReplay(msgs []model.Message) *replay {
	r := &replay{done: map[string]bool{}}
	start := 0
	for i, m := range msgs {
		if m.Role != model.RoleUser {
			continue
		}
		if subs, ok := brief.ParseDigest(m.Content); ok {
			for _, s := range subs {
				r.done[s.Bucket+"\x00"+s.Name] = true
			}
			start = i + 1
		}
	}
	for i := start; i < len(msgs); i++ {
		if msgs[i].Role != model.RoleAssistant {
			continue
		}
		for n, tc := range msgs[i].ToolCalls {
			pc := past{call: tc}
			if n == 0 {
				pc.opens = len(msgs[i].ToolCalls)
			}
			for j := i + 1; j < len(msgs); j++ {
				if msgs[j].Role == model.RoleTool && msgs[j].ToolCallID == tc.ID {
					pc.answer, pc.answered = msgs[j].Content, true
					break
				}
			}
			r.calls = append(r.calls, pc)
		}
	}
	return r
}

// next returns the next past call, consuming it; ok=false at the end.
func (r *replay) next() (past, bool) {
	if r.pos >= len(r.calls) {
		return past{}, false
	}
	r.pos++
	return r.calls[r.pos-1], true
}

// opening is the number of calls of the reply the next past call opens: the
// width of the group it opened; 0 at the end.
func (r *replay) opening() int {
	if r.pos >= len(r.calls) {
		return 0
	}
	return r.calls[r.pos].opens
}

type policy struct {
	c    *contract.Contract
	g    *ground.Graph
	b    brief.Brief
	memo *memo
}

// candidate is compose memoised in the brief's memo (none: composed afresh). The scenario returned
// is the caller's to change: its SubGoals are clipped so that appending to
// them never writes into the memo's copy.
func (p *policy) candidate(bi int, bk brief.Bucket, k int, key string) (scenario.Scenario, string, bool) {
	if p.memo == nil {
		sc, ok := p.composeRequests(bk, k, key)
		if !ok {
			return sc, "", false
		}
		return sc, toolArgs(brief.TryArgs{Setup: sc.Setup, Calls: sc.Solution}), true
	}
	ck := composeKey{bucket: bi, k: k, key: key}
	p.memo.mu.Lock()
	c, ok := p.memo.composed[ck]
	p.memo.mu.Unlock()
	if !ok {
		c.sc, c.ok = p.composeRequests(bk, k, key)
		if c.ok {
			c.try = toolArgs(brief.TryArgs{Setup: c.sc.Setup, Calls: c.sc.Solution})
		}
		p.memo.mu.Lock()
		p.memo.composed[ck] = c
		p.memo.mu.Unlock()
	}
	sc := c.sc
	sc.SubGoals = slices.Clip(sc.SubGoals)
	return sc, c.try, c.ok
}

func toolCall(name string, args any) *model.ToolCall {
	return &model.ToolCall{Name: name, Arguments: toolArgs(args)}
}

func toolArgs(args any) string {
	js, _ := json.Marshal(args)
	return string(js)
}

// pending is a call a case asks, and the answer it gets.
type pending struct {
	make   func() *model.ToolCall
	answer string
}

// abort ends the coroutine of a case that is no longer pulled.
type abort struct{}

// running is one case being written: write runs as a coroutine that yields
// each call it asks and resumes with its answer.
type running struct {
	next func() (*pending, bool)
	stop func()
	pd   *pending // the call it waits on; nil once written
}

func (p *policy) start(bi int, bk brief.Bucket, k int) *running {
	next, stop := iter.Pull(func(yield func(*pending) bool) {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(abort); !ok {
					panic(v)
				}
			}
		}()
		p.write(bi, bk, k, func(c func() *model.ToolCall) string {
			pd := &pending{make: c}
			if !yield(pd) {
				panic(abort{})
			}
			return pd.answer
		})
	})
	c := &running{next: next, stop: stop}
	c.advance()
	return c
}

func (c *running) advance() {
	c.pd = nil
	if pd, ok := c.next(); ok {
		c.pd = pd
	}
}

// fit is the calls of the cases in turn that the reply allowance holds, at
// least one.
func fit(cases []*running, allowance int) []*model.ToolCall {
	var calls []*model.ToolCall
	var reply model.Message
	for _, c := range cases {
		call := c.pd.make()
		reply.ToolCalls = append(reply.ToolCalls, *call)
		if len(calls) > 0 && model.CompletionTokens(reply) > allowance {
			break
		}
		calls = append(calls, call)
	}
	return calls
}

// next replays the whole policy against the conversation and returns the
// calls of the next reply. The slice's cases are written in groups, side by
// side: every case of a group still being written asks one call a round (a
// rehearsal, a submission, a corrected one), and a round is one reply. A
// case's calls depend only on its own answers, so a round's calls go
// together (those the allowance does not hold go in the next reply). A group is as many cases, in order, as the reply allowance holds
// the first calls of (at least one); a group already opened in the
// conversation keeps the width its first reply had, so a replay reads the
// same groups whatever the allowance now. With an allowance that holds one
// rehearsal the cases are written one after the other.
func (p *policy) next(r *replay, allowance int) []*model.ToolCall {
	var cases []*running
	defer func() {
		for _, c := range cases {
			c.stop()
		}
	}()
	type ref struct {
		bi, k int
	}
	var todo []ref
	for bi, bk := range p.b.Buckets {
		for k := bk.Have; k < bk.Want; k++ {
			if !r.done[bk.ID+"\x00"+caseName(bk, k)] {
				todo = append(todo, ref{bi, k})
			}
		}
	}
	for len(todo) > 0 {
		// Open a group.
		width := r.opening()
		var group []*running
		var first model.Message
		for len(todo) > 0 {
			if width > 0 && len(group) == width {
				break
			}
			c := p.start(todo[0].bi, p.b.Buckets[todo[0].bi], todo[0].k)
			cases = append(cases, c)
			if c.pd == nil {
				todo = todo[1:] // nothing to write it from
				continue
			}
			if width == 0 {
				first.ToolCalls = append(first.ToolCalls, *c.pd.make())
				if len(group) > 0 && model.CompletionTokens(first) > allowance {
					break
				}
			}
			group = append(group, c)
			todo = todo[1:]
		}
		// Its rounds. A round's calls that do not fit one reply go on in
		// the next ones.
		for {
			var inflight []*running
			for _, c := range group {
				if c.pd != nil {
					inflight = append(inflight, c)
				}
			}
			if len(inflight) == 0 {
				break
			}
			for i, c := range inflight {
				pc, ok := r.next()
				if !ok {
					return fit(inflight[i:], allowance)
				}
				if !pc.answered || notRun(pc.answer) || altered(pc.call, c.pd.make) {
					// The call never ran as meant: its arguments or its
					// name were garbled on the way, or a rehearsal reached
					// the world naming records it never named (a provider
					// fault). It is sent again next round, as a model
					// would, rather than taken as the record failing.
					continue
				}
				c.pd.answer = pc.answer
				c.advance()
			}
		}
	}
	return []*model.ToolCall{toolCall(brief.ToolFinish, map[string]string{"note": "slice written"})}
}

// altered reports a rehearsal that reached the writer with other arguments
// than the policy gave it. Only try_calls is compared: its arguments are
// memoised, so the comparison costs nothing, and a rehearsal is where a
// changed record would otherwise be mistaken for the world's answer.
func altered(sent model.ToolCall, intended func() *model.ToolCall) bool {
	if sent.Name != brief.ToolTry {
		return false
	}
	want := intended()
	return want.Name == sent.Name && want.Arguments != sent.Arguments
}

// notRun reports a writer's answer to a call it could not even dispatch
// (arguments that are not JSON, a tool that does not exist: the answer's
// code says so), as opposed to an answer from running it.
func notRun(answer string) bool {
	e, ok := brief.ParseError(answer)
	return ok && e.Code.NotRun()
}

// write tries to produce the k-th scenario of a bucket: up to three template
// records that compose a candidate, and for each up to three submissions
// corrected from the gates. A template that composes nothing costs no try:
// were the first three such, nothing would reach the gates and the bucket
// would fail without a reason. When no template rehearses well, the last one
// is submitted all the same, so that the gates record why (a setup the
// schema refuses, a step the world refuses).
func (p *policy) write(bi int, bk brief.Bucket, k int, ask func(func() *model.ToolCall) string) {
	spec := bk.Spec
	tools := spec.Templates
	var unrehearsed *scenario.Scenario
	submitted := false
	for j, tries := 0, 0; j < len(tools) && tries < 3; j++ {
		key := tools[(k+j)%len(tools)]
		sc, try, ok := p.candidate(bi, bk, k, key)
		if !ok {
			continue
		}
		tries++
		var tr brief.TryResult
		if err := json.Unmarshal([]byte(ask(func() *model.ToolCall {
			return &model.ToolCall{Name: brief.ToolTry, Arguments: try}
		})), &tr); err != nil || tr.Error != "" {
			unrehearsed = &sc
			continue
		}
		binds := func(req int) ground.Bindings {
			if req > 0 && bk.Spec.Next != nil {
				return p.binds(bk.Spec.Next.Spec)
			}
			return p.binds(spec)
		}
		allOK := tried(tr, sc)
		for n := 0; !allOK && n < ground.SettleTries && settleWant(&sc, tr.Steps, binds); n++ {
			// A number the world computes (a total), which the case could
			// not know: rehearsed again with the one the refusal wanted.
			try = toolArgs(brief.TryArgs{Setup: sc.Setup, Calls: sc.Solution})
			tr = brief.TryResult{}
			if err := json.Unmarshal([]byte(ask(func() *model.ToolCall {
				return &model.ToolCall{Name: brief.ToolTry, Arguments: try}
			})), &tr); err != nil || tr.Error != "" {
				break
			}
			allOK = tried(tr, sc)
		}
		if !allOK {
			unrehearsed = &sc
			continue
		}
		if laterSettles(sc, binds) {
			// A later request's numbers are settled on the world the
			// earlier ones leave: the whole conversation is rehearsed
			// (only where one of them takes a number the world computes:
			// each rehearsal is a round trip with the whole prompt).
			for n := 0; n < ground.SettleTries; n++ {
				var all brief.TryResult
				if err := json.Unmarshal([]byte(ask(func() *model.ToolCall {
					return toolCall(brief.ToolTry, brief.TryArgs{Setup: sc.Setup, Calls: conversation(sc)})
				})), &all); err != nil || all.Error != "" || !settleWant(&sc, all.Steps, binds) {
					break
				}
			}
		}
		if bk.Outcome == "succeed" && len(tr.Steps) > 0 {
			sc.Outputs = outputs(tr.Steps[len(tr.Steps)-1].Result, sc.Solution[len(sc.Solution)-1].Args)
			p.fromEffect(sc.SubGoals, tr.Diff)
		}
		for attempt := 0; attempt < 3; attempt++ {
			var res brief.SubmitResult
			submitted = true
			if err := json.Unmarshal([]byte(ask(func() *model.ToolCall {
				return submission(sc, try, tr.Rehearsal)
			})), &res); err != nil {
				break
			}
			if res.Accepted {
				return
			}
			if !p.correct(&sc, bk, res.Refusals) {
				break
			}
		}
	}
	if !submitted && unrehearsed != nil {
		sc := *unrehearsed
		ask(func() *model.ToolCall { return toolCall(brief.ToolSubmit, brief.SubmitArgs{Scenario: sc}) })
	}
}

// submission is the call that submits sc, rehearsed as try (the rehearsal
// numbered n, 0 when the answer gave none): a scenario whose setup and
// solution are still the rehearsal's names it rather than writing them again.
func submission(sc scenario.Scenario, try string, n int) *model.ToolCall {
	if n > 0 && toolArgs(brief.TryArgs{Setup: sc.Setup, Calls: sc.Solution}) == try {
		sc.Setup, sc.Solution = nil, nil
		return toolCall(brief.ToolSubmit, brief.SubmitArgs{Scenario: sc, Rehearsal: n})
	}
	return toolCall(brief.ToolSubmit, brief.SubmitArgs{Scenario: sc})
}

// outputs picks a value from the acting call's result that the agent must
// say: a status, amount or balance it could only know from the world.
func outputs(result json.RawMessage, args map[string]any) []string {
	var doc map[string]any
	if json.Unmarshal(result, &doc) != nil {
		return nil
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, pref := range []string{"status", "refund", "total", "amount", "balance", "fare", "eta", "price"} {
		for _, k := range keys {
			if !strings.Contains(strings.ToLower(k), pref) {
				continue
			}
			if _, isArg := args[k]; isArg {
				continue
			}
			// An output shorter than three characters ("1", "0") is in
			// almost any reply: it would tell nothing apart.
			switch v := doc[k].(type) {
			case string:
				if len(strings.TrimSpace(v)) >= 3 {
					return []string{v}
				}
			case float64:
				if t := ground.Text(v); len(t) >= 3 {
					return []string{t}
				}
			}
		}
	}
	return nil
}

// tried reports whether every call of sc's solution answered ok.
func tried(tr brief.TryResult, sc scenario.Scenario) bool {
	ok := tr.Error == "" && len(tr.Steps) == len(sc.Solution)
	for _, s := range tr.Steps {
		ok = ok && s.OK
	}
	return ok
}

// laterSettles reports whether a call of a request after the first takes
// an argument whose binding settles on a number the world computes.
func laterSettles(sc scenario.Scenario, binds func(req int) ground.Bindings) bool {
	for r, req := range sc.Then {
		bs := binds(r + 1)
		for _, c := range req.Solution {
			for k := range c.Args {
				if bd, ok := bs.Of(c.Tool, k); ok && bd.Settles() {
					return true
				}
			}
		}
	}
	return false
}

// conversation is sc's solution calls in the order the conversation
// makes them: the first request's, then each later request's.
func conversation(sc scenario.Scenario) []scenario.Call {
	calls := slices.Clone(sc.Solution)
	for _, r := range sc.Then {
		calls = append(calls, r.Solution...)
	}
	return calls
}

// settleWant puts, in the first call of sc's conversation (steps are of
// conversation(sc)) refused for a number the handler computed, the number
// it wanted in place of the argument's whose binding Settles (binds(r):
// the bindings of request r, 0 the first), and reports whether it did.
// What it changes is copied first: the memo's scenario keeps its own.
func settleWant(sc *scenario.Scenario, steps []brief.TryStep, binds func(req int) ground.Bindings) bool {
	sols := [][]scenario.Call{sc.Solution}
	for _, r := range sc.Then {
		sols = append(sols, r.Solution)
	}
	i := 0
	for req, sol := range sols {
		for j, call := range sol {
			if i >= len(steps) {
				return false
			}
			st := steps[i]
			i++
			if st.OK {
				continue
			}
			if st.Want == nil {
				return false
			}
			args, k, ok := binds(req).Settle(call.Tool, call.Args, st.Want)
			if !ok {
				return false
			}
			sol = slices.Clone(sol)
			sol[j].Args = args
			if req == 0 {
				sc.Solution = sol
				sc.SubGoals = resettled(sc.SubGoals, k, call.Args[k], args[k])
			} else {
				sc.Then = slices.Clone(sc.Then)
				sc.Then[req-1].Solution = sol
				sc.Then[req-1].SubGoals = resettled(sc.Then[req-1].SubGoals, k, call.Args[k], args[k])
			}
			return true
		}
	}
	return false
}

// resettled is subs with each check's param named k that held old (the
// act's argument, as the case wrote it) holding v: a check of what the
// act leaves asks for the number the world took. Changed checks are
// copied.
func resettled(subs []scenario.SubGoalRef, k string, old, v any) []scenario.SubGoalRef {
	var out []scenario.SubGoalRef
	for i, sg := range subs {
		pv, has := sg.Params[k]
		if !has || !reflect.DeepEqual(pv, old) {
			continue
		}
		if out == nil {
			out = slices.Clone(subs)
		}
		out[i].Params = maps.Clone(sg.Params)
		out[i].Params[k] = v
	}
	if out == nil {
		return subs
	}
	return out
}
