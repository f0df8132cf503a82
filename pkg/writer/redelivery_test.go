package writer_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/queue/jetstream"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/wire"
	"github.com/suitegen/suitegen/pkg/writer"
)

// idleModel counts the calls it gets; a slice already done must make none.
type idleModel struct{ calls atomic.Int32 }

func (m *idleModel) Name() string { return "idle" }
func (m *idleModel) Complete(context.Context, model.Request) (model.Response, error) {
	m.calls.Add(1)
	return model.Response{}, errors.New("idle: no call was expected")
}

// noEngines counts the engines asked for; a slice already done needs none.
type noEngines struct{ gets atomic.Int32 }

func (e *noEngines) Get(context.Context, string) (*engine.Engine, error) {
	e.gets.Add(1)
	return nil, errors.New("no engine was expected")
}

// rowCounts counts the rows of every table of the ledger.
func rowCounts(t *testing.T, store *ledger.Store) map[string]int {
	t.Helper()
	ctx := t.Context()
	rows, err := store.Pool().Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, name := range tables {
		var n int
		if err := store.Pool().QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %q", name)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[name] = n
	}
	return counts
}

// TestRedeliveredDoneSliceIsAckedWithoutWork: on a real ledger and a real
// queue, a slice an earlier delivery committed (recorded done) and whose ack
// was lost comes back on its last delivery; the writer acks it with no
// session, no engine, no new ledger row and the slice's record unchanged, and
// the queue holds nothing of it after.
func TestRedeliveredDoneSliceIsAckedWithoutWork(t *testing.T) {
	ctx := t.Context()
	store := ledger.New(testenv.Postgres(t))
	const run = "redelivered"
	if _, err := store.CreateRun(ctx, ledger.Run{ID: run, Agent: "shop", ContractSHA256: "c", WorldSHA256: "w", Model: "idle",
		State: ledger.RunWriting, Asked: 4, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	// Buckets short of their want: without the ledger's word the writer
	// would start a session to fill them.
	var bs []ledger.Bucket
	for i := range 2 {
		bs = append(bs, ledger.Bucket{Bucket: plan.Bucket{ID: fmt.Sprintf("b%d", i), Ord: i, Theme: "t", Cell: fmt.Sprintf("cancel-order-%d", i),
			UseCase: "cancel-order", Angle: "plain", Outcome: "succeed", Overlay: "none", Kind: "happy", Want: 2}})
	}
	if err := store.PutBuckets(ctx, run, bs); err != nil {
		t.Fatal(err)
	}
	sl := ledger.Slice{RunID: run, ID: "redelivered-r1-s001", Round: 1, BucketIDs: []string{"b0", "b1"}}
	if err := store.ClaimSlice(ctx, sl); err != nil {
		t.Fatal(err)
	}

	// MaxDeliver 2: the redelivery is the last the queue allows.
	q, err := jetstream.Connect(ctx, queue.Config{URL: testenv.NATS(t), MaxDeliver: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.Publish(ctx, queue.Slice{Run: run, ID: sl.ID, Round: 1, Buckets: sl.BucketIDs, TurnBudget: 10}); err != nil {
		t.Fatal(err)
	}
	// The earlier delivery: its writer commits the slice, and its ack is
	// lost. Releasing it stands in for the ack wait running out: either
	// way the server delivers the slice again, once more counted.
	first, err := q.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.FinishSlice(ctx, run, sl.ID, ledger.SliceDone, "w0", "", int(first.NumDelivered)); err != nil {
		t.Fatal(err)
	}
	if err := first.Nak(ctx, 0); err != nil {
		t.Fatal(err)
	}
	before := rowCounts(t, store)
	recorded, err := store.Slices(ctx, run, 1)
	if err != nil {
		t.Fatal(err)
	}

	said := testenv.NewLogSignal("slice already done in the ledger")
	m, engines := &idleModel{}, &noEngines{}
	w, err := writer.New(writer.Config{ID: "w1", Slices: wire.WriterSource(q), Ledger: store, Engines: engines, Model: m,
		Logger: slog.New(said)})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	select {
	case <-said.Seen():
	case <-time.After(time.Minute): // an upper bound only
		t.Fatal("the writer did not ack the redelivered slice")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}

	// Acked: nothing left to deliver, nothing awaiting an ack.
	if pending, acking, err := q.Pending(ctx); err != nil || pending != 0 || acking != 0 {
		t.Fatalf("queue: %d pending, %d awaiting ack (%v); want the slice acked", pending, acking, err)
	}
	if n, g := m.calls.Load(), engines.gets.Load(); n != 0 || g != 0 {
		t.Fatalf("%d model calls and %d engines asked for, want none", n, g)
	}
	if after := rowCounts(t, store); !maps.Equal(after, before) {
		t.Fatalf("ledger rows changed: %v, were %v", after, before)
	}
	now, err := store.Slices(ctx, run, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(now) != 1 || now[0].State != ledger.SliceDone || now[0].Writer != "w0" || now[0].Deliveries != 1 ||
		!now[0].FinishedAt.Equal(*recorded[0].FinishedAt) {
		t.Fatalf("slice record %+v, want it as the first delivery left it: %+v", now, recorded)
	}
}
