package writer

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/ledger/ledgertest"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
)

// The fakes here stand in for the queue, the engines and the model, and
// the ledger is ledgertest's in memory, so a writer's decisions are tested
// without servers; pkg/e2e runs the same writer on real NATS and Postgres.

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

// fakeLedger is the ledger in memory (ledgertest, held to *ledger.Store by its
// contract test), with what the writer's tests ask of it.
type fakeLedger struct{ *ledgertest.Ledger }

// shutdown is the error of a server shutting down.
var shutdown = &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}

// finish records a slice finished, as another process does.
func (l fakeLedger) finish(run, slice string, to ledger.SliceState) {
	if err := l.FinishSlice(context.Background(), run, slice, to, "other", "", 1); err != nil {
		panic(err)
	}
}

// state is a slice's state and reason in the ledger; "" while it is
// unfinished (published) or unknown.
func (l fakeLedger) state(run, slice string) (ledger.SliceState, string) {
	ss, err := l.Slices(context.Background(), run, -1)
	if err != nil {
		panic(err)
	}
	for _, s := range ss {
		if s.ID == slice && s.State != ledger.SlicePublished {
			return s.State, s.Reason
		}
	}
	return "", ""
}

// spend records a model call of run r.
func (l fakeLedger) spend(c ledger.Call) {
	c.Run = "r"
	if err := l.SpendCall(context.Background(), c); err != nil {
		panic(err)
	}
}

// update changes a run's record as a direct write would.
func (l fakeLedger) update(run string, fn func(*ledger.Run)) {
	if err := l.UpdateRun(run, fn); err != nil {
		panic(err)
	}
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
// written with model "m", with two buckets wanting two scenarios each,
// claimed by slice s1.
type harness struct {
	w      *Writer
	ledger fakeLedger
	model  *scriptedModel
	// buckets are the buckets the delivered slice names (default b0, b1).
	buckets []string
}

func newHarness(t *testing.T, replies ...any) *harness {
	t.Helper()
	c, err := retail()
	if err != nil {
		t.Fatal(err)
	}
	l := fakeLedger{ledgertest.New()}
	ctx := t.Context()
	if _, err := l.CreateRun(ctx, ledger.Run{ID: "r", Agent: c.Agent, ContractSHA256: c.SHA256, Model: "m", State: ledger.RunWriting, Asked: 4, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	var bs []ledger.Bucket
	for i := range 2 {
		bs = append(bs, ledger.Bucket{Bucket: plan.Bucket{ID: fmt.Sprintf("b%d", i), Ord: i,
			UseCase: "cancel-order", Cell: "cancel-order", Outcome: "succeed", Overlay: "none", Kind: "happy", Want: 2,
			Spec: plan.Spec{Base: 2 * i, Capacity: 2, Sized: 2}}, Origin: ledger.OriginPlan})
	}
	if err := l.PutBuckets(ctx, "r", bs); err != nil {
		t.Fatal(err)
	}
	if err := l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s1", Round: 1, BucketIDs: []string{"b0", "b1"}}); err != nil {
		t.Fatal(err)
	}
	m := &scriptedModel{name: "m", replies: replies}
	if _, err := New(Config{ID: "w1", Slices: nil, Ledger: l, Engines: fakeEngines{e: &engine.Engine{C: c}}, Model: m}); err == nil {
		t.Fatal("a writer without a source was made")
	}
	w, err := New(Config{ID: "w1", Slices: SourceFunc(nil), Ledger: l, Engines: fakeEngines{e: &engine.Engine{C: c}}, Model: m,
		Logger: discardLog(), DrainTimeout: 50 * time.Millisecond, OtherModelDelay: 7 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{w: w, ledger: l, model: m, buckets: []string{"b0", "b1"}}
}

// delivery of the run's slice s1 (h.buckets), attempt n.
func (h *harness) delivery(run string, attempt int, last bool) *fakeDelivery {
	return &fakeDelivery{slice: queue.Slice{Run: run, ID: "s1", Round: 1, Buckets: h.buckets, TurnBudget: 20},
		attempt: attempt, last: last}
}
