package model

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const oaiSecret = "sk-live-DO-NOT-LEAK-1234567890"

func newOAIClient(t *testing.T, url string, lim Limiter, timeout time.Duration) *OpenAI {
	t.Helper()
	c, err := NewOpenAI(OpenAIConfig{
		BaseURL: url, APIKey: oaiSecret, Model: "gpt-test", Timeout: timeout, Limiter: lim,
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func oaiOKBody(content string, calls string) string {
	msg := map[string]any{"role": "assistant", "content": content}
	if calls != "" {
		msg["tool_calls"] = json.RawMessage(calls)
	}
	b, _ := json.Marshal(map[string]any{
		"id": "x", "object": "chat.completion", "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
	})
	return string(b)
}

func TestOpenAIMapping(t *testing.T) {
	var body map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("path %s", r.URL.Path)
		}
		auth = r.Header.Get("Authorization")
		_ = json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("x-ratelimit-limit-requests", "500")
		w.Header().Set("x-ratelimit-remaining-requests", "499")
		w.Header().Set("x-ratelimit-reset-requests", "120ms")
		w.Header().Set("x-ratelimit-limit-tokens", "30000")
		w.Header().Set("x-ratelimit-remaining-tokens", "29000")
		w.Header().Set("x-ratelimit-reset-tokens", "2s")
		_, _ = io.WriteString(w, oaiOKBody("", `[{"id":"c9","type":"function","function":{"name":"refund","arguments":"{\"amount\": 5"}}]`))
	}))
	defer srv.Close()
	c := newOAIClient(t, srv.URL+"/v1", nil, time.Second)
	resp, err := c.Complete(context.Background(), Request{
		Messages: []Message{
			{Role: RoleSystem, Content: "be good"},
			{Role: RoleUser, Content: "refund me"},
			{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"id":1}`}}},
			{Role: RoleTool, ToolCallID: "c1", Name: "lookup", Content: `{"ok":true}`},
		},
		Tools:     []ToolSpec{{Name: "refund", Description: "give money back", Parameters: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens: 77, Seed: 42,
	})
	if err != nil {
		t.Fatal(err)
	}
	if auth != "Bearer "+oaiSecret {
		t.Fatalf("authorization header %q", auth)
	}
	if body["model"] != "gpt-test" || body["max_tokens"] != 77.0 || body["seed"] != 42.0 {
		t.Fatalf("request %v", body)
	}
	msgs := body["messages"].([]any)
	asst := msgs[2].(map[string]any)
	tc := asst["tool_calls"].([]any)[0].(map[string]any)
	if tc["id"] != "c1" || tc["type"] != "function" || tc["function"].(map[string]any)["arguments"] != `{"id":1}` {
		t.Fatalf("assistant tool call %v", tc)
	}
	if tool := msgs[3].(map[string]any); tool["role"] != "tool" || tool["tool_call_id"] != "c1" || tool["content"] != `{"ok":true}` {
		t.Fatalf("tool message %v", tool)
	}
	tool := body["tools"].([]any)[0].(map[string]any)
	fn := tool["function"].(map[string]any)
	if tool["type"] != "function" || fn["name"] != "refund" || fn["parameters"].(map[string]any)["type"] != "object" {
		t.Fatalf("tool %v", tool)
	}
	// Malformed arguments come back raw, for the writer to refuse.
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Arguments != `{"amount": 5` || resp.Message.ToolCalls[0].ID != "c9" {
		t.Fatalf("reply %+v", resp.Message)
	}
	if resp.Usage != (Usage{PromptTokens: 11, CompletionTokens: 7}) {
		t.Fatalf("usage %+v", resp.Usage)
	}
	want := Limits{LimitRequests: 500, RemainingRequests: 499, ResetRequests: 120 * time.Millisecond,
		LimitTokens: 30000, RemainingTokens: 29000, ResetTokens: 2 * time.Second, HaveRequests: true, HaveTokens: true}
	if resp.Limits != want {
		t.Fatalf("limits %+v, want %+v", resp.Limits, want)
	}
}

// Every failure must reach the caller after exactly one request: go-openai
// must not retry, and neither may the transport.
func TestOpenAINoRetriesAndClassification(t *testing.T) {
	cases := []struct {
		status    int
		header    map[string]string
		retryable bool
		check     func(t *testing.T, err error)
	}{
		{429, map[string]string{"retry-after": "7", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-limit-tokens": "1000"}, true,
			func(t *testing.T, err error) {
				rl, ok := IsRateLimited(err)
				if !ok || rl.RetryAfter != 7*time.Second || !rl.Limits.HaveTokens || rl.Limits.LimitTokens != 1000 {
					t.Fatalf("%v (%+v)", err, rl)
				}
			}},
		{500, nil, true, nil},
		{503, nil, true, nil},
		{400, nil, false, func(t *testing.T, err error) {
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != 400 {
				t.Fatalf("%v", err)
			}
		}},
		{401, nil, false, nil},
	}
	for _, tc := range cases {
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			for k, v := range tc.header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(tc.status)
			// A hostile or careless server echoing our credentials.
			_, _ = io.WriteString(w, `{"error":{"message":"bad key `+r.Header.Get("Authorization")+`","type":"x"}}`)
		}))
		c := newOAIClient(t, srv.URL, nil, time.Second)
		_, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
		srv.Close()
		if err == nil {
			t.Fatalf("%d: no error", tc.status)
		}
		if hits.Load() != 1 {
			t.Fatalf("%d: %d requests, want exactly 1", tc.status, hits.Load())
		}
		if IsRetryable(err) != tc.retryable {
			t.Fatalf("%d: IsRetryable = %v", tc.status, !tc.retryable)
		}
		if strings.Contains(err.Error(), oaiSecret) {
			t.Fatalf("%d: the API key is in the error: %v", tc.status, err)
		}
		if tc.check != nil {
			tc.check(t, err)
		}
	}
}

func TestOpenAITransportErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newOAIClient(t, "http://"+addr, nil, time.Second)
	_, err = c.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	if err == nil || !IsRetryable(err) || strings.Contains(err.Error(), oaiSecret) {
		t.Fatalf("connection refused: %v (retryable %v)", err, IsRetryable(err))
	}

	// A per-call timeout is retryable; the caller's own cancellation is not.
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	c = newOAIClient(t, srv.URL, nil, 100*time.Millisecond)
	_, err = c.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	if !errors.Is(err, ErrTimeout) || !IsRetryable(err) {
		t.Fatalf("timeout: %v", err)
	}
	c = newOAIClient(t, srv.URL, nil, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.Complete(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	if err == nil || IsRetryable(err) || errors.Is(err, ErrTimeout) {
		t.Fatalf("caller cancelled: %v (retryable %v)", err, IsRetryable(err))
	}
}

func TestOpenAIEmptyReply(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, oaiOKBody("", ""))
	}))
	defer srv.Close()
	c := newOAIClient(t, srv.URL, nil, time.Second)
	resp, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	if !errors.Is(err, ErrEmptyReply) {
		t.Fatalf("got %v, want ErrEmptyReply", err)
	}
	if resp.Usage.Total() != 18 {
		t.Fatalf("usage lost on an empty reply: %+v", resp.Usage)
	}
}

// oaiRecorder is a Limiter that records what the client told it.
type oaiRecorder struct {
	mu       sync.Mutex
	acquired []int
	settled  []int
	paused   []time.Duration
	observed []Limits
}

func (r *oaiRecorder) Acquire(_ context.Context, tokens int) (Permit, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acquired = append(r.acquired, tokens)
	return oaiPermit(func(actual int) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.settled = append(r.settled, actual)
	}), nil
}

func (r *oaiRecorder) Observe(_ context.Context, l Limits) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observed = append(r.observed, l)
	return nil
}

func (r *oaiRecorder) Pause(_ context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paused = append(r.paused, d)
	return nil
}

type oaiPermit func(int)

func (f oaiPermit) Settle(_ context.Context, actual int) error { f(actual); return nil }

func TestOpenAILimiterIsToldEverything(t *testing.T) {
	var refuse atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ratelimit-remaining-tokens", "900")
		if refuse.Load() {
			w.Header().Set("retry-after-ms", "1500")
			w.WriteHeader(429)
			_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"requests"}}`)
			return
		}
		_, _ = io.WriteString(w, oaiOKBody("hello", ""))
	}))
	defer srv.Close()
	rec := &oaiRecorder{}
	c := newOAIClient(t, srv.URL, rec, time.Second)
	req := Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}, MaxTokens: 100}
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	refuse.Store(true)
	_, err := c.Complete(context.Background(), req)
	if rl, ok := IsRateLimited(err); !ok || rl.RetryAfter != 1500*time.Millisecond {
		t.Fatalf("got %v", err)
	}
	est := EstimateTokens(req)
	if len(rec.acquired) != 2 || rec.acquired[0] != est {
		t.Fatalf("acquired %v, want the estimate %d twice", rec.acquired, est)
	}
	// Charged as the provider counts the quota: prompt (11) + max_tokens (100).
	if len(rec.settled) != 2 || rec.settled[0] != 111 || rec.settled[1] != 0 {
		t.Fatalf("settled %v, want [111 0]: prompt + max_tokens, then nothing for a refusal", rec.settled)
	}
	if len(rec.paused) != 1 || rec.paused[0] != 1500*time.Millisecond {
		t.Fatalf("paused %v, want one 1.5s pause for the 429", rec.paused)
	}
	if len(rec.observed) != 2 || rec.observed[0].RemainingTokens != 900 || !rec.observed[0].HaveTokens {
		t.Fatalf("observed %+v", rec.observed)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		h    http.Header
		want time.Duration
	}{
		{h("retry-after", "3"), 3 * time.Second},
		{h("retry-after", "0.5"), 500 * time.Millisecond},
		{h("retry-after-ms", "250", "retry-after", "1"), 250 * time.Millisecond},
		{h("retry-after", now.Add(9*time.Second).Format(http.TimeFormat)), 9 * time.Second},
		{h("retry-after", now.Add(-9*time.Second).Format(http.TimeFormat)), 0},
		{h("x-ratelimit-reset-requests", "6m0s", "x-ratelimit-reset-tokens", "20ms"), 6 * time.Minute},
		{h("retry-after", "soon"), 42 * time.Second},
		{h("retry-after", "99999999"), maxWait},
		{nil, 42 * time.Second},
	} {
		if got := retryAfter(tc.h, now, 42*time.Second); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.h, got, tc.want)
		}
	}
}

func TestParseReset(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"6m0s": 6 * time.Minute, "1s": time.Second, "20ms": 20 * time.Millisecond,
		"59m3.5s": 59*time.Minute + 3500*time.Millisecond, "3h": maxWait, "2": 2 * time.Second, "0.25": 250 * time.Millisecond,
	} {
		if got, ok := parseReset(in); !ok || got != want {
			t.Errorf("parseReset(%q) = %s %v, want %s", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-1s", "later", "NaN"} {
		if _, ok := parseReset(in); ok {
			t.Errorf("parseReset(%q) accepted", in)
		}
	}
}

func FuzzRateLimitHeaders(f *testing.F) {
	f.Add("500", "12", "6m0s", "1s", "7", "")
	f.Add("x", "-3", "20ms", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT", "12.5")
	f.Add("99999999999999999999", "1.5", "-1h", "NaN", "Inf", "-4")
	f.Fuzz(func(t *testing.T, limit, remaining, resetReq, resetTok, retry, retryMS string) {
		h := http.Header{}
		h.Set("x-ratelimit-limit-tokens", limit)
		h.Set("x-ratelimit-remaining-tokens", remaining)
		h.Set("x-ratelimit-limit-requests", limit)
		h.Set("x-ratelimit-reset-requests", resetReq)
		h.Set("x-ratelimit-reset-tokens", resetTok)
		h.Set("retry-after", retry)
		h.Set("retry-after-ms", retryMS)
		l := parseLimits(h)
		if l.LimitTokens < 0 || l.RemainingTokens < 0 || l.LimitRequests < 0 ||
			l.ResetRequests < 0 || l.ResetTokens < 0 || l.ResetRequests > maxWait || l.ResetTokens > maxWait {
			t.Fatalf("nonsense limits %+v", l)
		}
		if d := retryAfter(h, time.Now(), time.Second); d < 0 || d > maxWait {
			t.Fatalf("retry after %s", d)
		}
	})
}

func TestEstimateTokens(t *testing.T) {
	base := Request{Messages: []Message{{Role: RoleUser, Content: strings.Repeat("abcd", 100)}}, MaxTokens: 50}
	n := EstimateTokens(base)
	if n < 150 || n > 170 {
		t.Fatalf("400 chars + 50 max output estimated at %d", n)
	}
	more := base
	more.Tools = []ToolSpec{{Name: "t", Description: strings.Repeat("x", 400)}}
	if EstimateTokens(more) < n+100 {
		t.Fatal("tools are not counted")
	}
	unset := base
	unset.MaxTokens = 0
	if EstimateTokens(unset) != n-50+DefaultOutputTokens {
		t.Fatal("an unset MaxTokens does not reserve the default output")
	}
}

func TestOpenAIConfigValidation(t *testing.T) {
	for name, cfg := range map[string]OpenAIConfig{
		"OpenAIConfig.Model":   {},
		"OpenAIConfig.BaseURL": {Model: "m", BaseURL: "ftp://x"},
		"OpenAIConfig.Timeout": {Model: "m", Timeout: -1},
	} {
		if _, err := NewOpenAI(cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
