package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/model"
)

// countingProxy is a loopback reverse proxy between suitegen and a provider
// that counts, by itself and per second, what passed through it: requests,
// 429s, and the tokens each admitted request counts against a provider's
// quota (the prompt tokens its answer reports plus the reply allowance the
// request asked for), and records every request's shape. It is the
// independent counter quota and wire-format claims are judged by: it shares
// no code with the simulator's own statistics or with suitegen's limiter.
type countingProxy struct {
	target string // http://host:port of the provider
	url    string // http://host:port of the proxy
	srv    *http.Server
	client *http.Client

	mu      sync.Mutex
	start   time.Time
	seconds []second
	shapes  []shape
	// sections are the admitted requests' prompt tokens by part of the
	// prompt (promptSections), where a request's tokens go.
	sections map[string]int64
}

// second is what one second of traffic held, by the second the request
// arrived in (when a provider admits and counts it).
type second struct {
	Requests, RateLimited, Failed, Admitted int
	QuotaTokens, Billed                     int64
	// Prompt, Completion and Cached split Billed as the answers' usage
	// reports it (cached prompt tokens are inside Prompt).
	Prompt, Completion, Cached int64
}

// shape is one request as it went out, and what its answer was.
type shape struct {
	Method, Path, Query string
	Bearer, APIKey      bool     // how the key was sent
	Params              []string // the body's top-level keys
	Status              int
	AnswerToolCalls     bool // the answer had structured tool_calls
	AnswerToolTag       bool // the answer's text held a <tool_call>
}

func (s shape) has(param string) bool {
	for _, p := range s.Params {
		if p == param {
			return true
		}
	}
	return false
}

func newCountingProxy(t testing.TB, target string) *countingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countingProxy{target: strings.TrimRight(target, "/"), url: "http://" + ln.Addr().String(), start: time.Now(),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.srv.Shutdown(ctx)
	})
	return p
}

func (p *countingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, _ := io.ReadAll(r.Body)
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := p.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)

	sh := shape{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Status: resp.StatusCode,
		Bearer: strings.HasPrefix(r.Header.Get("Authorization"), "Bearer "), APIKey: r.Header.Get("api-key") != ""}
	var in map[string]json.RawMessage
	_ = json.Unmarshal(body, &in)
	for k := range in {
		sh.Params = append(sh.Params, k)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content   string            `json:"content"`
				ToolCalls []json.RawMessage `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens        int64 `json:"prompt_tokens"`
			CompletionTokens    int64 `json:"completion_tokens"`
			PromptTokensDetails struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	_ = json.Unmarshal(answer, &out)
	for _, c := range out.Choices {
		sh.AnswerToolCalls = sh.AnswerToolCalls || len(c.Message.ToolCalls) > 0
		sh.AnswerToolTag = sh.AnswerToolTag || strings.Contains(c.Message.Content, "<tool_call>")
	}
	chat := r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions")

	p.mu.Lock()
	defer p.mu.Unlock()
	p.shapes = append(p.shapes, sh)
	if !chat {
		return
	}
	i := int(arrived.Sub(p.start) / time.Second)
	for len(p.seconds) <= i {
		p.seconds = append(p.seconds, second{})
	}
	s := &p.seconds[i]
	s.Requests++
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		s.RateLimited++
	case resp.StatusCode >= 300:
		s.Failed++
	default:
		s.Admitted++
		allowance := int64(0)
		for _, k := range []string{"max_completion_tokens", "max_tokens"} {
			if v, ok := in[k]; ok {
				var n int64
				if json.Unmarshal(v, &n) == nil && n > allowance {
					allowance = n
				}
			}
		}
		if p.sections == nil {
			p.sections = map[string]int64{}
		}
		for k, n := range promptSections(body) {
			p.sections[k] += int64(n)
		}
		s.QuotaTokens += out.Usage.PromptTokens + allowance
		s.Billed += out.Usage.PromptTokens + out.Usage.CompletionTokens
		s.Prompt += out.Usage.PromptTokens
		s.Completion += out.Usage.CompletionTokens
		s.Cached += out.Usage.PromptTokensDetails.CachedTokens
	}
}

// promptSections splits a chat completion request's prompt, as
// model.EstimatePromptTokens counts it, into its parts: the system prompt,
// the opening user message (a writer's brief), the tool schemas, the model's
// own earlier replies, the tools' answers and later user messages (digests,
// nudges). The parts sum to the whole estimate, less the reply's priming.
func promptSections(body []byte) map[string]int {
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			Content    string `json:"content"`
			Name       string `json:"name"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	empty := model.EstimatePromptTokens(model.Request{})
	count := func(r model.Request) int { return model.EstimatePromptTokens(r) - empty }
	out := map[string]int{}
	for _, t := range req.Tools {
		f := t.Function
		out["tools"] += count(model.Request{Tools: []model.ToolSpec{{Name: f.Name, Description: f.Description, Parameters: f.Parameters}}})
	}
	for i, m := range req.Messages {
		msg := model.Message{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		part := "later user messages"
		switch {
		case m.Role == model.RoleSystem:
			part = "system"
		case m.Role == model.RoleUser && i == 1:
			part = "brief"
		case m.Role == model.RoleAssistant:
			part = "replies"
		case m.Role == model.RoleTool:
			part = "tool answers"
		}
		out[part] += count(model.Request{Messages: []model.Message{msg}})
	}
	return out
}

// promptParts are the sections seen so far.
func (p *countingProxy) promptParts() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int64{}
	for k, n := range p.sections {
		out[k] = n
	}
	return out
}

// chatShapes are the chat completion requests seen.
func (p *countingProxy) chatShapes() []shape {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []shape
	for _, s := range p.shapes {
		if s.Method == http.MethodPost && strings.HasSuffix(s.Path, "/chat/completions") {
			out = append(out, s)
		}
	}
	return out
}

func (p *countingProxy) allShapes() []shape {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]shape(nil), p.shapes...)
}

// totals sums every second.
func (p *countingProxy) totals() second {
	p.mu.Lock()
	defer p.mu.Unlock()
	var t second
	for _, s := range p.seconds {
		t.add(s)
	}
	return t
}

func (t *second) add(s second) {
	t.Requests += s.Requests
	t.RateLimited += s.RateLimited
	t.Failed += s.Failed
	t.Admitted += s.Admitted
	t.QuotaTokens += s.QuotaTokens
	t.Billed += s.Billed
	t.Prompt += s.Prompt
	t.Completion += s.Completion
	t.Cached += s.Cached
}

// firstSecond is the index of the first second with a request, -1 if none.
func (p *countingProxy) firstSecond() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range p.seconds {
		if s.Requests > 0 {
			return i
		}
	}
	return -1
}

// minutes sums whole minutes counted from the first second with a request:
// minute k is seconds [first+60k, first+60k+60). Only minutes that have
// ended are returned.
func (p *countingProxy) minutes(window time.Duration) []second {
	first := p.firstSecond()
	if first < 0 {
		return nil
	}
	per := int(window / time.Second)
	now := int(time.Since(p.start) / time.Second)
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []second
	for m := 0; first+(m+1)*per <= now; m++ {
		var s second
		for i := first + m*per; i < first+(m+1)*per && i < len(p.seconds); i++ {
			s.add(p.seconds[i])
		}
		out = append(out, s)
	}
	return out
}

func (s second) String() string {
	return fmt.Sprintf("requests %d admitted %d 429s %d failed %d quota tokens %d billed %d",
		s.Requests, s.Admitted, s.RateLimited, s.Failed, s.QuotaTokens, s.Billed)
}
