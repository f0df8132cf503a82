package openai

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/suitegen/suitegen/pkg/model"
)

// maxRecoverInput bounds the reply text searched for tool calls.
const maxRecoverInput = 1 << 20

// recoverToolCalls finds tool calls an open-weight server left in the reply's
// text because the model's chat template has no tool support: Hermes/Qwen
// <tool_call>…</tool_call> blocks, Mistral's [TOOL_CALLS] list, Llama's
// <|python_tag|>, a ```json fence, or a reply that is nothing but a call
// object or list. A call names a function and carries its arguments as an
// object or a JSON string ("arguments", or "parameters" as Llama writes it).
// Only tools the request offered are taken, so prose that happens to be
// JSON stays prose. rest is the text around the calls.
func recoverToolCalls(content string, tools []model.ToolSpec) (calls []model.ToolCall, rest string) {
	if content == "" || len(content) > maxRecoverInput {
		return nil, content
	}
	offered := map[string]bool{}
	for _, t := range tools {
		offered[t.Name] = true
	}
	if len(offered) == 0 {
		return nil, content
	}
	take := func(raw string) bool {
		got := parseCalls(raw, offered)
		calls = append(calls, got...)
		return len(got) > 0
	}

	// Tagged blocks: every <tool_call>…</tool_call> (an unclosed last one
	// runs to the end, as truncated templates leave it).
	if strings.Contains(content, "<tool_call>") {
		var out strings.Builder
		s := content
		for {
			i := strings.Index(s, "<tool_call>")
			if i < 0 {
				out.WriteString(s)
				break
			}
			out.WriteString(s[:i])
			s = s[i+len("<tool_call>"):]
			body := s
			if j := strings.Index(s, "</tool_call>"); j >= 0 {
				body, s = s[:j], s[j+len("</tool_call>"):]
			} else {
				s = ""
			}
			if !take(body) {
				out.WriteString("<tool_call>" + body + "</tool_call>")
			}
		}
		if len(calls) > 0 {
			return calls, strings.TrimSpace(out.String())
		}
		return nil, content
	}
	for _, tag := range []string{"[TOOL_CALLS]", "<|python_tag|>"} {
		if i := strings.Index(content, tag); i >= 0 {
			if take(content[i+len(tag):]) {
				return calls, strings.TrimSpace(content[:i])
			}
			return nil, content
		}
	}
	if i := strings.Index(content, "```"); i >= 0 {
		body := content[i+3:]
		body = strings.TrimPrefix(strings.TrimPrefix(body, "json"), "JSON")
		if j := strings.Index(body, "```"); j >= 0 {
			if take(body[:j]) {
				return calls, strings.TrimSpace(content[:i] + body[j+3:])
			}
		}
		return nil, content
	}
	if take(content) {
		return calls, ""
	}
	return nil, content
}

// rawCall is a tool call as open-weight chat templates write it; arguments
// stay raw so their text (key order included) is what the model wrote.
type rawCall struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
	Function   *rawCall        `json:"function"`
	ToolCalls  []rawCall       `json:"tool_calls"`
}

// parseCalls reads one call object, a list of them, or {"tool_calls": [...]}.
func parseCalls(raw string, offered map[string]bool) []model.ToolCall {
	raw = strings.TrimSpace(raw)
	if raw == "" || (raw[0] != '{' && raw[0] != '[') {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	var list []rawCall
	if raw[0] == '[' {
		if dec.Decode(&list) != nil {
			return nil
		}
	} else {
		var one rawCall
		if dec.Decode(&one) != nil {
			return nil
		}
		if one.Name == "" && one.Function == nil && len(one.ToolCalls) > 0 {
			list = one.ToolCalls
		} else {
			list = []rawCall{one}
		}
	}
	if dec.More() { // trailing text after the JSON: not a bare call
		return nil
	}
	var out []model.ToolCall
	for _, rc := range list {
		id := rc.ID
		if rc.Function != nil {
			rc = *rc.Function
		}
		if !offered[rc.Name] {
			return nil
		}
		args := rc.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = rc.Parameters
		}
		tc := model.ToolCall{ID: id, Name: rc.Name, Arguments: "{}"}
		switch {
		case len(args) == 0 || string(args) == "null":
		case args[0] == '"':
			if json.Unmarshal(args, &tc.Arguments) != nil {
				return nil
			}
		default:
			var b bytes.Buffer
			if json.Compact(&b, args) != nil {
				return nil
			}
			tc.Arguments = b.String()
		}
		out = append(out, tc)
	}
	return out
}

// mintIDs gives every tool call without an id one that is unique in the
// conversation (it hashes the call's turn, place and content) and stable
// for the same answer, since the id goes back with the tool's result.
func mintIDs(calls []model.ToolCall, turn int) {
	seen := map[string]bool{}
	for _, tc := range calls {
		if tc.ID != "" {
			seen[tc.ID] = true
		}
	}
	for i := range calls {
		if calls[i].ID != "" {
			continue
		}
		sum := sha256.Sum256([]byte(strconv.Itoa(turn) + "\x00" + strconv.Itoa(i) + "\x00" + calls[i].Name + "\x00" + calls[i].Arguments))
		id := "call_" + hex.EncodeToString(sum[:8])
		for seen[id] {
			id += "x"
		}
		seen[id] = true
		calls[i].ID = id
	}
}
