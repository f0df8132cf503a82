package e2e

// This file holds what the fault suite (faults_test.go) needs that is not a
// test: the fault log the harness keeps and the report it prints. It is a
// non-test file so `go vet` sees it, but nothing outside the tests uses it.

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// FaultEvent is one fault the harness injected, or one the system reported
// absorbing (a redelivered or dead slice, a provider fault).
type FaultEvent struct {
	At     time.Duration `json:"at"`
	Kind   string        `json:"kind"`
	Detail string        `json:"detail,omitempty"`
}

// FaultLog is the harness's record of injected faults, safe for concurrent use.
type FaultLog struct {
	start  time.Time
	mu     sync.Mutex
	events []FaultEvent
}

// NewFaultLog starts a log whose times are measured from now.
func NewFaultLog() *FaultLog { return &FaultLog{start: time.Now()} }

// Add records one event.
func (l *FaultLog) Add(kind, format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, FaultEvent{At: time.Since(l.start).Round(time.Millisecond), Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

// Count is how many events of kind were recorded.
func (l *FaultLog) Count(kind string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// Events is a copy of the log.
func (l *FaultLog) Events() []FaultEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]FaultEvent(nil), l.events...)
}

// FaultReport is what a fault run ends with: every fault absorbed, by kind,
// and what the suite came out as.
type FaultReport struct {
	Command      string           `json:"command"`
	Scenarios    int              `json:"scenarios_asked"`
	Kept         int              `json:"scenarios_kept"`
	Duplicates   int              `json:"duplicates"`
	Lost         int              `json:"lost"`
	Identical    bool             `json:"identical_to_fault_free_run"`
	Elapsed      string           `json:"elapsed"`
	Injected     map[string]int   `json:"injected"`
	ProviderSim  map[string]int64 `json:"provider_faults"`
	ProviderReqs int64            `json:"provider_requests"`
	Redelivered  int              `json:"slices_redelivered"`
	Dead         []string         `json:"dead_slices"`
	Refusals     map[string]int   `json:"gate_refusals"`
	Events       []FaultEvent     `json:"events"`
}

// Summarise fills Injected from the events.
func (r *FaultReport) Summarise(events []FaultEvent) {
	r.Injected = map[string]int{}
	for _, e := range events {
		r.Injected[e.Kind]++
	}
	r.Events = events
}

// String is the report as indented JSON (map keys sorted).
func (r FaultReport) String() string {
	b, _ := json.MarshalIndent(r, "", "  ")
	return string(b)
}
