package providersim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/model"
	oai "github.com/suitegen/suitegen/pkg/model/openai"
	"github.com/suitegen/suitegen/pkg/ratelimit"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// testenv.Main also fails the binary on leaked goroutines.
func TestMain(m *testing.M) { testenv.Main(m) }

// script is a tiny deterministic model: asked by a user, it looks the order
// up; shown a tool result, it says what it saw.
type script struct{}

func (script) Name() string { return "script-1" }

func (script) Complete(_ context.Context, req model.Request) (model.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == model.RoleTool {
		return model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "The order says: " + last.Content}}, nil
	}
	return model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{
		ID: "call_1", Name: "lookup_order", Arguments: `{"order_id":"A1001"}`,
	}}}}, nil
}

var tools = []model.ToolSpec{{
	Name: "lookup_order", Description: "Find an order by id",
	Parameters: json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`),
}}

func userRequest(text string, maxTokens int) model.Request {
	return model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You are a support agent."},
			{Role: model.RoleUser, Content: text},
		},
		Tools: tools, MaxTokens: maxTokens,
	}
}

// start runs a simulator for the test and returns it with a client on it.
func start(t *testing.T, cfg Config, timeout time.Duration) (*Server, *oai.Client, string) {
	t.Helper()
	if cfg.Model == nil {
		cfg.Model = script{}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := s.Start(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := s.Wait(); err != nil {
			t.Error(err)
		}
	})
	c, err := oai.New(oai.Config{
		BaseURL: "http://" + addr + "/v1", APIKey: "sk-test-secret", Model: "sim-model", Timeout: timeout,
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, addr
}

func TestToolCallsThroughGoOpenAI(t *testing.T) {
	_, c, addr := start(t, Config{}, 5*time.Second)
	ctx := context.Background()
	req := userRequest("Where is my order A1001?", 200)
	resp, err := c.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 {
		t.Fatalf("reply %+v, want one tool call", resp.Message)
	}
	tc := resp.Message.ToolCalls[0]
	if tc.ID != "call_1" || tc.Name != "lookup_order" || tc.Arguments != `{"order_id":"A1001"}` {
		t.Fatalf("tool call %+v", tc)
	}
	if resp.Usage.PromptTokens != PromptTokens(req) || resp.Usage.CompletionTokens != CompletionTokens(resp.Message) {
		t.Fatalf("usage %+v, want the request's and reply's token counts", resp.Usage)
	}
	again, err := c.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Usage != resp.Usage {
		t.Fatalf("usage not deterministic: %+v then %+v", resp.Usage, again.Usage)
	}
	longer, err := c.Complete(ctx, userRequest(strings.Repeat("Where is my order A1001? ", 20), 200))
	if err != nil {
		t.Fatal(err)
	}
	if longer.Usage.PromptTokens <= resp.Usage.PromptTokens+50 {
		t.Fatalf("a request 20x longer cost %d prompt tokens against %d", longer.Usage.PromptTokens, resp.Usage.PromptTokens)
	}

	// The tool result goes back with its tool_call_id and the model sees it.
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, ToolCalls: resp.Message.ToolCalls},
		model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: `{"status":"shipped"}`})
	final, err := c.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if final.Message.Content != `The order says: {"status":"shipped"}` {
		t.Fatalf("final reply %q", final.Message.Content)
	}

	res, err := http.Get("http://" + addr + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != "script-1" {
		t.Fatalf("models %+v %v", models, err)
	}
}

func TestRequestQuotaAnswers429WithHeaders(t *testing.T) {
	s, c, _ := start(t, Config{RPM: 2, TPM: 100000}, 5*time.Second)
	ctx := context.Background()
	req := userRequest("hello", 100)
	first, err := c.Complete(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	l := first.Limits
	if !l.HaveRequests || l.LimitRequests != 2 || l.RemainingRequests != 1 || !l.HaveTokens || l.LimitTokens != 100000 {
		t.Fatalf("limits on a success %+v", l)
	}
	if want := 100000 - PromptTokens(req) - 100; l.RemainingTokens != want {
		t.Fatalf("remaining tokens %d, want %d (prompt + max_tokens counted at admission)", l.RemainingTokens, want)
	}
	if l.ResetRequests <= 0 || l.ResetRequests > time.Minute {
		t.Fatalf("reset-requests %s", l.ResetRequests)
	}
	if _, err := c.Complete(ctx, req); err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(ctx, req)
	rl, ok := model.IsRateLimited(err)
	if !ok {
		t.Fatalf("third call in a minute with RPM 2: %v, want a RateLimitError", err)
	}
	if rl.RetryAfter < 55*time.Second || rl.RetryAfter > time.Minute+time.Second {
		t.Fatalf("retry after %s, want about a minute", rl.RetryAfter)
	}
	if !rl.Limits.HaveRequests || rl.Limits.RemainingRequests != 0 || rl.Limits.LimitRequests != 2 {
		t.Fatalf("limits on the 429 %+v", rl.Limits)
	}
	if !model.IsRetryable(err) {
		t.Fatal("a 429 is not retryable")
	}
	st := s.Stats()
	if st.Calls != 3 || st.RateLimited != 1 {
		t.Fatalf("stats %+v: want 3 calls (the client never retries), 1 rate limited", st)
	}
}

func TestTokenQuota(t *testing.T) {
	_, c, _ := start(t, Config{TPM: 1000}, 5*time.Second)
	ctx := context.Background()
	if _, err := c.Complete(ctx, userRequest("hi", 600)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Complete(ctx, userRequest("hi", 600))
	rl, ok := model.IsRateLimited(err)
	if !ok {
		t.Fatalf("second 600-token call under TPM 1000: %v, want 429", err)
	}
	if !rl.Limits.HaveTokens || rl.Limits.RemainingTokens >= 400 || rl.Limits.LimitTokens != 1000 {
		t.Fatalf("limits on the 429 %+v", rl.Limits)
	}
	// A small one still fits.
	if _, err := c.Complete(ctx, userRequest("hi", 10)); err != nil {
		t.Fatalf("a small call that fits: %v", err)
	}
}

func getStats(t *testing.T, addr string) Stats {
	t.Helper()
	res, err := http.Get("http://" + addr + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var st Stats
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestStatsPerMinute(t *testing.T) {
	window := 300 * time.Millisecond
	_, c, addr := start(t, Config{RPM: 2, Window: window}, 5*time.Second)
	ctx := context.Background()
	time.Sleep(20 * time.Millisecond)
	first := time.Now()
	for range 3 { // two admitted, one refused
		_, _ = c.Complete(ctx, userRequest("hi", 10))
	}
	// Into the next window, and past the sliding window of the first
	// admissions (made after first), so the quota has rolled over.
	time.Sleep(time.Until(first.Add(window + 20*time.Millisecond)))
	if _, err := c.Complete(ctx, userRequest("hi", 10)); err != nil {
		t.Fatalf("a call in the next window: %v", err)
	}
	st := getStats(t, addr)
	if len(st.PerMinute) < 2 {
		t.Fatalf("per_minute %+v, want two windows", st.PerMinute)
	}
	m0, m1 := st.PerMinute[0], st.PerMinute[1]
	if m0.Calls != 3 || m0.RateLimited != 1 || m1.Calls != 1 || m1.RateLimited != 0 {
		t.Fatalf("per_minute %+v", st.PerMinute)
	}
	if m0.Tokens == 0 || m1.Tokens == 0 || m0.Tokens+m1.Tokens != st.Tokens {
		t.Fatalf("tokens per minute %+v do not add up to %d", st.PerMinute, st.Tokens)
	}
	if st.Calls != 4 || st.RateLimited != 1 {
		t.Fatalf("totals %+v", st)
	}
}

func TestFaultsAtConfiguredRates(t *testing.T) {
	faults := Faults{RateLimit429: 0.1, Error500: 0.1, MalformedJSON: 0.2, UnknownTool: 0.2}
	s, c, _ := start(t, Config{Faults: faults, Seed: 7}, 5*time.Second)
	ctx := context.Background()
	const n = 400
	var got429, got500, malformed, unknown int
	for range n {
		resp, err := c.Complete(ctx, userRequest("where is A1001", 50))
		if _, ok := model.IsRateLimited(err); ok {
			got429++
			continue
		}
		var he *model.HTTPError
		if errors.As(err, &he) && he.Status == 500 {
			got500++
			if !model.IsRetryable(err) {
				t.Fatal("a 500 is not retryable")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		tc := resp.Message.ToolCalls[0]
		if !json.Valid([]byte(tc.Arguments)) {
			malformed++
		}
		if tc.Name != "lookup_order" {
			unknown++
		}
	}
	st := s.Stats()
	if st.Faults[FaultRateLimit] != int64(got429) || st.Faults[FaultError500] != int64(got500) ||
		st.Faults[FaultMalformed] != int64(malformed) || st.Faults[FaultUnknown] != int64(unknown) {
		t.Fatalf("stats %+v disagree with what the client saw: 429 %d, 500 %d, malformed %d, unknown %d",
			st.Faults, got429, got500, malformed, unknown)
	}
	within := func(what string, got int, want float64) {
		if float64(got) < want*0.6 || float64(got) > want*1.4 {
			t.Errorf("%s: %d, want about %.0f", what, got, want)
		}
	}
	within("429", got429, n*0.1)
	within("500", got500, n*0.9*0.1)
	answered := float64(n - got429 - got500)
	within("malformed", malformed, answered*0.2)
	within("unknown tool", unknown, answered*0.2)
	if st.RateLimited != int64(got429) || st.Errors != int64(got500) || st.Calls != n {
		t.Fatalf("totals %+v", st)
	}

	// The same seed throws the same faults.
	s2, c2, _ := start(t, Config{Faults: faults, Seed: 7}, 5*time.Second)
	for range n {
		_, _ = c2.Complete(ctx, userRequest("where is A1001", 50))
	}
	if a, b := s.Stats().Faults, s2.Stats().Faults; len(a) != len(b) || a[FaultMalformed] != b[FaultMalformed] || a[FaultRateLimit] != b[FaultRateLimit] {
		t.Fatalf("seeded runs differ: %v vs %v", a, b)
	}
}

func TestStallTimesTheClientOut(t *testing.T) {
	s, c, _ := start(t, Config{Faults: Faults{Stall: 1, StallFor: 5 * time.Second}}, 200*time.Millisecond)
	begin := time.Now()
	_, err := c.Complete(context.Background(), userRequest("hi", 10))
	if !errors.Is(err, model.ErrTimeout) || !model.IsRetryable(err) {
		t.Fatalf("stalled call: %v, want a retryable ErrTimeout", err)
	}
	if el := time.Since(begin); el > 2*time.Second {
		t.Fatalf("timed out after %s", el)
	}
	if s.Stats().Faults[FaultStall] != 1 {
		t.Fatalf("faults %v", s.Stats().Faults)
	}
}

func TestLatency(t *testing.T) {
	_, c, _ := start(t, Config{Latency: 150 * time.Millisecond, LatencyJitter: 50 * time.Millisecond}, 5*time.Second)
	begin := time.Now()
	if _, err := c.Complete(context.Background(), userRequest("hi", 10)); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(begin); el < 100*time.Millisecond {
		t.Fatalf("answered in %s with 150±50ms latency", el)
	}
}

func TestBadRequests(t *testing.T) {
	_, _, addr := start(t, Config{}, time.Second)
	for _, body := range []string{
		`{`, `{"messages":[]}`, `{"messages":[{"role":"wizard","content":"x"}]}`,
		`{"messages":[{"role":"tool","content":"x"}]}`, `{"stream":true,"messages":[{"role":"user","content":"x"}]}`,
	} {
		res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", body, res.StatusCode)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	for name, cfg := range map[string]Config{
		"Config.Model":               {},
		"Config.Faults.Error500":     {Model: script{}, Faults: Faults{Error500: 1.5}},
		"Config.Faults.StallFor":     {Model: script{}, Faults: Faults{StallFor: -1}},
		"Config.Window":              {Model: script{}, Window: -1},
		"Config.Faults.RateLimit429": {Model: script{}, Faults: Faults{RateLimit429: -0.1}},
	} {
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"type":"function","function":{"name":"t","parameters":{}}}]}`))
	f.Add([]byte(`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"t","arguments":"{"}}]},{"role":"tool","tool_call_id":"1","content":"x"}]}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":5}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseRequest(body)
		if err != nil {
			if !errors.Is(err, errBadRequest) {
				t.Fatalf("error %v is not a bad request", err)
			}
			return
		}
		if len(req.Messages) == 0 || req.MaxTokens < 0 {
			t.Fatalf("accepted %+v", req)
		}
		if PromptTokens(req.Request) <= 0 {
			t.Fatal("a prompt costs nothing")
		}
	})
}

// Two writer pods share one Postgres limiter told the provider's true quota:
// hammering the simulator from both, the provider never refuses.
func TestSharedLimiterKeepsUnderProviderQuota(t *testing.T) {
	for _, scale := range []float64{1, 1.3} {
		t.Run(fmt.Sprintf("token-scale-%v", scale), func(t *testing.T) { sharedLimiter(t, scale) })
	}
}

// sharedLimiter: the provider counts tokens scale times what suitegen
// estimates; the client's calibration and the settle to what the provider
// reported keep the shared quota exact all the same.
func sharedLimiter(t *testing.T, scale float64) {
	// Provider: 20 requests and 4000 tokens per 2 s sliding window.
	window := 2 * time.Second
	s, _, addr := start(t, Config{RPM: 20, TPM: 4000, Window: window, TokenScale: scale}, 5*time.Second)
	url := testenv.PostgresURL(t)
	var clients []*oai.Client
	for range 2 {
		pool, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		lim, err := ratelimit.New(context.Background(), ratelimit.Config{
			Key: fmt.Sprintf("http://%s|sk-test-secret|%v", addr, scale), RPM: 600, TPM: 120_000, Window: window,
			// The production margin (a 2 s window would get 0.2 s): it covers
			// the time between admission and the provider's count, which on
			// busy cores passes 0.2 s.
			Margin:    ratelimit.DefaultMargin,
			MaxJitter: 10 * time.Millisecond, MaxSleep: 200 * time.Millisecond, Pool: pool,
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := oai.New(oai.Config{
			BaseURL: "http://" + addr + "/v1", Model: "sim", Timeout: 5 * time.Second, Limiter: lim,
		})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	// The hammering stops after a count of admitted calls, not a span of
	// time: 30 is more than the provider admits in one window, so the run
	// crosses windows however slow the machine is. The deadline only ends a
	// hung run.
	const admitted = 30
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i, c := range clients {
		for j := range 4 {
			wg.Go(func() {
				for ctx.Err() == nil && s.Stats().Admitted < admitted {
					// Requests of different sizes, as sessions are.
					_, err := c.Complete(ctx, userRequest(strings.Repeat("order ", 10*(i+j)), 100+50*j))
					if err != nil && ctx.Err() == nil {
						t.Errorf("call: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	st := s.Stats()
	if st.RateLimited != 0 {
		t.Fatalf("the provider refused %d of %d calls", st.RateLimited, st.Calls)
	}
	if st.Admitted < admitted {
		t.Fatalf("only %d calls admitted before the deadline, want %d", st.Admitted, admitted)
	}
}
