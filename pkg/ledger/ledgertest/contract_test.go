package ledgertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/ledger/ledgertest"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/reviewer"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/writer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// roleLedger is what the roles ask of the ledger, every method of it: the
// contract holds both implementations to it.
type roleLedger interface {
	planner.Ledger
	writer.Ledger
	reviewer.Ledger
	engine.Contracts
}

var (
	_ roleLedger = (*ledger.Store)(nil)
	_ roleLedger = (*ledgertest.Ledger)(nil)
)

// implementations are the ledgers the contract runs on, each opened empty.
var implementations = []struct {
	name string
	open func(t *testing.T) roleLedger
}{
	{"memory", func(*testing.T) roleLedger { return ledgertest.New() }},
	{"postgres", func(t *testing.T) roleLedger { return ledger.New(testenv.Postgres(t)) }},
}

// TestContract runs every behaviour of the table on every implementation,
// each on a ledger of its own.
func TestContract(t *testing.T) {
	for _, c := range contract {
		t.Run(c.name, func(t *testing.T) {
			for _, impl := range implementations {
				t.Run(impl.name, func(t *testing.T) {
					t.Parallel()
					c.check(t, t.Context(), impl.open(t))
				})
			}
		})
	}
}

func mkRun(t *testing.T, ctx context.Context, l roleLedger, r ledger.Run) {
	t.Helper()
	r.Agent, r.ContractSHA256, r.WorldSHA256, r.Model = "shop", "c", "w", "builtin"
	if created, err := l.CreateRun(ctx, r); err != nil || !created {
		t.Fatalf("CreateRun(%s): created=%v, %v", r.ID, created, err)
	}
}

// mkBucket is bucket id at ord in a cell of its own.
func mkBucket(id string, ord, want int) ledger.Bucket {
	return ledger.Bucket{Bucket: plan.Bucket{ID: id, Ord: ord, Theme: "t", Cell: "cell-" + id, UseCase: "cancel-order",
		Angle: "plain", Outcome: "succeed", Overlay: "none", Kind: "happy", Want: want}}
}

func mkScenario(name, bucket, branch string) *scenario.Scenario {
	return &scenario.Scenario{Name: name, UseCase: "cancel-order", Branch: branch, Kind: "happy", Expects: "succeed",
		Bucket: bucket, Tests: "passes when the order is cancelled", Persona: scenario.Persona{Name: "ann " + name},
		Instruction: "cancel " + name, Solution: []scenario.Call{{Tool: "cancel", Args: map[string]any{"order_id": "w" + name, "n": int64(12345678901234567)}}},
		SubGoals: []scenario.SubGoalRef{{Name: "cancelled"}}, MaxTurns: 10}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func buckets(t *testing.T, ctx context.Context, l roleLedger, run string) map[string]ledger.Bucket {
	t.Helper()
	bs, err := l.Buckets(ctx, run)
	must(t, err)
	out := map[string]ledger.Bucket{}
	for _, b := range bs {
		out[b.ID] = b
	}
	return out
}

func slice(t *testing.T, ctx context.Context, l roleLedger, run, id string) ledger.Slice {
	t.Helper()
	ss, err := l.Slices(ctx, run, -1)
	must(t, err)
	for _, s := range ss {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("no slice %s in run %s", id, run)
	return ledger.Slice{}
}

func ids(bs []ledger.Bucket) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.ID)
	}
	return out
}

// contract is the table of ledger behaviours the roles rely on.
var contract = []struct {
	name  string
	check func(t *testing.T, ctx context.Context, l roleLedger)
}{
	{"a run is created once, its first record kept", func(t *testing.T, ctx context.Context, l roleLedger) {
		r := ledger.Run{ID: "r", Agent: "shop", Asked: 3, Seed: 7, BudgetTokens: 9, Round: 1, Config: ledger.RunConfig{MaxWant: 4}}
		if created, err := l.CreateRun(ctx, r); err != nil || !created {
			t.Fatalf("first CreateRun: %v, %v", created, err)
		}
		again := r
		again.Asked, again.State = 1, ledger.RunWriting
		if created, err := l.CreateRun(ctx, again); err != nil || created {
			t.Fatalf("second CreateRun: %v, %v", created, err)
		}
		got, err := l.Run(ctx, "r")
		must(t, err)
		if got.Asked != 3 || got.Seed != 7 || got.BudgetTokens != 9 || got.Round != 1 || got.State != ledger.RunPlanned ||
			got.Config.MaxWant != 4 || got.FinishedAt != nil || got.CreatedAt.IsZero() {
			t.Errorf("run %+v", got)
		}
		if _, err := l.Run(ctx, "nobody"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("Run of an unknown run: %v, want ErrNotFound", err)
		}
		for name, bad := range map[string]ledger.Run{
			"no id": {Agent: "shop"}, "negative ask": {ID: "n", Asked: -1}, "unknown state": {ID: "u", State: "paused"},
		} {
			if _, err := l.CreateRun(ctx, bad); err == nil {
				t.Errorf("%s: created", name)
			}
		}
	}},

	{"a run moves only along its lifecycle", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		for _, step := range []struct {
			to   ledger.RunState
			from ledger.RunState
		}{{ledger.RunWriting, ledger.RunPlanned}, {ledger.RunWriting, ledger.RunWriting}, {ledger.RunReviewing, ledger.RunWriting}} {
			from, err := l.MoveRun(ctx, "r", step.to, "to "+string(step.to))
			if err != nil || from != step.from {
				t.Fatalf("move to %s: from %s, %v; want from %s", step.to, from, err, step.from)
			}
		}
		if r, _ := l.Run(ctx, "r"); r.State != ledger.RunReviewing || r.Message != "to reviewing" || r.FinishedAt != nil {
			t.Errorf("reviewing run: %s %q finished %v", r.State, r.Message, r.FinishedAt)
		}
		if _, err := l.MoveRun(ctx, "r", ledger.RunDone, ""); err != nil {
			t.Fatal(err)
		}
		done, _ := l.Run(ctx, "r")
		if done.FinishedAt == nil {
			t.Error("a done run has no finish time")
		}
		from, err := l.MoveRun(ctx, "r", ledger.RunWriting, "again")
		var te *ledger.TransitionError
		if !errors.As(err, &te) || te.Of != "run" || te.ID != "r" || te.From != "done" || te.To != "writing" || from != ledger.RunDone {
			t.Errorf("done -> writing: from %s, %v; want a *TransitionError", from, err)
		}
		if r, _ := l.Run(ctx, "r"); r.State != ledger.RunDone || r.Message != "" {
			t.Errorf("a refused move changed the run: %s %q", r.State, r.Message)
		}
		// A cancelled run resumes, unfinished again.
		mkRun(t, ctx, l, ledger.Run{ID: "c", Asked: 1})
		for _, to := range []ledger.RunState{ledger.RunCancelled, ledger.RunWriting} {
			if _, err := l.MoveRun(ctx, "c", to, ""); err != nil {
				t.Fatalf("move to %s: %v", to, err)
			}
		}
		if _, err := l.MoveRun(ctx, "c", ledger.RunFailed, "short"); err != nil {
			t.Fatal(err)
		}
		if r, _ := l.Run(ctx, "c"); r.State != ledger.RunFailed || r.FinishedAt == nil {
			t.Errorf("failed run: %s, finished %v", r.State, r.FinishedAt)
		}
		if _, err := l.MoveRun(ctx, "nobody", ledger.RunWriting, ""); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("move an unknown run: %v, want ErrNotFound", err)
		}
		if _, err := l.MoveRun(ctx, "c", "paused", ""); err == nil {
			t.Error("moved to an unknown state")
		}
	}},

	{"the round is the run's", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.SetRound(ctx, "r", 2))
		if r, _ := l.Run(ctx, "r"); r.Round != 2 {
			t.Errorf("round %d, want 2", r.Round)
		}
		if err := l.SetRound(ctx, "nobody", 1); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("SetRound of an unknown run: %v, want ErrNotFound", err)
		}
	}},

	{"buckets are put once, read in ord order with Done from the journal", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		b0, b1 := mkBucket("b0", 0, 2), mkBucket("b1", 1, 3)
		b0.State, b0.Attempts, b0.Notes, b0.Done = ledger.BucketBlocked, 2, "n", 5
		b0.Spec = plan.Spec{Base: 4, Sized: 2, Capacity: 6}
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{b1, b0}))
		b0.Want = 9
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{b0}))
		bs, err := l.Buckets(ctx, "r")
		must(t, err)
		if !slices.Equal(ids(bs), []string{"b0", "b1"}) {
			t.Fatalf("buckets %v, want b0 b1", ids(bs))
		}
		got := bs[0]
		if got.Want != 2 || got.State != ledger.BucketBlocked || got.Attempts != 2 || got.Notes != "n" || got.Done != 0 ||
			got.RunID != "r" || got.Origin != ledger.OriginPlan || got.Spec.Base != 4 || got.Spec.Capacity != 6 || got.Axes == nil {
			t.Errorf("b0 %+v", got)
		}
		if bs[1].State != ledger.BucketOpen || bs[1].ClaimedBy != "" {
			t.Errorf("b1 %+v", bs[1])
		}
		_, err = l.Journal(ctx, "r", mkScenario("a", "b1", "x"), "s", "w", nil)
		must(t, err)
		if b := buckets(t, ctx, l, "r")["b1"]; b.Done != 1 || b.Outstanding() != 2 {
			t.Errorf("b1 done %d outstanding %d after one credit, want 1 and 2", b.Done, b.Outstanding())
		}
		// A slice's buckets alone, in ord order whatever order they are
		// named in, each with its own Done; an id the run lacks is left out.
		of, err := l.BucketsOf(ctx, "r", []string{"b1", "b0", "b8"})
		must(t, err)
		if !slices.Equal(ids(of), []string{"b0", "b1"}) {
			t.Errorf("BucketsOf b1 b0 b8: %v, want b0 b1", ids(of))
		} else if of[0].Done != 0 || of[1].Done != 1 || of[0].Spec.Capacity != 6 {
			t.Errorf("BucketsOf: b0 %+v, b1 done %d; want b0 as put with 0 done, b1 with 1", of[0], of[1].Done)
		}
		if of, err := l.BucketsOf(ctx, "r", []string{"b1"}); err != nil || !slices.Equal(ids(of), []string{"b1"}) {
			t.Errorf("BucketsOf b1: %v, %v", ids(of), err)
		}
		noID, negative, unknown := mkBucket("", 5, 1), mkBucket("b6", 6, -1), mkBucket("b7", 7, 1)
		unknown.State = "lost"
		for name, bad := range map[string]ledger.Bucket{"no id": noID, "negative want": negative, "unknown state": unknown} {
			if err := l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b9", 9, 1), bad}); err == nil {
				t.Errorf("%s: put", name)
			}
		}
		if _, ok := buckets(t, ctx, l, "r")["b9"]; ok {
			t.Error("a refused put left a bucket of its batch")
		}
		if err := l.PutBuckets(ctx, "nobody", []ledger.Bucket{mkBucket("b0", 0, 1)}); err == nil {
			t.Error("put buckets of an unknown run")
		}
		if bs, err := l.Buckets(ctx, "nobody"); err != nil || len(bs) != 0 {
			t.Errorf("buckets of an unknown run: %v, %v", bs, err)
		}
	}},

	{"a bucket reads back as it was put", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		b := mkBucket("b0", 3, 4)
		b.Axes = map[string]string{"status": "pending", "tier": "gold"}
		b.Spec = plan.Spec{Tools: []string{"find", "cancel"}, Tool: "cancel", Gated: []string{"verify"}, Table: "orders",
			Column: "status", Level: "pending", Base: 12, Sized: 4, Capacity: 9}
		b.Attempts, b.Refused, b.Notes, b.Origin, b.State, b.ClaimedBy = 1, 2, "tried", ledger.OriginReview, ledger.BucketClaimed, "s0"
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{b}))
		want := b
		want.RunID = "r"
		bs, err := l.Buckets(ctx, "r")
		if err != nil || len(bs) != 1 || !reflect.DeepEqual(bs[0], want) {
			t.Errorf("read back %+v, %v\nput       %+v", bs, err, want)
		}
	}},

	{"concurrent writers credit, claim and report once", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 0, 1)}))
		const n = 4
		var wg sync.WaitGroup
		journalled := make([]ledger.JournalResult, n)
		claimed := make([]error, n)
		reported := make([]string, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				sc := mkScenario("a", "b0", "x")
				sc.Provenance.Writer = fmt.Sprintf("w%d", i) // the same scenario, by another writer
				var err error
				journalled[i], err = l.Journal(ctx, "r", sc, "s", sc.Provenance.Writer, []string{"C1"})
				claimed[i] = l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: fmt.Sprintf("s%d", i), BucketIDs: []string{"b0"}})
				rep := mkBucket("", 0, 0)
				rep.Cell = "new"
				b, rerr := l.AddBucket(ctx, "r", rep)
				reported[i], errs[i] = b.ID, errors.Join(err, rerr)
			})
		}
		wg.Wait()
		credited, claims := 0, 0
		for i := range n {
			if errs[i] != nil {
				t.Errorf("writer %d: %v", i, errs[i])
			}
			if journalled[i] == ledger.Credited {
				credited++
			} else if journalled[i] != ledger.Already {
				t.Errorf("writer %d journalled %v", i, journalled[i])
			}
			if claimed[i] == nil {
				claims++
			}
			if reported[i] != "b1" {
				t.Errorf("writer %d reported bucket %q, want b1", i, reported[i])
			}
		}
		if credited != 1 || claims != 1 {
			t.Errorf("%d credited, %d claims won; want 1 and 1", credited, claims)
		}
		if bs := buckets(t, ctx, l, "r"); len(bs) != 2 || bs["b0"].Done != 1 {
			t.Errorf("buckets %+v", bs)
		}
	}},

	{"a reported bucket takes the next ord, once", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b1", 0, 1), mkBucket("b2", 1, 1)}))
		rep := mkBucket("", 0, 0)
		rep.Cell = "new"
		got, err := l.AddBucket(ctx, "r", rep)
		must(t, err)
		// Ord 2 is next, and "b2" is a planned bucket's: it takes ord 3.
		if got.ID != "b3" || got.Ord != 3 || got.Origin != ledger.OriginWriter || got.State != ledger.BucketOpen || got.RunID != "r" || got.Want != 0 {
			t.Errorf("reported bucket %+v", got)
		}
		rep.Want = 4
		again, err := l.AddBucket(ctx, "r", rep)
		if err != nil || again.ID != "b3" || again.Want != 0 {
			t.Errorf("the same report again: %+v, %v; want b3 as it was", again, err)
		}
		other := mkBucket("", 0, 1)
		other.Cell, other.Origin = "other", ledger.OriginReview
		got, err = l.AddBucket(ctx, "r", other)
		if err != nil || got.ID != "b4" || got.Ord != 4 || got.Origin != ledger.OriginReview {
			t.Errorf("a second report: %+v, %v", got, err)
		}
		if _, err := l.AddBucket(ctx, "r", mkBucket("", 0, -1)); err == nil {
			t.Error("added a bucket of negative want")
		}
		if _, err := l.AddBucket(ctx, "nobody", other); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("a bucket of an unknown run: %v, want ErrNotFound", err)
		}
		if n := len(buckets(t, ctx, l, "r")); n != 4 {
			t.Errorf("%d buckets, want 4", n)
		}
	}},

	{"a slice claims open buckets, all or none, once", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 0, 1), mkBucket("b1", 1, 1), mkBucket("b2", 2, 1)}))
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s1", Round: 1, BucketIDs: []string{"b0", "b1"}, State: ledger.SliceDone, Writer: "w"}))
		bs := buckets(t, ctx, l, "r")
		for _, id := range []string{"b0", "b1"} {
			if bs[id].State != ledger.BucketClaimed || bs[id].ClaimedBy != "s1" {
				t.Errorf("%s: %s by %q, want claimed by s1", id, bs[id].State, bs[id].ClaimedBy)
			}
		}
		s := slice(t, ctx, l, "r", "s1")
		if s.State != ledger.SlicePublished || s.Kind != ledger.SliceWork || s.Round != 1 || s.Writer != "" ||
			!slices.Equal(s.BucketIDs, []string{"b0", "b1"}) || s.FinishedAt != nil || s.CreatedAt.IsZero() {
			t.Errorf("claimed slice %+v", s)
		}
		// The same slice again: nothing changes, its new buckets untouched.
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s1", Round: 1, BucketIDs: []string{"b2"}}))
		if b := buckets(t, ctx, l, "r")["b2"]; b.State != ledger.BucketOpen {
			t.Errorf("b2 %s after a repeated claim of s1", b.State)
		}
		// One bucket of the slice not open: none is claimed, no slice recorded.
		if err := l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s2", BucketIDs: []string{"b2", "b0"}}); err == nil {
			t.Error("claimed a claimed bucket")
		}
		if err := l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s3", BucketIDs: []string{"b2", "b9"}}); err == nil {
			t.Error("claimed a bucket that does not exist")
		}
		if b := buckets(t, ctx, l, "r")["b2"]; b.State != ledger.BucketOpen || b.ClaimedBy != "" {
			t.Errorf("b2 %s by %q after refused claims", b.State, b.ClaimedBy)
		}
		if ss, _ := l.Slices(ctx, "r", -1); len(ss) != 1 {
			t.Errorf("%d slices after refused claims, want 1", len(ss))
		}
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "g1", Round: 2, Kind: ledger.SliceGap, BucketIDs: []string{"b2", "b2"}}))
		if s := slice(t, ctx, l, "r", "g1"); s.Kind != ledger.SliceGap {
			t.Errorf("gap slice of kind %s", s.Kind)
		}
		for name, bad := range map[string]ledger.Slice{
			"no run id": {ID: "x", BucketIDs: []string{"b0"}}, "no id": {RunID: "r", BucketIDs: []string{"b0"}},
			"no buckets": {RunID: "r", ID: "x"}, "unknown run": {RunID: "nobody", ID: "x", BucketIDs: []string{"b0"}},
		} {
			if err := l.ClaimSlice(ctx, bad); err == nil {
				t.Errorf("%s: claimed", name)
			}
		}
	}},

	{"slices are listed by round and id", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 0, 1), mkBucket("b1", 1, 1), mkBucket("b2", 2, 1)}))
		for i, s := range []struct {
			id    string
			round int
		}{{"s2", 2}, {"s9", 1}, {"s0", 2}} {
			must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: s.id, Round: s.round, BucketIDs: []string{fmt.Sprintf("b%d", i)}}))
		}
		var got []string
		all, err := l.Slices(ctx, "r", -1)
		must(t, err)
		for _, s := range all {
			got = append(got, s.ID)
		}
		if !slices.Equal(got, []string{"s9", "s0", "s2"}) {
			t.Errorf("every round: %v", got)
		}
		two, err := l.Slices(ctx, "r", 2)
		if err != nil || len(two) != 2 || two[0].ID != "s0" || two[1].ID != "s2" {
			t.Errorf("round 2: %+v, %v", two, err)
		}
		if none, err := l.Slices(ctx, "nobody", -1); err != nil || len(none) != 0 {
			t.Errorf("slices of an unknown run: %v, %v", none, err)
		}
	}},

	{"a slice is finished once; a dead one may yet be done, a done one never dies", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 0, 1), mkBucket("b1", 1, 1)}))
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s1", BucketIDs: []string{"b0"}}))
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s2", BucketIDs: []string{"b1"}}))
		must(t, l.FinishSlice(ctx, "r", "s1", ledger.SliceDone, "w1", "", 2))
		must(t, l.FinishSlice(ctx, "r", "s1", ledger.SliceDone, "w2", "again", 3))
		s := slice(t, ctx, l, "r", "s1")
		if s.State != ledger.SliceDone || s.Writer != "w1" || s.Reason != "" || s.Deliveries != 2 || s.FinishedAt == nil {
			t.Errorf("finished twice: %+v, want the first finish", s)
		}
		err := l.FinishSlice(ctx, "r", "s1", ledger.SliceDead, "w3", "lost", 4)
		if te, ok := errors.AsType[*ledger.TransitionError](err); !ok || te.Of != "slice" || te.ID != "r/s1" || te.From != "done" || te.To != "dead" {
			t.Errorf("done -> dead: %v, want a *TransitionError", err)
		}
		must(t, l.FinishSlice(ctx, "r", "s2", ledger.SliceDead, "", "dead-lettered", 5))
		must(t, l.FinishSlice(ctx, "r", "s2", ledger.SliceDead, "w9", "other", 6))
		if s := slice(t, ctx, l, "r", "s2"); s.State != ledger.SliceDead || s.Reason != "dead-lettered" || s.Deliveries != 5 {
			t.Errorf("dead twice: %+v", s)
		}
		first := slice(t, ctx, l, "r", "s2").FinishedAt
		must(t, l.FinishSlice(ctx, "r", "s2", ledger.SliceDone, "w2", "", 1))
		s = slice(t, ctx, l, "r", "s2")
		if s.State != ledger.SliceDone || s.Writer != "w2" || s.Reason != "" || s.Deliveries != 5 || s.FinishedAt == nil || !s.FinishedAt.Equal(*first) {
			t.Errorf("dead, then acked: %+v, want done by w2 with 5 deliveries and its first finish time", s)
		}
		if err := l.FinishSlice(ctx, "r", "s9", ledger.SliceDone, "w", "", 1); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("finish an unknown slice: %v, want ErrNotFound", err)
		}
		if err := l.FinishSlice(ctx, "nobody", "s1", ledger.SliceDone, "w", "", 1); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("finish a slice of an unknown run: %v, want ErrNotFound", err)
		}
		if err := l.FinishSlice(ctx, "r", "s1", ledger.SlicePublished, "w", "", 1); err == nil {
			t.Error("finished a slice as published")
		}
	}},

	{"a dead slice's buckets are taken over by another slice of its round, once", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 0, 1), mkBucket("b1", 1, 1), mkBucket("b2", 2, 1), mkBucket("b3", 3, 1)}))
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s1", Round: 2, Kind: ledger.SliceGap, BucketIDs: []string{"b0", "b1", "b2"}}))
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s2", Round: 2, BucketIDs: []string{"b3"}}))
		// Not dead: nothing to take over.
		if moved, err := l.RedealSlice(ctx, "s1", ledger.Slice{RunID: "r", ID: "s1.2", Round: 2, BucketIDs: []string{"b0"}}); err != nil || moved {
			t.Errorf("took over a live slice's buckets: %v, %v", moved, err)
		}
		if ss, _ := l.Slices(ctx, "r", -1); len(ss) != 2 {
			t.Fatalf("%d slices after taking over a live slice's buckets, want 2", len(ss))
		}
		must(t, l.FinishSlice(ctx, "r", "s1", ledger.SliceDead, "", "lost with its writers", 5))
		// A bucket the dead slice does not hold: none moves, no slice recorded.
		if _, err := l.RedealSlice(ctx, "s1", ledger.Slice{RunID: "r", ID: "s1.2", Round: 2, BucketIDs: []string{"b0", "b3"}}); err == nil {
			t.Error("took over a bucket another slice holds")
		}
		if ss, _ := l.Slices(ctx, "r", -1); len(ss) != 2 {
			t.Errorf("%d slices after a refused take-over, want 2", len(ss))
		}
		moved, err := l.RedealSlice(ctx, "s1", ledger.Slice{RunID: "r", ID: "s1.2", Round: 2, Kind: ledger.SliceGap, BucketIDs: []string{"b0", "b1"}})
		if err != nil || !moved {
			t.Fatalf("take-over: %v, %v", moved, err)
		}
		bs := buckets(t, ctx, l, "r")
		for id, by := range map[string]string{"b0": "s1.2", "b1": "s1.2", "b2": "s1", "b3": "s2"} {
			if bs[id].State != ledger.BucketClaimed || bs[id].ClaimedBy != by {
				t.Errorf("%s: %s by %q, want claimed by %s", id, bs[id].State, bs[id].ClaimedBy, by)
			}
		}
		s := slice(t, ctx, l, "r", "s1.2")
		if s.State != ledger.SlicePublished || s.Round != 2 || s.Kind != ledger.SliceGap || !slices.Equal(s.BucketIDs, []string{"b0", "b1"}) {
			t.Errorf("the slice that took over: %+v", s)
		}
		if s := slice(t, ctx, l, "r", "s1"); s.State != ledger.SliceDead || !slices.Equal(s.BucketIDs, []string{"b0", "b1", "b2"}) {
			t.Errorf("the dead slice after: %+v", s)
		}
		// Again: nothing changes.
		if moved, err := l.RedealSlice(ctx, "s1", ledger.Slice{RunID: "r", ID: "s1.2", Round: 2, BucketIDs: []string{"b2"}}); err != nil || !moved {
			t.Errorf("the same take-over again: %v, %v", moved, err)
		}
		if b := buckets(t, ctx, l, "r")["b2"]; b.ClaimedBy != "s1" {
			t.Errorf("b2 claimed by %q after a repeated take-over, want s1", b.ClaimedBy)
		}
		// The fold settles each bucket by the slice that holds it.
		_, err = l.Journal(ctx, "r", mkScenario("a", "b0", "x"), "s1.2", "w", nil)
		must(t, err)
		must(t, l.FinishSlice(ctx, "r", "s1.2", ledger.SliceDone, "w", "", 1))
		res, err := l.Fold(ctx, "r", 3)
		must(t, err)
		if !slices.Equal(res.Done, []string{"b0"}) || !slices.Equal(res.Reopened, []string{"b1", "b2"}) || res.InFlight != 1 {
			t.Errorf("fold %+v", res)
		}
		bs = buckets(t, ctx, l, "r")
		if bs["b1"].Attempts != 1 || bs["b2"].Attempts != 0 {
			t.Errorf("attempts: b1 %d (short in the slice that took over), b2 %d (dead); want 1 and 0", bs["b1"].Attempts, bs["b2"].Attempts)
		}
		// A dead slice done after all (acked late): nothing to take over.
		must(t, l.FinishSlice(ctx, "r", "s2", ledger.SliceDead, "", "lost", 5))
		must(t, l.FinishSlice(ctx, "r", "s2", ledger.SliceDone, "w", "", 5))
		if moved, err := l.RedealSlice(ctx, "s2", ledger.Slice{RunID: "r", ID: "s2.2", Round: 2, BucketIDs: []string{"b3"}}); err != nil || moved {
			t.Errorf("took over a slice done after all: %v, %v", moved, err)
		}
		if b := buckets(t, ctx, l, "r")["b3"]; b.ClaimedBy != "s2" {
			t.Errorf("b3 claimed by %q, want s2", b.ClaimedBy)
		}
		if _, err := l.RedealSlice(ctx, "s9", ledger.Slice{RunID: "r", ID: "s9.2", BucketIDs: []string{"b3"}}); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("take over an unknown slice: %v, want ErrNotFound", err)
		}
	}},

	{"only the dead slices that single a bucket out block it", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		b1 := mkBucket("b1", 1, 1)
		b1.Attempts = 1
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 0, 2), b1, mkBucket("b2", 2, 2)}))
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s1", Round: 1, BucketIDs: []string{"b0", "b1", "b2"}}))
		dies := func(dead, id, bucket string) {
			t.Helper()
			if moved, err := l.RedealSlice(ctx, dead, ledger.Slice{RunID: "r", ID: id, Round: 1, BucketIDs: []string{bucket}}); err != nil || !moved {
				t.Fatalf("take-over of %s by %s: %v, %v", bucket, id, moved, err)
			}
			must(t, l.FinishSlice(ctx, "r", id, ledger.SliceDead, "", "lost with its writers", 5))
		}
		// Of three buckets: it singles none out.
		must(t, l.FinishSlice(ctx, "r", "s1", ledger.SliceDead, "", "lost with its writers", 5))
		// b0 alone, with one of it journalled (it was being written): none;
		// then alone with nothing journalled: one.
		if moved, err := l.RedealSlice(ctx, "s1", ledger.Slice{RunID: "r", ID: "s1.b0", Round: 1, BucketIDs: []string{"b0"}}); err != nil || !moved {
			t.Fatalf("take-over: %v, %v", moved, err)
		}
		_, err := l.Journal(ctx, "r", mkScenario("a", "b0", "x"), "s1.b0", "w", nil)
		must(t, err)
		must(t, l.FinishSlice(ctx, "r", "s1.b0", ledger.SliceDead, "", "lost with its writers", 5))
		dies("s1.b0", "s1.b0.2", "b0")
		// b1 alone once, b2 alone twice, nothing journalled.
		dies("s1", "s1.b1", "b1")
		dies("s1", "s1.b2", "b2")
		dies("s1.b2", "s1.b2.2", "b2")
		deaths, err := l.Deaths(ctx, "r")
		must(t, err)
		if want := map[string]int{"b0": 1, "b1": 1, "b2": 2}; !maps.Equal(deaths, want) {
			t.Errorf("deaths %v, want %v", deaths, want)
		}
		res, err := l.Fold(ctx, "r", 2)
		must(t, err)
		if !slices.Equal(res.Blocked, []string{"b2"}) || !slices.Equal(res.Reopened, []string{"b0", "b1"}) {
			t.Errorf("fold %+v, want b2 blocked by its two dead slices of its own, b0 and b1 reopened", res)
		}
		bs := buckets(t, ctx, l, "r")
		if b := bs["b2"]; b.State != ledger.BucketBlocked || b.Notes != "lost with its writers" || b.ClaimedBy != "" {
			t.Errorf("b2: %s, notes %q, claimed by %q", b.State, b.Notes, b.ClaimedBy)
		}
		if bs["b0"].Attempts != 0 || bs["b1"].Attempts != 1 || bs["b2"].Attempts != 0 {
			t.Errorf("attempts %d, %d and %d, want 0, 1 and 0: a dead slice is none", bs["b0"].Attempts, bs["b1"].Attempts, bs["b2"].Attempts)
		}
		if deaths, err := l.Deaths(ctx, "other"); err != nil || len(deaths) != 0 {
			t.Errorf("deaths of a run with none: %v, %v", deaths, err)
		}
	}},

	{"a slice's deliveries are charged for its failures and for writers lost before it progressed", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 0, 3)}))
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s1", BucketIDs: []string{"b0"}}))
		charged := func(c ledger.Charges, err error, failed, lost int, what string) {
			t.Helper()
			must(t, err)
			if c.Failed != failed || c.Lost != lost {
				t.Errorf("%s: charges %+v, want failed %d, lost %d", what, c, failed, lost)
			}
		}
		c, err := l.BeginDelivery(ctx, "r", "s1", 1, "w1")
		charged(c, err, 0, 0, "first delivery")
		c, err = l.EndDelivery(ctx, "r", "s1", 1, "w1", ledger.DeliveryFailed, "model gave up")
		charged(c, err, 1, 0, "first delivery failed")
		c, err = l.EndDelivery(ctx, "r", "s1", 1, "w1", ledger.DeliveryReleased, "")
		charged(c, err, 1, 0, "an end recorded again keeps the first")
		// Delivery 2 begins and its writer dies; 3 never reaches a begin.
		c, err = l.BeginDelivery(ctx, "r", "s1", 2, "w2")
		charged(c, err, 1, 0, "second delivery")
		c, err = l.BeginDelivery(ctx, "r", "s1", 4, "w4")
		charged(c, err, 1, 2, "fourth delivery, after two lost")
		c, err = l.BeginDelivery(ctx, "r", "s1", 4, "w4")
		charged(c, err, 1, 2, "the fourth begun again after an outage")
		// Delivery 4 journals, then is lost: it progressed, so 5 is not
		// charged for it. 5 is released on a stop: not charged either.
		_, err = l.Journal(ctx, "r", mkScenario("a", "b0", "x"), "s1", "w4", nil)
		must(t, err)
		c, err = l.BeginDelivery(ctx, "r", "s1", 5, "w5")
		charged(c, err, 1, 2, "fifth delivery, after one lost with progress")
		c, err = l.EndDelivery(ctx, "r", "s1", 5, "w5", ledger.DeliveryReleased, "stopping")
		charged(c, err, 1, 2, "fifth released")
		c, err = l.BeginDelivery(ctx, "r", "s1", 6, "w6")
		charged(c, err, 1, 2, "sixth delivery")
		if _, err := l.BeginDelivery(ctx, "r", "nope", 1, "w"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("a delivery of an unknown slice: %v, want ErrNotFound", err)
		}
		if _, err := l.EndDelivery(ctx, "r", "s1", 6, "w6", ledger.DeliveryBegan, ""); err == nil {
			t.Error("ended a delivery as began")
		}
	}},

	{"a fold settles the buckets of finished slices from the journal", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		var bs []ledger.Bucket
		for i, want := range []int{1, 2, 1, 1, 1, 1, 1} {
			b := mkBucket(fmt.Sprintf("b%d", i), 6-i, want) // ord reverses the ids
			if i >= 2 {
				b.Attempts = 2 // this attempt is their last of 3
			}
			bs = append(bs, b)
		}
		must(t, l.PutBuckets(ctx, "r", bs))
		for _, s := range []ledger.Slice{
			{ID: "s1", BucketIDs: []string{"b0", "b1", "b2"}}, {ID: "s2", BucketIDs: []string{"b3"}},
			{ID: "s3", BucketIDs: []string{"b4"}}, {ID: "s4", BucketIDs: []string{"b5"}},
		} {
			s.RunID = "r"
			must(t, l.ClaimSlice(ctx, s))
		}
		_, err := l.Journal(ctx, "r", mkScenario("a", "b0", "x"), "s1", "w", nil)
		must(t, err)
		for _, rf := range [][3]string{{"static", "placeholder", "a"}, {"solvable", "check-failed", "z"}, {"static", "placeholder", "b"}} {
			must(t, l.Refuse(ctx, "r", "s1", "b2", rf[0], rf[1], rf[2]))
		}
		must(t, l.Refuse(ctx, "r", "s1", "b1", "static", "placeholder", "c"))
		must(t, l.FinishSlice(ctx, "r", "s1", ledger.SliceDone, "w", "", 1))
		must(t, l.FinishSlice(ctx, "r", "s3", ledger.SliceDead, "", "model gone", 5))
		must(t, l.FinishSlice(ctx, "r", "s4", ledger.SliceDone, "w", "", 1))
		// s2 is still published: b3 is in flight; b6 was never claimed.
		res, err := l.Fold(ctx, "r", 3)
		must(t, err)
		if !slices.Equal(res.Done, []string{"b0"}) || !slices.Equal(res.Reopened, []string{"b4", "b1"}) ||
			!slices.Equal(res.Blocked, []string{"b5", "b2"}) || res.InFlight != 1 || res.Changed() != 5 {
			t.Errorf("fold %+v", res)
		}
		got := buckets(t, ctx, l, "r")
		for _, want := range []struct {
			id       string
			state    ledger.BucketState
			attempts int
			refused  int
			notes    string
			claimed  string
		}{
			{"b0", ledger.BucketDone, 0, 0, "", ""},
			{"b1", ledger.BucketOpen, 1, 1, "", ""},
			{"b2", ledger.BucketBlocked, 3, 3, "static/placeholder: b", ""},
			{"b3", ledger.BucketClaimed, 2, 0, "", "s2"},
			// A dead slice is no attempt of the bucket's, nor does it
			// add to them: 2 attempts and 1 dead slice leave it open.
			{"b4", ledger.BucketOpen, 2, 0, "", ""},
			{"b5", ledger.BucketBlocked, 3, 0, "0 of 1 proved in 3 attempts, and no gate refused any: the writer submitted no other scenario for it", ""},
			{"b6", ledger.BucketOpen, 2, 0, "", ""},
		} {
			b := got[want.id]
			if b.State != want.state || b.Attempts != want.attempts || b.Refused != want.refused || b.Notes != want.notes || b.ClaimedBy != want.claimed {
				t.Errorf("%s: %s, %d attempts, %d refused, notes %q, claimed by %q; want %+v",
					want.id, b.State, b.Attempts, b.Refused, b.Notes, b.ClaimedBy, want)
			}
		}
		again, err := l.Fold(ctx, "r", 3)
		if err != nil || again.Changed() != 0 || again.InFlight != 1 {
			t.Errorf("a second fold: %+v, %v; want nothing changed, 1 in flight", again, err)
		}
		if _, err := l.Fold(ctx, "r", 0); err == nil {
			t.Error("folded with no attempts allowed")
		}
		if _, err := l.Fold(ctx, "nobody", 3); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("fold an unknown run: %v, want ErrNotFound", err)
		}
	}},

	{"a raise reopens open or done buckets, all or none, never a claimed or blocked one", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		blocked := mkBucket("b3", 3, 1)
		blocked.State = ledger.BucketBlocked
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 0, 1), mkBucket("b1", 1, 1), mkBucket("b2", 2, 1), blocked}))
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s1", BucketIDs: []string{"b1"}}))
		must(t, l.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s2", BucketIDs: []string{"b2"}}))
		_, err := l.Journal(ctx, "r", mkScenario("a", "b1", "x"), "s1", "w", nil)
		must(t, err)
		must(t, l.FinishSlice(ctx, "r", "s1", ledger.SliceDone, "w", "", 1))
		if _, err := l.Fold(ctx, "r", 3); err != nil {
			t.Fatal(err)
		}
		spec := plan.Spec{Base: 7, Sized: 1, Capacity: 4}
		must(t, l.Raise(ctx, "r", ledger.Raising{ID: "b0", Want: 3, Spec: spec}, ledger.Raising{ID: "b1", Want: 3, Spec: spec}))
		got := buckets(t, ctx, l, "r")
		for _, id := range []string{"b0", "b1"} {
			if b := got[id]; b.State != ledger.BucketOpen || b.Want != 3 || b.Spec.Base != 7 || b.Spec.Capacity != 4 {
				t.Errorf("raised %s: %s want %d spec %+v", id, b.State, b.Want, b.Spec)
			}
		}
		if got["b1"].Outstanding() != 2 {
			t.Errorf("raised b1 outstanding %d, want 2", got["b1"].Outstanding())
		}
		// One bucket that cannot be raised: none is.
		for _, id := range []string{"b2", "b3", "b9"} {
			if err := l.Raise(ctx, "r", ledger.Raising{ID: "b0", Want: 5, Spec: spec}, ledger.Raising{ID: id, Want: 5, Spec: spec}); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("raise %s: %v, want ErrNotFound", id, err)
			}
		}
		if b := buckets(t, ctx, l, "r")["b2"]; b.Want != 1 || b.State != ledger.BucketClaimed {
			t.Errorf("a refused raise changed b2: %+v", b)
		}
		if b := buckets(t, ctx, l, "r")["b0"]; b.Want != 3 {
			t.Errorf("b0 raised to %d by a refused raise, want 3", b.Want)
		}
	}},

	{"the journal credits a scenario once and refuses clashes whole", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 0, 5)}))
		a := mkScenario("a", "b0", "x")
		a.Provenance.Writer, a.Provenance.Slice = "w1", "s1"
		if res, err := l.Journal(ctx, "r", a, "s1", "w1", []string{"C1", "C1", ""}); err != nil || res != ledger.Credited {
			t.Fatalf("first journal: %v, %v", res, err)
		}
		if res, err := l.Journal(ctx, "r", a, "s1", "w1", []string{"C1"}); err != nil || res != ledger.Already {
			t.Errorf("the same scenario again: %v, %v; want Already", res, err)
		}
		redone := *a
		redone.Provenance.Writer, redone.Provenance.Slice = "w2", "s1"
		if res, err := l.Journal(ctx, "r", &redone, "s1", "w2", nil); err != nil || res != ledger.Already {
			t.Errorf("the same scenario by another writer: %v, %v; want Already", res, err)
		}
		conflict := func(sc *scenario.Scenario, codes []string, kind, other, code string) {
			t.Helper()
			_, err := l.Journal(ctx, "r", sc, "s1", "w1", codes)
			ce, ok := errors.AsType[*ledger.ConflictError](err)
			if !ok || ce.Kind != kind || ce.Other != other || ce.Code != code {
				t.Errorf("%s: %v, want a %s conflict with %s", sc.Name, err, kind, other)
			}
		}
		changed := mkScenario("a", "b0", "y")
		conflict(changed, nil, ledger.ConflictName, "a", "")
		copied := *a
		copied.Name = "copy"
		conflict(&copied, nil, ledger.ConflictContent, "a", "")
		conflict(mkScenario("b", "b0", "x"), nil, ledger.ConflictBranch, "a", "")
		conflict(mkScenario("c", "b0", "z"), []string{"C0", "C1"}, ledger.ConflictCode, "a", "C1")
		// The refused scenario wrote nothing: not its row, nor its free code.
		if res, err := l.Journal(ctx, "r", mkScenario("d", "b0", "w"), "s1", "w1", []string{"C0"}); err != nil || res != ledger.Credited {
			t.Errorf("C0 after a refused journal: %v, %v", res, err)
		}
		if res, err := l.Journal(ctx, "r", mkScenario("c", "b0", "z"), "s1", "w1", nil); err != nil || res != ledger.Credited {
			t.Errorf("c without the clashing code: %v, %v", res, err)
		}
		if b := buckets(t, ctx, l, "r")["b0"]; b.Done != 3 {
			t.Errorf("b0 done %d, want 3", b.Done)
		}
		if m, err := l.Meter(ctx, "r"); err != nil || m.Kept != 3 {
			t.Errorf("meter kept %d, %v; want 3", m.Kept, err)
		}
		if n, err := l.Count(ctx, "r"); err != nil || n != 3 {
			t.Errorf("count %d, %v; want 3", n, err)
		}
		if n, err := l.Count(ctx, "nobody"); err != nil || n != 0 {
			t.Errorf("count of an unknown run: %d, %v; want 0", n, err)
		}
		if _, err := l.Journal(ctx, "r", mkScenario("", "b0", "v"), "s1", "w1", nil); err == nil {
			t.Error("journalled a scenario without a name")
		}
		if _, err := l.Journal(ctx, "nobody", mkScenario("e", "b0", "v"), "s1", "w1", nil); err == nil {
			t.Error("journalled into an unknown run")
		}
	}},

	{"scenarios are read by bucket ord and name, as written", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		must(t, l.PutBuckets(ctx, "r", []ledger.Bucket{mkBucket("b0", 1, 5), mkBucket("b1", 0, 5)}))
		for _, s := range [][2]string{{"z", "b1"}, {"q", "gone"}, {"a", "b0"}, {"m", "b1"}} {
			_, err := l.Journal(ctx, "r", mkScenario(s[0], s[1], s[0]), "s1", "w", nil)
			must(t, err)
		}
		scs, err := l.ScenariosAfter(ctx, "r", "", 0)
		must(t, err)
		var names []string
		for _, sc := range scs {
			names = append(names, sc.Name)
		}
		if !slices.Equal(names, []string{"m", "z", "a", "q"}) {
			t.Errorf("scenarios %v, want m z a q", names)
		}
		if n, ok := scs[0].Solution[0].Args["n"].(int64); !ok || n != 12345678901234567 {
			t.Errorf("a large integer came back as %T %v", scs[0].Solution[0].Args["n"], scs[0].Solution[0].Args["n"])
		}
		if none, err := l.ScenariosAfter(ctx, "nobody", "", 0); err != nil || len(none) != 0 {
			t.Errorf("scenarios of an unknown run: %v, %v", none, err)
		}
		// Pages follow the same order, the unknown bucket's scenario too.
		for _, pg := range []struct {
			after string
			n     int
			want  []string
		}{{"", 2, []string{"m", "z"}}, {"z", 2, []string{"a", "q"}}, {"a", 5, []string{"q"}},
			{"q", 2, nil}, {"m", 0, []string{"z", "a", "q"}}, {"nope", 2, nil}} {
			page, err := l.ScenariosAfter(ctx, "r", pg.after, pg.n)
			must(t, err)
			var got []string
			for _, sc := range page {
				got = append(got, sc.Name)
			}
			if !slices.Equal(got, pg.want) {
				t.Errorf("ScenariosAfter(%q, %d) = %v, want %v", pg.after, pg.n, got, pg.want)
			}
		}
	}},

	{"refusals are counted by kind, most frequent first", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		for _, rf := range [][3]string{
			{"static", "placeholder", "m"}, {"solvable", "check-failed", "k"}, {"static", "placeholder", "d"},
			{"grounded", "invented", "x"}, {"solvable", "check-failed", "e"}, {"static", "placeholder", "q"},
		} {
			must(t, l.Refuse(ctx, "r", "s1", "b0", rf[0], rf[1], rf[2]))
		}
		top, err := l.TopRefusals(ctx, "r", 2)
		must(t, err)
		want := []ledger.Reason{{Gate: "static", Code: "placeholder", Count: 3, Example: "d"}, {Gate: "solvable", Code: "check-failed", Count: 2, Example: "e"}}
		if !slices.Equal(top, want) {
			t.Errorf("top 2: %+v, want %+v", top, want)
		}
		if all, err := l.TopRefusals(ctx, "r", 10); err != nil || len(all) != 3 || all[2].Gate != "grounded" {
			t.Errorf("top 10: %+v, %v", all, err)
		}
		if none, err := l.TopRefusals(ctx, "r", 0); err != nil || len(none) != 0 {
			t.Errorf("top 0: %+v, %v", none, err)
		}
		if none, err := l.TopRefusals(ctx, "nobody", 5); err != nil || len(none) != 0 {
			t.Errorf("refusals of an unknown run: %+v, %v", none, err)
		}
		if err := l.Refuse(ctx, "nobody", "s1", "b0", "static", "placeholder", "m"); err == nil {
			t.Error("refused into an unknown run")
		}
		counts, err := l.Refusals(ctx, "r")
		must(t, err)
		if want := map[string]int{"static/placeholder": 3, "solvable/check-failed": 2, "grounded/invented": 1}; !maps.Equal(counts, want) {
			t.Errorf("refusals %v, want %v", counts, want)
		}
		if none, err := l.Refusals(ctx, "nobody"); err != nil || none == nil || len(none) != 0 {
			t.Errorf("refusals of an unknown run: %#v, %v; want an empty map", none, err)
		}
	}},

	{"a bucket's refusals are summed up by its most frequent kind", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		for _, rf := range [][4]string{
			{"b0", "solvable", "check-failed", "k"}, {"b0", "static", "placeholder", "m"}, {"b0", "solvable", "check-failed", "e"},
			{"b0", "static", "placeholder", "q"}, {"b0", "grounded", "invented", "a"},
			{"b1", "static", "placeholder", "z"}, {"b1", "grounded", "invented", "y"},
			{"b2", "static", "placeholder", "p"},
		} {
			must(t, l.Refuse(ctx, "r", "s1", rf[0], rf[1], rf[2], rf[3]))
		}
		top, err := l.BucketRefusals(ctx, "r")
		must(t, err)
		// b0 and b1 tie between kinds: the first by gate, then code, wins.
		want := map[string]ledger.BucketRefusal{
			"b0": {Gate: "solvable", Code: "check-failed", Count: 2, Of: 5, Example: "e"},
			"b1": {Gate: "grounded", Code: "invented", Count: 1, Of: 2, Example: "y"},
			"b2": {Gate: "static", Code: "placeholder", Count: 1, Of: 1, Example: "p"},
		}
		if !maps.Equal(top, want) {
			t.Errorf("bucket refusals %+v\nwant              %+v", top, want)
		}
		if none, err := l.BucketRefusals(ctx, "nobody"); err != nil || none == nil || len(none) != 0 {
			t.Errorf("bucket refusals of an unknown run: %#v, %v; want an empty map", none, err)
		}
	}},

	{"the meter counts what was spent; the budget reads it only under a cap", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		for _, c := range []ledger.Call{
			{Run: "r", Slice: "s1", Writer: "w", Model: "m", Prompt: 100, Completion: 20, CachedPrompt: 50, Reasoning: 5},
			{Run: "r", Slice: "s1", Writer: "w", Model: "m", Prompt: 10, Completion: 2, CostUSD: 0.25, Priced: true, Outcome: "error"},
			{Run: "r", Slice: "s2", Writer: "w", Model: "m"},
			{Run: "elsewhere", Slice: "s", Writer: "w", Model: "m", Prompt: 7},
		} {
			must(t, l.SpendCall(ctx, c))
		}
		m, err := l.Meter(ctx, "r")
		must(t, err)
		want := ledger.Meter{Calls: 3, PromptTokens: 110, CachedPromptTokens: 50, CompletionTokens: 22, ReasoningTokens: 5, CostUSD: 0.25, UnpricedCalls: 1}
		if m != want {
			t.Errorf("meter %+v, want %+v", m, want)
		}
		if m, err := l.Meter(ctx, "elsewhere"); err != nil || m.PromptTokens != 7 {
			t.Errorf("the meter of a run not recorded: %+v, %v", m, err)
		}
		if err := l.SpendCall(ctx, ledger.Call{Run: "r", Prompt: -1}); err == nil {
			t.Error("spent negative tokens")
		}
		r, _ := l.Run(ctx, "r")
		if b, err := l.Budget(ctx, r); err != nil || b != (ledger.Budget{}) || b.Reached() {
			t.Errorf("budget of a run without caps: %+v, %v; want nothing read", b, err)
		}
		r.BudgetTokens, r.BudgetUSD = 132, 1
		if b, err := l.Budget(ctx, r); err != nil || b.Spent != 132 || b.SpentUSD != 0.25 || !b.Reached() {
			t.Errorf("budget at its token cap: %+v, %v", b, err)
		}
		r.BudgetTokens = 0
		if b, err := l.Budget(ctx, r); err != nil || b.Spent != 132 || b.Reached() {
			t.Errorf("budget under its dollar cap: %+v, %v", b, err)
		}
	}},

	{"a sub-goal is added once, the first kept", func(t *testing.T, ctx context.Context, l roleLedger) {
		mkRun(t, ctx, l, ledger.Run{ID: "r", Asked: 1})
		for _, g := range []ledger.SubGoal{
			{Name: "refunded", What: "the refund is issued", Judged: true, Params: map[string]string{"order": "id"}, Source: "w1"},
			{Name: "asked", What: "the agent asks"},
		} {
			if created, err := l.AddSubGoal(ctx, "r", g); err != nil || !created {
				t.Errorf("add %s: %v, %v", g.Name, created, err)
			}
		}
		if created, err := l.AddSubGoal(ctx, "r", ledger.SubGoal{Name: "refunded", What: "other"}); err != nil || created {
			t.Errorf("add refunded again: %v, %v", created, err)
		}
		gs, err := l.SubGoals(ctx, "r")
		must(t, err)
		if len(gs) != 2 || gs[0].Name != "asked" || gs[0].Params == nil || len(gs[0].Params) != 0 ||
			gs[1].What != "the refund is issued" || !gs[1].Judged || gs[1].Params["order"] != "id" || gs[1].Source != "w1" {
			t.Errorf("sub-goals %+v", gs)
		}
		if _, err := l.AddSubGoal(ctx, "r", ledger.SubGoal{What: "x"}); err == nil {
			t.Error("added a sub-goal without a name")
		}
		if _, err := l.AddSubGoal(ctx, "nobody", ledger.SubGoal{Name: "x"}); err == nil {
			t.Error("added a sub-goal to an unknown run")
		}
		if none, err := l.SubGoals(ctx, "nobody"); err != nil || len(none) != 0 {
			t.Errorf("sub-goals of an unknown run: %v, %v", none, err)
		}
	}},

	{"a run keeps the first plan stored for it", func(t *testing.T, ctx context.Context, l roleLedger) {
		if _, err := l.Plan(ctx, "r1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("the plan of an unknown run: %v, want ErrNotFound", err)
		}
		first := &plan.Plan{Asked: 3, Capacity: 9, Most: 40, MostWhy: "orders.order_id", Buckets: []plan.Bucket{mkBucket("b1", 0, 3).Bucket},
			Strides: map[string]int{"orders": 2}}
		if err := l.SavePlan(ctx, "r1", first); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("saved a plan for an unknown run: %v, want ErrNotFound", err)
		}
		mkRun(t, ctx, l, ledger.Run{ID: "r1", Asked: 3})
		if _, err := l.Plan(ctx, "r1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("the plan of a run none was stored for: %v, want ErrNotFound", err)
		}
		must(t, l.SavePlan(ctx, "r1", first))
		must(t, l.SavePlan(ctx, "r1", &plan.Plan{Asked: 5}))
		got, err := l.Plan(ctx, "r1")
		must(t, err)
		want, _ := json.Marshal(first)
		if b, _ := json.Marshal(got); string(b) != string(want) {
			t.Errorf("plan read back\n%s\nwant the first stored\n%s", b, want)
		}
	}},

	{"a contract's files are stored once under its hash", func(t *testing.T, ctx context.Context, l roleLedger) {
		must(t, l.SaveContract(ctx, "h1", "shop", map[string][]byte{"contract.yaml": []byte("agent: shop\n")}))
		must(t, l.SaveContract(ctx, "h1", "shop", map[string][]byte{"contract.yaml": []byte("agent: other\n")}))
		files, err := l.ContractFiles(ctx, "h1")
		if err != nil || len(files) != 1 || string(files["contract.yaml"]) != "agent: shop\n" {
			t.Errorf("files %q, %v; want the first saved", files, err)
		}
		if _, err := l.ContractFiles(ctx, "h2"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("files of an unknown hash: %v, want ErrNotFound", err)
		}
	}},
}
