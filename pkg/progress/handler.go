package progress

import (
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/canvas"
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
}

// Handler serves the progress API and page:
//
//	GET /               the live page
//	GET /api/runs       every run, newest first, with proved/asked counts
//	GET /api/runs/{id}  one run in detail
//	GET /healthz        200 "ok" while Options.Health passes, else 503
//
// Any method other than GET or HEAD is refused with 405: the surface is
// read-only. With Options.Token every endpoint but /healthz (which says
// nothing but ok) requires the token.
func Handler(store *canvas.Store, opts Options) http.Handler {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	h := &handler{store: store, opts: opts}
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
	store *canvas.Store
	opts  Options
}

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
	w.Header().Set("Referrer-Policy", "no-referrer") // the page's URL may carry the token
	w.Write(page)
}

// RunSummary is one entry of GET /api/runs.
type RunSummary struct {
	canvas.Run
	Proved int `json:"proved"`
}

// RunDetail is GET /api/runs/{id}.
type RunDetail struct {
	Run          canvas.Run                `json:"run"`
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

func (h *handler) runs(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
	defer cancel()
	runs, err := h.store.Runs(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := struct {
		Runs []RunSummary `json:"runs"`
	}{Runs: []RunSummary{}}
	for _, run := range runs {
		n, err := h.store.Count(ctx, run.ID)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		out.Runs = append(out.Runs, RunSummary{Run: run, Proved: n})
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) run(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
	defer cancel()
	d, err := Detail(ctx, h.store, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// Detail reads one run's progress from the ledger.
func Detail(ctx context.Context, store *canvas.Store, id string) (RunDetail, error) {
	run, err := store.Run(ctx, id)
	if err != nil {
		return RunDetail{}, err
	}
	d := RunDetail{Run: run, Asked: run.Asked, UseCases: []UseCaseDetail{}, Buckets: []BucketDetail{}, Slices: []SliceDetail{},
		BucketStates: map[string]int{}, SliceStates: map[string]int{}, Refusals: map[string]map[string]int{}}
	if d.Proved, err = store.Count(ctx, id); err != nil {
		return RunDetail{}, err
	}
	buckets, err := store.Buckets(ctx, id)
	if err != nil {
		return RunDetail{}, err
	}
	ucIndex := map[string]int{}
	for _, b := range buckets {
		d.Buckets = append(d.Buckets, BucketDetail{ID: b.ID, UseCase: b.UseCase, Cell: b.Cell, Angle: b.Angle, Outcome: b.Outcome,
			Want: b.Want, Done: b.Done, State: b.State, Attempts: b.Attempts, Notes: b.Notes})
		d.BucketStates[b.State]++
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
		d.Slices = append(d.Slices, SliceDetail{ID: s.ID, Round: s.Round, Kind: s.Kind, State: s.State, Writer: s.Writer,
			Deliveries: s.Deliveries, Reason: s.Reason, Buckets: s.BucketIDs})
		d.SliceStates[s.State]++
	}
	refusals, err := store.Refusals(ctx, id)
	if err != nil {
		return RunDetail{}, err
	}
	for k, n := range refusals {
		gate, code, _ := strings.Cut(k, "/")
		if d.Refusals[gate] == nil {
			d.Refusals[gate] = map[string]int{}
		}
		d.Refusals[gate][code] += n
	}
	m, err := store.Meter(ctx, id)
	if err != nil {
		return RunDetail{}, err
	}
	d.Spend = SpendDetail{PromptTokens: m.PromptTokens, CompletionTokens: m.CompletionTokens, CachedPromptTokens: m.CachedPromptTokens,
		ReasoningTokens: m.ReasoningTokens, CostUSD: m.CostUSD, Priced: m.UnpricedCalls == 0 && m.Calls > 0,
		BudgetTokens: run.BudgetTokens, BudgetUSD: run.BudgetUSD}
	return d, nil
}

func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, canvas.ErrNotFound) {
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
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
