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

	// APIKey, when set, is the only key accepted: OpenAI-style routes want it
	// as a bearer token, Azure routes in the api-key header; anything else is
	// answered 401 as the providers answer it.
	APIKey string
	// Models, when set, are the only models served on /v1 (others are 404
	// model_not_found); Deployments, when set, are the only Azure deployments
	// (others are 404 DeploymentNotFound), each named for the model it runs.
	Models      []string
	Deployments map[string]string
	// ReasoningModels are models that behave as OpenAI's reasoning models
	// (besides the o1, o3, o4 and gpt-5 families, recognised by name):
	// max_tokens, temperature and top_p are refused with 400, the reply
	// allowance is max_completion_tokens, and reasoning tokens are billed.
	ReasoningModels []string
	// APIVersions are the Azure api-version values accepted (default: any
	// non-empty one); a request without one is 404, as Azure answers it.
	APIVersions []string
	// ToolCallsInContent makes the simulator answer as an open-weight server
	// whose chat template has no tool support: tool calls are written into
	// the reply's content, without ids ("hermes": <tool_call> tags; "json":
	// the bare call object), and tool_choice is ignored.
	ToolCallsInContent string
	// TokenScale multiplies the simulator's token counts (default 1), to
	// stand for a provider whose tokenizer counts more or less than
	// model.CountTokens.
	TokenScale float64
	// NoPromptCache turns off the simulated prompt cache (on by default: a
	// prompt of 1024 tokens or more whose prefix, up to a message boundary,
	// was seen in the last ten minutes reports that prefix as
	// cached_tokens, in 128-token steps, as OpenAI does).
	NoPromptCache bool
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
	fs.StringVar(&c.APIKey, "api-key", "", "the only API key accepted (bearer on /v1, api-key header on Azure routes); empty: any")
	fs.Func("models", "comma-separated models served on /v1 (default: any)", func(v string) error {
		c.Models = splitList(v)
		return nil
	})
	fs.Func("deployments", "comma-separated Azure deployments served, each DEPLOYMENT or DEPLOYMENT=MODEL (default: any)", func(v string) error {
		c.Deployments = map[string]string{}
		for _, d := range splitList(v) {
			name, m, ok := strings.Cut(d, "=")
			if !ok {
				m = name
			}
			c.Deployments[name] = m
		}
		return nil
	})
	fs.Func("reasoning-models", "comma-separated models that behave as reasoning models besides o1/o3/o4/gpt-5", func(v string) error {
		c.ReasoningModels = splitList(v)
		return nil
	})
	fs.StringVar(&c.ToolCallsInContent, "tool-calls-in-content", "", "answer as an open-weight server without tool support: hermes (<tool_call> tags) or json")
	fs.Float64Var(&c.TokenScale, "token-scale", 1, "multiply token counts (a tokenizer counting more or less than suitegen's estimate)")
	fs.BoolVar(&c.NoPromptCache, "no-prompt-cache", false, "never report cached prompt tokens")
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
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
	switch c.ToolCallsInContent {
	case "", "hermes", "json":
	default:
		return fmt.Errorf("providersim: Config.ToolCallsInContent %q is not hermes or json", c.ToolCallsInContent)
	}
	if c.TokenScale == 0 {
		c.TokenScale = 1
	}
	if c.TokenScale < 0 || math.IsNaN(c.TokenScale) || math.IsInf(c.TokenScale, 0) {
		return fmt.Errorf("providersim: Config.TokenScale %v is not a positive factor", c.TokenScale)
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
	// Usage billed on answered requests by kind (Tokens is prompt plus
	// completion; cached prompt and reasoning tokens are inside them).
	PromptTokens       int64 `json:"prompt_tokens"`
	CompletionTokens   int64 `json:"completion_tokens"`
	CachedPromptTokens int64 `json:"cached_prompt_tokens"`
	ReasoningTokens    int64 `json:"reasoning_tokens"`
	// Refusals of the request rather than the quota (all in Errors too):
	// a key not accepted, a model or deployment not served, a parameter
	// the model does not take.
	Unauthorized int64 `json:"unauthorized"`
	NotFound     int64 `json:"not_found"`
	Unsupported  int64 `json:"unsupported"`
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

	cache *promptCache

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
		cache: newPromptCache(),
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
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, dialectOpenAI) })
	mux.HandleFunc("POST /openai/deployments/{deployment}/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, dialectAzure) })
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /v1/models/{model}", s.modelInfo)
	mux.HandleFunc("GET /openai/models", s.azureModels)
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

func (s *Server) modelEntry(id string) map[string]any {
	return map[string]any{"id": id, "object": "model", "created": s.start.Unix(), "owned_by": "providersim"}
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r, dialectOpenAI) {
		return
	}
	names := s.cfg.Models
	if len(names) == 0 {
		names = []string{s.cfg.Model.Name()}
	}
	var data []map[string]any
	for _, n := range names {
		data = append(data, s.modelEntry(n))
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) modelInfo(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r, dialectOpenAI) {
		return
	}
	id := r.PathValue("model")
	if !s.serves(id) {
		s.unknownModel(w, id)
		return
	}
	writeJSON(w, http.StatusOK, s.modelEntry(id))
}

func (s *Server) azureModels(w http.ResponseWriter, r *http.Request) {
	if !s.azureVersion(w, r) || !s.authorized(w, r, dialectAzure) {
		return
	}
	var data []map[string]any
	for _, m := range s.cfg.Deployments {
		data = append(data, s.modelEntry(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
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

func (s *Server) complete(w http.ResponseWriter, r *http.Request, d dialect) {
	s.count(func(t *Stats, m *Minute) { t.Calls++; m.Calls++ })
	if d == dialectAzure && !s.azureVersion(w, r) {
		return
	}
	if !s.authorized(w, r, d) {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", "reading the body: "+err.Error())
		return
	}
	name := ""
	if d == dialectAzure {
		dep := r.PathValue("deployment")
		m, ok := s.deployment(dep)
		if !ok {
			s.count(func(t *Stats, _ *Minute) { t.Errors++; t.NotFound++ })
			writeAzureError(w, http.StatusNotFound, "DeploymentNotFound", "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.")
			return
		}
		name = m
	}
	req, err := parseRequest(body)
	if err != nil {
		s.fail(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	if d == dialectOpenAI {
		name = req.Model
		if !s.serves(name) {
			s.count(func(t *Stats, _ *Minute) { t.Errors++ })
			s.unknownModel(w, name)
			return
		}
	}
	reasoning := s.reasoning(name)
	if reasoning {
		if refusal := refuseForReasoning(req.wire); refusal != nil {
			s.count(func(t *Stats, _ *Minute) { t.Errors++; t.Unsupported++ })
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": refusal})
			return
		}
	}
	dr := s.throw()
	prompt := s.scale(PromptTokens(req.Request))
	allowance := req.allowance(DefaultMaxOutput)
	charge := prompt + allowance
	now := time.Now()

	if dr.rateLimit {
		s.count(func(t *Stats, _ *Minute) { t.Faults[FaultRateLimit]++ })
		s.refuse(w, time.Second, s.quota.current(now), d, "injected rate limit")
		return
	}
	ok, retry, st := s.quota.admit(now, charge)
	if !ok {
		s.refuse(w, retry, st, d, fmt.Sprintf("Rate limit reached: limit %d requests and %d tokens per %s, requested %d tokens",
			s.cfg.RPM, s.cfg.TPM, s.cfg.Window, charge))
		return
	}
	s.count(func(t *Stats, m *Minute) {
		t.Admitted++
		m.Admitted++
		t.QuotaTokens += int64(charge)
		m.QuotaTokens += int64(charge)
	})
	s.quota.setHeaders(w.Header(), st, d)
	if dr.error500 {
		s.count(func(t *Stats, _ *Minute) { t.Faults[FaultError500]++ })
		s.fail(w, http.StatusInternalServerError, "server_error", "injected server error")
		return
	}
	if dr.stall {
		s.count(func(t *Stats, _ *Minute) { t.Faults[FaultStall]++ })
		if !sleep(r.Context(), s.cfg.Faults.StallFor) {
			s.count(func(t *Stats, _ *Minute) { t.Errors++ })
			return // the client went away; nobody reads an answer
		}
	}
	if !sleep(r.Context(), dr.latency) {
		s.count(func(t *Stats, _ *Minute) { t.Errors++ })
		return
	}
	resp, err := s.cfg.Model.Complete(r.Context(), req.Request)
	if err != nil && !errors.Is(err, model.ErrEmptyReply) {
		s.cfg.Logger.Warn("providersim: the model failed", "err", err)
		s.fail(w, http.StatusInternalServerError, "server_error", "the model failed: "+err.Error())
		return
	}
	msg := resp.Message
	msg.Role = model.RoleAssistant
	if len(msg.ToolCalls) > 0 {
		msg.ToolCalls = append([]model.ToolCall(nil), msg.ToolCalls...)
		if dr.malformed {
			s.count(func(t *Stats, _ *Minute) { t.Faults[FaultMalformed]++ })
			msg.ToolCalls[0].Arguments = `{"` + msg.ToolCalls[0].Arguments // never valid JSON
		}
		if dr.unknown {
			s.count(func(t *Stats, _ *Minute) { t.Faults[FaultUnknown]++ })
			msg.ToolCalls[0].Name = unknownName(req.Tools, msg.ToolCalls[0].Name)
		}
		if dr.record && !dr.malformed && !dr.unknown {
			if args, ok := unknownRecord(msg.ToolCalls[0]); ok {
				s.count(func(t *Stats, _ *Minute) { t.Faults[FaultRecord]++ })
				msg.ToolCalls[0].Arguments = args
			}
		}
	}
	visible := s.scale(CompletionTokens(msg))
	u := model.Usage{PromptTokens: prompt, CompletionTokens: min(visible, max(allowance, 1))}
	if reasoning {
		// Thinking before the reply, inside the allowance: billed as output.
		u.ReasoningTokens = min(visible, max(allowance-u.CompletionTokens, 0))
		u.CompletionTokens += u.ReasoningTokens
	}
	if !s.cfg.NoPromptCache {
		u.CachedPromptTokens = s.cache.cached(req.Request, s.scale, now)
	}
	s.count(func(t *Stats, m *Minute) {
		t.Tokens += int64(u.Total())
		m.Tokens += int64(u.Total())
		t.PromptTokens += int64(u.PromptTokens)
		t.CompletionTokens += int64(u.CompletionTokens)
		t.CachedPromptTokens += int64(u.CachedPromptTokens)
		t.ReasoningTokens += int64(u.ReasoningTokens)
	})
	out := toWireResponse(req.Request, msg, u, now)
	if s.cfg.ToolCallsInContent != "" && len(msg.ToolCalls) > 0 {
		inContent(&out, msg, s.cfg.ToolCallsInContent)
	}
	writeJSON(w, http.StatusOK, out)
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
			PromptTokensDetails:     &openai.PromptTokensDetails{CachedTokens: u.CachedPromptTokens},
			CompletionTokensDetails: &openai.CompletionTokensDetails{ReasoningTokens: u.ReasoningTokens},
		},
	}
}

// refuse answers 429 with retry-after (seconds, rounded up) and retry-after-ms.
func (s *Server) refuse(w http.ResponseWriter, retry time.Duration, st state, d dialect, msg string) {
	s.count(func(t *Stats, m *Minute) { t.RateLimited++; m.RateLimited++ })
	retry = max(retry, time.Millisecond)
	s.quota.setHeaders(w.Header(), st, d)
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
