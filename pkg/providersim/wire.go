package providersim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode"

	"github.com/suitegen/suitegen/pkg/model"
)

// The request side of the wire is decoded by hand-written types so tool
// parameters stay raw JSON and content may be a string or a list of parts.
type wireRequest struct {
	Model               string        `json:"model"`
	Messages            []wireMessage `json:"messages"`
	Tools               []wireTool    `json:"tools"`
	MaxTokens           int           `json:"max_tokens"`
	MaxCompletionTokens int           `json:"max_completion_tokens"`
	Seed                *int64        `json:"seed"`
	Stream              bool          `json:"stream"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Name       string          `json:"name"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// errBadRequest marks a request the simulator refuses with 400.
var errBadRequest = errors.New("bad request")

// parseRequest decodes a chat completion request body into a model.Request.
func parseRequest(body []byte) (model.Request, error) {
	var w wireRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&w); err != nil {
		return model.Request{}, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	if w.Stream {
		return model.Request{}, fmt.Errorf("%w: streaming is not supported", errBadRequest)
	}
	if len(w.Messages) == 0 {
		return model.Request{}, fmt.Errorf("%w: messages is empty", errBadRequest)
	}
	if w.MaxTokens < 0 || w.MaxCompletionTokens < 0 {
		return model.Request{}, fmt.Errorf("%w: max_tokens is negative", errBadRequest)
	}
	req := model.Request{Model: w.Model, MaxTokens: w.MaxTokens}
	if req.MaxTokens == 0 {
		req.MaxTokens = w.MaxCompletionTokens
	}
	if w.Seed != nil {
		req.Seed = *w.Seed
	}
	for i, m := range w.Messages {
		switch m.Role {
		case model.RoleSystem, model.RoleUser, model.RoleAssistant, model.RoleTool, "developer":
		default:
			return model.Request{}, fmt.Errorf("%w: messages[%d]: unknown role %q", errBadRequest, i, m.Role)
		}
		text, err := contentText(m.Content)
		if err != nil {
			return model.Request{}, fmt.Errorf("%w: messages[%d].content: %v", errBadRequest, i, err)
		}
		mm := model.Message{Role: m.Role, Content: text, ToolCallID: m.ToolCallID, Name: m.Name}
		if m.Role == "developer" {
			mm.Role = model.RoleSystem
		}
		if m.Role == model.RoleTool && m.ToolCallID == "" {
			return model.Request{}, fmt.Errorf("%w: messages[%d]: tool message without tool_call_id", errBadRequest, i)
		}
		for _, tc := range m.ToolCalls {
			mm.ToolCalls = append(mm.ToolCalls, model.ToolCall{
				ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments,
			})
		}
		req.Messages = append(req.Messages, mm)
	}
	for i, t := range w.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return model.Request{}, fmt.Errorf("%w: tools[%d]: want a named function tool", errBadRequest, i)
		}
		req.Tools = append(req.Tools, model.ToolSpec{
			Name: t.Function.Name, Description: t.Function.Description,
			Parameters: append(json.RawMessage(nil), t.Function.Parameters...),
		})
	}
	return req, nil
}

// contentText reads content given as a string, null, or a list of parts.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or a list of parts")
	}
	var b bytes.Buffer
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

// CountTokens is the simulator's deterministic tokenizer: a run of letters
// or digits is one token per four characters (at least one), any other
// non-space character is a token of its own. It lands within a few tens of
// percent of BPE tokenizers on English and JSON, which is what quota tests need.
func CountTokens(s string) int {
	n, run := 0, 0
	flush := func() {
		if run > 0 {
			n += (run + 3) / 4
			run = 0
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			run++
		case unicode.IsSpace(r):
			flush()
		default:
			flush()
			n++
		}
	}
	flush()
	return n
}

// PromptTokens is what a request's prompt costs: its messages and tools,
// with OpenAI's framing of three tokens per message and three for the reply.
func PromptTokens(req model.Request) int {
	n := 3
	for _, m := range req.Messages {
		n += 3 + CountTokens(m.Role) + CountTokens(m.Content) + CountTokens(m.Name)
		for _, tc := range m.ToolCalls {
			n += 3 + CountTokens(tc.Name) + CountTokens(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += 8 + CountTokens(t.Name) + CountTokens(t.Description) + CountTokens(string(t.Parameters))
	}
	return n
}

// CompletionTokens is what a reply costs.
func CompletionTokens(m model.Message) int {
	n := CountTokens(m.Content)
	for _, tc := range m.ToolCalls {
		n += 3 + CountTokens(tc.Name) + CountTokens(tc.Arguments)
	}
	return max(n, 1)
}
