package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Limiter is the cluster-wide provider quota as the OpenAI client sees it;
// *ratelimit.Limiter implements it.
type Limiter interface {
	// Acquire blocks until one request and tokens tokens may be spent.
	Acquire(ctx context.Context, tokens int) (Permit, error)
	// Observe corrects the quota from the provider's x-ratelimit-* headers.
	Observe(ctx context.Context, lim Limits) error
	// Pause makes every sharer wait d (the provider said 429).
	Pause(ctx context.Context, d time.Duration) error
}

// Permit is one acquired reservation; Settle says what the call really cost.
type Permit interface {
	Settle(ctx context.Context, actual int) error
}

// Defaults for OpenAIConfig.
const (
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	DefaultCallTimeout   = 2 * time.Minute
	// DefaultRetryAfter is the wait assumed for a 429 that names none.
	DefaultRetryAfter = 10 * time.Second
)

// ErrTimeout is returned when one call exceeded OpenAIConfig.Timeout (the
// caller's own context was still live); it is retryable.
var ErrTimeout = errors.New("model: call timed out")

// HTTPError is a provider answer with a failing status other than 429.
type HTTPError struct {
	Status  int
	Message string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("provider answered %d: %s", e.Status, e.Message)
}

// OpenAIConfig configures an OpenAI-compatible client.
type OpenAIConfig struct {
	BaseURL string // default DefaultOpenAIBaseURL
	APIKey  string // may be empty for local servers; never logged or put in errors
	Model   string // required; Request.Model overrides it per call
	// Timeout is the deadline of one call (default 2 min).
	Timeout time.Duration
	// HTTPClient is copied and its transport wrapped to read rate-limit headers.
	HTTPClient *http.Client
	// Limiter, when set, is asked before every call and told what it cost.
	Limiter Limiter
	// DefaultRetryAfter is used for a 429 without retry-after or reset headers.
	DefaultRetryAfter time.Duration
	Logger            *slog.Logger
}

// OpenAI is a Client for any OpenAI-compatible chat completions endpoint. It
// makes exactly one HTTP request per Complete: retries are the caller's, so
// every 429 reaches the shared limiter.
type OpenAI struct {
	cfg    OpenAIConfig
	client *openai.Client
}

// NewOpenAI validates cfg and builds the client.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	if cfg.Model == "" {
		return nil, errors.New("model: OpenAIConfig.Model is required")
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultOpenAIBaseURL
	}
	if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return nil, fmt.Errorf("model: OpenAIConfig.BaseURL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultCallTimeout
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("model: OpenAIConfig.Timeout %s is negative", cfg.Timeout)
	}
	if cfg.DefaultRetryAfter == 0 {
		cfg.DefaultRetryAfter = DefaultRetryAfter
	}
	if cfg.DefaultRetryAfter < 0 {
		return nil, fmt.Errorf("model: OpenAIConfig.DefaultRetryAfter %s is negative", cfg.DefaultRetryAfter)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		hc = &c
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &headerCapture{base: base}

	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = hc
	return &OpenAI{cfg: cfg, client: openai.NewClientWithConfig(oc)}, nil
}

// Name is the configured model.
func (o *OpenAI) Name() string { return o.cfg.Model }

// Complete makes one chat completion call. Errors: *RateLimitError for 429,
// ErrTimeout, *HTTPError, ErrEmptyReply (with the Response still filled for
// its usage), or the transport's error; classify with IsRetryable.
func (o *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	wire, err := toWire(req, o.cfg.Model)
	if err != nil {
		return Response{}, err
	}
	var permit Permit
	estimate := EstimateTokens(req)
	if o.cfg.Limiter != nil {
		permit, err = o.cfg.Limiter.Acquire(ctx, estimate)
		if err != nil {
			return Response{}, fmt.Errorf("model: waiting for provider quota: %w", err)
		}
	}

	capt := &callCapture{}
	callCtx, cancel := context.WithTimeout(context.WithValue(ctx, captureKey{}, capt), o.cfg.Timeout)
	out, callErr := o.client.CreateChatCompletion(callCtx, wire)
	cancel()
	limits := parseLimits(capt.header)

	//lint:ignore SA1019 max_tokens is what every OpenAI-compatible server (vLLM, Ollama, llama.cpp) reads
	resp, spent, err := o.interpret(ctx, callCtx, out, callErr, capt, limits, estimate, wire.MaxTokens)
	o.account(ctx, permit, limits, spent, err)
	return resp, err
}

// interpret turns the go-openai outcome into ours and says how many tokens the
// call should be charged against the quota.
func (o *OpenAI) interpret(ctx, callCtx context.Context, out openai.ChatCompletionResponse, callErr error,
	capt *callCapture, limits Limits, estimate, maxTokens int) (Response, int, error) {
	if callErr != nil {
		if capt.status == http.StatusTooManyRequests {
			return Response{}, 0, &RateLimitError{
				RetryAfter: retryAfter(capt.header, time.Now(), o.cfg.DefaultRetryAfter),
				Limits:     limits,
				Message:    o.redact(apiMessage(callErr)),
			}
		}
		if capt.status >= 400 {
			// A refused request is not charged by providers.
			return Response{}, 0, &HTTPError{Status: capt.status, Message: o.redact(apiMessage(callErr))}
		}
		if ctx.Err() != nil {
			return Response{}, estimate, fmt.Errorf("model: call abandoned: %w", ctx.Err())
		}
		if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
			return Response{}, estimate, fmt.Errorf("%w after %s", ErrTimeout, o.cfg.Timeout)
		}
		// The request may or may not have been admitted: charge the estimate.
		return Response{}, estimate, &transportError{msg: o.redact(callErr.Error()), err: callErr}
	}
	resp := Response{
		Usage:  Usage{PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens},
		Limits: limits,
	}
	// The provider counted this call against its tokens/min window at
	// admission as prompt + max_tokens, whatever was written: charging the
	// shared bucket only the usage would hand back tokens the provider still
	// counts, and the next window's calls would be refused.
	spent := resp.Usage.PromptTokens + max(maxTokens, resp.Usage.CompletionTokens)
	if maxTokens <= 0 {
		spent = resp.Usage.Total()
	}
	if resp.Usage.Total() == 0 {
		spent = estimate // a server that reports no usage is charged what we reserved
	}
	if len(out.Choices) == 0 {
		return resp, spent, ErrEmptyReply
	}
	m := out.Choices[0].Message
	resp.Message = Message{Role: RoleAssistant, Content: m.Content}
	for _, tc := range m.ToolCalls {
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, ToolCall{
			ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments,
		})
	}
	if resp.Message.Content == "" && len(resp.Message.ToolCalls) == 0 {
		return resp, spent, ErrEmptyReply
	}
	return resp, spent, nil
}

// account tells the limiter what happened, even when ctx was cancelled: an
// unsettled permit would hold its tokens until it expires.
func (o *OpenAI) account(ctx context.Context, permit Permit, limits Limits, spent int, callErr error) {
	if o.cfg.Limiter == nil {
		return
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if rl, ok := IsRateLimited(callErr); ok {
		if err := o.cfg.Limiter.Pause(bg, rl.RetryAfter); err != nil {
			o.cfg.Logger.Warn("model: pausing the provider quota failed", "err", err)
		}
	}
	if limits.HaveRequests || limits.HaveTokens {
		if err := o.cfg.Limiter.Observe(bg, limits); err != nil {
			o.cfg.Logger.Warn("model: observing provider limits failed", "err", err)
		}
	}
	if permit != nil {
		if err := permit.Settle(bg, spent); err != nil {
			o.cfg.Logger.Warn("model: settling provider quota failed", "err", err)
		}
	}
}

func (o *OpenAI) redact(s string) string {
	if o.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, o.cfg.APIKey, "[redacted]")
}

// transportError keeps the cause for classification while its text is redacted.
type transportError struct {
	msg string
	err error
}

func (e *transportError) Error() string { return "model: provider call failed: " + e.msg }
func (e *transportError) Unwrap() error { return e.err }

func apiMessage(err error) string {
	var api *openai.APIError
	if errors.As(err, &api) {
		return api.Message
	}
	var req *openai.RequestError
	if errors.As(err, &req) {
		body := string(req.Body)
		if len(body) > 300 {
			body = body[:300] + "…"
		}
		return strings.TrimSpace(body)
	}
	return err.Error()
}

// IsRetryable reports whether asking again later may succeed: rate limits,
// timeouts, 5xx (and 408/409), and broken connections. The caller's own
// cancellation is not retryable.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := IsRateLimited(err); ok {
		return true
	}
	if errors.Is(err, ErrTimeout) {
		return true
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status >= 500 || he.Status == http.StatusRequestTimeout || he.Status == http.StatusConflict
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var te *transportError
	if !errors.As(err, &te) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, new(*net.OpError))
}

func toWire(req Request, defaultModel string) (openai.ChatCompletionRequest, error) {
	//lint:ignore SA1019 max_tokens is what every OpenAI-compatible server (vLLM, Ollama, llama.cpp) reads
	w := openai.ChatCompletionRequest{Model: req.Model, MaxTokens: req.MaxTokens}
	if w.Model == "" {
		w.Model = defaultModel
	}
	if req.Seed != 0 {
		s := int(req.Seed)
		w.Seed = &s
	}
	for i, m := range req.Messages {
		wm := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
		switch m.Role {
		case RoleTool:
			if m.ToolCallID == "" {
				return w, fmt.Errorf("model: message %d: tool message without tool_call_id", i)
			}
			wm.ToolCallID = m.ToolCallID
		case RoleAssistant:
			for _, tc := range m.ToolCalls {
				wm.ToolCalls = append(wm.ToolCalls, openai.ToolCall{
					ID: tc.ID, Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
				})
			}
		}
		w.Messages = append(w.Messages, wm)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, openai.Tool{
			Type:     openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return w, nil
}

// headerCapture records, per call, the status and headers of the response, so
// a 429's retry-after survives go-openai's error path (which drops headers).
type headerCapture struct{ base http.RoundTripper }

type captureKey struct{}

type callCapture struct {
	status int
	header http.Header
}

func (h *headerCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.base.RoundTrip(req)
	if err == nil {
		if c, ok := req.Context().Value(captureKey{}).(*callCapture); ok {
			c.status = resp.StatusCode
			c.header = resp.Header.Clone()
		}
	}
	return resp, err
}

// parseLimits reads x-ratelimit-* headers; anything unparsable is "not said".
func parseLimits(h http.Header) Limits {
	var l Limits
	if h == nil {
		return l
	}
	var ok1, ok2 bool
	l.LimitRequests, ok1 = headerInt(h, "x-ratelimit-limit-requests")
	l.RemainingRequests, ok2 = headerInt(h, "x-ratelimit-remaining-requests")
	l.HaveRequests = ok1 || ok2
	l.ResetRequests, _ = parseReset(h.Get("x-ratelimit-reset-requests"))
	l.LimitTokens, ok1 = headerInt(h, "x-ratelimit-limit-tokens")
	l.RemainingTokens, ok2 = headerInt(h, "x-ratelimit-remaining-tokens")
	l.HaveTokens = ok1 || ok2
	l.ResetTokens, _ = parseReset(h.Get("x-ratelimit-reset-tokens"))
	return l
}

func headerInt(h http.Header, name string) (int, bool) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || f < 0 || math.IsNaN(f) || f > math.MaxInt32 {
			return 0, false
		}
		return int(f), true
	}
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	return int(n), true
}

// maxWait bounds anything a provider header can make us wait.
const maxWait = time.Hour

// parseReset reads a reset header: a Go-style duration ("6m0s", "1s",
// "20ms", "1h2m3.5s") or plain seconds.
func parseReset(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return 0, false
		}
		return min(d, maxWait), true
	}
	return parseSeconds(v)
}

func parseSeconds(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if f > maxWait.Seconds() {
		return maxWait, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// retryAfter is how long a 429 asks us to wait: retry-after-ms, retry-after
// (seconds or an HTTP date), the longer reset, or def.
func retryAfter(h http.Header, now time.Time, def time.Duration) time.Duration {
	if h == nil {
		return def
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 0 && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return min(time.Duration(f*float64(time.Millisecond)), maxWait)
		}
	}
	if v := h.Get("retry-after"); v != "" {
		if d, ok := parseSeconds(v); ok {
			return d
		}
		if t, err := http.ParseTime(v); err == nil {
			return min(max(t.Sub(now), 0), maxWait)
		}
	}
	rr, ok1 := parseReset(h.Get("x-ratelimit-reset-requests"))
	rt, ok2 := parseReset(h.Get("x-ratelimit-reset-tokens"))
	if ok1 || ok2 {
		if d := max(rr, rt); d > 0 {
			return d
		}
	}
	return def
}
