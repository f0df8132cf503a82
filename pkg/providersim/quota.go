package providersim

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// quota is a sliding-window log of admitted requests: a request is admitted
// when the requests and tokens admitted in the last window, plus it, fit.
type quota struct {
	mu     sync.Mutex
	rpm    int // 0: unlimited
	tpm    int
	window time.Duration
	log    []admission // oldest first
	tokens int         // sum over log
}

type admission struct {
	at     time.Time
	tokens int
}

// state is what the headers say about the quota at one moment.
type state struct {
	remReq, remTok     int
	resetReq, resetTok time.Duration
}

func (q *quota) expire(now time.Time) {
	i := 0
	for i < len(q.log) && now.Sub(q.log[i].at) >= q.window {
		q.tokens -= q.log[i].tokens
		i++
	}
	q.log = q.log[i:]
}

func (q *quota) stateLocked(now time.Time) state {
	s := state{}
	if q.rpm > 0 {
		s.remReq = max(0, q.rpm-len(q.log))
	}
	if q.tpm > 0 {
		s.remTok = max(0, q.tpm-q.tokens)
	}
	if n := len(q.log); n > 0 {
		// Back to the full quota when the newest admission leaves the window.
		full := q.log[n-1].at.Add(q.window).Sub(now)
		s.resetReq, s.resetTok = full, full
	}
	return s
}

// admit admits a request costing tokens, or says how long until it would fit.
func (q *quota) admit(now time.Time, tokens int) (ok bool, retry time.Duration, s state) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expire(now)
	reqOK := q.rpm == 0 || len(q.log)+1 <= q.rpm
	tokOK := q.tpm == 0 || q.tokens+tokens <= q.tpm
	if reqOK && tokOK {
		q.log = append(q.log, admission{at: now, tokens: tokens})
		q.tokens += tokens
		return true, 0, q.stateLocked(now)
	}
	if !reqOK {
		// One admission must leave: the oldest that makes room.
		idx := len(q.log) + 1 - q.rpm - 1
		retry = max(retry, q.log[idx].at.Add(q.window).Sub(now))
	}
	if !tokOK {
		if tokens > q.tpm {
			retry = max(retry, q.window) // never fits; say a window like OpenAI does
		} else {
			freed := 0
			for _, a := range q.log {
				freed += a.tokens
				if q.tokens-freed+tokens <= q.tpm {
					retry = max(retry, a.at.Add(q.window).Sub(now))
					break
				}
			}
		}
	}
	return false, retry, q.stateLocked(now)
}

func (q *quota) current(now time.Time) state {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.expire(now)
	return q.stateLocked(now)
}

// setHeaders writes the x-ratelimit-* headers a provider sends on every
// answer: OpenAI sends limit, remaining and reset; Azure only remaining.
func (q *quota) setHeaders(h http.Header, s state, d dialect) {
	if q.rpm > 0 {
		h.Set("x-ratelimit-remaining-requests", strconv.Itoa(s.remReq))
		if d == dialectOpenAI {
			h.Set("x-ratelimit-limit-requests", strconv.Itoa(q.rpm))
			h.Set("x-ratelimit-reset-requests", formatReset(s.resetReq))
		}
	}
	if q.tpm > 0 {
		h.Set("x-ratelimit-remaining-tokens", strconv.Itoa(s.remTok))
		if d == dialectOpenAI {
			h.Set("x-ratelimit-limit-tokens", strconv.Itoa(q.tpm))
			h.Set("x-ratelimit-reset-tokens", formatReset(s.resetTok))
		}
	}
}

// formatReset writes durations the way OpenAI does: "20ms", "1s", "6m0s".
func formatReset(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return fmt.Sprintf("%dms", max(1, d.Milliseconds()))
	}
	return d.Round(time.Millisecond).String()
}
