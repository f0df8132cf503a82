package ledger_test

import (
	"errors"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// TestStats: one snapshot of every figure, each counted from its own table;
// dead slices split by who gave up; a finished run left out once it ended
// before Since, an unfinished one once it has been idle since then.
func TestStats(t *testing.T) {
	s, ctx := newStore(t)
	for _, id := range []string{"r1", "r2", "old", "idle"} {
		mkRun(t, s, id)
	}
	if err := s.PutBuckets(ctx, "r1", mkBuckets(4, 2)); err != nil {
		t.Fatal(err)
	}
	for _, sl := range []ledger.Slice{
		{RunID: "r1", ID: "s1", BucketIDs: []string{"b0"}},
		{RunID: "r1", ID: "s2", BucketIDs: []string{"b1"}},
		{RunID: "r1", ID: "s3", BucketIDs: []string{"b2"}},
	} {
		if err := s.ClaimSlice(ctx, sl); err != nil {
			t.Fatal(err)
		}
	}
	for i, name := range []string{"a", "b", "c"} {
		if _, err := s.Journal(ctx, "r1", sc(name, "b0", name), "s1", "w1", nil); err != nil {
			t.Fatalf("journal %d: %v", i, err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.FinishSlice(ctx, "r1", "s1", ledger.SliceDone, "w1", "", 1))
	must(s.FinishSlice(ctx, "r1", "s2", ledger.SliceDead, "w2", "model: 401 unauthorized", 5))
	must(s.FinishSlice(ctx, "r1", "s3", ledger.SliceDead, "", "dead-lettered after 5 deliveries", 5))
	must(s.Refuse(ctx, "r1", "s1", "b0", "static", "placeholder", "John Doe"))
	must(s.Refuse(ctx, "r1", "s1", "b0", "static", "placeholder", "John Doe"))
	must(s.Refuse(ctx, "r1", "s2", "b1", "solvable", "check-failed", "x"))
	must(s.Spend(ctx, "r1", "s1", "w1", "m", 1000, 200, "ok"))
	must(s.Spend(ctx, "r1", "s2", "w2", "m", 10, 0, "error"))
	must(s.Spend(ctx, "r2", "x", "w1", "m", 5, 5, "ok"))
	for _, to := range []ledger.RunState{ledger.RunWriting, ledger.RunReviewing, ledger.RunDone} {
		_, err := s.MoveRun(ctx, "old", to, "")
		must(err)
	}
	// Back-date what the clock cannot: "old" finished and "idle" last moved
	// two hours ago.
	for _, q := range []string{
		`UPDATE runs SET finished_at = now() - interval '2 hours', created_at = now() - interval '3 hours' WHERE id = 'old'`,
		`UPDATE runs SET created_at = now() - interval '2 hours' WHERE id = 'idle'`,
		`UPDATE scenarios SET created_at = now() - interval '1 hour' WHERE run_id = 'r1' AND name = 'c'`,
	} {
		if _, err := s.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	all, err := s.Stats(ctx, ledger.StatsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]ledger.RunStats{}
	for _, r := range all {
		byID[r.ID] = r
	}
	if len(all) != 4 {
		t.Fatalf("Stats read %d runs, want 4: %v", len(all), byID)
	}
	r1 := byID["r1"]
	if r1.Proved != 3 || r1.ProvedRecent != 2 || r1.Asked != 10 {
		t.Errorf("r1 proved %d (recent %d) asked %d, want 3 (2) 10", r1.Proved, r1.ProvedRecent, r1.Asked)
	}
	if r1.Buckets[string(ledger.BucketClaimed)] != 3 || r1.Buckets[string(ledger.BucketOpen)] != 1 {
		t.Errorf("r1 buckets %v", r1.Buckets)
	}
	if r1.Slices[string(ledger.SliceDone)] != 1 || r1.Slices[string(ledger.SliceDead)] != 2 || r1.Dead[ledger.DeadFailed] != 1 || r1.Dead[ledger.DeadLost] != 1 {
		t.Errorf("r1 slices %v dead %v", r1.Slices, r1.Dead)
	}
	if r1.Refusals[ledger.GateCode{Gate: "static", Code: "placeholder"}] != 2 || r1.Refusals[ledger.GateCode{Gate: "solvable", Code: "check-failed"}] != 1 || len(r1.Refusals) != 2 {
		t.Errorf("r1 refusals %v", r1.Refusals)
	}
	if r1.Calls != 2 || r1.PromptTokens != 1010 || r1.CompletionTokens != 200 {
		t.Errorf("r1 spend %d calls %d+%d tokens", r1.Calls, r1.PromptTokens, r1.CompletionTokens)
	}
	if r1.Idle() > time.Minute || r1.LastActivity.Before(r1.CreatedAt) {
		t.Errorf("r1 idle %s, last activity %s", r1.Idle(), r1.LastActivity)
	}
	if r2 := byID["r2"]; r2.PromptTokens != 5 || r2.Proved != 0 || len(r2.Buckets) != 0 {
		t.Errorf("r2 %+v", r2)
	}
	if idle := byID["idle"]; idle.Idle() < 119*time.Minute {
		t.Errorf("idle run idle for %s, want about 2h", idle.Idle())
	}

	recent, err := s.Stats(ctx, ledger.StatsQuery{Since: r1.At.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recent {
		ids = append(ids, r.ID)
	}
	if len(ids) != 2 || ids[0] != "r2" && ids[0] != "r1" {
		t.Errorf("Since an hour ago: %v, want r1 and r2 (old finished and idle stopped before)", ids)
	}
	if two, err := s.Stats(ctx, ledger.StatsQuery{Limit: 2, Since: r1.At.Add(-3 * time.Hour)}); err != nil || len(two) != 2 {
		t.Errorf("Limit 2: %d runs, %v", len(two), err)
	}

	one, err := s.RunStats(ctx, "r1")
	if err != nil || one.Proved != 3 {
		t.Errorf("RunStats(r1) = %d proved, %v", one.Proved, err)
	}
	if _, err := s.RunStats(ctx, "nope"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("RunStats(nope): %v, want ErrNotFound", err)
	}

	dead, err := s.DeadReasons(ctx, "r1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 2 {
		t.Fatalf("dead reasons %+v", dead)
	}
	for _, d := range dead {
		switch d.Reason {
		case "model: 401 unauthorized":
			if d.Cause != ledger.DeadFailed || d.Count != 1 || d.Writer != "w2" || len(d.Slices) != 1 || d.Slices[0] != "s2" {
				t.Errorf("writer's dead reason %+v", d)
			}
		case "dead-lettered after 5 deliveries":
			if d.Cause != ledger.DeadLost || d.Slices[0] != "s3" {
				t.Errorf("queue's dead reason %+v", d)
			}
		default:
			t.Errorf("unexpected reason %+v", d)
		}
	}
}
