package model

// Estimation constants. Providers count a request against the tokens/min
// quota at admission as prompt + max output, so that is what is reserved.
const (
	charsPerToken       = 4
	tokensPerMessage    = 4    // role and framing around each message
	tokensPerTool       = 8    // framing of a function tool
	DefaultOutputTokens = 1024 // reserved when a request leaves MaxTokens unset
)

// EstimateTokens is a deterministic, slightly generous guess of what req will
// cost: about one token per four characters of messages and tools, plus
// framing, plus the maximum output (DefaultOutputTokens when unset).
func EstimateTokens(req Request) int {
	chars := 0
	n := 3 // the reply's priming
	for _, m := range req.Messages {
		n += tokensPerMessage
		chars += len(m.Role) + len(m.Content) + len(m.Name) + len(m.ToolCallID)
		for _, tc := range m.ToolCalls {
			n += tokensPerMessage
			chars += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += tokensPerTool
		chars += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	n += (chars + charsPerToken - 1) / charsPerToken
	if req.MaxTokens > 0 {
		n += req.MaxTokens
	} else {
		n += DefaultOutputTokens
	}
	return n
}
