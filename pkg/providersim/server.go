package providersim

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/suitegen/suitegen/pkg/model"
)

// Fault kinds as they appear in Stats.Faults.
const (
	FaultRateLimit = "rate_limit_429"
	FaultError500  = "error_500"
	FaultMalformed = "malformed_json"
	FaultUnknown   = "unknown_tool"
	FaultRecord    = "unknown_record"
	FaultStall     = "stall"
)

// DefaultStallFor is how long a stall fault holds a request when StallFor is unset.
const DefaultStallFor = 10 * time.Second

// Faults are per-request probabilities (0..1) of injected failures.
type Faults struct {
	RateLimit429  float64       // refuse with 429 although the quota allows
	Error500      float64       // answer 500
	MalformedJSON float64       // tool call arguments that are not JSON (replies with tool calls only)
	UnknownTool   float64       // a tool call to a tool the request did not offer (replies with tool calls only)
	UnknownRecord float64       // a try_calls naming a record that does not exist (replies rehearsing calls only)
	Stall         float64       // hold the request StallFor before answering
	StallFor      time.Duration // default DefaultStallFor
}

// Config configures a simulator.
type Config struct {
	Addr string // listen address for Start; default 127.0.0.1:0
	// RPM and TPM are the quota; 0 means unlimited (and no headers for it).
	RPM, TPM int
	// Latency is the mean answer delay; LatencyJitter spreads it uniformly by ±.
	Latency       time.Duration
	LatencyJitter time.Duration
	// Window is the quota window and the length of a "minute" in
	// Stats.PerMinute (default one minute; tests shorten it).
	Window time.Duration
	Faults Faults
	Model  model.Client // answers the requests; required
	Seed   int64        // seeds fault injection and latency jitter
	Logger *slog.Logger
}

// Flags binds the flag-settable fields to fs (for `suitegen provider-sim`).
func (c *Config) Flags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8089", "listen address")
	fs.IntVar(&c.RPM, "rpm", 0, "requests per minute (0: unlimited)")
	fs.IntVar(&c.TPM, "tpm", 0, "tokens per minute, counted as prompt + max_tokens (0: unlimited)")
	fs.DurationVar(&c.Latency, "latency", 0, "mean answer latency")
	fs.DurationVar(&c.LatencyJitter, "latency-jitter", 0, "uniform ± spread of the latency")
	fs.DurationVar(&c.Window, "window", time.Minute, "the quota window: --rpm and --tpm are per window (shorten it to measure quotas quickly)")
	fs.Int64Var(&c.Seed, "seed", 1, "seed of fault injection and jitter")
	fs.Float64Var(&c.Faults.RateLimit429, "fault-429", 0, "probability of an injected 429")
	fs.Float64Var(&c.Faults.Error500, "fault-500", 0, "probability of an injected 500")
	fs.Float64Var(&c.Faults.MalformedJSON, "fault-malformed", 0, "probability of malformed tool arguments")
	fs.Float64Var(&c.Faults.UnknownTool, "fault-unknown-tool", 0, "probability of a call to an unknown tool")
	fs.Float64Var(&c.Faults.UnknownRecord, "fault-unknown-record", 0, "probability that a try_calls names a record that does not exist")
	fs.Float64Var(&c.Faults.Stall, "fault-stall", 0, "probability of a stalled answer")
	fs.DurationVar(&c.Faults.StallFor, "stall-for", DefaultStallFor, "how long a stalled answer stalls")
}

func (c *Config) validate() error {
	if c.Model == nil {
		return errors.New("providersim: Config.Model is required")
	}
	if c.Addr == "" {
		c.Addr = "127.0.0.1:0"
	}
	if c.RPM < 0 || c.TPM < 0 {
		return fmt.Errorf("providersim: Config.RPM %d / Config.TPM %d must not be negative", c.RPM, c.TPM)
	}
	if c.Latency < 0 || c.LatencyJitter < 0 {
		return errors.New("providersim: Config.Latency and Config.LatencyJitter must not be negative")
	}
	if c.Window == 0 {
		c.Window = time.Minute
	}
	if c.Window < 0 {
		return fmt.Errorf("providersim: Config.Window %s is negative", c.Window)
	}
	f := &c.Faults
	for name, p := range map[string]float64{
		"RateLimit429": f.RateLimit429, "Error500": f.Error500, "MalformedJSON": f.MalformedJSON,
		"UnknownTool": f.UnknownTool, "UnknownRecord": f.UnknownRecord, "Stall": f.Stall,
	} {
		if p < 0 || p > 1 || math.IsNaN(p) {
			return fmt.Errorf("providersim: Config.Faults.%s %v is not a probability", name, p)
		}
	}
	if f.StallFor == 0 {
		f.StallFor = DefaultStallFor
	}
	if f.StallFor < 0 {
		return fmt.Errorf("providersim: Config.Faults.StallFor %s is negative", f.StallFor)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Minute is one window of Stats.PerMinute. QuotaTokens is what the admitted
// requests counted against the tokens quota (prompt + max_tokens, at
// admission), which is what utilization of a TPM quota is measured in; Tokens
// is the usage billed on the answers.
type Minute struct {
	Calls       int64 `json:"calls"`
	Admitted    int64 `json:"admitted"`
	Tokens      int64 `json:"tokens"`
	QuotaTokens int64 `json:"quota_tokens"`
	RateLimited int64 `json:"rate_limited"`
}

// Stats is what GET /stats reports. Calls counts every chat completion
// request received; Admitted those the quota let through, and QuotaTokens
// what they counted against it; Tokens the usage billed on answered ones; RateLimited
// the 429s (quota and injected); Errors every other failing answer.
type Stats struct {
	Calls       int64            `json:"calls"`
	Admitted    int64            `json:"admitted"`
	Tokens      int64            `json:"tokens"`
	QuotaTokens int64            `json:"quota_tokens"`
	RateLimited int64            `json:"rate_limited"`
	Errors      int64            `json:"errors"`
	Faults      map[string]int64 `json:"faults"`
	PerMinute   []Minute         `json:"per_minute"`
}

// Server is a running or runnable simulator.
type Server struct {
	cfg   Config
	quota *quota
	start time.Time

	rngMu sync.Mutex
	rng   *rand.Rand

	mu    sync.Mutex
	stats Stats

	done chan struct{}
	err  error
}

// New validates cfg and makes a server.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Server{
		cfg:   cfg,
		quota: &quota{rpm: cfg.RPM, tpm: cfg.TPM, window: cfg.Window},
		start: time.Now(),
		rng:   rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)),
		stats: Stats{Faults: map[string]int64{}},
	}, nil
}

// Start listens on cfg.Addr and serves in the background until ctx ends;
// Wait reports how serving ended.
func (s *Server) Start(ctx context.Context) (addr string, err error) {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return "", fmt.Errorf("providersim: listen %s: %w", s.cfg.Addr, err)
	}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.err = s.Serve(ctx, ln)
	}()
	return ln.Addr().String(), nil
}

// Wait blocks until a server started by Start has shut down.
func (s *Server) Wait() error {
	if s.done == nil {
		return errors.New("providersim: not started")
	}
	<-s.done
	return s.err
}

// Serve answers on ln until ctx ends, then shuts down; in-flight requests
// (stalls included) see their context cancelled.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.Handler(),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 10 * time.Second,
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	err := hs.Serve(ln)
	<-stopped
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("providersim: serve: %w", err)
}

// Handler is the simulator's HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.complete)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.Stats())
	})
	return mux
}

// Stats is a snapshot of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.stats
	out.Faults = make(map[string]int64, len(s.stats.Faults))
	for k, v := range s.stats.Faults {
		out.Faults[k] = v
	}
	n := s.minuteIndex(time.Now()) + 1
	out.PerMinute = make([]Minute, max(n, len(s.stats.PerMinute)))
	copy(out.PerMinute, s.stats.PerMinute)
	return out
}

func (s *Server) minuteIndex(t time.Time) int {
	return int(t.Sub(s.start) / s.cfg.Window)
}

// count updates the totals and the current minute under one lock.
func (s *Server) count(f func(total *Stats, minute *Minute)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.minuteIndex(time.Now())
	for len(s.stats.PerMinute) <= i {
		s.stats.PerMinute = append(s.stats.PerMinute, Minute{})
	}
	f(&s.stats, &s.stats.PerMinute[i])
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": s.cfg.Model.Name(), "object": "model", "created": s.start.Unix(), "owned_by": "providersim",
		}},
	})
}

// draws are one request's fault dice, thrown together so each request uses
// the seeded generator the same way whatever happens to it.
type draws struct {
	rateLimit, error500, stall, malformed, unknown, record bool
	latency                                                time.Duration
}

func (s *Server) throw() draws {
	s.rngMu.Lock()
	defer s.rngMu.Unlock()
	f := s.cfg.Faults
	d := draws{
		rateLimit: s.rng.Float64() < f.RateLimit429,
		error500:  s.rng.Float64() < f.Error500,
		stall:     s.rng.Float64() < f.Stall,
		malformed: s.rng.Float64() < f.MalformedJSON,
		unknown:   s.rng.Float64() < f.UnknownTool,
		record:    s.rng.Float64() < f.UnknownRecord,
	}
	d.latency = s.cfg.Latency
	if j := s.cfg.LatencyJitter; j > 0 {
		d.latency += time.Duration(s.rng.Int64N(int64(2*j)+1)) - j
	}
	d.latency = max(d.latency, 0)
	return d
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	s.count(func(t *Stats, m *Minute) { t.Calls++; m.Calls++ })
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "reading the body: "+err.Error())
		return
	}
	req, err := parseRequest(body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	d := s.throw()
	prompt := PromptTokens(req)
	now := time.Now()

	if d.rateLimit {
		s.count(func(t *Stats, _ *Minute) { t.Faults[FaultRateLimit]++ })
		s.refuse(w, time.Second, s.quota.current(now), "injected rate limit")
		return
	}
	ok, retry, st := s.quota.admit(now, prompt+req.MaxTokens)
	if !ok {
		s.refuse(w, retry, st, fmt.Sprintf("Rate limit reached: limit %d requests and %d tokens per %s, requested %d tokens",
			s.cfg.RPM, s.cfg.TPM, s.cfg.Window, prompt+req.MaxTokens))
		return
	}
	s.count(func(t *Stats, m *Minute) {
		t.Admitted++
		m.Admitted++
		t.QuotaTokens += int64(prompt + req.MaxTokens)
		m.QuotaTokens += int64(prompt + req.MaxTokens)
	})
	s.quota.setHeaders(w.Header(), st)
	if d.error500 {
		s.count(func(t *Stats, _ *Minute) { t.Faults[FaultError500]++ })
		s.fail(w, http.StatusInternalServerError, "server_error", "injected server error")
		return
	}
	if d.stall {
		s.count(func(t *Stats, _ *Minute) { t.Faults[FaultStall]++ })
		if !sleep(r.Context(), s.cfg.Faults.StallFor) {
			s.count(func(t *Stats, _ *Minute) { t.Errors++ })
			return // the client went away; nobody reads an answer
		}
	}
	if !sleep(r.Context(), d.latency) {
		s.count(func(t *Stats, _ *Minute) { t.Errors++ })
		return
	}
	resp, err := s.cfg.Model.Complete(r.Context(), req)
	if err != nil && !errors.Is(err, model.ErrEmptyReply) {
		s.cfg.Logger.Warn("providersim: the model failed", "err", err)
		s.fail(w, http.StatusInternalServerError, "server_error", "the model failed: "+err.Error())
		return
	}
	msg := resp.Message
	msg.Role = model.RoleAssistant
	if len(msg.ToolCalls) > 0 {
		msg.ToolCalls = append([]model.ToolCall(nil), msg.ToolCalls...)
		if d.malformed {
			s.count(func(t *Stats, _ *Minute) { t.Faults[FaultMalformed]++ })
			msg.ToolCalls[0].Arguments = `{"` + msg.ToolCalls[0].Arguments // never valid JSON
		}
		if d.unknown {
			s.count(func(t *Stats, _ *Minute) { t.Faults[FaultUnknown]++ })
			msg.ToolCalls[0].Name = unknownName(req.Tools, msg.ToolCalls[0].Name)
		}
		if d.record && !d.malformed && !d.unknown {
			if args, ok := unknownRecord(msg.ToolCalls[0]); ok {
				s.count(func(t *Stats, _ *Minute) { t.Faults[FaultRecord]++ })
				msg.ToolCalls[0].Arguments = args
			}
		}
	}
	usage := model.Usage{PromptTokens: prompt, CompletionTokens: CompletionTokens(msg)}
	s.count(func(t *Stats, m *Minute) {
		t.Tokens += int64(usage.Total())
		m.Tokens += int64(usage.Total())
	})
	writeJSON(w, http.StatusOK, toWireResponse(req, msg, usage, now))
}

// unknownRecord rewrites a try_calls so its first call names a record that
// does not exist: the first string argument holding a digit (an id, a code)
// gets a suffix. ok is false for other calls or when nothing fits.
func unknownRecord(tc model.ToolCall) (string, bool) {
	if tc.Name != "try_calls" {
		return "", false
	}
	var a map[string]any
	if json.Unmarshal([]byte(tc.Arguments), &a) != nil {
		return "", false
	}
	calls, _ := a["calls"].([]any)
	for _, c := range calls {
		call, _ := c.(map[string]any)
		args, _ := call["args"].(map[string]any)
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v, ok := args[k].(string); ok && strings.ContainsAny(v, "0123456789") {
				args[k] = v + "-NOSUCH"
				b, err := json.Marshal(a)
				return string(b), err == nil
			}
		}
	}
	return "", false
}

func unknownName(tools []model.ToolSpec, name string) string {
	cand := "not_a_tool_" + name
	for taken := true; taken; {
		taken = false
		for _, t := range tools {
			if t.Name == cand {
				cand += "_"
				taken = true
			}
		}
	}
	return cand
}

func toWireResponse(req model.Request, m model.Message, u model.Usage, now time.Time) openai.ChatCompletionResponse {
	wm := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.Content}
	finish := openai.FinishReasonStop
	for i, tc := range m.ToolCalls {
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(i)
		}
		wm.ToolCalls = append(wm.ToolCalls, openai.ToolCall{
			ID: id, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
		})
		finish = openai.FinishReasonToolCalls
	}
	return openai.ChatCompletionResponse{
		ID:      fmt.Sprintf("chatcmpl-sim-%d", now.UnixNano()),
		Object:  "chat.completion",
		Created: now.Unix(),
		Model:   req.Model,
		Choices: []openai.ChatCompletionChoice{{Index: 0, Message: wm, FinishReason: finish}},
		Usage: openai.Usage{
			PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.Total(),
		},
	}
}

// refuse answers 429 with retry-after (seconds, rounded up) and retry-after-ms.
func (s *Server) refuse(w http.ResponseWriter, retry time.Duration, st state, msg string) {
	s.count(func(t *Stats, m *Minute) { t.RateLimited++; m.RateLimited++ })
	retry = max(retry, time.Millisecond)
	s.quota.setHeaders(w.Header(), st)
	w.Header().Set("retry-after", strconv.FormatInt(int64(math.Ceil(retry.Seconds())), 10))
	w.Header().Set("retry-after-ms", strconv.FormatInt(retry.Milliseconds()+1, 10))
	writeError(w, http.StatusTooManyRequests, "rate_limit_exceeded", msg)
}

func (s *Server) fail(w http.ResponseWriter, status int, kind, msg string) {
	s.count(func(t *Stats, _ *Minute) { t.Errors++ })
	writeError(w, status, kind, msg)
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": kind, "code": kind}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
