package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// ErrEmptyReply is returned when the model answers with neither text nor tool calls.
var ErrEmptyReply = errors.New("model: empty reply")

// ErrTimeout is returned when one call exceeded its own deadline (the
// caller's context was still live); it is retryable.
var ErrTimeout = errors.New("model: call timed out")

// Kind says what a provider refused about the configuration.
type Kind string

// Kinds of ConfigError.
const (
	// KindUnsupportedParameter: the model rejects a parameter or value
	// (max_tokens or temperature on a reasoning model, an api-version that
	// lacks a feature).
	KindUnsupportedParameter Kind = "unsupported-parameter"
	// KindAuth: the key is missing, wrong, or lacks access (401/403).
	KindAuth Kind = "auth"
	// KindUnknownModel: the model or Azure deployment does not exist at this
	// endpoint (404).
	KindUnknownModel Kind = "unknown-model"
	// KindBilling: the account has no quota or credit left (429
	// insufficient_quota): no wait makes it succeed.
	KindBilling Kind = "billing"
	// KindQuotaTooSmall: one request is larger than the quota admits in a
	// window; refused before it is sent. A writer whose conversation has
	// outgrown the quota ends that slice; one whose opening request alone
	// does not fit ends the run.
	KindQuotaTooSmall Kind = "quota-too-small"
	// KindUnreachable: no provider answers at the configured URL (start-up
	// probe only: during a run a broken connection is retried).
	KindUnreachable Kind = "unreachable"
)

// ConfigError is a refusal no retry can cure. The writer ends the run with it
// (no per-slice retries); Fix names what to change.
type ConfigError struct {
	Kind    Kind
	Status  int    // HTTP status, 0 when refused before sending
	Param   string // the offending parameter, when the provider named it
	Message string // the provider's message (secrets redacted)
	Fix     string
}

func (e *ConfigError) Error() string {
	var s string
	if e.Status > 0 {
		s = fmt.Sprintf("model: provider refused the configuration (%s, HTTP %d): %s", e.Kind, e.Status, e.Message)
	} else {
		s = fmt.Sprintf("model: %s: %s", e.Kind, e.Message)
	}
	if e.Fix != "" {
		s += "; fix: " + e.Fix
	}
	return s
}

// IsFatal reports whether err is a configuration refusal that ends the run.
func IsFatal(err error) (*ConfigError, bool) {
	var ce *ConfigError
	if errors.As(err, &ce) {
		return ce, true
	}
	return nil, false
}

// RateLimitError is a provider refusal for rate (HTTP 429). It is not a
// failure of the work: callers wait RetryAfter and ask again.
type RateLimitError struct {
	RetryAfter time.Duration
	Limits     Limits
	Message    string
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("rate limited (retry after %s): %s", e.RetryAfter, e.Message)
}

// IsRateLimited reports whether err is a provider rate-limit refusal.
func IsRateLimited(err error) (*RateLimitError, bool) {
	var rl *RateLimitError
	if errors.As(err, &rl) {
		return rl, true
	}
	return nil, false
}

// HTTPError is a provider answer with a failing status that is neither a
// 429 nor a configuration refusal.
type HTTPError struct {
	Status  int
	Message string
	// RetryAfter is what the provider asked us to wait (Retry-After or
	// x-ratelimit-reset-*), 0 when it said nothing.
	RetryAfter time.Duration
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("provider answered %d: %s", e.Status, e.Message)
}

// TransportError is a call that got no HTTP answer. Its text is redacted;
// the cause is kept for classification.
type TransportError struct {
	Msg string
	Err error
}

func (e *TransportError) Error() string { return "model: provider call failed: " + e.Msg }
func (e *TransportError) Unwrap() error { return e.Err }

// IsRetryable reports whether asking again later may succeed: rate limits,
// timeouts, 5xx (and 408/409), and broken connections. Configuration
// refusals and the caller's own cancellation are not retryable.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := IsFatal(err); ok {
		return false
	}
	if _, ok := IsRateLimited(err); ok {
		return true
	}
	if errors.Is(err, ErrTimeout) {
		return true
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Status >= 500 || he.Status == http.StatusRequestTimeout || he.Status == http.StatusConflict
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var te *TransportError
	if !errors.As(err, &te) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, new(*net.OpError))
}

// RetryDelay is how long to wait before asking again after a retryable
// err: what the provider asked for, or def when it asked for nothing.
func RetryDelay(err error, def time.Duration) time.Duration {
	if rl, ok := IsRateLimited(err); ok && rl.RetryAfter > 0 {
		return rl.RetryAfter
	}
	var he *HTTPError
	if errors.As(err, &he) && he.RetryAfter > 0 {
		return max(he.RetryAfter, def)
	}
	return def
}
