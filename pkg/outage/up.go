package outage

import (
	"sync"
	"time"
)

// Up tells the roles of one process paused by an outage that their servers
// answer again: whichever sees them answer first (a probe, a slice written)
// says so, and every paused role probes at once instead of at the end of its
// backoff wait. The zero value is ready; a nil *Up never wakes anyone.
type Up struct {
	mu sync.Mutex
	ch chan struct{}
}

// Wait returns a channel closed by the next Signal.
func (u *Up) Wait() <-chan struct{} {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ch == nil {
		u.ch = make(chan struct{})
	}
	return u.ch
}

// Signal wakes every Wait so far.
func (u *Up) Signal() {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.ch != nil {
		close(u.ch)
		u.ch = nil
	}
}

// Jitter is a backoff wait d drawn between half and all of it, r in [0, 1)
// placing it: roles that met one outage together do not probe together.
func Jitter(d time.Duration, r float64) time.Duration {
	return d/2 + time.Duration(r*float64(d-d/2))
}
