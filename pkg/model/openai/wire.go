package openai

import (
	"encoding/json"
	"fmt"

	sdk "github.com/sashabaranov/go-openai"

	"github.com/suitegen/suitegen/pkg/model"
)

// toWire shapes req for the profile: the reply allowance is always sent
// (providers count an unset one as the model's whole output limit), as
// max_completion_tokens for reasoning models and max_tokens otherwise;
// reasoning models get no temperature; tool_choice is never sent.
func (c *Client) toWire(req model.Request) (sdk.ChatCompletionRequest, error) {
	w := sdk.ChatCompletionRequest{Model: req.Model}
	if w.Model == "" {
		w.Model = c.cfg.Model
	}
	out := model.OutputTokens(req)
	if c.reasoning(w.Model) {
		w.MaxCompletionTokens = out
		w.ReasoningEffort = c.cfg.ReasoningEffort
	} else {
		//lint:ignore SA1019 max_tokens is what every OpenAI-compatible server (vLLM, Ollama, llama.cpp) and non-reasoning model reads
		w.MaxTokens = out
		if req.Temperature != nil {
			w.Temperature = *req.Temperature
		}
	}
	if req.Seed != 0 {
		s := int(req.Seed)
		w.Seed = &s
	}
	for i, m := range req.Messages {
		wm := sdk.ChatCompletionMessage{Role: m.Role, Content: m.Content}
		switch m.Role {
		case model.RoleTool:
			if m.ToolCallID == "" {
				return w, fmt.Errorf("openai: message %d: tool message without tool_call_id", i)
			}
			wm.ToolCallID = m.ToolCallID
		case model.RoleAssistant:
			for _, tc := range m.ToolCalls {
				wm.ToolCalls = append(wm.ToolCalls, sdk.ToolCall{
					ID: tc.ID, Type: sdk.ToolTypeFunction,
					Function: sdk.FunctionCall{Name: tc.Name, Arguments: tc.Arguments},
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
		w.Tools = append(w.Tools, sdk.Tool{
			Type:     sdk.ToolTypeFunction,
			Function: &sdk.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return w, nil
}
