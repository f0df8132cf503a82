package provider

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/ratelimit"
)

// lookEvery bounds how often a process reads the shared quota's headroom
// into its gauges: one extra query per call would add a third to the
// limiter's load for a number nobody reads faster than a scrape.
const lookEvery = 2 * time.Second

// metered is the limiter as a provider client sees it, recording how long
// each admission waited and, at most every lookEvery, the quota and its
// headroom. It adds no goroutine: the look happens on the caller's path
// after an admission. It lives here, not in pkg/ratelimit, so the limiter
// does not link the metrics (and through them the ledger and the prover).
type metered struct {
	lim *ratelimit.Limiter
	mx  *metrics.Metrics
	log *slog.Logger

	mu   sync.Mutex
	last time.Time
}

// meter wraps l, made for a quota of rpm requests and tpm tokens a minute,
// to record into mx (its provider instruments carry no run label: every run
// shares the quota).
func meter(l *ratelimit.Limiter, rpm, tpm int, mx *metrics.Metrics, log *slog.Logger) *metered {
	if log == nil {
		log = slog.Default()
	}
	mx.RequestsPerMinuteQuota.Set(float64(rpm))
	mx.TokensPerMinuteQuota.Set(float64(tpm))
	return &metered{lim: l, mx: mx, log: log}
}

// Acquire is Limiter.Acquire, timed.
func (m *metered) Acquire(ctx context.Context, tokens int) (model.Permit, error) {
	start := time.Now()
	p, err := m.lim.Acquire(ctx, tokens)
	if err != nil {
		return nil, err
	}
	m.mx.LimiterWait.Observe(time.Since(start).Seconds())
	m.look(ctx)
	return p, nil
}

// Pause is Limiter.Pause.
func (m *metered) Pause(ctx context.Context, d time.Duration) error { return m.lim.Pause(ctx, d) }

// look sets the quota and headroom gauges, unless it looked recently. A
// dimension whose limit is unknown leaves its gauges alone.
func (m *metered) look(ctx context.Context) {
	m.mu.Lock()
	if time.Since(m.last) < lookEvery {
		m.mu.Unlock()
		return
	}
	m.last = time.Now()
	m.mu.Unlock()
	q, err := m.lim.Available(ctx)
	if err != nil {
		m.log.Debug("reading the provider quota's headroom", "err", err)
		return
	}
	if !math.IsInf(q.RequestsLeft, 1) {
		m.mx.LimiterRequestsAvailable.Set(q.RequestsLeft)
		m.mx.RequestsPerMinuteQuota.Set(q.RPM)
	}
	if !math.IsInf(q.TokensLeft, 1) {
		m.mx.LimiterTokensAvailable.Set(q.TokensLeft)
		m.mx.TokensPerMinuteQuota.Set(q.TPM)
	}
}

var _ model.Limiter = (*metered)(nil)
