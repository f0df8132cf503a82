package wire

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

// LimiterLookEvery bounds how often a process reads the shared bucket's
// headroom into its gauges: one extra query per call would double the
// limiter's load for a number nobody reads faster than a scrape.
const LimiterLookEvery = 2 * time.Second

// meteredLimiter is the shared provider limiter as the model client sees it,
// recording how long each take waited and, at most every LimiterLookEvery, how
// much the bucket has left. It adds no goroutine: the look happens on the
// caller's path after a successful take.
type meteredLimiter struct {
	lim *ratelimit.Limiter
	mx  *metrics.Metrics
	log *slog.Logger

	mu   sync.Mutex
	last time.Time
}

func meterLimiter(lim *ratelimit.Limiter, mx *metrics.Metrics, rpm, tpm int, log *slog.Logger) *meteredLimiter {
	// The configured quota; 0 (learn it from headers) stays 0 on the gauge.
	mx.RequestsPerMinuteQuota.Set(float64(rpm))
	mx.TokensPerMinuteQuota.Set(float64(tpm))
	return &meteredLimiter{lim: lim, mx: mx, log: log}
}

func (m *meteredLimiter) Acquire(ctx context.Context, tokens int) (model.Permit, error) {
	start := time.Now()
	p, err := m.lim.Acquire(ctx, tokens)
	if err != nil {
		return nil, err
	}
	m.mx.LimiterWait.Observe(time.Since(start).Seconds())
	m.look(ctx)
	return p, nil
}

// look sets the headroom gauges from the bucket, unless it looked recently.
// A dimension whose limit is unknown (+Inf) leaves its gauge alone.
func (m *meteredLimiter) look(ctx context.Context) {
	m.mu.Lock()
	if time.Since(m.last) < LimiterLookEvery {
		m.mu.Unlock()
		return
	}
	m.last = time.Now()
	m.mu.Unlock()
	req, tok, err := m.lim.Available(ctx)
	if err != nil {
		m.log.Debug("reading the limiter's headroom", "err", err)
		return
	}
	if !math.IsInf(req, 1) {
		m.mx.LimiterRequestsAvailable.Set(req)
	}
	if !math.IsInf(tok, 1) {
		m.mx.LimiterTokensAvailable.Set(tok)
	}
}

func (m *meteredLimiter) Observe(ctx context.Context, lim model.Limits) error {
	return m.lim.Observe(ctx, lim)
}

func (m *meteredLimiter) Pause(ctx context.Context, d time.Duration) error {
	return m.lim.Pause(ctx, d)
}
