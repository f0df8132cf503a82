package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/model"
)

const secret = "sk-live-DO-NOT-LEAK-1234567890"

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = secret
	}
	if cfg.Model == "" {
		cfg.Model = "gpt-test"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Second
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func okBody(content string, calls string, usage map[string]any) string {
	msg := map[string]any{"role": "assistant", "content": content}
	if calls != "" {
		msg["tool_calls"] = json.RawMessage(calls)
	}
	if usage == nil {
		usage = map[string]any{"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
	}
	b, _ := json.Marshal(map[string]any{
		"id": "x", "object": "chat.completion", "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		"usage":   usage,
	})
	return string(b)
}

// wireCall is one request as the server saw it.
type wireCall struct {
	method, path, query string
	header              http.Header
	body                map[string]any
}

// recordingServer answers every chat completion with answer and records the requests.
func recordingServer(t *testing.T, answer string) (*httptest.Server, func() []wireCall) {
	t.Helper()
	var mu sync.Mutex
	var calls []wireCall
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		calls = append(calls, wireCall{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		mu.Unlock()
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []wireCall {
		mu.Lock()
		defer mu.Unlock()
		return append([]wireCall(nil), calls...)
	}
}

func temp(f float32) *float32 { return &f }

func TestOpenAIMapping(t *testing.T) {
	var mu sync.Mutex
	var got []wireCall
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		got = append(got, wireCall{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		mu.Unlock()
		w.Header().Set("x-ratelimit-limit-requests", "500")
		w.Header().Set("x-ratelimit-remaining-requests", "499")
		w.Header().Set("x-ratelimit-reset-requests", "120ms")
		w.Header().Set("x-ratelimit-limit-tokens", "30000")
		w.Header().Set("x-ratelimit-remaining-tokens", "29000")
		w.Header().Set("x-ratelimit-reset-tokens", "2s")
		_, _ = io.WriteString(w, okBody("", `[{"id":"c9","type":"function","function":{"name":"refund","arguments":"{\"amount\": 5"}}]`, nil))
	}))
	defer srv.Close()
	c := newClient(t, Config{BaseURL: srv.URL + "/v1", Profile: ProfileOpenAI, TPM: 90_000})
	if got := c.TokensPerMinute(); got != 90_000 {
		t.Fatalf("before any answer: %d tokens a minute, want the configured 90000", got)
	}
	resp, err := c.Complete(context.Background(), model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "be good"},
			{Role: model.RoleUser, Content: "refund me"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "lookup", Arguments: `{"id":1}`}}},
			{Role: model.RoleTool, ToolCallID: "c1", Name: "lookup", Content: `{"ok":true}`},
		},
		Tools:     []model.ToolSpec{{Name: "refund", Description: "give money back", Parameters: json.RawMessage(`{"type":"object"}`)}},
		MaxTokens: 77, Seed: 42, Temperature: temp(0.5),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.TokensPerMinute(); got != 30_000 {
		t.Fatalf("after an answer naming a lower limit: %d tokens a minute, want 30000", got)
	}
	mu.Lock()
	call := got[0]
	mu.Unlock()
	if call.path != "/v1/chat/completions" || call.header.Get("Authorization") != "Bearer "+secret {
		t.Fatalf("path %s auth %q", call.path, call.header.Get("Authorization"))
	}
	body := call.body
	if body["model"] != "gpt-test" || body["max_tokens"] != 77.0 || body["seed"] != 42.0 || body["temperature"] != 0.5 {
		t.Fatalf("request %v", body)
	}
	if _, ok := body["max_completion_tokens"]; ok {
		t.Fatalf("a chat model got max_completion_tokens: %v", body)
	}
	if _, ok := body["tool_choice"]; ok {
		t.Fatalf("tool_choice sent: %v", body)
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
	if resp.Usage != (model.Usage{PromptTokens: 11, CompletionTokens: 7}) {
		t.Fatalf("usage %+v", resp.Usage)
	}
	want := model.Limits{LimitRequests: 500, RemainingRequests: 499, ResetRequests: 120 * time.Millisecond,
		LimitTokens: 30000, RemainingTokens: 29000, ResetTokens: 2 * time.Second, HaveRequests: true, HaveTokens: true}
	if resp.Limits != want {
		t.Fatalf("limits %+v, want %+v", resp.Limits, want)
	}
	if resp.Timing.Provider <= 0 || resp.Timing.LimiterWait != 0 {
		t.Fatalf("timing %+v", resp.Timing)
	}
}

func TestReasoningModelWire(t *testing.T) {
	usage := map[string]any{"prompt_tokens": 100, "completion_tokens": 60, "total_tokens": 160,
		"prompt_tokens_details":     map[string]any{"cached_tokens": 64},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 40}}
	srv, calls := recordingServer(t, okBody("done", "", usage))
	for _, name := range []string{"o4-mini", "o3", "o1-2024-12-17", "gpt-5-mini", "gpt-5.1"} {
		c := newClient(t, Config{BaseURL: srv.URL + "/v1", Profile: ProfileOpenAI, Model: name, ReasoningEffort: "low"})
		resp, err := c.Complete(context.Background(), model.Request{
			Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 300, Temperature: temp(0.2)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body := calls()[len(calls())-1].body
		if body["max_completion_tokens"] != 300.0 || body["reasoning_effort"] != "low" {
			t.Fatalf("%s: %v", name, body)
		}
		for _, never := range []string{"max_tokens", "temperature", "top_p"} {
			if _, ok := body[never]; ok {
				t.Fatalf("%s: a reasoning model got %s: %v", name, never, body)
			}
		}
		if resp.Usage != (model.Usage{PromptTokens: 100, CompletionTokens: 60, CachedPromptTokens: 64, ReasoningTokens: 40}) {
			t.Fatalf("%s: usage %+v", name, resp.Usage)
		}
	}
	// An unset allowance is still sent: providers count an absent one as
	// the model's whole output limit.
	c := newClient(t, Config{BaseURL: srv.URL, Profile: ProfileOpenAI, Model: "gpt-4o"})
	if _, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if body := calls()[len(calls())-1].body; body["max_tokens"] != float64(model.DefaultOutputTokens) {
		t.Fatalf("unset MaxTokens sent as %v", body["max_tokens"])
	}
	// --reasoning yes for a deployment whose name hides its model.
	c = newClient(t, Config{BaseURL: srv.URL, Profile: ProfileOpenAI, Model: "team-bot", Reasoning: ReasoningYes})
	if _, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 9}); err != nil {
		t.Fatal(err)
	}
	if body := calls()[len(calls())-1].body; body["max_completion_tokens"] != 9.0 || body["max_tokens"] != nil {
		t.Fatalf("--reasoning yes: %v", body)
	}
}

func TestAzureWire(t *testing.T) {
	srv, calls := recordingServer(t, okBody("hello", "", nil))
	c := newClient(t, Config{Profile: ProfileAzure, BaseURL: srv.URL + "/", APIVersion: "2024-10-21", Model: "chat-gpt4.1-prod"})
	if _, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 50}); err != nil {
		t.Fatal(err)
	}
	call := calls()[0]
	if call.path != "/openai/deployments/chat-gpt4.1-prod/chat/completions" || call.query != "api-version=2024-10-21" {
		t.Fatalf("azure request to %s?%s", call.path, call.query)
	}
	if call.header.Get("api-key") != secret || call.header.Get("Authorization") != "" {
		t.Fatalf("azure auth headers: api-key %q, Authorization %q", call.header.Get("api-key"), call.header.Get("Authorization"))
	}
	if call.body["max_tokens"] != 50.0 {
		t.Fatalf("azure body %v", call.body)
	}
	// A reasoning deployment gets max_completion_tokens there too.
	c = newClient(t, Config{Profile: ProfileAzure, BaseURL: srv.URL, APIVersion: "2025-01-01-preview", Model: "o4-mini"})
	if _, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 50}); err != nil {
		t.Fatal(err)
	}
	if call := calls()[1]; call.path != "/openai/deployments/o4-mini/chat/completions" || call.body["max_completion_tokens"] != 50.0 || call.body["max_tokens"] != nil {
		t.Fatalf("azure reasoning request %s %v", call.path, call.body)
	}
}

func TestDetect(t *testing.T) {
	for url, want := range map[string]Profile{
		"":                                      ProfileOpenAI,
		"https://api.openai.com/v1":             ProfileOpenAI,
		"https://myres.openai.azure.com/":       ProfileAzure,
		"https://x.cognitiveservices.azure.com": ProfileAzure,
		"https://proj.services.ai.azure.com":    ProfileAzure,
		"http://localhost:11434/v1":             ProfileCompatible,
		"http://vllm:8000/v1":                   ProfileCompatible,
	} {
		if got := Detect(url); got != want {
			t.Errorf("Detect(%q) = %s, want %s", url, got, want)
		}
	}
	for name, want := range map[string]bool{"o1": true, "o3-mini": true, "o4-mini-2025-04-16": true, "gpt-5": true,
		"gpt-5.1-chat": true, "openai/o3": true, "gpt-4o": false, "gpt-4.1-mini": false, "llama3.1:8b": false, "omni": false} {
		if IsReasoningModel(name) != want {
			t.Errorf("IsReasoningModel(%q) = %v", name, !want)
		}
	}
}

func TestCompatibleRecoversToolCalls(t *testing.T) {
	tools := []model.ToolSpec{{Name: "lookup_order"}, {Name: "finish"}}
	for _, tc := range []struct {
		name, content string
		calls         []model.ToolCall // IDs ignored
		rest          string
	}{
		{"hermes", "Let me look.\n<tool_call>\n{\"name\": \"lookup_order\", \"arguments\": {\"order_id\": \"A1\"}}\n</tool_call>",
			[]model.ToolCall{{Name: "lookup_order", Arguments: `{"order_id":"A1"}`}}, "Let me look."},
		{"two tags", `<tool_call>{"name":"lookup_order","arguments":{"order_id":"A1"}}</tool_call><tool_call>{"name":"finish","arguments":{}}</tool_call>`,
			[]model.ToolCall{{Name: "lookup_order", Arguments: `{"order_id":"A1"}`}, {Name: "finish", Arguments: `{}`}}, ""},
		{"unclosed tag", `<tool_call>{"name":"finish","arguments":"{\"why\":\"done\"}"}`,
			[]model.ToolCall{{Name: "finish", Arguments: `{"why":"done"}`}}, ""},
		{"bare json", ` {"name":"lookup_order","parameters":{"order_id":"A2"}} `,
			[]model.ToolCall{{Name: "lookup_order", Arguments: `{"order_id":"A2"}`}}, ""},
		{"openai shape in text", `{"tool_calls":[{"id":"k1","type":"function","function":{"name":"finish","arguments":"{}"}}]}`,
			[]model.ToolCall{{ID: "k1", Name: "finish", Arguments: `{}`}}, ""},
		{"mistral", `[TOOL_CALLS] [{"name":"finish","arguments":{"a":1}}]`,
			[]model.ToolCall{{Name: "finish", Arguments: `{"a":1}`}}, ""},
		{"llama", `<|python_tag|>{"name": "finish", "parameters": {}}`,
			[]model.ToolCall{{Name: "finish", Arguments: `{}`}}, ""},
		{"fence", "Sure:\n```json\n{\"name\":\"finish\",\"arguments\":{}}\n```\nthanks",
			[]model.ToolCall{{Name: "finish", Arguments: `{}`}}, "Sure:\n\nthanks"},
		{"unknown tool stays text", `{"name":"rm_rf","arguments":{}}`, nil, `{"name":"rm_rf","arguments":{}}`},
		{"prose", `I will call lookup_order next.`, nil, `I will call lookup_order next.`},
		{"json that is not a call", `{"order_id":"A1"}`, nil, `{"order_id":"A1"}`},
		{"broken tag", `<tool_call>{"name": "finish", </tool_call>`, nil, `<tool_call>{"name": "finish", </tool_call>`},
	} {
		calls, rest := recoverToolCalls(tc.content, tools)
		if len(calls) != len(tc.calls) || rest != tc.rest {
			t.Errorf("%s: calls %+v rest %q, want %+v %q", tc.name, calls, rest, tc.calls, tc.rest)
			continue
		}
		for i := range calls {
			if calls[i].Name != tc.calls[i].Name || calls[i].Arguments != tc.calls[i].Arguments || (tc.calls[i].ID != "" && calls[i].ID != tc.calls[i].ID) {
				t.Errorf("%s: call %d = %+v, want %+v", tc.name, i, calls[i], tc.calls[i])
			}
		}
	}
}

func TestCompatibleProfileEndToEnd(t *testing.T) {
	// A server whose chat template has no tools: the call is in the text,
	// with no id.
	srv, calls := recordingServer(t, okBody("<tool_call>{\"name\":\"lookup_order\",\"arguments\":{\"order_id\":\"A1\"}}</tool_call>", "", nil))
	c := newClient(t, Config{BaseURL: srv.URL + "/v1", APIKey: "none", Model: "qwen2.5:7b"})
	if c.Profile() != ProfileCompatible {
		t.Fatalf("profile %s", c.Profile())
	}
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "where is A1"}},
		Tools: []model.ToolSpec{{Name: "lookup_order", Parameters: json.RawMessage(`{"type":"object"}`)}}, MaxTokens: 64}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].ID == "" || resp.Message.Content != "" {
		t.Fatalf("reply %+v", resp.Message)
	}
	again, _ := c.Complete(context.Background(), req)
	if again.Message.ToolCalls[0].ID != resp.Message.ToolCalls[0].ID {
		t.Fatal("minted ids are not stable for the same answer at the same turn")
	}
	if body := calls()[0].body; body["max_tokens"] != 64.0 || body["tool_choice"] != nil {
		t.Fatalf("compatible body %v", body)
	}
	// An id the server did send is kept; missing ones are minted unique.
	srv2, _ := recordingServer(t, okBody("", `[{"id":"","type":"function","function":{"name":"lookup_order","arguments":"{}"}},{"type":"function","function":{"name":"lookup_order","arguments":"{}"}}]`, nil))
	c2 := newClient(t, Config{BaseURL: srv2.URL, Model: "llama3"})
	resp, err = c2.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := resp.Message.ToolCalls[0].ID, resp.Message.ToolCalls[1].ID; a == "" || b == "" || a == b {
		t.Fatalf("minted ids %q %q", a, b)
	}
}

// Every failure reaches the caller after exactly one request, classified.
func TestClassification(t *testing.T) {
	cases := []struct {
		name      string
		status    int
		body      string
		header    map[string]string
		retryable bool
		kind      model.Kind // a fatal configuration error of this kind
		fix       string     // in its Fix
		check     func(t *testing.T, err error)
	}{
		{name: "429", status: 429, header: map[string]string{"retry-after": "7", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-limit-tokens": "1000"}, retryable: true,
			check: func(t *testing.T, err error) {
				rl, ok := model.IsRateLimited(err)
				if !ok || rl.RetryAfter != 7*time.Second || !rl.Limits.HaveTokens || rl.Limits.LimitTokens != 1000 {
					t.Fatalf("%v (%+v)", err, rl)
				}
			}},
		{name: "429 billing", status: 429, body: `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`,
			kind: model.KindBilling, fix: "credit"},
		{name: "500 with retry-after", status: 500, header: map[string]string{"retry-after": "3"}, retryable: true,
			check: func(t *testing.T, err error) {
				var he *model.HTTPError
				if !errors.As(err, &he) || he.RetryAfter != 3*time.Second || model.RetryDelay(err, time.Second) != 3*time.Second {
					t.Fatalf("%v", err)
				}
			}},
		{name: "503", status: 503, retryable: true},
		{name: "500 with quota headers only", status: 500, header: map[string]string{"x-ratelimit-reset-tokens": "50s", "x-ratelimit-remaining-tokens": "0"}, retryable: true,
			check: func(t *testing.T, err error) {
				// The quota's reset says nothing of the outage.
				if d := model.RetryDelay(err, time.Second); d != time.Second {
					t.Fatalf("a 500 waits %s", d)
				}
			}},
		{name: "400 context", status: 400, body: `{"error":{"message":"maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`,
			check: func(t *testing.T, err error) {
				var he *model.HTTPError
				if !errors.As(err, &he) || he.Status != 400 {
					t.Fatalf("%v", err)
				}
			}},
		{name: "400 max_tokens", status: 400,
			body: `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`,
			kind: model.KindUnsupportedParameter, fix: "--reasoning yes"},
		{name: "400 temperature", status: 400,
			body: `{"error":{"message":"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}`,
			kind: model.KindUnsupportedParameter, fix: "--reasoning yes"},
		{name: "401", status: 401, body: `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			kind: model.KindAuth, fix: "OPENAI_API_KEY"},
		{name: "403", status: 403, kind: model.KindAuth, fix: "OPENAI_API_KEY"},
		{name: "404", status: 404, body: `{"error":{"message":"The model gpt-test does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}`,
			kind: model.KindUnknownModel, fix: "--model gpt-test"},
	}
	for _, tc := range cases {
		var hits atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			for k, v := range tc.header {
				w.Header().Set(k, v)
			}
			w.WriteHeader(tc.status)
			body := tc.body
			if body == "" {
				// A hostile or careless server echoing our credentials.
				body = `{"error":{"message":"bad key ` + r.Header.Get("Authorization") + `","type":"x"}}`
			}
			_, _ = io.WriteString(w, body)
		}))
		// --reasoning no: auto would switch the shape on a refused
		// parameter and ask again (TestReasoningAutoAdapts).
		c := newClient(t, Config{BaseURL: srv.URL, Profile: ProfileOpenAI, Reasoning: ReasoningNo})
		_, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
		srv.Close()
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		if hits.Load() != 1 {
			t.Fatalf("%s: %d requests, want exactly 1", tc.name, hits.Load())
		}
		if model.IsRetryable(err) != tc.retryable {
			t.Fatalf("%s: IsRetryable = %v (%v)", tc.name, !tc.retryable, err)
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("%s: the API key is in the error: %v", tc.name, err)
		}
		ce, fatal := model.IsFatal(err)
		if fatal != (tc.kind != "") {
			t.Fatalf("%s: fatal %v: %v", tc.name, fatal, err)
		}
		if fatal && (ce.Kind != tc.kind || ce.Status != tc.status || !strings.Contains(ce.Fix, tc.fix) || !strings.Contains(err.Error(), "fix: ")) {
			t.Fatalf("%s: %+v, want kind %s with a fix naming %q", tc.name, ce, tc.kind, tc.fix)
		}
		if tc.check != nil {
			tc.check(t, err)
		}
	}
}

func TestFixesNamePerProfile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		_, _ = io.WriteString(w, `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist."}}`)
	}))
	defer srv.Close()
	c := newClient(t, Config{Profile: ProfileAzure, BaseURL: srv.URL, APIVersion: "2024-10-21", Model: "nope"})
	_, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindUnknownModel || !strings.Contains(ce.Fix, "deployment") {
		t.Fatalf("azure 404: %v", err)
	}
	c = newClient(t, Config{Profile: ProfileCompatible, BaseURL: srv.URL, Model: "llama"})
	_, err = c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if ce, ok := model.IsFatal(err); !ok || !strings.Contains(ce.Fix, "/v1") {
		t.Fatalf("compatible 404: %v", err)
	}
}

func TestNotReadyWhileKeyRefused(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() {
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided","code":"invalid_api_key"}}`)
			return
		}
		_, _ = io.WriteString(w, okBody("ok", "", nil))
	}))
	defer srv.Close()
	c := newClient(t, Config{BaseURL: srv.URL, Profile: ProfileOpenAI})
	if c.Ready() != nil {
		t.Fatal("not ready before any answer")
	}
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}
	if _, err := c.Complete(context.Background(), req); err == nil {
		t.Fatal("a refused key succeeded")
	}
	if err := c.Ready(); err == nil || !strings.Contains(err.Error(), "auth") {
		t.Fatalf("ready after a 401: %v", err)
	}
	refuse.Store(false)
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if err := c.Ready(); err != nil {
		t.Fatalf("still not ready after a success: %v", err)
	}
}

func TestOpenAITransportErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := newClient(t, Config{BaseURL: "http://" + addr})
	_, err = c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if err == nil || !model.IsRetryable(err) || strings.Contains(err.Error(), secret) {
		t.Fatalf("connection refused: %v (retryable %v)", err, model.IsRetryable(err))
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
	c = newClient(t, Config{BaseURL: srv.URL, Timeout: 100 * time.Millisecond})
	_, err = c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if !errors.Is(err, model.ErrTimeout) || !model.IsRetryable(err) {
		t.Fatalf("timeout: %v", err)
	}
	c = newClient(t, Config{BaseURL: srv.URL, Timeout: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.Complete(ctx, model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if err == nil || model.IsRetryable(err) || errors.Is(err, model.ErrTimeout) {
		t.Fatalf("caller cancelled: %v (retryable %v)", err, model.IsRetryable(err))
	}
}

func TestOpenAIEmptyReply(t *testing.T) {
	srv, _ := recordingServer(t, okBody("", "", nil))
	c := newClient(t, Config{BaseURL: srv.URL})
	resp, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if !errors.Is(err, model.ErrEmptyReply) {
		t.Fatalf("got %v, want ErrEmptyReply", err)
	}
	if resp.Usage.Total() != 18 {
		t.Fatalf("usage lost on an empty reply: %+v", resp.Usage)
	}
}

// limitRecorder is a model.Limiter that records what the client told it.
type limitRecorder struct {
	mu       sync.Mutex
	acquired []int
	settled  []int
	said     []model.Limits
	paused   []time.Duration
	events   []string // acquire, sent, settle and the test's own notes, in order
	refuse   error
	hold     time.Duration // how long each admission waits
	perWin   int           // when set, a larger admission is refused as never fitting
}

func (r *limitRecorder) Acquire(_ context.Context, tokens int) (model.Permit, error) {
	time.Sleep(r.hold)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refuse != nil {
		return nil, r.refuse
	}
	if r.perWin > 0 && tokens > r.perWin {
		return nil, &model.ConfigError{Kind: model.KindQuotaTooSmall, Message: fmt.Sprintf("%d tokens never fit %d", tokens, r.perWin)}
	}
	r.acquired = append(r.acquired, tokens)
	r.events = append(r.events, "acquire")
	return recPermit{r}, nil
}

// note records an event of the test's own among the limiter's.
func (r *limitRecorder) note(event string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event)
}

func (r *limitRecorder) log() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}

func (r *limitRecorder) Pause(_ context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paused = append(r.paused, d)
	return nil
}

type recPermit struct{ r *limitRecorder }

func (p recPermit) Sent(context.Context) error {
	p.r.note("sent")
	return nil
}

func (p recPermit) Settle(_ context.Context, tokens int, said model.Limits) error {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	p.r.settled = append(p.r.settled, tokens)
	p.r.said = append(p.r.said, said)
	p.r.events = append(p.r.events, "settle")
	return nil
}

// gate is a transport that holds every request, before a byte of it is
// written, until the test lets it go.
type gate struct {
	base    http.RoundTripper
	entered chan struct{}
	release chan struct{}
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.base.RoundTrip(r)
}

// TestAdmissionStampedAtTheWrite: the provider counts a request from when
// it arrives, so the permit is told the request was sent when it is
// written, not when it was admitted: held in the transport after its
// admission, the request is stamped only after it is let go, and before it
// is settled.
func TestAdmissionStampedAtTheWrite(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, okBody("hello", "", nil))
	}))
	defer srv.Close()
	g := &gate{base: &http.Transport{DisableKeepAlives: true}, entered: make(chan struct{}), release: make(chan struct{})}
	rec := &limitRecorder{}
	c := newClient(t, Config{BaseURL: srv.URL, Limiter: rec, HTTPClient: &http.Client{Transport: g}})
	done := make(chan error, 1)
	go func() {
		_, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 100})
		done <- err
	}()
	<-g.entered
	rec.note("written")
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(rec.log(), " "), "acquire written sent settle"; got != want {
		t.Fatalf("events %q, want %q: the admission is stamped when the request is written", got, want)
	}
	if len(rec.settled) != 1 || rec.settled[0] != 111 {
		t.Fatalf("settled %v, want [111]", rec.settled)
	}
}

// failing is a transport that fails before writing anything, as a dial
// that is refused does.
type failing struct{}

func (failing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp: connection refused")
}

// A request that never left is not stamped as sent and costs no tokens: the
// provider never counted it.
func TestUnsentRequestIsNotCharged(t *testing.T) {
	rec := &limitRecorder{}
	c := newClient(t, Config{BaseURL: "http://127.0.0.1:1", Limiter: rec, HTTPClient: &http.Client{Transport: failing{}}})
	_, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 100})
	var te *model.TransportError
	if !errors.As(err, &te) {
		t.Fatalf("got %v, want a transport error", err)
	}
	if got, want := strings.Join(rec.log(), " "), "acquire settle"; got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	if len(rec.settled) != 1 || rec.settled[0] != 0 {
		t.Fatalf("settled %v, want [0]", rec.settled)
	}
}

// TestUncalibratedScaleNeverRefuses: a request that fits the quota as
// estimated is not refused as too large because of the uncalibrated scale;
// it is admitted for the bare estimate.
func TestUncalibratedScaleNeverRefuses(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, okBody("hello", "", nil))
	}))
	defer srv.Close()
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: strings.Repeat("order ", 200)}}, MaxTokens: 100}
	bare := model.EstimatePromptTokens(req) + 100
	rec := &limitRecorder{perWin: bare}
	c := newClient(t, Config{BaseURL: srv.URL, Limiter: rec})
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatalf("a request that fits as estimated: %v", err)
	}
	if len(rec.acquired) != 1 || rec.acquired[0] != bare {
		t.Fatalf("acquired %v, want the bare estimate %d", rec.acquired, bare)
	}
	// A fresh client, so no report has calibrated it.
	c = newClient(t, Config{BaseURL: srv.URL, Limiter: &limitRecorder{perWin: bare - 1}})
	if _, err := c.Complete(context.Background(), req); err == nil {
		t.Fatal("a request larger than the quota as estimated was sent")
	} else if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindQuotaTooSmall {
		t.Fatalf("got %v, want quota-too-small", err)
	}
}

func TestLimiterIsToldEverything(t *testing.T) {
	var refuse atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("x-ratelimit-remaining-tokens", "900")
		if refuse.Load() {
			w.Header().Set("retry-after-ms", "1500")
			w.WriteHeader(429)
			_, _ = io.WriteString(w, `{"error":{"message":"slow down","type":"requests"}}`)
			return
		}
		_, _ = io.WriteString(w, okBody("hello", "", nil))
	}))
	defer srv.Close()
	rec := &limitRecorder{hold: 50 * time.Millisecond}
	c := newClient(t, Config{BaseURL: srv.URL, Limiter: rec})
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 100}
	first, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// The wait for the quota is the limiter's, not the provider's latency.
	if first.Timing.LimiterWait < 50*time.Millisecond || first.Timing.Provider <= 0 {
		t.Fatalf("timing %+v: the 50ms admission wait is not the limiter's", first.Timing)
	}
	refuse.Store(true)
	_, err = c.Complete(context.Background(), req)
	if rl, ok := model.IsRateLimited(err); !ok || rl.RetryAfter != 1500*time.Millisecond {
		t.Fatalf("got %v", err)
	}
	// Before the provider has reported, the prompt estimate is charged
	// half again (UncalibratedFactor), the reply allowance as asked.
	prompt := model.EstimatePromptTokens(req)
	if want := int(float64(prompt)*UncalibratedFactor+0.999) + 100; len(rec.acquired) != 2 || rec.acquired[0] != want {
		t.Fatalf("acquired %v, want %d first (the prompt estimate %d scaled by %v, + max_tokens)", rec.acquired, want, prompt, UncalibratedFactor)
	}
	// The provider reported 11 prompt tokens for an estimate of
	// est-100: the next admission is scaled to what it counts.
	if want := (11 + 100); rec.acquired[1] != want {
		t.Fatalf("second admission %d, want %d (prompt calibrated to the reported 11 + max_tokens)", rec.acquired[1], want)
	}
	// Charged as the provider counts the quota: prompt (11) + max_tokens (100).
	if len(rec.settled) != 2 || rec.settled[0] != 111 || rec.settled[1] != 0 {
		t.Fatalf("settled %v, want [111 0]: prompt + max_tokens, then nothing for a refusal", rec.settled)
	}
	if len(rec.paused) != 1 || rec.paused[0] != 1500*time.Millisecond {
		t.Fatalf("paused %v, want one 1.5s pause for the 429", rec.paused)
	}
	if rec.said[0].RemainingTokens != 900 || !rec.said[0].HaveTokens {
		t.Fatalf("said %+v", rec.said)
	}
}

func TestQuotaTooSmallIsNeverSent(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	tooBig := &model.ConfigError{Kind: model.KindQuotaTooSmall, Message: "request of 9000 tokens, quota 5000 per minute", Fix: "raise --tpm"}
	c := newClient(t, Config{BaseURL: srv.URL, Limiter: &limitRecorder{refuse: tooBig}})
	_, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindQuotaTooSmall || hits.Load() != 0 {
		t.Fatalf("err %v, %d requests sent", err, hits.Load())
	}
}

func TestProbe(t *testing.T) {
	type route struct {
		status int
		body   string
	}
	serve := func(routes map[string]route) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rt, ok := routes[r.Method+" "+r.URL.Path]
			if !ok {
				rt = route{404, `{"error":{"message":"no route"}}`}
			}
			w.WriteHeader(rt.status)
			_, _ = io.WriteString(w, rt.body)
		}))
	}
	ctx := context.Background()
	// OpenAI: the model's own page.
	srv := serve(map[string]route{"GET /v1/models/gpt-4o": {200, `{"id":"gpt-4o"}`}})
	defer srv.Close()
	if err := newClient(t, Config{BaseURL: srv.URL + "/v1", Profile: ProfileOpenAI, Model: "gpt-4o"}).Probe(ctx); err != nil {
		t.Fatalf("good openai: %v", err)
	}
	err := newClient(t, Config{BaseURL: srv.URL + "/v1", Profile: ProfileOpenAI, Model: "gpt-9"}).Probe(ctx)
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindUnknownModel {
		t.Fatalf("unknown openai model: %v", err)
	}
	bad := serve(map[string]route{"GET /v1/models/gpt-4o": {401, `{"error":{"message":"Incorrect API key"}}`}})
	defer bad.Close()
	c := newClient(t, Config{BaseURL: bad.URL + "/v1", Profile: ProfileOpenAI, Model: "gpt-4o"})
	err = c.Probe(ctx)
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindAuth || c.Ready() == nil {
		t.Fatalf("bad key: %v (ready %v)", err, c.Ready())
	}
	// Azure: models with api-version, then the deployment.
	az := serve(map[string]route{
		"GET /openai/models":                             {200, `{"data":[]}`},
		"POST /openai/deployments/prod/chat/completions": {400, `{"error":{"message":"'$.messages' is too short"}}`},
	})
	defer az.Close()
	if err := newClient(t, Config{Profile: ProfileAzure, BaseURL: az.URL, APIVersion: "2024-10-21", Model: "prod"}).Probe(ctx); err != nil {
		t.Fatalf("good azure: %v", err)
	}
	err = newClient(t, Config{Profile: ProfileAzure, BaseURL: az.URL, APIVersion: "2024-10-21", Model: "nope"}).Probe(ctx)
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindUnknownModel || !strings.Contains(ce.Fix, "deployment") {
		t.Fatalf("unknown deployment: %v", err)
	}
	// Compatible: a server without /models passes; nobody listening does not.
	if err := newClient(t, Config{Profile: ProfileCompatible, BaseURL: az.URL + "/v1", Model: "x"}).Probe(ctx); err != nil {
		t.Fatalf("compatible without /models: %v", err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	err = newClient(t, Config{Profile: ProfileCompatible, BaseURL: "http://" + addr + "/v1", Model: "x"}).Probe(ctx)
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindUnreachable || strings.Contains(err.Error(), secret) {
		t.Fatalf("nobody listening: %v", err)
	}
	// Busy at start-up is not a refusal.
	busy := serve(map[string]route{"GET /v1/models/gpt-4o": {503, `{"error":{"message":"overloaded"}}`}})
	defer busy.Close()
	if err := newClient(t, Config{BaseURL: busy.URL + "/v1", Profile: ProfileOpenAI, Model: "gpt-4o"}).Probe(ctx); err != nil {
		t.Fatalf("busy provider: %v", err)
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
		// Requests left, tokens out: the tokens' reset.
		{h("x-ratelimit-reset-requests", "6m0s", "x-ratelimit-reset-tokens", "20ms", "x-ratelimit-remaining-requests", "40"), 20 * time.Millisecond},
		{h("x-ratelimit-reset-requests", "2s", "x-ratelimit-reset-tokens", "50s", "x-ratelimit-remaining-tokens", "9000", "x-ratelimit-remaining-requests", "0"), 2 * time.Second},
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

// The reply text of an open-weight server is untrusted: recovery never
// panics, only takes offered tools, and gives every call JSON-ish arguments.
func FuzzRecoverToolCalls(f *testing.F) {
	f.Add(`<tool_call>{"name":"finish","arguments":{"a":[1,2]}}</tool_call>`)
	f.Add(`[TOOL_CALLS] [{"name":"finish","arguments":"{}"}]`)
	f.Add("```json\n{\"name\":\"finish\"}\n```")
	f.Add(`{"tool_calls":[{"function":{"name":"finish","arguments":"x"}}]}`)
	f.Add(`<tool_call><tool_call></tool_call>`)
	f.Fuzz(func(t *testing.T, content string) {
		calls, rest := recoverToolCalls(content, []model.ToolSpec{{Name: "finish"}})
		if len(calls) == 0 && rest != content {
			t.Fatalf("nothing recovered but the text changed: %q -> %q", content, rest)
		}
		for _, c := range calls {
			if c.Name != "finish" {
				t.Fatalf("recovered a tool that was not offered: %+v", c)
			}
		}
		mintIDs(calls, 3)
		seen := map[string]bool{}
		for _, c := range calls {
			if c.ID == "" || seen[c.ID] {
				t.Fatalf("ids %+v", calls)
			}
			seen[c.ID] = true
		}
	})
}

func TestConfigValidation(t *testing.T) {
	for name, cfg := range map[string]Config{
		"Config.Model":      {},
		"Config.BaseURL":    {Model: "m", BaseURL: "ftp://x", APIKey: "k"},
		"Config.Timeout":    {Model: "m", Timeout: -1, APIKey: "k"},
		"Config.APIVersion": {Model: "m", Profile: ProfileAzure, BaseURL: "https://x.openai.azure.com", APIKey: "k"},
		"Config.APIKey":     {Model: "m", Profile: ProfileOpenAI},
		"Config.Profile":    {Model: "m", Profile: "bedrock"},
		"Config.Reasoning":  {Model: "m", APIKey: "k", Reasoning: "maybe"},
	} {
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := New(Config{Model: "llama", BaseURL: "http://localhost:8000/v1"}); err != nil {
		t.Errorf("a local server without a key: %v", err)
	}
}

// refusingServer answers 400, as OpenAI words it, every chat completion that
// sends a parameter in refused, and answers the others; it records each
// request's body.
func refusingServer(t *testing.T, refused ...string) (*httptest.Server, func() []map[string]any) {
	t.Helper()
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		for _, p := range refused {
			if _, ok := body[p]; ok {
				w.WriteHeader(http.StatusBadRequest)
				msg := fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", p)
				_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
					"message": msg, "type": "invalid_request_error", "param": p, "code": "unsupported_parameter"}})
				return
			}
		}
		_, _ = io.WriteString(w, okBody("done", "", nil))
	}))
	t.Cleanup(srv.Close)
	return srv, func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return append([]map[string]any(nil), bodies...)
	}
}

func TestReasoningAutoAdapts(t *testing.T) {
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 300, Temperature: temp(0.2)}
	cases := []struct {
		name, model string
		reasoning   Reasoning
		refused     []string
		requests    int    // sent by the first Complete
		want        string // the allowance parameter that went through
		fails       bool
	}{
		{name: "max_tokens refused", model: "team-deployment", refused: []string{"max_tokens"}, requests: 2, want: "max_completion_tokens"},
		{name: "temperature refused", model: "team-deployment", refused: []string{"temperature"}, requests: 2, want: "max_completion_tokens"},
		{name: "max_completion_tokens refused", model: "openai/o3-mini", refused: []string{"max_completion_tokens"}, requests: 2, want: "max_tokens"},
		{name: "both refused: one retry only", model: "team-deployment", refused: []string{"max_tokens", "max_completion_tokens"}, requests: 2, fails: true},
		{name: "reasoning no does not adapt", model: "team-deployment", reasoning: ReasoningNo, refused: []string{"max_tokens"}, requests: 1, fails: true},
		{name: "a bare reasoning name cannot take max_tokens", model: "o3-mini", refused: []string{"max_completion_tokens"}, requests: 1, fails: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, bodies := refusingServer(t, tc.refused...)
			var logs bytes.Buffer
			c := newClient(t, Config{BaseURL: srv.URL, Profile: ProfileCompatible, Model: tc.model, Reasoning: tc.reasoning,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			_, err := c.Complete(context.Background(), req)
			if got := len(bodies()); got != tc.requests {
				t.Fatalf("%d requests, want %d (%v)", got, tc.requests, err)
			}
			if tc.fails {
				if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindUnsupportedParameter {
					t.Fatalf("want the refusal, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), "switching") || !strings.Contains(logs.String(), "param="+tc.refused[0]) {
				t.Fatalf("the switch is not logged: %s", logs.String())
			}
			last := bodies()[tc.requests-1]
			if _, ok := last[tc.want]; !ok {
				t.Fatalf("the retry sent %v, want %s", last, tc.want)
			}
			_, hasTemp := last["temperature"]
			if hasTemp != (tc.want == "max_tokens") {
				t.Fatalf("the retry's temperature: %v", last)
			}
			// The shape sticks: the next call goes through at once.
			if _, err := c.Complete(context.Background(), req); err != nil || len(bodies()) != tc.requests+1 {
				t.Fatalf("the next call: %v after %d requests", err, len(bodies()))
			}
			if c.Reasoning() != (tc.want == "max_completion_tokens") {
				t.Fatalf("Reasoning() = %v after the switch to %s", c.Reasoning(), tc.want)
			}
		})
	}
}

func TestReasoningAutoRetryIsAdmittedAgain(t *testing.T) {
	srv, _ := refusingServer(t, "max_tokens")
	lim := &limitRecorder{}
	c := newClient(t, Config{BaseURL: srv.URL, Profile: ProfileCompatible, Model: "team-deployment", Limiter: lim,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if _, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 300}); err != nil {
		t.Fatal(err)
	}
	lim.mu.Lock()
	defer lim.mu.Unlock()
	// The refused request is settled to nothing; the retry has its own admission.
	if len(lim.acquired) != 2 || len(lim.settled) != 2 || lim.settled[0] != 0 || lim.settled[1] != 11+300 {
		t.Fatalf("acquired %v settled %v", lim.acquired, lim.settled)
	}
}

// TestReasoningAutoConcurrentRefusals: requests in flight when the shape
// switches were sent in the old shape and are refused too; each is sent
// again in the new one, and the switch is logged once.
func TestReasoningAutoConcurrentRefusals(t *testing.T) {
	const n = 3
	var mu sync.Mutex
	refused := 0
	all := make(chan struct{}) // closed once n requests with max_tokens arrived
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		if _, ok := body["max_tokens"]; ok {
			mu.Lock()
			refused++
			if refused == n {
				close(all)
			}
			mu.Unlock()
			<-all
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`)
			return
		}
		_, _ = io.WriteString(w, okBody("done", "", nil))
	}))
	defer srv.Close()
	var logs bytes.Buffer
	var logMu sync.Mutex
	c := newClient(t, Config{BaseURL: srv.URL, Profile: ProfileCompatible, Model: "team-deployment",
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))})
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 100})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	if got := strings.Count(logs.String(), "switching"); got != 1 {
		t.Fatalf("the switch is logged %d times:\n%s", got, logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
