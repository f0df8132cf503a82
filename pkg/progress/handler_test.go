package progress_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// ledger makes run "run-a" (asked 10) with 4 of 10 proved, two use cases,
// a finished and an in-flight slice, refusals and spend.
func openLedger(t *testing.T) *ledger.Store {
	t.Helper()
	ctx := context.Background()
	s := ledger.New(testenv.Postgres(t))
	if _, err := s.CreateRun(ctx, ledger.Run{ID: "run-a", Agent: "shop", Model: "builtin", Asked: 10, Seed: 1, BudgetTokens: 50000}); err != nil {
		t.Fatal(err)
	}
	bs := []ledger.Bucket{
		{Bucket: plan.Bucket{ID: "b0", Ord: 0, Theme: "t", Cell: "cancel-order", UseCase: "cancel-order", Angle: "plain", Outcome: "succeed", Overlay: "none", Kind: "happy", Want: 3}},
		{Bucket: plan.Bucket{ID: "b1", Ord: 1, Theme: "t", Cell: "cancel-order", UseCase: "cancel-order", Angle: "shipped", Outcome: "refuse", Overlay: "none", Kind: "edge", Want: 3}},
		{Bucket: plan.Bucket{ID: "b2", Ord: 2, Theme: "t", Cell: "track-order", UseCase: "track-order", Angle: "plain", Outcome: "succeed", Overlay: "none", Kind: "happy", Want: 4}},
	}
	if err := s.PutBuckets(ctx, "run-a", bs); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimSlice(ctx, ledger.Slice{RunID: "run-a", ID: "s1", BucketIDs: []string{"b0", "b2"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.ClaimSlice(ctx, ledger.Slice{RunID: "run-a", ID: "s2", BucketIDs: []string{"b1"}}); err != nil {
		t.Fatal(err)
	}
	for i, b := range []string{"b0", "b0", "b0", "b2"} {
		sc := &scenario.Scenario{Name: fmt.Sprintf("sc-%d", i), UseCase: map[string]string{"b0": "cancel-order", "b2": "track-order"}[b],
			Branch: fmt.Sprint(i), Bucket: b, Instruction: "x"}
		if _, err := s.Journal(ctx, "run-a", sc, "s1", "w1", nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.FinishSlice(ctx, "run-a", "s1", "done", "w1", "", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fold(ctx, "run-a", 3); err != nil {
		t.Fatal(err)
	}
	_ = s.Refuse(ctx, "run-a", "s1", "b2", "ready", "empty", "no rows")
	_ = s.Refuse(ctx, "run-a", "s1", "b2", "ready", "empty", "no rows")
	_ = s.Spend(ctx, "run-a", "s1", "w1", "builtin", 1200, 300, "ok")
	_ = s.SpendCall(ctx, ledger.Call{Run: "run-a", Slice: "s1", Writer: "w1", Model: "gpt-x", CostUSD: 0.25, Priced: true})
	return s
}

func get(t *testing.T, srv *httptest.Server, path string, v any) *http.Response {
	t.Helper()
	resp, err := srv.Client().Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if v != nil {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return resp
}

func TestAPI(t *testing.T) {
	srv := httptest.NewServer(progress.Handler(openLedger(t), progress.Options{}))
	defer srv.Close()

	var list progress.RunList
	if resp := get(t, srv, "/api/runs", &list); resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("runs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if len(list.Runs) != 1 || list.Runs[0].ID != "run-a" || list.Runs[0].Proved != 4 || list.Runs[0].Asked != 10 ||
		list.Runs[0].Status != "planned" || list.Runs[0].SpentTokens != 1500 || list.Runs[0].Refused != 2 || list.All || list.Hidden != 0 {
		t.Fatalf("runs: %+v", list)
	}

	var d progress.RunDetail
	if resp := get(t, srv, "/api/runs/run-a", &d); resp.StatusCode != 200 {
		t.Fatalf("run: %d", resp.StatusCode)
	}
	if d.Proved != 4 || d.Asked != 10 || d.Run.ID != "run-a" {
		t.Fatalf("counts: %+v", d)
	}
	if len(d.UseCases) != 2 || d.UseCases[0].UseCase != "cancel-order" || d.UseCases[0].Done != 3 || d.UseCases[0].Want != 6 ||
		d.UseCases[1].Done != 1 || d.UseCases[1].Want != 4 || fmt.Sprint(d.UseCases[0].Buckets) != "[b0 b1]" {
		t.Fatalf("use cases: %+v", d.UseCases)
	}
	if len(d.Buckets) != 3 || d.Buckets[0].State != "done" || d.Buckets[0].Done != 3 || d.Buckets[1].State != "claimed" ||
		d.Buckets[2].State != "open" || d.Buckets[2].Attempts != 1 {
		t.Fatalf("buckets: %+v", d.Buckets)
	}
	if d.BucketStates["done"] != 1 || d.BucketStates["claimed"] != 1 || d.BucketStates["open"] != 1 {
		t.Fatalf("bucket states: %v", d.BucketStates)
	}
	if len(d.Slices) != 2 || d.Slices[0].State != "done" || d.Slices[1].State != "published" || d.SliceStates["done"] != 1 {
		t.Fatalf("slices: %+v", d.Slices)
	}
	if d.Refusals["ready"]["empty"] != 2 || d.Spend.PromptTokens != 1200 || d.Spend.CompletionTokens != 300 || d.Spend.BudgetTokens != 50000 || d.Spend.CostUSD != 0.25 || d.Spend.Priced {
		t.Fatalf("refusals/spend: %v %+v", d.Refusals, d.Spend)
	}
	if d.Summary.ID != "run-a" || d.Summary.Status != "planned" || d.Summary.Proved != 4 || len(d.DeadReasons) != 0 {
		t.Fatalf("summary: %+v dead %v", d.Summary, d.DeadReasons)
	}

	var e map[string]string
	if resp := get(t, srv, "/api/runs/nope", &e); resp.StatusCode != 404 || e["error"] == "" {
		t.Fatalf("missing run: %d %v", resp.StatusCode, e)
	}
	if resp := get(t, srv, "/api/elsewhere", nil); resp.StatusCode != 404 {
		t.Fatalf("unknown path: %d", resp.StatusCode)
	}
}

func TestReadOnly(t *testing.T) {
	srv := httptest.NewServer(progress.Handler(openLedger(t), progress.Options{Token: "secret"}))
	defer srv.Close()
	for _, method := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		for _, path := range []string{"/", "/api/runs", "/api/runs/run-a"} {
			req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer secret") // a token does not make it writable
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("%s %s: %d allow=%q", method, path, resp.StatusCode, resp.Header.Get("Allow"))
			}
		}
	}
	req, _ := http.NewRequest("HEAD", srv.URL+"/api/runs", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := srv.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD: %v %v", err, resp)
	}
}

func TestPage(t *testing.T) {
	srv := httptest.NewServer(progress.Handler(openLedger(t), progress.Options{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	page := string(body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{"<script>", `getJSON("api/runs"`, "If-None-Match", "timer = setTimeout(refresh, POLL_MS)", "const POLL_MS = 1000", ".bar {", `class: "bar"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "innerHTML") {
		t.Error("page uses innerHTML: API values must go in as text")
	}
}

func TestRequireToken(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	cases := []struct {
		token, header, query string
		want                 int
	}{
		{"secret", "Bearer secret", "", 204},
		{"secret", "", "", 401},
		{"secret", "Bearer wrong", "", 401},
		{"secret", "secret", "", 401},
		{"secret", "Bearer secret2", "", 401},
		{"", "Bearer ", "", 401}, // no token configured: closed, not open
		{"", "", "", 401},
		{"secret", "", "?token=secret", 204},
		{"secret", "", "?token=secre", 401},
		{"", "", "?token=", 401},
	}
	for _, c := range cases {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/x"+c.query, nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		progress.RequireToken(c.token, ok).ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("token %q header %q: %d, want %d", c.token, c.header, rec.Code, c.want)
		}
		if rec.Code == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("401 without WWW-Authenticate")
		}
	}
}

// TestTokenOnEveryEndpoint: with a token, the page and every API path
// answer 401 without it or with a wrong one, 200 with it as a bearer header
// or (how a browser opens the page) as ?token=; /healthz needs none and
// reports the ledger's health.
func TestTokenOnEveryEndpoint(t *testing.T) {
	var unhealthy error
	srv := httptest.NewServer(progress.Handler(openLedger(t), progress.Options{Token: "s3cret",
		Health: func(context.Context) error { return unhealthy }}))
	defer srv.Close()
	do := func(path, auth string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{"/", "/api/runs", "/api/runs/run-a", "/api/runs/nope", "/nowhere"} {
		for _, c := range []struct {
			suffix, auth string
			want         int
		}{
			{"", "", 401},
			{"", "Bearer wrong", 401},
			{"", "s3cret", 401},
			{"", "Bearer s3cret", 0},
			{"?token=s3cret", "", 0},
			{"?token=wrong", "", 401},
			{"?token=s3cret", "Bearer wrong", 401}, // a header given is the one checked
		} {
			got := do(path+c.suffix, c.auth)
			if c.want == 401 && got != 401 || c.want == 0 && got == 401 {
				t.Errorf("GET %s%s (Authorization %q): %d", path, c.suffix, c.auth, got)
			}
		}
	}
	if got := do("/healthz", ""); got != 200 {
		t.Errorf("/healthz without a token: %d, want 200", got)
	}
	unhealthy = context.DeadlineExceeded
	if got := do("/healthz", ""); got != 503 {
		t.Errorf("/healthz with the ledger down: %d, want 503", got)
	}
}
