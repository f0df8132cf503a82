// Package model is the writer's view of a language model: a conversation with
// tool calls, what a call cost (tokens and money), and the typed errors a
// caller branches on. The builtin deterministic writer and the providers in
// model/openai both implement Client, so the writer loop cannot tell them
// apart; nothing here links a provider SDK.
//
// Errors are classified once, by the client that saw the provider's answer:
//
//   - *ConfigError: the provider refused the configuration (an unsupported
//     parameter, a bad key, an unknown model or deployment, an exhausted
//     account, a request larger than the quota allows). Asking again cannot
//     succeed; the run ends with the error's Fix. IsFatal reports it.
//   - *RateLimitError: HTTP 429; wait RetryAfter and ask again.
//   - *HTTPError with a 5xx (or 408/409), ErrTimeout, *TransportError of a
//     broken connection: retryable (IsRetryable), after RetryDelay.
//   - anything else fails the call, not the run.
package model
