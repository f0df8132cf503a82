package model

import (
	"context"
	"encoding/json"
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
	Model    string     `json:"model"`
	Messages []Message  `json:"messages"`
	Tools    []ToolSpec `json:"tools,omitempty"`
	// MaxTokens caps the reply (for a reasoning model: reply and reasoning
	// together). Providers count it against the tokens quota at admission.
	MaxTokens int   `json:"max_tokens,omitempty"`
	Seed      int64 `json:"seed,omitempty"`
	// Temperature, when set, is the sampling temperature. Providers whose
	// models accept only their default (reasoning models) never get it.
	Temperature *float32 `json:"temperature,omitempty"`
}

// Usage is what a call cost, as the provider counted it. Cached prompt
// tokens are part of PromptTokens and reasoning tokens part of
// CompletionTokens, as OpenAI-compatible providers report them.
type Usage struct {
	PromptTokens       int `json:"prompt_tokens"`
	CompletionTokens   int `json:"completion_tokens"`
	CachedPromptTokens int `json:"cached_prompt_tokens,omitempty"`
	ReasoningTokens    int `json:"reasoning_tokens,omitempty"`
}

// Total is prompt plus completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Add sums two usages.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens: u.PromptTokens + v.PromptTokens, CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		CachedPromptTokens: u.CachedPromptTokens + v.CachedPromptTokens, ReasoningTokens: u.ReasoningTokens + v.ReasoningTokens,
	}
}

// Response is the model's answer.
type Response struct {
	Message Message `json:"message"`
	Usage   Usage   `json:"usage"`
	// Limits are the provider's rate-limit headers, when it sent any.
	Limits Limits `json:"-"`
	// Timing says where the call's time went; it is filled on failures too.
	Timing Timing `json:"-"`
	// CostUSD is Usage at the model's price, when the client knows the price
	// (Priced); a model without a price costs nothing anyone can say.
	CostUSD float64 `json:"-"`
	Priced  bool    `json:"-"`
}

// Timing splits a call's wall time: waiting for the shared quota, then the
// provider's answer. Metrics keep them apart, so a slow limiter never reads
// as a slow provider.
type Timing struct {
	LimiterWait time.Duration
	Provider    time.Duration
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

// TokenQuota is a Client whose provider admits its requests under a tokens
// quota. TokensPerMinute is that quota, as configured or as the provider
// last reported it (the lower of the two), 0 while unknown. A writer keeps
// each request's reply allowance to a share of it.
type TokenQuota interface {
	TokensPerMinute() int
}

// Limiter is the cluster-wide provider quota as a provider client sees it
// (*ratelimit.Limiter implements it). It lives here, not beside the client,
// so the quota can be implemented without linking a provider SDK.
type Limiter interface {
	// Acquire blocks until one request and tokens tokens may be sent, and
	// charges them. A request the quota can never admit fails at once with a
	// *ConfigError of KindQuotaTooSmall.
	Acquire(ctx context.Context, tokens int) (Permit, error)
	// Pause makes every sharer wait d (the provider said 429).
	Pause(ctx context.Context, d time.Duration) error
}

// Permit is one admitted request. Sent says its request has just been
// written to the provider, which counts it in its window from then on (not
// from the admission: connection setup may lie between the two). Settle
// replaces its charge with what the provider counted against the quota (0
// when it refused the request, or never received it) and passes on what the
// provider's headers said of the quota.
type Permit interface {
	Sent(ctx context.Context) error
	Settle(ctx context.Context, tokens int, said Limits) error
}
