package providersim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/suitegen/suitegen/pkg/model"
)

// The request side of the wire is decoded by hand-written types so tool
// parameters stay raw JSON, content may be a string or a list of parts, and
// which parameters were sent at all is known (a reasoning model refuses
// max_tokens and temperature whatever their value).
type wireRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Tools               []wireTool      `json:"tools"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ReasoningEffort     string          `json:"reasoning_effort"`
	Seed                *int64          `json:"seed"`
	Stream              bool            `json:"stream"`
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

// request is one parsed chat completion request: the conversation, and the
// parameters as sent.
type request struct {
	model.Request
	wire wireRequest
}

// allowance is the reply allowance the request asked for (max_tokens or
// max_completion_tokens), or def when it sent neither.
func (r request) allowance(def int) int {
	switch {
	case r.wire.MaxCompletionTokens != nil:
		return *r.wire.MaxCompletionTokens
	case r.wire.MaxTokens != nil:
		return *r.wire.MaxTokens
	}
	return def
}

// parseRequest decodes a chat completion request body.
func parseRequest(body []byte) (request, error) {
	var w wireRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&w); err != nil {
		return request{}, fmt.Errorf("%w: %v", errBadRequest, err)
	}
	if w.Stream {
		return request{}, fmt.Errorf("%w: streaming is not supported", errBadRequest)
	}
	if len(w.Messages) == 0 {
		return request{}, fmt.Errorf("%w: messages is empty", errBadRequest)
	}
	if (w.MaxTokens != nil && *w.MaxTokens < 0) || (w.MaxCompletionTokens != nil && *w.MaxCompletionTokens < 0) {
		return request{}, fmt.Errorf("%w: max_tokens is negative", errBadRequest)
	}
	req := request{Request: model.Request{Model: w.Model}, wire: w}
	req.MaxTokens = req.allowance(0)
	if w.Seed != nil {
		req.Seed = *w.Seed
	}
	for i, m := range w.Messages {
		switch m.Role {
		case model.RoleSystem, model.RoleUser, model.RoleAssistant, model.RoleTool, "developer":
		default:
			return request{}, fmt.Errorf("%w: messages[%d]: unknown role %q", errBadRequest, i, m.Role)
		}
		text, err := contentText(m.Content)
		if err != nil {
			return request{}, fmt.Errorf("%w: messages[%d].content: %v", errBadRequest, i, err)
		}
		mm := model.Message{Role: m.Role, Content: text, ToolCallID: m.ToolCallID, Name: m.Name}
		if m.Role == "developer" {
			mm.Role = model.RoleSystem
		}
		if m.Role == model.RoleTool && m.ToolCallID == "" {
			return request{}, fmt.Errorf("%w: messages[%d]: tool message without tool_call_id", errBadRequest, i)
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
			return request{}, fmt.Errorf("%w: tools[%d]: want a named function tool", errBadRequest, i)
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

// PromptTokens is what a request's prompt costs by the simulator's
// tokenizer (model.CountTokens with chat framing) before its TokenScale.
func PromptTokens(req model.Request) int { return model.EstimatePromptTokens(req) }

// CompletionTokens is what a reply costs.
func CompletionTokens(m model.Message) int { return model.CompletionTokens(m) }
