package progress_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// fleet is ledger's run-a (live, with a dead slice) beside three runs the
// default list must treat differently: run-old finished two hours ago,
// run-stalled is "writing" but idle for an hour, run-abandoned has been idle
// for three days.
func fleet(t *testing.T) *ledger.Store {
	t.Helper()
	ctx := context.Background()
	s := openLedger(t)
	if err := s.ClaimSlice(ctx, ledger.Slice{RunID: "run-a", ID: "s3", BucketIDs: []string{"b2"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishSlice(ctx, "run-a", "s3", ledger.SliceDead, "w2", "model: provider answered 401 unauthorized", 5); err != nil {
		t.Fatal(err)
	}
	for _, r := range []ledger.Run{
		{ID: "run-old", Agent: "shop", Model: "builtin", Asked: 5, Seed: 1},
		{ID: "run-stalled", Agent: "rides", Model: "builtin", Asked: 50, Seed: 1, State: ledger.RunWriting},
		{ID: "run-abandoned", Agent: "rides", Model: "builtin", Asked: 50, Seed: 1, State: ledger.RunWriting},
	} {
		if _, err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, to := range []ledger.RunState{ledger.RunWriting, ledger.RunReviewing, ledger.RunDone} {
		if _, err := s.MoveRun(ctx, "run-old", to, ""); err != nil {
			t.Fatal(err)
		}
	}
	// The clock cannot be moved, so the ledger's times are: every other run
	// is older than run-a, which stays the newest (and so the one selected).
	for _, q := range []string{
		`UPDATE runs SET created_at = now() - interval '3 hours', finished_at = now() - interval '2 hours' WHERE id = 'run-old'`,
		`UPDATE runs SET created_at = now() - interval '1 hour' WHERE id = 'run-stalled'`,
		`UPDATE runs SET created_at = now() - interval '3 days' WHERE id = 'run-abandoned'`,
	} {
		if _, err := s.Pool().Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func statuses(l progress.RunList) map[string]string {
	m := map[string]string{}
	for _, r := range l.Runs {
		m[r.ID] = r.Status
	}
	return m
}

func TestLiveList(t *testing.T) {
	srv := httptest.NewServer(progress.Handler(fleet(t), progress.Options{}))
	defer srv.Close()
	var live progress.RunList
	get(t, srv, "/api/runs", &live)
	got := statuses(live)
	if len(got) != 2 || got["run-a"] != string(ledger.RunPlanned) || got["run-stalled"] != progress.StatusStalled || live.Hidden != 2 || live.All {
		t.Fatalf("live list: %v hidden %d all %v; want run-a and run-stalled (stalled), 2 hidden", got, live.Hidden, live.All)
	}
	if live.Runs[0].ID != "run-a" {
		t.Errorf("live list starts with %s, want the newest, run-a", live.Runs[0].ID)
	}
	var all progress.RunList
	get(t, srv, "/api/runs?all=1", &all)
	got = statuses(all)
	if len(got) != 4 || got["run-old"] != string(ledger.RunDone) || got["run-abandoned"] != progress.StatusStalled || all.Hidden != 0 || !all.All {
		t.Fatalf("all: %v hidden %d", got, all.Hidden)
	}
	var two progress.RunList
	get(t, srv, "/api/runs?all=1&limit=2", &two)
	if len(two.Runs) != 2 || two.Hidden != 2 {
		t.Fatalf("limit 2: %d runs, %d hidden", len(two.Runs), two.Hidden)
	}
	for _, bad := range []string{"0", "1001", "x"} {
		if resp := get(t, srv, "/api/runs?all=1&limit="+bad, nil); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("limit=%s: %d, want 400", bad, resp.StatusCode)
		}
	}

	var d progress.RunDetail
	get(t, srv, "/api/runs/run-a", &d)
	if len(d.DeadReasons) != 1 || d.DeadReasons[0].Reason != "model: provider answered 401 unauthorized" ||
		d.DeadReasons[0].Cause != ledger.DeadFailed || d.DeadReasons[0].Writer != "w2" || d.Summary.Dead != 1 {
		t.Fatalf("dead reasons %+v (summary dead %d)", d.DeadReasons, d.Summary.Dead)
	}
	var st progress.RunDetail
	get(t, srv, "/api/runs/run-stalled", &st)
	if st.Summary.Status != progress.StatusStalled || st.Summary.ETASeconds != nil || st.Run.State != ledger.RunWriting {
		t.Fatalf("stalled run: %+v", st.Summary)
	}
}

// An answer carries an ETag; asking again with it gets 304 and no body until
// the run moves.
func TestETag(t *testing.T) {
	store := openLedger(t)
	srv := httptest.NewServer(progress.Handler(store, progress.Options{CacheFor: -1}))
	defer srv.Close()
	ask := func(path, etag string) (int, string, int) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("ETag"), len(b)
	}
	for _, path := range []string{"/api/runs", "/api/runs/run-a"} {
		code, etag, n := ask(path, "")
		if code != 200 || etag == "" || n == 0 {
			t.Fatalf("%s: %d etag %q body %d", path, code, etag, n)
		}
		if code, again, n := ask(path, etag); code != http.StatusNotModified || again != etag || n != 0 {
			t.Errorf("%s with its ETag: %d etag %q body %d bytes, want 304 and no body", path, code, again, n)
		}
		if code, _, _ := ask(path, `"other", W/`+etag); code != http.StatusNotModified {
			t.Errorf("%s with its weak ETag in a list: %d, want 304", path, code)
		}
	}
	_, listTag, _ := ask("/api/runs", "")
	_, runTag, _ := ask("/api/runs/run-a", "")
	sc := &scenario.Scenario{Name: "sc-new", UseCase: "track-order", Branch: "new", Bucket: "b2", Instruction: "x"}
	if _, err := store.Journal(context.Background(), "run-a", sc, "s1", "w1", nil); err != nil {
		t.Fatal(err)
	}
	if code, tag, _ := ask("/api/runs", listTag); code != 200 || tag == listTag {
		t.Errorf("list after a scenario: %d (etag changed: %v), want 200 with a new ETag", code, tag != listTag)
	}
	if code, tag, _ := ask("/api/runs/run-a", runTag); code != 200 || tag == runTag {
		t.Errorf("detail after a scenario: %d (etag changed: %v), want 200 with a new ETag", code, tag != runTag)
	}
}

// One answer serves every request within CacheFor: a run that moves in
// between shows on the next period, and the ledger is read once.
func TestAnswerCache(t *testing.T) {
	store := openLedger(t)
	srv := httptest.NewServer(progress.Handler(store, progress.Options{CacheFor: time.Hour}))
	defer srv.Close()
	var a, b progress.RunList
	get(t, srv, "/api/runs", &a)
	sc := &scenario.Scenario{Name: "sc-new", UseCase: "track-order", Branch: "new", Bucket: "b2", Instruction: "x"}
	if _, err := store.Journal(context.Background(), "run-a", sc, "s1", "w1", nil); err != nil {
		t.Fatal(err)
	}
	get(t, srv, "/api/runs", &b)
	if a.Runs[0].Proved != 4 || b.Runs[0].Proved != 4 {
		t.Errorf("within the cache period: %d then %d proved, want the kept answer (4) twice", a.Runs[0].Proved, b.Runs[0].Proved)
	}
}

func TestSummarize(t *testing.T) {
	at := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	base := ledger.RunStats{Run: ledger.Run{ID: "r", State: ledger.RunWriting, Asked: 100, CreatedAt: at.Add(-time.Hour)},
		At: at, Proved: 40, ProvedRecent: 10, LastActivity: at.Add(-10 * time.Second)}
	s := progress.Summarize(base, 10*time.Minute)
	if s.Status != string(ledger.RunWriting) || s.RatePerMinute != 2 || s.ETASeconds == nil || *s.ETASeconds != 1800 {
		t.Errorf("writing: %+v (eta %v), want 2/min and 30 min left", s, s.ETASeconds)
	}
	young := base
	young.CreatedAt, young.LastActivity = at.Add(-2*time.Minute), at
	if s := progress.Summarize(young, 10*time.Minute); s.RatePerMinute != 5 {
		t.Errorf("a 2-minute-old run with 10 proved: %v/min, want 5 (its life, not 5 minutes)", s.RatePerMinute)
	}
	young.At = at.Add(time.Minute) // a minute later with nothing new: the same answer
	if s := progress.Summarize(young, 10*time.Minute); s.RatePerMinute != 5 {
		t.Errorf("the same young run a minute later: %v/min, want 5 still", s.RatePerMinute)
	}
	idle := base
	idle.LastActivity, idle.ProvedRecent = at.Add(-11*time.Minute), 0
	if s := progress.Summarize(idle, 10*time.Minute); s.Status != progress.StatusStalled || s.ETASeconds != nil || s.State != string(ledger.RunWriting) {
		t.Errorf("idle 11 minutes: %+v, want stalled without an ETA", s)
	}
	done := base
	fin := at.Add(-30 * time.Minute)
	done.State, done.FinishedAt, done.LastActivity = ledger.RunDone, &fin, fin
	if s := progress.Summarize(done, 10*time.Minute); s.Status != string(ledger.RunDone) || s.ETASeconds != nil || s.RatePerMinute != 0 {
		t.Errorf("done an hour later: %+v, want done, no rate or ETA", s)
	}
}
