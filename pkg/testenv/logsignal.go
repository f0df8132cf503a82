package testenv

import (
	"context"
	"log/slog"
	"strings"
	"sync"
)

// LogSignal is a slog handler whose Seen closes on the first record whose
// message holds Want: a test waits on what a role says it is doing (the
// database is down, an outage paused it) instead of on the clock.
type LogSignal struct {
	Want string
	once *sync.Once
	seen chan struct{}
}

// NewLogSignal returns a handler waiting for a message holding want.
func NewLogSignal(want string) LogSignal {
	return LogSignal{Want: want, once: &sync.Once{}, seen: make(chan struct{})}
}

// Seen closes once a record holding Want has been logged.
func (h LogSignal) Seen() <-chan struct{} { return h.seen }

func (h LogSignal) Enabled(context.Context, slog.Level) bool { return true }

func (h LogSignal) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.Want) {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}

func (h LogSignal) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h LogSignal) WithGroup(string) slog.Handler      { return h }
