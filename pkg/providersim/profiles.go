package providersim

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/suitegen/suitegen/pkg/model"
)

// DefaultMaxOutput is the reply allowance counted against the tokens quota
// for a request that names none, as providers count the model's whole output
// limit then.
const DefaultMaxOutput = 4096

// dialect is the API a request came in by: OpenAI's (/v1, bearer token) or
// Azure's (/openai/deployments/{name}, api-key header, api-version query).
type dialect int

const (
	dialectOpenAI dialect = iota
	dialectAzure
)

// authorized checks the request's key the way its dialect carries it.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, d dialect) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	if d == dialectAzure {
		if r.Header.Get("api-key") == s.cfg.APIKey {
			return true
		}
		s.count(func(t *Stats, _ *Minute) { t.Errors++; t.Unauthorized++ })
		writeAzureError(w, http.StatusUnauthorized, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.")
		return false
	}
	if r.Header.Get("Authorization") == "Bearer "+s.cfg.APIKey {
		return true
	}
	s.count(func(t *Stats, _ *Minute) { t.Errors++; t.Unauthorized++ })
	writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{
		"message": "Incorrect API key provided. You can find your API key in your account settings.",
		"type":    "invalid_request_error", "param": nil, "code": "invalid_api_key"}})
	return false
}

// azureVersion checks the api-version query Azure requires.
func (s *Server) azureVersion(w http.ResponseWriter, r *http.Request) bool {
	v := r.URL.Query().Get("api-version")
	if v != "" && (len(s.cfg.APIVersions) == 0 || slices.Contains(s.cfg.APIVersions, v)) {
		return true
	}
	s.count(func(t *Stats, _ *Minute) { t.Errors++; t.NotFound++ })
	writeAzureError(w, http.StatusNotFound, "404", "Resource not found")
	return false
}

// deployment is the model an Azure deployment runs.
func (s *Server) deployment(name string) (string, bool) {
	if len(s.cfg.Deployments) == 0 {
		return name, name != ""
	}
	m, ok := s.cfg.Deployments[name]
	return m, ok
}

func (s *Server) serves(name string) bool {
	return len(s.cfg.Models) == 0 || slices.Contains(s.cfg.Models, name)
}

func (s *Server) unknownModel(w http.ResponseWriter, name string) {
	s.count(func(t *Stats, _ *Minute) { t.NotFound++ })
	writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{
		"message": fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", name),
		"type":    "invalid_request_error", "param": nil, "code": "model_not_found"}})
}

// reasoning reports whether a model behaves as a reasoning model.
func (s *Server) reasoning(name string) bool {
	if slices.Contains(s.cfg.ReasoningModels, name) {
		return true
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if name == p || strings.HasPrefix(name, p+"-") || strings.HasPrefix(name, p+".") {
			return true
		}
	}
	return false
}

// refuseForReasoning is the 400 a reasoning model answers to a parameter
// it does not take, or nil.
func refuseForReasoning(w wireRequest) map[string]any {
	unsupported := func(param, msg, code string) map[string]any {
		return map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": code}
	}
	if w.MaxTokens != nil {
		return unsupported("max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "unsupported_parameter")
	}
	if w.Temperature != nil && *w.Temperature != 1 {
		return unsupported("temperature", fmt.Sprintf("Unsupported value: 'temperature' does not support %v with this model. Only the default (1) value is supported.", *w.Temperature), "unsupported_value")
	}
	if w.TopP != nil && *w.TopP != 1 {
		return unsupported("top_p", fmt.Sprintf("Unsupported value: 'top_p' does not support %v with this model. Only the default (1) value is supported.", *w.TopP), "unsupported_value")
	}
	return nil
}

func writeAzureError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": msg}})
}

// scale applies the simulated tokenizer's factor.
func (s *Server) scale(n int) int {
	if s.cfg.TokenScale == 1 {
		return n
	}
	return int(math.Ceil(float64(n) * s.cfg.TokenScale))
}

// inContent rewrites an answer's tool calls into its text, without ids, as an
// open-weight server whose chat template has no tool support leaves them.
func inContent(out *openai.ChatCompletionResponse, m model.Message, style string) {
	type call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var calls []call
	for _, tc := range m.ToolCalls {
		args := json.RawMessage(tc.Arguments)
		if !json.Valid(args) {
			// What the model wrote, as a string: the client takes it verbatim.
			b, _ := json.Marshal(tc.Arguments)
			args = b
		}
		calls = append(calls, call{tc.Name, args})
	}
	var b strings.Builder
	if m.Content != "" {
		b.WriteString(m.Content)
		b.WriteString("\n")
	}
	switch style {
	case "hermes":
		for _, c := range calls {
			j, _ := json.Marshal(c)
			b.WriteString("<tool_call>\n" + string(j) + "\n</tool_call>\n")
		}
	default:
		var j []byte
		if len(calls) == 1 {
			j, _ = json.Marshal(calls[0])
		} else {
			j, _ = json.Marshal(calls)
		}
		b.Write(j)
	}
	ch := &out.Choices[0]
	ch.Message.ToolCalls = nil
	ch.Message.Content = strings.TrimSpace(b.String())
	ch.FinishReason = openai.FinishReasonStop
}

// promptCache is OpenAI's prompt caching as a client sees it: a prompt of at
// least 1024 tokens whose prefix (tools, then messages up to a message
// boundary) was sent in the last ten minutes has that prefix reported as
// cached_tokens, in steps of 128 tokens.
type promptCache struct {
	mu   sync.Mutex
	seen map[[32]byte]time.Time
}

const (
	cacheMinTokens = 1024
	cacheStep      = 128
	cacheTTL       = 10 * time.Minute
	cacheMaxKeys   = 1 << 16
)

func newPromptCache() *promptCache { return &promptCache{seen: map[[32]byte]time.Time{}} }

func (c *promptCache) cached(req model.Request, scale func(int) int, now time.Time) int {
	h := sha256.New()
	n := 3 // the reply's priming, as model.EstimatePromptTokens counts it
	for _, t := range req.Tools {
		_ = json.NewEncoder(h).Encode(t)
		n += 8 + model.CountTokens(t.Name) + model.CountTokens(t.Description) + model.CountTokens(string(t.Parameters))
	}
	var prefixes []struct {
		key    [32]byte
		tokens int
	}
	for _, m := range req.Messages {
		_ = json.NewEncoder(h).Encode(m)
		n += 3 + model.CountTokens(m.Role) + model.CountTokens(m.Content) + model.CountTokens(m.Name)
		for _, tc := range m.ToolCalls {
			n += 3 + model.CountTokens(tc.Name) + model.CountTokens(tc.Arguments)
		}
		var k [32]byte
		copy(k[:], h.Sum(nil))
		prefixes = append(prefixes, struct {
			key    [32]byte
			tokens int
		}{k, scale(n)})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	best := 0
	for _, p := range prefixes {
		if at, ok := c.seen[p.key]; ok && now.Sub(at) < cacheTTL && p.tokens >= cacheMinTokens {
			best = max(best, p.tokens)
		}
	}
	if len(c.seen) > cacheMaxKeys {
		for k, at := range c.seen {
			if now.Sub(at) >= cacheTTL {
				delete(c.seen, k)
			}
		}
	}
	if len(c.seen) <= cacheMaxKeys {
		for _, p := range prefixes {
			c.seen[p.key] = now
		}
	}
	if best < cacheMinTokens {
		return 0
	}
	return cacheMinTokens + (best-cacheMinTokens)/cacheStep*cacheStep
}
