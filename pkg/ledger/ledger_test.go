package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func newStore(t testing.TB) (*ledger.Store, context.Context) {
	t.Helper()
	return ledger.New(testenv.Postgres(t)), context.Background()
}

func mkRun(t testing.TB, s *ledger.Store, id string) {
	t.Helper()
	created, err := s.CreateRun(context.Background(), ledger.Run{ID: id, Agent: "shop", ContractSHA256: "c", WorldSHA256: "w", Model: "builtin", Asked: 10, Seed: 7})
	if err != nil || !created {
		t.Fatalf("CreateRun: created=%v err=%v", created, err)
	}
}

func mkBuckets(n int, want int) []ledger.Bucket {
	var bs []ledger.Bucket
	for i := 0; i < n; i++ {
		bs = append(bs, ledger.Bucket{Bucket: plan.Bucket{ID: fmt.Sprintf("b%d", i), Ord: i, Theme: "t", Cell: fmt.Sprintf("cancel-order-%d", i),
			UseCase: "cancel-order", Angle: "plain", Outcome: "succeed", Overlay: "none", Kind: "happy",
			Axes: map[string]string{"status": "pending"}, Want: want}})
	}
	return bs
}

func sc(name, bucket, branch string) *scenario.Scenario {
	return &scenario.Scenario{Name: name, UseCase: "cancel-order", Branch: branch, Kind: "happy", Expects: "succeed",
		Bucket: bucket, Tests: "passes when the order is cancelled", Persona: scenario.Persona{Name: "Ann " + name},
		Instruction: "cancel " + name, Solution: []scenario.Call{{Tool: "cancel", Args: map[string]any{"order_id": "#W" + name, "n": 12345678901234567}}},
		SubGoals: []scenario.SubGoalRef{{Name: "cancelled"}}, MaxTurns: 10}
}

func TestRunIdempotent(t *testing.T) {
	s, ctx := newStore(t)
	r := ledger.Run{ID: "r1", Agent: "shop", ContractSHA256: "c", WorldSHA256: "w", Model: "builtin", Asked: 300, Seed: 42, BudgetTokens: 9}
	created, err := s.CreateRun(ctx, r)
	if err != nil || !created {
		t.Fatalf("first CreateRun: %v %v", created, err)
	}
	r2 := r
	r2.Asked = 1
	created, err = s.CreateRun(ctx, r2)
	if err != nil || created {
		t.Fatalf("second CreateRun: created=%v err=%v", created, err)
	}
	got, err := s.Run(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Asked != 300 || got.State != ledger.RunPlanned || got.Seed != 42 || !reflect.DeepEqual(got.Config, ledger.RunConfig{}) || got.FinishedAt != nil {
		t.Fatalf("run changed or defaults wrong: %+v", got)
	}
	if _, err := s.Run(ctx, "nope"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("missing run: %v", err)
	}
	for _, to := range []ledger.RunState{ledger.RunWriting, ledger.RunReviewing, ledger.RunDone} {
		if _, err := s.MoveRun(ctx, "r1", to, "ok"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetRound(ctx, "r1", 3); err != nil {
		t.Fatal(err)
	}
	got, _ = s.Run(ctx, "r1")
	if got.State != "done" || got.FinishedAt == nil || got.Round != 3 || got.Message != "ok" {
		t.Fatalf("after state/round: %+v", got)
	}
	if _, err := s.MoveRun(ctx, "r1", "bogus", ""); err == nil {
		t.Fatal("bogus state accepted")
	}
	var te *ledger.TransitionError
	if from, err := s.MoveRun(ctx, "r1", ledger.RunWriting, ""); !errors.As(err, &te) || from != ledger.RunDone || te.From != "done" || te.To != "writing" {
		t.Fatalf("a done run moved back to writing: from=%s err=%v", from, err)
	}
	if _, err := s.MoveRun(ctx, "zz", ledger.RunDone, ""); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("state of missing run: %v", err)
	}
	mkRun(t, s, "r2")
	runs, err := s.Runs(ctx)
	if err != nil || len(runs) != 2 || runs[0].ID != "r2" {
		t.Fatalf("Runs newest first: %v %+v", err, runs)
	}
}

// TestRunConfig: a run's config reads back as written, a zero one is
// recorded as an empty object, and a corrupt record is a *ConfigError naming
// the field at fault, never a zero config read as if it were the run's.
func TestRunConfig(t *testing.T) {
	s, ctx := newStore(t)
	want := ledger.RunConfig{
		Coverage: plan.Coverage{Cells: 4, CellsCovered: 3, UseCases: 2, UseCasesIn: 2, Outcomes: map[string]int{"succeed": 5, "refuse": 2},
			Kinds: map[string]int{"happy": 7}, UntestedRules: []string{"r9"}},
		Capacity: 40, Axes: []plan.Axis{{UseCase: "cancel-order", Table: "orders", Column: "status", Levels: map[string]string{"pending": "succeed", "shipped": "refuse"}}},
		MaxWant: 25, AllowPartial: true,
	}
	if _, err := s.CreateRun(ctx, ledger.Run{ID: "full", Agent: "shop", Asked: 7, Config: want}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Run(ctx, "full")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Config, want) {
		t.Fatalf("config read back %+v, wrote %+v", got.Config, want)
	}
	mkRun(t, s, "zero")
	var raw string
	if err := s.Pool().QueryRow(ctx, `SELECT config::text FROM runs WHERE id = 'zero'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw != "{}" {
		t.Fatalf("a zero config is recorded as %s, want {}", raw)
	}
	for _, c := range []struct{ config, field string }{
		{`{"max_want": "25"}`, "max_want"},
		{`{"allow_partial": 1}`, "allow_partial"},
		{`{"coverage": {"outcomes": {"succeed": "five"}}}`, "coverage.outcomes"},
		{`[1, 2]`, ""},
	} {
		if _, err := s.Pool().Exec(ctx, `UPDATE runs SET config = $1::jsonb WHERE id = 'full'`, c.config); err != nil {
			t.Fatal(err)
		}
		_, err := s.Run(ctx, "full")
		ce, ok := errors.AsType[*ledger.ConfigError](err)
		if !ok || ce.Run != "full" || ce.Field != c.field {
			t.Errorf("config %s: %v, want a *ConfigError of run full naming %q", c.config, err, c.field)
		}
		if _, err := s.Runs(ctx); !errors.As(err, &ce) {
			t.Errorf("config %s: listing runs gave %v, want the *ConfigError", c.config, err)
		}
	}
}

func TestBucketsAndSlicesIdempotent(t *testing.T) {
	s, ctx := newStore(t)
	mkRun(t, s, "r")
	bs := mkBuckets(3, 2)
	if err := s.PutBuckets(ctx, "r", bs); err != nil {
		t.Fatal(err)
	}
	changed := mkBuckets(3, 99)
	if err := s.PutBuckets(ctx, "r", changed); err != nil {
		t.Fatal(err)
	}
	got, err := s.Buckets(ctx, "r")
	if err != nil || len(got) != 3 {
		t.Fatalf("Buckets: %v %d", err, len(got))
	}
	for i, b := range got {
		if b.ID != bs[i].ID || b.Want != 2 || b.State != "open" || b.Origin != "plan" || b.Axes["status"] != "pending" {
			t.Fatalf("bucket %d: %+v", i, b)
		}
	}
	sl := ledger.Slice{RunID: "r", ID: "s1", Round: 0, BucketIDs: []string{"b0", "b2"}}
	for i := 0; i < 2; i++ {
		if err := s.ClaimSlice(ctx, sl); err != nil {
			t.Fatalf("ClaimSlice %d: %v", i, err)
		}
	}
	if err := s.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s2", BucketIDs: []string{"b1", "nope"}}); err == nil {
		t.Fatal("slice naming an unknown bucket accepted")
	}
	slices, err := s.Slices(ctx, "r", -1)
	if err != nil || len(slices) != 1 || slices[0].State != "published" || len(slices[0].BucketIDs) != 2 || slices[0].Kind != "work" {
		t.Fatalf("Slices: %v %+v", err, slices)
	}
	got, _ = s.Buckets(ctx, "r")
	if got[0].State != "claimed" || got[0].ClaimedBy != "s1" || got[1].State != "open" || got[1].ClaimedBy != "" {
		t.Fatalf("claims: %+v", got)
	}
	if err := s.FinishSlice(ctx, "r", "s1", "done", "w1", "", 1); err != nil {
		t.Fatal(err)
	}
	var te *ledger.TransitionError
	if err := s.FinishSlice(ctx, "r", "s1", "dead", "w2", "late", 5); !errors.As(err, &te) {
		t.Fatalf("a done slice died: %v", err)
	}
	if err := s.FinishSlice(ctx, "r", "s1", "done", "w2", "", 2); err != nil {
		t.Fatalf("finishing a done slice again: %v", err)
	}
	slices, _ = s.Slices(ctx, "r", 0)
	if slices[0].State != "done" || slices[0].Writer != "w1" || slices[0].FinishedAt == nil {
		t.Fatalf("finished slice: %+v", slices[0])
	}
	if err := s.FinishSlice(ctx, "r", "zz", "done", "", "", 1); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("finish missing slice: %v", err)
	}
	if sl, _ := s.Slices(ctx, "r", 1); len(sl) != 0 {
		t.Fatalf("round filter: %+v", sl)
	}

	// Writer-reported buckets get central ids, once.
	nb, err := s.AddBucket(ctx, "r", ledger.Bucket{Bucket: plan.Bucket{Theme: "t", Cell: "new-cell", UseCase: "cancel-order", Angle: "x", Outcome: "refuse", Overlay: "none", Kind: "edge", Want: 1}})
	if err != nil || nb.ID != "b3" || nb.Ord != 3 || nb.Origin != "writer" {
		t.Fatalf("AddBucket: %v %+v", err, nb)
	}
	again, err := s.AddBucket(ctx, "r", ledger.Bucket{Bucket: plan.Bucket{Theme: "t", Cell: "new-cell", UseCase: "cancel-order", Angle: "x", Outcome: "refuse", Overlay: "none", Kind: "edge", Want: 1}})
	if err != nil || again.ID != "b3" {
		t.Fatalf("AddBucket repeated: %v %+v", err, again)
	}
}

func TestJournalOutcomes(t *testing.T) {
	s, ctx := newStore(t)
	mkRun(t, s, "r")
	if err := s.PutBuckets(ctx, "r", mkBuckets(2, 3)); err != nil {
		t.Fatal(err)
	}
	a := sc("a", "b0", "one")
	res, err := s.Journal(ctx, "r", a, "s1", "w1", []string{"C1", "C2", "C1"})
	if err != nil || res != ledger.Credited {
		t.Fatalf("first: %v %v", res, err)
	}
	res, err = s.Journal(ctx, "r", a, "s1", "w1", []string{"C1", "C2"})
	if err != nil || res != ledger.Already {
		t.Fatalf("same again: %v %v", res, err)
	}
	// Redelivered to another writer: same content, other provenance writer.
	a2 := *a
	a2.Provenance.Writer = "w2"
	res, err = s.Journal(ctx, "r", &a2, "s1", "w2", []string{"C1", "C2"})
	if err != nil || res != ledger.Already {
		t.Fatalf("redelivered to other writer: %v %v", res, err)
	}

	conflict := func(sc *scenario.Scenario, codes []string, kind, other string) {
		t.Helper()
		res, err := s.Journal(ctx, "r", sc, "s2", "w1", codes)
		var ce *ledger.ConflictError
		if !errors.As(err, &ce) || ce.Kind != kind || ce.Other != other || res != 0 {
			t.Fatalf("want %s conflict with %s, got res=%v err=%v", kind, other, res, err)
		}
	}
	changed := sc("a", "b0", "other")
	conflict(changed, nil, ledger.ConflictName, "a")
	conflict(sc("b", "b0", "one"), nil, ledger.ConflictBranch, "a")
	dup := *a
	dup.Name = "a-copy"
	conflict(&dup, nil, ledger.ConflictContent, "a")
	conflict(sc("c", "b1", "three"), []string{"C9", "C2"}, ledger.ConflictCode, "a")

	// A conflict writes nothing: c's name, branch and C9 are still free.
	n, _ := s.Count(ctx, "r")
	if n != 1 {
		t.Fatalf("count after conflicts = %d", n)
	}
	res, err = s.Journal(ctx, "r", sc("c", "b1", "three"), "s2", "w1", []string{"C9"})
	if err != nil || res != ledger.Credited {
		t.Fatalf("c after its conflict: %v %v", res, err)
	}
	got, err := s.Scenarios(ctx, "r")
	if err != nil || len(got) != 2 {
		t.Fatalf("Scenarios: %v %d", err, len(got))
	}
	// Large integers survive the round trip through jsonb.
	b1, _, _ := ledger.Canonical(a)
	b2, _, _ := ledger.Canonical(&got[0])
	if string(b1) != string(b2) {
		t.Fatalf("body changed in the journal:\n%s\n%s", b1, b2)
	}
}

func TestJournalConcurrent(t *testing.T) {
	s, ctx := newStore(t)
	mkRun(t, s, "r")
	if err := s.PutBuckets(ctx, "r", mkBuckets(4, 100)); err != nil {
		t.Fatal(err)
	}
	const names = 30
	var mu sync.Mutex
	credited := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, 8*names)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < names; i++ {
				k := (i + g*7) % names // overlapping, in different orders
				name := fmt.Sprintf("n%02d", k)
				x := sc(name, fmt.Sprintf("b%d", k%4), "br"+name)
				if g%2 == 1 && k%5 == 0 {
					x.Instruction += " (variant)" // the same name with different content
				}
				res, err := s.Journal(ctx, "r", x, fmt.Sprintf("s%d", g), fmt.Sprintf("w%d", g), []string{"code-" + name})
				var ce *ledger.ConflictError
				switch {
				case err == nil && res == ledger.Credited:
					mu.Lock()
					credited[name]++
					mu.Unlock()
				case err == nil && res == ledger.Already:
				case errors.As(err, &ce):
				default:
					errs <- fmt.Errorf("%s: res=%v err=%v", name, res, err)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(credited) != names {
		t.Fatalf("credited %d distinct names, want %d", len(credited), names)
	}
	for name, n := range credited {
		if n != 1 {
			t.Errorf("%s credited %d times", name, n)
		}
	}
	if n, _ := s.Count(ctx, "r"); n != names {
		t.Fatalf("Count = %d", n)
	}
}

func TestFold(t *testing.T) {
	s, ctx := newStore(t)
	mkRun(t, s, "r")
	if err := s.PutBuckets(ctx, "r", mkBuckets(4, 2)); err != nil {
		t.Fatal(err)
	}
	// Round 0: s1 holds b0,b1 and finishes; s2 holds b2 and dies; s3 holds b3, in flight.
	for _, sl := range []ledger.Slice{{RunID: "r", ID: "s1", BucketIDs: []string{"b0", "b1"}}, {RunID: "r", ID: "s2", BucketIDs: []string{"b2"}}, {RunID: "r", ID: "s3", BucketIDs: []string{"b3"}}} {
		if err := s.ClaimSlice(ctx, sl); err != nil {
			t.Fatal(err)
		}
	}
	mustJournal(t, s, sc("x1", "b0", "1"), "s1")
	mustJournal(t, s, sc("x2", "b0", "2"), "s1")
	mustJournal(t, s, sc("x3", "b1", "3"), "s1")
	mustJournal(t, s, sc("x4", "b3", "4"), "s3")
	for i := 0; i < 3; i++ {
		if err := s.Refuse(ctx, "r", "s1", "b1", "grounding", "unknown-value", fmt.Sprintf("value %d not in world", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Refuse(ctx, "r", "s1", "b1", "static", "placeholder", "John Doe"); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishSlice(ctx, "r", "s1", "done", "w1", "", 1); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishSlice(ctx, "r", "s2", "dead", "w2", "max deliveries", 5); err != nil {
		t.Fatal(err)
	}
	res, err := s.Fold(ctx, "r", 2)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Done) != "[b0]" || fmt.Sprint(res.Reopened) != "[b1 b2]" || len(res.Blocked) != 0 || res.InFlight != 1 {
		t.Fatalf("fold 1: %+v", res)
	}
	bs := bucketMap(t, s)
	if bs["b0"].State != "done" || bs["b0"].Done != 2 || bs["b0"].Attempts != 0 || bs["b0"].ClaimedBy != "" {
		t.Fatalf("b0: %+v", bs["b0"])
	}
	if bs["b1"].State != "open" || bs["b1"].Attempts != 1 || bs["b1"].Refused != 4 || bs["b1"].Done != 1 {
		t.Fatalf("b1: %+v", bs["b1"])
	}
	if bs["b3"].State != "claimed" || bs["b3"].ClaimedBy != "s3" || bs["b3"].Done != 1 {
		t.Fatalf("in-flight b3 touched: %+v", bs["b3"])
	}
	// Folding again changes nothing: claims were cleared.
	if res, err := s.Fold(ctx, "r", 2); err != nil || res.Changed() != 0 {
		t.Fatalf("second fold: %+v %v", res, err)
	}

	// Round 1: b1 and b2 fail again and reach maxAttempts.
	for _, sl := range []ledger.Slice{{RunID: "r", ID: "s4", Round: 1, BucketIDs: []string{"b1"}}, {RunID: "r", ID: "s5", Round: 1, BucketIDs: []string{"b2"}}} {
		if err := s.ClaimSlice(ctx, sl); err != nil {
			t.Fatal(err)
		}
	}
	_ = s.FinishSlice(ctx, "r", "s4", "done", "w1", "", 1)
	_ = s.FinishSlice(ctx, "r", "s5", "dead", "w1", "writer crashed: boom", 5)
	_ = s.FinishSlice(ctx, "r", "s3", "done", "w1", "", 1)
	res, err = s.Fold(ctx, "r", 2)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Blocked) != "[b1 b2]" || fmt.Sprint(res.Reopened) != "[b3]" || res.InFlight != 0 {
		t.Fatalf("fold 2: %+v", res)
	}
	bs = bucketMap(t, s)
	if bs["b1"].State != "blocked" || bs["b1"].Notes != "grounding/unknown-value: value 2 not in world" {
		t.Fatalf("b1 blocked notes: %+v", bs["b1"])
	}
	if bs["b2"].State != "blocked" || bs["b2"].Notes != "writer crashed: boom" {
		t.Fatalf("b2 blocked notes: %+v", bs["b2"])
	}
	// Done never moves backwards across folds.
	if bs["b0"].Done != 2 || bs["b0"].State != "done" || bs["b1"].Done != 1 {
		t.Fatalf("done moved: %+v %+v", bs["b0"], bs["b1"])
	}
	if _, err := s.Fold(ctx, "nope", 2); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("fold of missing run: %v", err)
	}
}

// TestFoldDeadSlice: a dead slice is no attempt of its buckets' (their
// attempts, which decide top-ups, stay as they were), but the dead slices
// that single a bucket out (of it alone, nothing of it journalled) block it
// once they alone reach the bound, so a bucket whose slices always die
// still ends.
func TestFoldDeadSlice(t *testing.T) {
	s, ctx := newStore(t)
	mkRun(t, s, "r")
	if err := s.PutBuckets(ctx, "r", mkBuckets(2, 2)); err != nil {
		t.Fatal(err)
	}
	claim := func(id string, round int, buckets ...string) {
		t.Helper()
		if err := s.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: id, Round: round, BucketIDs: buckets}); err != nil {
			t.Fatal(err)
		}
	}
	claim("s1", 1, "b0")
	claim("s2", 1, "b1")
	mustJournal(t, s, sc("x1", "b0", "1"), "s1")
	mustJournal(t, s, sc("x2", "b1", "2"), "s2")
	if err := s.FinishSlice(ctx, "r", "s1", ledger.SliceDead, "", "lost with its writers", 5); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishSlice(ctx, "r", "s2", ledger.SliceDone, "w1", "", 1); err != nil {
		t.Fatal(err)
	}
	res, err := s.Fold(ctx, "r", 2)
	if err != nil || fmt.Sprint(res.Reopened) != "[b0 b1]" {
		t.Fatalf("fold 1: %+v %v", res, err)
	}
	bs := bucketMap(t, s)
	if b := bs["b0"]; b.State != ledger.BucketOpen || b.Attempts != 0 || b.Done != 1 || b.Want != 2 {
		t.Fatalf("b0 after a dead slice: %s, attempts %d, done %d of %d; want open, no attempt, 1 of 2", b.State, b.Attempts, b.Done, b.Want)
	}
	if b := bs["b1"]; b.Attempts != 1 {
		t.Fatalf("b1 after a slice done short: attempts %d, want 1", b.Attempts)
	}
	// Its second dead slice, with nothing journalled, is the first that
	// singles it out (s1 was being written); the third reaches maxAttempts:
	// blocked, with the reason.
	claim("s3", 2, "b0")
	if err := s.FinishSlice(ctx, "r", "s3", ledger.SliceDead, "", "lost with its writers", 5); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Fold(ctx, "r", 2); err != nil || fmt.Sprint(res.Reopened) != "[b0]" {
		t.Fatalf("fold 2: %+v %v", res, err)
	}
	claim("s4", 3, "b0")
	if err := s.FinishSlice(ctx, "r", "s4", ledger.SliceDead, "", "lost with its writers", 5); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Fold(ctx, "r", 2); err != nil || fmt.Sprint(res.Blocked) != "[b0]" {
		t.Fatalf("fold 3: %+v %v", res, err)
	}
	if b := bucketMap(t, s)["b0"]; b.State != ledger.BucketBlocked || b.Attempts != 0 || b.Notes != "lost with its writers" {
		t.Fatalf("b0 after three dead slices: %s, attempts %d, notes %q", b.State, b.Attempts, b.Notes)
	}
}

func mustJournal(t *testing.T, s *ledger.Store, x *scenario.Scenario, slice string) {
	t.Helper()
	res, err := s.Journal(context.Background(), "r", x, slice, "w1", nil)
	if err != nil || res != ledger.Credited {
		t.Fatalf("journal %s: %v %v", x.Name, res, err)
	}
}

func bucketMap(t *testing.T, s *ledger.Store) map[string]ledger.Bucket {
	t.Helper()
	bs, err := s.Buckets(context.Background(), "r")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]ledger.Bucket{}
	for _, b := range bs {
		m[b.ID] = b
	}
	return m
}

func TestScenariosOrderStable(t *testing.T) {
	s, ctx := newStore(t)
	mkRun(t, s, "r")
	bs := mkBuckets(3, 5)
	bs[0].Ord, bs[2].Ord = 2, 0 // b2 first, then b1, then b0
	if err := s.PutBuckets(ctx, "r", bs); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*scenario.Scenario{sc("z", "b2", "1"), sc("m", "b0", "2"), sc("a", "b0", "3"), sc("q", "b1", "4"), sc("c", "b2", "5"), sc("o", "orphan", "6")} {
		mustJournal(t, s, x, "s1")
	}
	got, err := s.Scenarios(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range got {
		names = append(names, x.Name)
	}
	if fmt.Sprint(names) != "[c z q a m o]" {
		t.Fatalf("order: %v", names)
	}
}

func TestMeter(t *testing.T) {
	s, ctx := newStore(t)
	mkRun(t, s, "r")
	_ = s.Refuse(ctx, "r", "s1", "b0", "static", "placeholder", "John Doe")
	_ = s.Refuse(ctx, "r", "s1", "b0", "static", "placeholder", "Jane Doe")
	_ = s.Refuse(ctx, "r", "s2", "b1", "ready", "empty", "no rows")
	ref, err := s.Refusals(ctx, "r")
	if err != nil || ref["static/placeholder"] != 2 || ref["ready/empty"] != 1 || len(ref) != 2 {
		t.Fatalf("Refusals: %v %v", ref, err)
	}
	_ = s.Spend(ctx, "r", "s1", "w1", "builtin", 100, 20, "ok")
	_ = s.Spend(ctx, "r", "s1", "w1", "builtin", 50, 5, "")
	_ = s.Spend(ctx, "r", "s2", "w2", "builtin", 7, 3, "failed")
	p, c, err := s.Spent(ctx, "r")
	if err != nil || p != 157 || c != 28 {
		t.Fatalf("Spent: %d %d %v", p, c, err)
	}
	by, err := s.SpentBySlice(ctx, "r")
	if err != nil || by["s1"] != 175 || by["s2"] != 10 {
		t.Fatalf("SpentBySlice: %v %v", by, err)
	}
	if p, c, _ := s.Spent(ctx, "other"); p != 0 || c != 0 {
		t.Fatalf("Spent of empty run: %d %d", p, c)
	}
	created, err := s.AddSubGoal(ctx, "r", ledger.SubGoal{Name: "said-total", What: "says the total", Judged: true, Params: map[string]string{"total": "number"}})
	if err != nil || !created {
		t.Fatalf("AddSubGoal: %v %v", created, err)
	}
	created, _ = s.AddSubGoal(ctx, "r", ledger.SubGoal{Name: "said-total", What: "other"})
	gs, err := s.SubGoals(ctx, "r")
	if created || err != nil || len(gs) != 1 || gs[0].What != "says the total" || gs[0].Params["total"] != "number" {
		t.Fatalf("SubGoals: %v %+v %v", created, gs, err)
	}
}

func BenchmarkJournal(b *testing.B) {
	s, ctx := newStore(b)
	mkRun(b, s, "r")
	if err := s.PutBuckets(ctx, "r", mkBuckets(1, 1<<30)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("n%d", i)
		if _, err := s.Journal(ctx, "r", sc(name, "b0", name), "s1", "w1", []string{"code-" + name}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTopRefusals: the lessons later rounds are told are the most frequent
// refusal kinds, in an order that does not depend on insertion order.
func TestTopRefusals(t *testing.T) {
	s, ctx := newStore(t)
	mkRun(t, s, "r1")
	mkRun(t, s, "r2")
	refuse := func(run, gate, code, msg string) {
		if err := s.Refuse(ctx, run, "sl", "b1", gate, code, msg); err != nil {
			t.Fatal(err)
		}
	}
	refuse("r1", "static", "bad-args", "z: needs order_id")
	refuse("r1", "solvable", "check-failed", "order not cancelled")
	refuse("r1", "static", "bad-args", "a: needs reason")
	refuse("r1", "grounding", "ungrounded", "#W9 handed")
	refuse("r1", "static", "bad-args", "m: needs email")
	refuse("r1", "solvable", "check-failed", "order still pending")
	refuse("r2", "ready", "not-ready", "other run")
	got, err := s.TopRefusals(ctx, "r1", 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []ledger.Reason{
		{Gate: "static", Code: "bad-args", Count: 3, Example: "a: needs reason"},
		{Gate: "solvable", Code: "check-failed", Count: 2, Example: "order not cancelled"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("lesson %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestRaiseReopensOnlyUnclaimedOpenOrDone(t *testing.T) {
	s, ctx := newStore(t)
	mkRun(t, s, "r")
	if err := s.PutBuckets(ctx, "r", mkBuckets(3, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s1", BucketIDs: []string{"b0", "b1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Journal(ctx, "r", sc("a", "b0", "one"), "s1", "w", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishSlice(ctx, "r", "s1", ledger.SliceDone, "w", "", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fold(ctx, "r", 1); err != nil { // b0 done, b1 blocked after its one attempt
		t.Fatal(err)
	}
	if err := s.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s2", BucketIDs: []string{"b2"}}); err != nil {
		t.Fatal(err)
	}
	spec := plan.Spec{Capacity: 5, Sized: 1, TopUp: 40}
	if err := s.Raise(ctx, "r", ledger.Raising{ID: "b0", Want: 3, Spec: spec}); err != nil {
		t.Fatalf("raising a done bucket: %v", err)
	}
	for _, id := range []string{"b1", "b2", "nope"} { // blocked, claimed, missing
		if err := s.Raise(ctx, "r", ledger.Raising{ID: id, Want: 3, Spec: spec}); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("raising %s: %v, want ErrNotFound", id, err)
		}
	}
	bs, _ := s.Buckets(ctx, "r")
	if b := bs[0]; b.State != ledger.BucketOpen || b.Want != 3 || b.Spec.TopUp != 40 || b.Spec.Capacity != 5 || b.Outstanding() != 2 {
		t.Fatalf("raised bucket: %+v", b)
	}
	if bs[1].State != ledger.BucketBlocked || bs[2].State != ledger.BucketClaimed {
		t.Fatalf("others changed: %+v %+v", bs[1], bs[2])
	}
	// A bucket that is not open cannot be claimed again.
	if err := s.ClaimSlice(ctx, ledger.Slice{RunID: "r", ID: "s3", BucketIDs: []string{"b1"}}); err == nil {
		t.Fatal("a blocked bucket was claimed")
	}
}

func TestBudgetAndContracts(t *testing.T) {
	s, ctx := newStore(t)
	r := ledger.Run{ID: "r", Agent: "shop", ContractSHA256: "c", WorldSHA256: "w", Model: "m", Asked: 1, BudgetTokens: 100}
	if _, err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Budget(ctx, r); err != nil || b.Reached() || b.Spent != 0 || b.Cap != 100 {
		t.Fatalf("fresh budget: %+v %v", b, err)
	}
	if err := s.Spend(ctx, "r", "s1", "w", "m", 60, 40, "ok"); err != nil {
		t.Fatal(err)
	}
	if b, err := s.Budget(ctx, r); err != nil || !b.Reached() || b.Spent != 100 {
		t.Fatalf("spent budget: %+v %v", b, err)
	}
	uncapped := r
	uncapped.BudgetTokens = 0
	if b, err := s.Budget(ctx, uncapped); err != nil || b.Reached() {
		t.Fatalf("a run without a cap reached it: %+v %v", b, err)
	}

	files := map[string][]byte{"contract.yaml": []byte("agent: shop\n"), "world/seed/users.jsonl": []byte("{\"id\": 1}\n")}
	for range 2 {
		if err := s.SaveContract(ctx, "abc", "shop", files); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ContractFiles(ctx, "abc")
	if err != nil || len(got) != 2 || string(got["world/seed/users.jsonl"]) != "{\"id\": 1}\n" {
		t.Fatalf("ContractFiles: %v %q", err, got)
	}
	if _, err := s.ContractFiles(ctx, "nope"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("unknown contract: %v", err)
	}
}
