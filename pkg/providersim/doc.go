// Package providersim is an OpenAI-compatible provider on loopback (the
// `suitegen provider-sim` command): POST /v1/chat/completions, GET /v1/models
// and GET /stats. It answers like a model by delegating to a model.Client, and
// it behaves like a provider where suitegen's economics are tested: a
// requests/min and tokens/min quota enforced over a sliding window (tokens
// counted at admission as prompt + max_tokens, as OpenAI does), 429s with
// retry-after and x-ratelimit-* headers, realistic deterministic usage
// counts, latency, and seeded fault injection (429, 500, malformed tool
// arguments, unknown tools, stalls), every one of them counted in /stats.
package providersim
