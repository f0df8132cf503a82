// Package allowance sizes the reply allowance of a model request
// (max_tokens, or max_completion_tokens for a reasoning model) from the
// replies seen to earlier requests of the same kind. A provider counts the
// whole allowance against its tokens-per-minute quota at admission, and so
// does suitegen's limiter, while it bills only what was written: an
// allowance fitted to the replies a kind of request gets brings what the
// limiter admits close to what the provider bills, so more requests fit a
// window.
package allowance

import (
	"slices"
	"sync"
)

// Defaults of a Sizer.
const (
	// Window is how many recent replies of a kind are remembered.
	Window = 64
	// Warmup is how many replies of a kind are seen before their lengths
	// size its allowance; until then a request gets the cap.
	Warmup = 4
	// Floor is the least allowance ever given: a short reply (a finish)
	// must never be cut.
	Floor = 256
	// Percentile of the remembered replies the allowance covers, and
	// Margin the factor over it: replies vary from one scenario to the next.
	Percentile = 0.95
	Margin     = 1.25
)

// Sizer sizes allowances by kind of request. It is safe for concurrent use;
// the zero value is not usable, New makes one.
type Sizer struct {
	cap int

	mu   sync.Mutex
	seen map[string]*ring
}

type ring struct {
	n    int
	used [Window]int
}

// New makes a sizer whose allowances never exceed limit (the configured
// reply cap) nor fall below min(Floor, limit).
func New(limit int) *Sizer {
	return &Sizer{cap: max(limit, 1), seen: map[string]*ring{}}
}

// Cap is the largest allowance the sizer gives.
func (s *Sizer) Cap() int { return s.cap }

// Size is the allowance for a request of kind: the cap until Warmup replies
// of the kind were seen, then the Percentile of the last Window replies
// times Margin, within [Floor, cap].
func (s *Sizer) Size(kind string) int {
	s.mu.Lock()
	r := s.seen[kind]
	var used []int
	if r != nil && r.n >= Warmup {
		used = append(used, r.used[:min(r.n, Window)]...)
	}
	s.mu.Unlock()
	if used == nil {
		return s.cap
	}
	slices.Sort(used)
	p := used[min(len(used)-1, int(Percentile*float64(len(used))))]
	return min(max(int(float64(p)*Margin+0.999), min(Floor, s.cap)), s.cap)
}

// Observe records the reply to a request of kind that asked for allowance
// tokens and used used of them. A reply that used the whole allowance was
// cut short (or would have been): its true length is unknown, so the kind's
// next allowances are the cap until replies fit again.
func (s *Sizer) Observe(kind string, allowance, used int) {
	if used <= 0 {
		return
	}
	if used >= allowance {
		used = s.cap
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.seen[kind]
	if r == nil {
		r = &ring{}
		s.seen[kind] = r
	}
	r.used[r.n%Window] = min(used, s.cap)
	r.n++
}
