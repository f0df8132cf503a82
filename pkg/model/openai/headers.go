package openai

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/model"
)

// headerCapture records, per call, the status and headers of the response, so
// a 429's retry-after survives go-openai's error path (which drops headers).
type headerCapture struct{ base http.RoundTripper }

type captureKey struct{}

type callCapture struct {
	status int
	header http.Header
}

func (h *headerCapture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.base.RoundTrip(req)
	if err == nil {
		if c, ok := req.Context().Value(captureKey{}).(*callCapture); ok {
			c.status = resp.StatusCode
			c.header = resp.Header.Clone()
		}
	}
	return resp, err
}

// parseLimits reads x-ratelimit-* headers; anything unparsable is "not said".
func parseLimits(h http.Header) model.Limits {
	var l model.Limits
	if h == nil {
		return l
	}
	var ok1, ok2 bool
	l.LimitRequests, ok1 = headerInt(h, "x-ratelimit-limit-requests")
	l.RemainingRequests, ok2 = headerInt(h, "x-ratelimit-remaining-requests")
	l.HaveRequests = ok1 || ok2
	l.ResetRequests, _ = parseReset(h.Get("x-ratelimit-reset-requests"))
	l.LimitTokens, ok1 = headerInt(h, "x-ratelimit-limit-tokens")
	l.RemainingTokens, ok2 = headerInt(h, "x-ratelimit-remaining-tokens")
	l.HaveTokens = ok1 || ok2
	l.ResetTokens, _ = parseReset(h.Get("x-ratelimit-reset-tokens"))
	return l
}

func headerInt(h http.Header, name string) (int, bool) {
	v := strings.TrimSpace(h.Get(name))
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || f < 0 || math.IsNaN(f) || f > math.MaxInt32 {
			return 0, false
		}
		return int(f), true
	}
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	return int(n), true
}

// maxWait bounds anything a provider header can make us wait.
const maxWait = time.Hour

// parseReset reads a reset header: a Go-style duration ("6m0s", "1s",
// "20ms", "1h2m3.5s") or plain seconds.
func parseReset(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return 0, false
		}
		return min(d, maxWait), true
	}
	return parseSeconds(v)
}

func parseSeconds(v string) (time.Duration, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	if f > maxWait.Seconds() {
		return maxWait, true
	}
	return time.Duration(f * float64(time.Second)), true
}

// retryAfter is how long a 429 asks us to wait: retry-after-ms, retry-after
// (seconds or an HTTP date), the longer x-ratelimit-reset-*, or def.
func retryAfter(h http.Header, now time.Time, def time.Duration) time.Duration {
	if d, ok := askedWait(h, now); ok {
		return d
	}
	return def
}

// serverRetryAfter is what a 5xx asked us to wait (Retry-After), 0 when it
// said nothing. Its x-ratelimit-reset-* describe the quota, not the outage.
func serverRetryAfter(h http.Header, now time.Time) time.Duration {
	d, _ := retryAfterHeader(h, now)
	return d
}

func askedWait(h http.Header, now time.Time) (time.Duration, bool) {
	if d, ok := retryAfterHeader(h, now); ok {
		return d, true
	}
	return resetWait(h)
}

// retryAfterHeader reads retry-after-ms, then retry-after (seconds or an
// HTTP date).
func retryAfterHeader(h http.Header, now time.Time) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 0 && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return min(time.Duration(f*float64(time.Millisecond)), maxWait), true
		}
	}
	if v := h.Get("retry-after"); v != "" {
		if d, ok := parseSeconds(v); ok {
			return d, true
		}
		if t, err := http.ParseTime(v); err == nil {
			return min(max(t.Sub(now), 0), maxWait), true
		}
	}
	return 0, false
}

// resetWait is when the dimension that ran out resets (x-ratelimit-reset-*).
func resetWait(h http.Header) (time.Duration, bool) {
	if h == nil {
		return 0, false
	}
	rr, ok1 := parseReset(h.Get("x-ratelimit-reset-requests"))
	rt, ok2 := parseReset(h.Get("x-ratelimit-reset-tokens"))
	if ok1 && ok2 {
		// The dimension that ran out says when to come back.
		if rem, ok := headerInt(h, "x-ratelimit-remaining-requests"); ok && rem > 0 && rt > 0 {
			return rt, true
		}
		if rem, ok := headerInt(h, "x-ratelimit-remaining-tokens"); ok && rem > 0 && rr > 0 {
			return rr, true
		}
	}
	if ok1 || ok2 {
		if d := max(rr, rt); d > 0 {
			return d, true
		}
	}
	return 0, false
}
