package writer

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// The fakes here stand in for the queue, the ledger, the engines and the
// model, so a writer's decisions are tested without servers; pkg/e2e runs
// the same writer on real NATS and Postgres.

// fakeDelivery records how a delivery was finished.
type fakeDelivery struct {
	slice   queue.Slice
	attempt int
	last    bool

	mu       sync.Mutex
	finished []string // "ack", "nak <delay>", "term <reason>", in order
	beats    int
}

func (d *fakeDelivery) Slice() queue.Slice { return d.slice }
func (d *fakeDelivery) Attempt() int       { return d.attempt }
func (d *fakeDelivery) Last() bool         { return d.last }

func (d *fakeDelivery) Ack(context.Context) error { return d.finish("ack") }
func (d *fakeDelivery) Nak(_ context.Context, delay time.Duration) error {
	return d.finish(fmt.Sprintf("nak %s", delay))
}
func (d *fakeDelivery) Term(_ context.Context, reason string) error {
	return d.finish("term " + reason)
}

func (d *fakeDelivery) Heartbeat(context.Context, time.Duration) func() {
	d.mu.Lock()
	d.beats++
	d.mu.Unlock()
	return func() {}
}

func (d *fakeDelivery) finish(what string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.finished = append(d.finished, what)
	return nil
}

func (d *fakeDelivery) ends() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.finished)
}

// fakeLedger is the ledger in memory: runs, buckets, finished slices and
// what was journalled, refused and spent.
type fakeLedger struct {
	mu        sync.Mutex
	runs      map[string]canvas.Run
	buckets   map[string][]canvas.Bucket
	finished  map[string]canvas.SliceState // run/slice -> state
	reasons   map[string]string
	journal   []string
	refusals  []string
	spent     int64
	spentUSD  float64
	finishErr error // FinishSlice fails with this
	// runOutages, finishOutages, budgetOutages: Run, FinishSlice and Budget meet that many
	// outages (a server shutting down) before they answer.
	runOutages, finishOutages, budgetOutages int
	runCalls                                 int
}

// shutdown is the error of a server shutting down.
var shutdown = &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}

func newFakeLedger() *fakeLedger {
	return &fakeLedger{runs: map[string]canvas.Run{}, buckets: map[string][]canvas.Bucket{},
		finished: map[string]canvas.SliceState{}, reasons: map[string]string{}}
}

func (l *fakeLedger) Run(_ context.Context, id string) (canvas.Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runCalls++
	if l.runOutages > 0 {
		l.runOutages--
		return canvas.Run{}, fmt.Errorf("read run: %w", shutdown)
	}
	r, ok := l.runs[id]
	if !ok {
		return r, fmt.Errorf("run %s: %w", id, canvas.ErrNotFound)
	}
	return r, nil
}

func (l *fakeLedger) Buckets(_ context.Context, run string) ([]canvas.Bucket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.buckets[run]), nil
}

// Slices lists the run's finished slices (the fake keeps no others, nor rounds).
func (l *fakeLedger) Slices(_ context.Context, run string, _ int) ([]canvas.Slice, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []canvas.Slice
	for key, state := range l.finished {
		if r, id, _ := strings.Cut(key, "/"); r == run {
			out = append(out, canvas.Slice{RunID: r, ID: id, State: state})
		}
	}
	return out, nil
}

func (l *fakeLedger) FinishSlice(_ context.Context, run, id string, to canvas.SliceState, writer, reason string, deliveries int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.finishErr != nil {
		return l.finishErr
	}
	if l.finishOutages > 0 {
		l.finishOutages--
		return shutdown
	}
	key := run + "/" + id
	from, ok := l.finished[key]
	if !ok {
		from = canvas.SlicePublished
	}
	if err := from.To(to); err != nil {
		return err
	}
	if from != to {
		l.finished[key], l.reasons[key] = to, reason
	}
	return nil
}

func (l *fakeLedger) Budget(_ context.Context, r canvas.Run) (canvas.Budget, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.budgetOutages > 0 {
		l.budgetOutages--
		return canvas.Budget{}, shutdown
	}
	return canvas.Budget{Cap: r.BudgetTokens, Spent: l.spent, CapUSD: r.BudgetUSD, SpentUSD: l.spentUSD}, nil
}

func (l *fakeLedger) SpendCall(_ context.Context, c canvas.Call) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.spent += int64(c.Prompt + c.Completion)
	l.spentUSD += c.CostUSD
	return nil
}

func (l *fakeLedger) Refuse(_ context.Context, run, slice, bucket, gate, code, message string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refusals = append(l.refusals, gate+"/"+code)
	return nil
}

func (l *fakeLedger) Journal(_ context.Context, run string, sc *scenario.Scenario, slice, writer string, codes []string) (canvas.JournalResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.journal = append(l.journal, sc.Name)
	return canvas.Credited, nil
}

func (l *fakeLedger) AddBucket(_ context.Context, run string, b canvas.Bucket) (canvas.Bucket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b.ID = fmt.Sprintf("b%d", len(l.buckets[run]))
	l.buckets[run] = append(l.buckets[run], b)
	return b, nil
}

func (l *fakeLedger) SubGoals(context.Context, string) ([]canvas.SubGoal, error) { return nil, nil }

func (l *fakeLedger) AddSubGoal(context.Context, string, canvas.SubGoal) (bool, error) {
	return false, fmt.Errorf("not in this fake")
}

// finish records a slice finished, as another process does.
func (l *fakeLedger) finish(run, slice string, to canvas.SliceState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finished[run+"/"+slice] = to
}

func (l *fakeLedger) state(run, slice string) (canvas.SliceState, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.finished[run+"/"+slice], l.reasons[run+"/"+slice]
}

// fakeEngines serves one contract's engine without a world: enough for a
// session whose model never rehearses or submits.
type fakeEngines struct {
	e   *engine.Engine
	err error
	// meanwhile, when set, runs at each Get: what another process does
	// while this writer works.
	meanwhile func()
}

func (f fakeEngines) Get(_ context.Context, sha string) (*engine.Engine, error) {
	if f.meanwhile != nil {
		f.meanwhile()
	}
	if f.err != nil {
		return nil, f.err
	}
	if sha != f.e.C.SHA256 {
		return nil, fmt.Errorf("unknown contract %s", sha)
	}
	return f.e, nil
}

// scriptedModel answers each call with the next of its replies: a tool
// call's name (arguments "{}"), or an error. Past the last it calls finish.
// A reply "block" waits until the call's context ends; "prose" answers
// without a tool call.
type scriptedModel struct {
	name    string
	replies []any // string (a tool name or "block") or error

	mu    sync.Mutex
	calls int
	// allowances are the reply allowances the calls asked for, in order.
	allowances []int
}

func (m *scriptedModel) Name() string { return m.name }

// made is how many calls the model has answered or is answering.
func (m *scriptedModel) made() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

func (m *scriptedModel) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	m.mu.Lock()
	i := m.calls
	m.calls++
	m.allowances = append(m.allowances, req.MaxTokens)
	m.mu.Unlock()
	var r any = brief.ToolFinish
	if i < len(m.replies) {
		r = m.replies[i]
	}
	switch r := r.(type) {
	case error:
		return model.Response{}, r
	case string:
		switch r {
		case "block":
			<-ctx.Done()
			return model.Response{}, ctx.Err()
		case "prose":
			return model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "I will write them now."}}, nil
		}
		return model.Response{Message: model.Message{Role: model.RoleAssistant,
			ToolCalls: []model.ToolCall{{ID: fmt.Sprintf("call_%d", i+1), Name: r, Arguments: "{}"}}},
			Usage: model.Usage{PromptTokens: 10, CompletionTokens: 2}}, nil
	}
	panic(fmt.Sprintf("reply %T", r))
}

// retail is the retail example contract, loaded once.
var retail = sync.OnceValues(func() (*contract.Contract, error) {
	return contract.LoadValid("../../examples/retail")
})

// harness is a writer on fakes with one run "r" of the retail contract,
// written with model "m", with two buckets wanting two scenarios each.
type harness struct {
	w      *Writer
	ledger *fakeLedger
	model  *scriptedModel
}

func newHarness(t *testing.T, replies ...any) *harness {
	t.Helper()
	c, err := retail()
	if err != nil {
		t.Fatal(err)
	}
	l := newFakeLedger()
	l.runs["r"] = canvas.Run{ID: "r", Agent: c.Agent, ContractSHA256: c.SHA256, Model: "m", State: canvas.RunWriting, Asked: 4, Seed: 7}
	for i := range 2 {
		l.buckets["r"] = append(l.buckets["r"], canvas.Bucket{Bucket: plan.Bucket{ID: fmt.Sprintf("b%d", i), Ord: i,
			UseCase: "cancel-order", Cell: "cancel-order", Outcome: "succeed", Overlay: "none", Kind: "happy", Want: 2,
			Spec: plan.Spec{Base: 2 * i, Capacity: 2, Sized: 2}}, RunID: "r", State: canvas.BucketClaimed, Origin: canvas.OriginPlan})
	}
	m := &scriptedModel{name: "m", replies: replies}
	if _, err := New(Config{ID: "w1", Slices: nil, Ledger: l, Engines: fakeEngines{e: &engine.Engine{C: c}}, Model: m}); err == nil {
		t.Fatal("a writer without a source was made")
	}
	w, err := New(Config{ID: "w1", Slices: sourceFunc(nil), Ledger: l, Engines: fakeEngines{e: &engine.Engine{C: c}}, Model: m,
		Logger: discardLog(), DrainTimeout: 50 * time.Millisecond, OtherModelDelay: 7 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{w: w, ledger: l, model: m}
}

// delivery of the run's slice s1 (both buckets), attempt n.
func (h *harness) delivery(run string, attempt int, last bool) *fakeDelivery {
	return &fakeDelivery{slice: queue.Slice{Run: run, ID: "s1", Round: 1, Buckets: []string{"b0", "b1"}, TurnBudget: 20},
		attempt: attempt, last: last}
}

// sourceFunc is a Source from a function.
type sourceFunc func(ctx context.Context) (Delivery, error)

func (f sourceFunc) Next(ctx context.Context) (Delivery, error) { return f(ctx) }
