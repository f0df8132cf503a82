// Package model is the writer's view of a language model: a conversation with
// tool calls. The builtin deterministic writer and OpenAI-compatible providers
// both implement Client, so the writer loop cannot tell them apart.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Roles of a message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one turn of a conversation.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"` // on RoleTool messages
	Name       string     `json:"name,omitempty"`         // tool name on RoleTool messages
}

// ToolCall is a model's request to run a tool; Arguments is raw JSON text as the
// model produced it (it may be malformed).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec describes a tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema
}

// Request is one model call.
type Request struct {
	Model     string     `json:"model"`
	Messages  []Message  `json:"messages"`
	Tools     []ToolSpec `json:"tools,omitempty"`
	MaxTokens int        `json:"max_tokens,omitempty"`
	Seed      int64      `json:"seed,omitempty"`
}

// Usage is what a call cost.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Total is prompt plus completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Response is the model's answer.
type Response struct {
	Message Message `json:"message"`
	Usage   Usage   `json:"usage"`
	// Limits are the provider's rate-limit headers, when it sent any.
	Limits Limits `json:"-"`
}

// Limits is what a provider said of its quota (x-ratelimit-* headers); zero
// values mean "not said".
type Limits struct {
	LimitRequests     int
	LimitTokens       int
	RemainingRequests int
	RemainingTokens   int
	ResetRequests     time.Duration
	ResetTokens       time.Duration
	HaveRequests      bool
	HaveTokens        bool
}

// Client is a model a writer talks to.
type Client interface {
	// Name identifies the model in provenance, metrics and the budget meter.
	Name() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// RateLimitError is a provider refusal for rate or quota (HTTP 429). It is not
// a failure of the work: callers wait RetryAfter and ask again.
type RateLimitError struct {
	RetryAfter time.Duration
	Limits     Limits
	Message    string
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited (retry after %s): %s", e.RetryAfter, e.Message)
}

// ErrEmptyReply is returned when the model answers with neither text nor tool calls.
var ErrEmptyReply = errors.New("model: empty reply")

// IsRateLimited reports whether err is a provider rate-limit refusal.
func IsRateLimited(err error) (*RateLimitError, bool) {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl, true
	}
	return nil, false
}
