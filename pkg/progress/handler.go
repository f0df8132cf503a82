package progress

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
)

//go:embed page.html
var page []byte

// Options configures Handler.
type Options struct {
	// Token, when set, is required by every endpoint but /healthz: as
	// "Authorization: Bearer <token>", or as ?token=<token> on the URL (how
	// a browser opens the page; the page then sends it as a header).
	Token string
	// Health answers GET /healthz (e.g. a ledger ping); nil: always healthy.
	Health func(context.Context) error
	// Logger receives request errors; default slog.Default().
	Logger *slog.Logger
	// Timeout bounds each ledger read; default 10s.
	Timeout time.Duration
	// StallAfter is how long an unfinished run may go without ledger
	// activity before it is shown stalled; default DefaultStallAfter.
	StallAfter time.Duration
	// LiveWindow: the default run list holds the unfinished runs with
	// activity within it (older ones only in ?all=1); default 24h.
	LiveWindow time.Duration
	// CacheFor is how long one rendered answer serves every request for it;
	// default 1s, negative for none.
	CacheFor time.Duration
}

// Handler serves the progress API and page:
//
//	GET /                    the live page
//	GET /api/runs            the live runs (unfinished, active within
//	                         Options.LiveWindow), newest first, summarised
//	GET /api/runs?all=1      every run, newest first (at most limit=N, 200)
//	GET /api/runs/{id}       one run in detail
//	GET /healthz             200 "ok" while Options.Health passes, else 503
//
// API answers carry an ETag and answer If-None-Match with 304, so a page
// polling every second moves bytes only when a run moved. Any method other
// than GET or HEAD is refused with 405: the surface is read-only. With
// Options.Token every endpoint but /healthz (which says nothing but ok)
// requires the token.
func Handler(store *ledger.Store, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.StallAfter <= 0 {
		opts.StallAfter = DefaultStallAfter
	}
	if opts.LiveWindow <= 0 {
		opts.LiveWindow = 24 * time.Hour
	}
	if opts.CacheFor == 0 {
		opts.CacheFor = time.Second
	}
	h := &handler{store: store, opts: opts, answers: newAnswers(opts.CacheFor, 256), recent: &recentStats{ttl: opts.CacheFor}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page)
	mux.HandleFunc("GET /api/runs", h.runs)
	mux.HandleFunc("GET /api/runs/{id}", h.run)
	var guarded http.Handler = mux
	if opts.Token != "" {
		guarded = RequireToken(opts.Token, mux)
	}
	top := http.NewServeMux()
	top.HandleFunc("GET /healthz", h.healthz)
	top.Handle("/", guarded)
	return readOnly(top)
}

func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	if h.opts.Health != nil {
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
		defer cancel()
		if err := h.opts.Health(ctx); err != nil {
			h.opts.Logger.Warn("progress: unhealthy", "err", err)
			writeError(w, http.StatusServiceUnavailable, "the ledger cannot be reached")
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write([]byte("ok\n"))
}

// readOnly refuses every method but GET and HEAD before routing, so no route
// added later can accept a write by accident.
func readOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "the progress API is read-only")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// RequireToken lets a request through only with "Authorization: Bearer
// <token>" or ?token=<token>, compared in constant time. An empty token
// refuses everything: an endpoint must never be open because a setting was
// left out.
func RequireToken(token string, next http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.URL.Query().Get("token"))
		if h := r.Header.Get("Authorization"); h != "" || len(got) == 0 {
			got = []byte(strings.TrimPrefix(h, "Bearer "))
			if !strings.HasPrefix(h, "Bearer ") {
				got = nil
			}
		}
		if token == "" || subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="suitegen"`)
			writeError(w, http.StatusUnauthorized, "a valid bearer token is required")
			return
		}
		next.ServeHTTP(w, r)
	})
}

type handler struct {
	store   *ledger.Store
	opts    Options
	answers *answers
	recent  *recentStats
}

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
	w.Header().Set("Referrer-Policy", "no-referrer") // the page's URL may carry the token
	w.Write(page)
}

// RunDetail is GET /api/runs/{id}.
type RunDetail struct {
	Run ledger.Run `json:"run"`
	// Summary is what the run list shows of it: status, throughput, ETA.
	Summary RunSummary `json:"summary"`
	// DeadReasons are why its dead slices died, most frequent first.
	DeadReasons  []ledger.DeadReason       `json:"dead_reasons"`
	Proved       int                       `json:"proved"`
	Asked        int                       `json:"asked"`
	UseCases     []UseCaseDetail           `json:"use_cases"`
	Buckets      []BucketDetail            `json:"buckets"`
	BucketStates map[string]int            `json:"bucket_states"`
	Slices       []SliceDetail             `json:"slices"`
	SliceStates  map[string]int            `json:"slice_states"`
	Refusals     map[string]map[string]int `json:"refusals"` // gate -> code -> n
	Spend        SpendDetail               `json:"spend"`
}

// UseCaseDetail sums a use case's buckets.
type UseCaseDetail struct {
	UseCase string   `json:"use_case"`
	Done    int      `json:"done"`
	Want    int      `json:"want"`
	Buckets []string `json:"buckets"` // ids, in ord order
}

// BucketDetail is what the page shows of a bucket.
type BucketDetail struct {
	ID       string `json:"id"`
	UseCase  string `json:"use_case"`
	Cell     string `json:"cell"`
	Angle    string `json:"angle"`
	Outcome  string `json:"outcome"`
	Want     int    `json:"want"`
	Done     int    `json:"done"`
	State    string `json:"state"`
	Attempts int    `json:"attempts"`
	Notes    string `json:"notes,omitempty"`
}

// SliceDetail is what the page shows of a slice.
type SliceDetail struct {
	ID         string   `json:"id"`
	Round      int      `json:"round"`
	Kind       string   `json:"kind"`
	State      string   `json:"state"`
	Writer     string   `json:"writer,omitempty"`
	Deliveries int      `json:"deliveries"`
	Reason     string   `json:"reason,omitempty"`
	Buckets    []string `json:"buckets"`
}

// SpendDetail is the run's meter: tokens, and dollars at the model's price
// (Priced is false while some calls had no known price).
type SpendDetail struct {
	PromptTokens       int64   `json:"prompt_tokens"`
	CompletionTokens   int64   `json:"completion_tokens"`
	CachedPromptTokens int64   `json:"cached_prompt_tokens"`
	ReasoningTokens    int64   `json:"reasoning_tokens"`
	CostUSD            float64 `json:"cost_usd"`
	Priced             bool    `json:"priced"`
	BudgetTokens       int64   `json:"budget_tokens"`
	BudgetUSD          float64 `json:"budget_usd"`
}

// RunList is GET /api/runs.
type RunList struct {
	Runs []RunSummary `json:"runs"`
	// All says whether Runs is every run (?all=1) or the live ones.
	All bool `json:"all"`
	// Hidden counts the runs the list leaves out.
	Hidden int `json:"hidden"`
}

const (
	liveLimit   = 100
	listDefault = 200
	listMax     = 1000
)

func (h *handler) runs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	all := q.Get("all") == "1" || q.Get("all") == "true"
	limit := listDefault
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > listMax {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit must be 1 to %d", listMax))
			return
		}
		limit = n
	}
	key := "runs"
	if all {
		key = "runs?all&limit=" + strconv.Itoa(limit)
	}
	h.serve(w, r, key, func(ctx context.Context) (any, error) {
		l, rs, err := list(ctx, h.store, all, limit, h.opts)
		if err == nil && !all {
			h.recent.put(rs, time.Now())
		}
		return l, err
	})
}

// list reads the run list, every run (all, at most limit) or the live ones,
// and returns it with the figures it read.
func list(ctx context.Context, store *ledger.Store, all bool, limit int, opts Options) (RunList, []ledger.RunStats, error) {
	out := RunList{Runs: []RunSummary{}, All: all}
	q := ledger.StatsQuery{Limit: limit}
	if !all {
		q = ledger.StatsQuery{Limit: liveLimit, Since: time.Now().Add(-opts.LiveWindow)}
	}
	rs, err := store.Stats(ctx, q)
	if err != nil {
		return out, nil, err
	}
	for _, r := range rs {
		if !all && !r.State.Live() {
			continue
		}
		out.Runs = append(out.Runs, Summarize(r, opts.StallAfter))
	}
	total, err := store.RunCount(ctx)
	if err != nil {
		return out, nil, err
	}
	out.Hidden = max(0, total-len(out.Runs))
	return out, rs, nil
}

func (h *handler) run(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	h.serve(w, r, "run/"+id, func(ctx context.Context) (any, error) {
		// A page asks for the live list and the selected run's detail each
		// poll: the list's read of the run's figures serves both.
		st, ok := h.recent.get(id, time.Now())
		if !ok {
			var err error
			if st, err = h.store.RunStats(ctx, id); err != nil {
				return nil, err
			}
		}
		return detail(ctx, h.store, st, h.opts.StallAfter)
	})
}

// recentStats keeps the figures of the last live-list read for one cache
// period, by run.
type recentStats struct {
	ttl time.Duration
	mu  sync.Mutex
	at  time.Time
	m   map[string]ledger.RunStats
}

func (c *recentStats) put(rs []ledger.RunStats, now time.Time) {
	if c.ttl <= 0 {
		return
	}
	m := make(map[string]ledger.RunStats, len(rs))
	for _, r := range rs {
		m[r.ID] = r
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.m = now, m
}

func (c *recentStats) get(id string, now time.Time) (ledger.RunStats, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ttl <= 0 || now.Sub(c.at) >= c.ttl {
		return ledger.RunStats{}, false
	}
	r, ok := c.m[id]
	return r, ok
}

// serve answers from the cache when it holds key, else computes the answer
// within the read timeout and keeps it.
func (h *handler) serve(w http.ResponseWriter, r *http.Request, key string, compute func(context.Context) (any, error)) {
	now := time.Now()
	a, ok := h.answers.get(key, now)
	if !ok {
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
		defer cancel()
		v, err := compute(ctx)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if a, err = render(v, now); err != nil {
			h.fail(w, r, err)
			return
		}
		h.answers.put(key, a)
	}
	send(w, r, a)
}

// Detail reads one run's progress from the ledger; stallAfter is as
// Options.StallAfter.
func Detail(ctx context.Context, store *ledger.Store, id string, stallAfter time.Duration) (RunDetail, error) {
	st, err := store.RunStats(ctx, id)
	if err != nil {
		return RunDetail{}, err
	}
	return detail(ctx, store, st, stallAfter)
}

// detail reads the rest of a run's detail beside its figures st.
func detail(ctx context.Context, store *ledger.Store, st ledger.RunStats, stallAfter time.Duration) (RunDetail, error) {
	id, run := st.ID, st.Run
	var err error
	d := RunDetail{Run: run, Summary: Summarize(st, stallAfter), Asked: run.Asked, Proved: st.Proved,
		UseCases: []UseCaseDetail{}, Buckets: []BucketDetail{}, Slices: []SliceDetail{},
		BucketStates: map[string]int{}, SliceStates: map[string]int{}, Refusals: map[string]map[string]int{}}
	if d.DeadReasons, err = store.DeadReasons(ctx, id, 20); err != nil {
		return RunDetail{}, err
	}
	buckets, err := store.Buckets(ctx, id)
	if err != nil {
		return RunDetail{}, err
	}
	ucIndex := map[string]int{}
	for _, b := range buckets {
		d.Buckets = append(d.Buckets, BucketDetail{ID: b.ID, UseCase: b.UseCase, Cell: b.Cell, Angle: b.Angle, Outcome: b.Outcome,
			Want: b.Want, Done: b.Done, State: string(b.State), Attempts: b.Attempts, Notes: b.Notes})
		d.BucketStates[string(b.State)]++
		i, ok := ucIndex[b.UseCase]
		if !ok {
			i = len(d.UseCases)
			ucIndex[b.UseCase] = i
			d.UseCases = append(d.UseCases, UseCaseDetail{UseCase: b.UseCase, Buckets: []string{}})
		}
		uc := &d.UseCases[i]
		uc.Want += b.Want
		uc.Done += min(b.Done, b.Want) // surplus in one bucket does not fill another
		uc.Buckets = append(uc.Buckets, b.ID)
	}
	sort.SliceStable(d.UseCases, func(i, j int) bool { return d.UseCases[i].UseCase < d.UseCases[j].UseCase })
	slices, err := store.Slices(ctx, id, -1)
	if err != nil {
		return RunDetail{}, err
	}
	for _, s := range slices {
		d.Slices = append(d.Slices, SliceDetail{ID: s.ID, Round: s.Round, Kind: string(s.Kind), State: string(s.State), Writer: s.Writer,
			Deliveries: s.Deliveries, Reason: s.Reason, Buckets: s.BucketIDs})
		d.SliceStates[string(s.State)]++
	}
	for gc, n := range st.Refusals {
		if d.Refusals[gc.Gate] == nil {
			d.Refusals[gc.Gate] = map[string]int{}
		}
		d.Refusals[gc.Gate][gc.Code] += n
	}
	d.Spend = SpendDetail{PromptTokens: st.PromptTokens, CompletionTokens: st.CompletionTokens, CachedPromptTokens: st.CachedPromptTokens,
		ReasoningTokens: st.ReasoningTokens, CostUSD: st.CostUSD, Priced: st.UnpricedCalls == 0 && st.Calls > 0,
		BudgetTokens: run.BudgetTokens, BudgetUSD: run.BudgetUSD}
	return d, nil
}

func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ledger.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no such run")
		return
	}
	h.opts.Logger.Error("progress: read ledger", "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "could not read the ledger")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
