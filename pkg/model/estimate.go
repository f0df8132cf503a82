package model

import "unicode"

// DefaultOutputTokens is reserved for the reply when a request leaves
// MaxTokens unset.
const DefaultOutputTokens = 1024

// CountTokens is a deterministic, tokenizer-free token count: a run of
// letters or digits is one token per four characters (at least one), any
// other non-space character is a token of its own. It lands within a few tens
// of percent of BPE tokenizers on English and above them on JSON (BPE merges
// punctuation runs that this counts one by one), so as a quota estimate it
// errs on the side of reserving too much. Provider clients calibrate it
// against the prompt tokens providers report.
func CountTokens(s string) int {
	n, run := 0, 0
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			run++
		case unicode.IsSpace(r):
			n += (run + 3) / 4
			run = 0
		default:
			n += (run+3)/4 + 1
			run = 0
		}
	}
	return n + (run+3)/4
}

// Framing OpenAI-compatible chat templates add around the text.
const (
	tokensPerMessage = 3 // role markers around each message and tool call
	tokensPerTool    = 8 // a function tool's wrapper
	tokensForReply   = 3 // the reply's priming
)

// EstimatePromptTokens is what req's prompt should cost by CountTokens: its
// messages, tool calls and tools, with chat framing.
func EstimatePromptTokens(req Request) int {
	n := tokensForReply
	for _, m := range req.Messages {
		n += tokensPerMessage + CountTokens(m.Role) + CountTokens(m.Content) + CountTokens(m.Name)
		for _, tc := range m.ToolCalls {
			n += tokensPerMessage + CountTokens(tc.Name) + CountTokens(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += tokensPerTool + CountTokens(t.Name) + CountTokens(t.Description) + CountTokens(string(t.Parameters))
	}
	return n
}

// OutputTokens is the reply allowance req reserves: MaxTokens, or
// DefaultOutputTokens when unset.
func OutputTokens(req Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return DefaultOutputTokens
}

// EstimateTokens is what req should count against a tokens-per-minute quota
// at admission, as OpenAI-compatible providers count it: the prompt estimate
// plus the maximum output.
func EstimateTokens(req Request) int {
	return EstimatePromptTokens(req) + OutputTokens(req)
}

// CompletionTokens is what a reply should cost by CountTokens.
func CompletionTokens(m Message) int {
	n := CountTokens(m.Content)
	for _, tc := range m.ToolCalls {
		n += tokensPerMessage + CountTokens(tc.Name) + CountTokens(tc.Arguments)
	}
	return max(n, 1)
}
