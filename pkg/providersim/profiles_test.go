package providersim

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/model"
	oai "github.com/suitegen/suitegen/pkg/model/openai"
)

// post sends a raw request and decodes the answer.
func post(t *testing.T, url string, header map[string]string, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return res.StatusCode, res.Header, out
}

func errorOf(body map[string]any) map[string]any {
	e, _ := body["error"].(map[string]any)
	return e
}

func TestReasoningModelSpeaksAsOpenAIs(t *testing.T) {
	_, _, addr := start(t, Config{TPM: 100_000}, 5*time.Second)
	url := "http://" + addr + "/v1/chat/completions"
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for body, param := range map[string]string{
		`{"model":"o4-mini",` + msgs + `,"max_tokens":50}`:                                  "max_tokens",
		`{"model":"o3",` + msgs + `,"max_completion_tokens":50,"temperature":0.2}`:          "temperature",
		`{"model":"gpt-5-mini",` + msgs + `,"max_completion_tokens":50,"top_p":0.5}`:        "top_p",
		`{"model":"o1-2024-12-17",` + msgs + `,"max_tokens":50,"max_completion_tokens":50}`: "max_tokens",
	} {
		status, _, out := post(t, url, nil, body)
		e := errorOf(out)
		if status != 400 || e["param"] != param || (e["code"] != "unsupported_parameter" && e["code"] != "unsupported_value") {
			t.Errorf("%s: %d %v, want 400 refusing %s", body, status, out, param)
		}
	}
	// max_completion_tokens (and temperature 1) is fine; reasoning is billed.
	status, h, out := post(t, url, nil, `{"model":"o4-mini",`+msgs+`,"max_completion_tokens":500,"temperature":1}`)
	if status != 200 {
		t.Fatalf("%d %v", status, out)
	}
	u := out["usage"].(map[string]any)
	details := u["completion_tokens_details"].(map[string]any)
	if details["reasoning_tokens"].(float64) <= 0 || u["completion_tokens"].(float64) <= details["reasoning_tokens"].(float64) {
		t.Fatalf("usage %v", u)
	}
	prompt := int(u["prompt_tokens"].(float64))
	if h.Get("x-ratelimit-remaining-tokens") != itoa(100_000-prompt-500) {
		t.Fatalf("remaining %s, want the quota less prompt + max_completion_tokens (%d)", h.Get("x-ratelimit-remaining-tokens"), 100_000-prompt-500)
	}

	// Through the client: a reasoning model's request shape is accepted.
	c, err := oai.New(oai.Config{BaseURL: "http://" + addr + "/v1", APIKey: "k", Model: "o4-mini", Profile: oai.ProfileOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		Tools: tools, MaxTokens: 300})
	if err != nil || resp.Usage.ReasoningTokens <= 0 {
		t.Fatalf("%+v %v", resp.Usage, err)
	}
	// A reasoning model the name hides: the client sends max_tokens and the
	// simulator refuses it as OpenAI would. Told the model does not reason,
	// the client stops with the refusal, which names the fix; left to decide
	// (auto), it switches the request's shape and is answered.
	_, _, addr2 := start(t, Config{ReasoningModels: []string{"team-bot"}}, 5*time.Second)
	c, _ = oai.New(oai.Config{BaseURL: "http://" + addr2 + "/v1", APIKey: "k", Model: "team-bot", Profile: oai.ProfileOpenAI, Reasoning: oai.ReasoningNo})
	_, err = c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 10})
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindUnsupportedParameter || !strings.Contains(ce.Fix, "--reasoning yes") {
		t.Fatalf("hidden reasoning model: %v", err)
	}
	c, _ = oai.New(oai.Config{BaseURL: "http://" + addr2 + "/v1", APIKey: "k", Model: "team-bot", Profile: oai.ProfileOpenAI, Reasoning: oai.ReasoningAuto})
	if _, err := c.Complete(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 10}); err != nil {
		t.Fatalf("hidden reasoning model with --reasoning auto: %v", err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestAzureRoutesAndHeaders(t *testing.T) {
	s, _, addr := start(t, Config{RPM: 100, TPM: 100_000, APIKey: "az-key", Deployments: map[string]string{"prod-chat": "gpt-4.1", "think": "o4-mini"}}, 5*time.Second)
	base := "http://" + addr
	body := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":20}`
	key := map[string]string{"api-key": "az-key"}
	for _, tc := range []struct {
		path   string
		header map[string]string
		status int
		code   string
	}{
		{"/openai/deployments/prod-chat/chat/completions", key, 404, "404"},                                                                        // no api-version
		{"/openai/deployments/prod-chat/chat/completions?api-version=2024-10-21", nil, 401, "401"},                                                 // no key
		{"/openai/deployments/prod-chat/chat/completions?api-version=2024-10-21", map[string]string{"Authorization": "Bearer az-key"}, 401, "401"}, // bearer is not Azure's
		{"/openai/deployments/nope/chat/completions?api-version=2024-10-21", key, 404, "DeploymentNotFound"},
		{"/openai/deployments/prod-chat/chat/completions?api-version=2024-10-21", key, 200, ""},
	} {
		status, h, out := post(t, base+tc.path, tc.header, body)
		if status != tc.status || (tc.code != "" && errorOf(out)["code"] != tc.code) {
			t.Errorf("%s %v: %d %v, want %d %s", tc.path, tc.header, status, out, tc.status, tc.code)
		}
		if status == 200 {
			if h.Get("x-ratelimit-remaining-tokens") == "" || h.Get("x-ratelimit-limit-tokens") != "" || h.Get("x-ratelimit-reset-tokens") != "" {
				t.Errorf("azure headers %v: remaining only, as Azure sends them", h)
			}
		}
	}
	// The deployment's model decides: a reasoning deployment refuses max_tokens.
	if status, _, out := post(t, base+"/openai/deployments/think/chat/completions?api-version=2024-12-01-preview", key, body); status != 400 || errorOf(out)["param"] != "max_tokens" {
		t.Fatalf("reasoning deployment: %d %v", status, out)
	}

	// The client's Azure profile speaks all of it, probe included.
	c, err := oai.New(oai.Config{Profile: oai.ProfileAzure, BaseURL: base, APIKey: "az-key", APIVersion: "2024-10-21", Model: "prod-chat"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Probe(context.Background()); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if _, err := c.Complete(context.Background(), userRequest("where is A1001", 50)); err != nil {
		t.Fatal(err)
	}
	c, _ = oai.New(oai.Config{Profile: oai.ProfileAzure, BaseURL: base, APIKey: "az-key", APIVersion: "2024-10-21", Model: "nope"})
	if ce, ok := model.IsFatal(c.Probe(context.Background())); !ok || ce.Kind != model.KindUnknownModel {
		t.Fatalf("probe of an unknown deployment: %v", ce)
	}
	c, _ = oai.New(oai.Config{Profile: oai.ProfileAzure, BaseURL: base, APIKey: "wrong", APIVersion: "2024-10-21", Model: "prod-chat"})
	if ce, ok := model.IsFatal(c.Probe(context.Background())); !ok || ce.Kind != model.KindAuth || !strings.Contains(ce.Fix, "AZURE_OPENAI_API_KEY") {
		t.Fatalf("probe with a wrong key: %v", ce)
	}
	if st := s.Stats(); st.Unauthorized < 3 || st.NotFound < 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestOpenAIAuthAndModels(t *testing.T) {
	_, _, addr := start(t, Config{APIKey: "sk-right", Models: []string{"gpt-4o-mini"}}, 5*time.Second)
	mk := func(key, name string) *oai.Client {
		c, err := oai.New(oai.Config{Profile: oai.ProfileOpenAI, BaseURL: "http://" + addr + "/v1", APIKey: key, Model: name})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ctx := context.Background()
	if err := mk("sk-right", "gpt-4o-mini").Probe(ctx); err != nil {
		t.Fatal(err)
	}
	if ce, ok := model.IsFatal(mk("sk-wrong", "gpt-4o-mini").Probe(ctx)); !ok || ce.Kind != model.KindAuth {
		t.Fatalf("wrong key: %v", ce)
	}
	if ce, ok := model.IsFatal(mk("sk-right", "gpt-9").Probe(ctx)); !ok || ce.Kind != model.KindUnknownModel {
		t.Fatalf("unknown model: %v", ce)
	}
	_, err := mk("sk-wrong", "gpt-4o-mini").Complete(ctx, userRequest("hi", 10))
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindAuth || strings.Contains(err.Error(), "sk-wrong") {
		t.Fatalf("a call with a wrong key: %v", err)
	}
}

func TestToolCallsInContent(t *testing.T) {
	for _, style := range []string{"hermes", "json"} {
		_, _, addr := start(t, Config{ToolCallsInContent: style}, 5*time.Second)
		status, _, out := post(t, "http://"+addr+"/v1/chat/completions", nil,
			`{"model":"qwen","messages":[{"role":"user","content":"where is A1001"}],"tools":[{"type":"function","function":{"name":"lookup_order","parameters":{}}}],"tool_choice":"required"}`)
		if status != 200 {
			t.Fatalf("%s: %d %v", style, status, out)
		}
		msg := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
		content, _ := msg["content"].(string)
		if msg["tool_calls"] != nil || !strings.Contains(content, `"lookup_order"`) || strings.Contains(content, "call_1") {
			t.Fatalf("%s: message %v, want the call in the text without an id", style, msg)
		}
		if style == "hermes" && !strings.HasPrefix(content, "<tool_call>") {
			t.Fatalf("hermes content %q", content)
		}
		// The compatible profile recovers the call and mints its id.
		c, err := oai.New(oai.Config{BaseURL: "http://" + addr + "/v1", Model: "qwen"})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Complete(context.Background(), userRequest("where is A1001", 50))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != "lookup_order" ||
			resp.Message.ToolCalls[0].Arguments != `{"order_id":"A1001"}` || resp.Message.ToolCalls[0].ID == "" {
			t.Fatalf("%s: recovered %+v", style, resp.Message)
		}
	}
}

func TestPromptCacheAndTokenScale(t *testing.T) {
	s, c, _ := start(t, Config{TokenScale: 1.5}, 5*time.Second)
	ctx := context.Background()
	long := userRequest(strings.Repeat("The customer asks about order A1001 again. ", 200), 50)
	first, err := c.Complete(ctx, long)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(float64(PromptTokens(long)) * 1.5); first.Usage.PromptTokens < want || first.Usage.PromptTokens > want+1 {
		t.Fatalf("prompt %d, want 1.5 × %d", first.Usage.PromptTokens, PromptTokens(long))
	}
	if first.Usage.CachedPromptTokens != 0 {
		t.Fatalf("a first prompt was cached: %+v", first.Usage)
	}
	// The next turn resends the conversation: its prefix is cached, in
	// 128-token steps from 1024.
	next := long
	next.Messages = append(append([]model.Message(nil), long.Messages...),
		model.Message{Role: model.RoleAssistant, ToolCalls: first.Message.ToolCalls},
		model.Message{Role: model.RoleTool, ToolCallID: first.Message.ToolCalls[0].ID, Content: `{"status":"shipped"}`})
	second, err := c.Complete(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	cached := second.Usage.CachedPromptTokens
	if cached < 1024 || (cached-1024)%128 != 0 || cached > first.Usage.PromptTokens || cached >= second.Usage.PromptTokens {
		t.Fatalf("cached %d of %d (first prompt %d)", cached, second.Usage.PromptTokens, first.Usage.PromptTokens)
	}
	if st := s.Stats(); st.CachedPromptTokens != int64(cached) || st.PromptTokens != int64(first.Usage.PromptTokens+second.Usage.PromptTokens) {
		t.Fatalf("stats %+v", st)
	}
}
