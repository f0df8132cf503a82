package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/model"
)

// Defaults for Config.
const (
	DefaultWindow    = time.Minute
	DefaultMargin    = 500 * time.Millisecond
	DefaultMaxSleep  = 2 * time.Second
	DefaultMaxJitter = 250 * time.Millisecond
	// settleSlack is how long after a request's admission another
	// process's request may still have reached the provider before it.
	settleSlack = time.Second
)

// ErrNoBucket is returned when the window row has vanished (deleted under us).
var ErrNoBucket = errors.New("ratelimit: bucket not found")

// ErrSettled is returned by Settle for an admission already settled.
var ErrSettled = errors.New("ratelimit: admission already settled")

// Config is one provider quota.
type Config struct {
	// Key identifies the provider account (e.g. base URL + API key). Only its
	// SHA-256 is stored; everyone with the same Key shares one quota.
	Key string
	// RPM and TPM are the quota per minute; 0 means unknown (not limited
	// until a provider's x-ratelimit-limit-* header names it).
	RPM, TPM int
	// Window is the provider's quota window (default one minute; tests
	// shorten it together with the simulator's): no Window-long stretch
	// admits more than RPM×Window/1m requests or TPM×Window/1m tokens.
	Window time.Duration
	// Margin is added to the window: an admission is forgotten Margin after
	// the provider forgets it, which covers the time between our stamp of
	// the write and the provider's count (default 500 ms, at most a tenth of
	// the window).
	Margin time.Duration
	// MaxSleep bounds one sleep of a waiter between asks (default 2 s), so a
	// waiter notices freed room and a dead head soon enough.
	MaxSleep time.Duration
	// MaxJitter bounds the random delay each waiter adds to its sleep
	// (default 250 ms; the jitter is also at most an eighth of the wait).
	MaxJitter time.Duration
	Pool      *pgxpool.Pool
	Logger    *slog.Logger
}

func (c *Config) defaults() error {
	if c.Key == "" {
		return errors.New("ratelimit: Config.Key is required")
	}
	if c.Pool == nil {
		return errors.New("ratelimit: Config.Pool is required")
	}
	if c.RPM < 0 {
		return fmt.Errorf("ratelimit: Config.RPM %d is negative", c.RPM)
	}
	if c.TPM < 0 {
		return fmt.Errorf("ratelimit: Config.TPM %d is negative", c.TPM)
	}
	if c.Window < 0 {
		return fmt.Errorf("ratelimit: Config.Window %s is negative", c.Window)
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Margin < 0 {
		return fmt.Errorf("ratelimit: Config.Margin %s is negative", c.Margin)
	}
	if c.Margin == 0 {
		c.Margin = min(DefaultMargin, c.Window/10)
	}
	if c.MaxSleep == 0 {
		c.MaxSleep = DefaultMaxSleep
	}
	if c.MaxSleep < 0 {
		return fmt.Errorf("ratelimit: Config.MaxSleep %s is negative", c.MaxSleep)
	}
	if c.MaxJitter == 0 {
		c.MaxJitter = DefaultMaxJitter
	}
	if c.MaxJitter < 0 {
		return fmt.Errorf("ratelimit: Config.MaxJitter %s is negative", c.MaxJitter)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// perWindow converts a per-minute quota to the window's.
func (c *Config) perWindow(perMinute int) float64 {
	return float64(perMinute) * c.Window.Seconds() / 60
}

// Limiter admits requests against one shared quota. It is safe for
// concurrent use.
type Limiter struct {
	cfg  Config
	hash string
}

// Admission is one admitted request: one request and Tokens counted until
// Settle says what the provider counted. It counts from its admission until
// Sent says its request was written, then from that moment, as the provider
// counts it.
type Admission struct {
	ID     int64
	Tokens int
	At     time.Time // the database's time of the admission, then of the write (Sent)

	lim     *Limiter
	settled atomic.Bool
}

// Hash is the stored identity of a provider key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte("suitegen/ratelimit\x00" + key))
	return hex.EncodeToString(sum[:])
}

// New creates the quota row for cfg.Key, or updates its configured limits:
// the last Limiter created for a key sets them for everyone sharing it. A
// limit the configuration leaves at 0 keeps what headers taught.
func New(ctx context.Context, cfg Config) (*Limiter, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	l := &Limiter{cfg: cfg, hash: Hash(cfg.Key)}
	_, err := cfg.Pool.Exec(ctx, `
INSERT INTO ratelimit_windows AS w (key_hash, window_s, margin_s, req_limit, tok_limit, req_fixed, tok_fixed)
VALUES ($1::text, $2::float8, $3::float8, $4::float8, $5::float8, $4::float8 > 0, $5::float8 > 0)
ON CONFLICT (key_hash) DO UPDATE SET
    window_s  = EXCLUDED.window_s,
    margin_s  = EXCLUDED.margin_s,
    req_limit = CASE WHEN EXCLUDED.req_limit > 0 THEN EXCLUDED.req_limit ELSE w.req_limit END,
    tok_limit = CASE WHEN EXCLUDED.tok_limit > 0 THEN EXCLUDED.tok_limit ELSE w.tok_limit END,
    req_fixed = EXCLUDED.req_limit > 0 OR w.req_fixed,
    tok_fixed = EXCLUDED.tok_limit > 0 OR w.tok_fixed`,
		l.hash, cfg.Window.Seconds(), cfg.Margin.Seconds(), cfg.perWindow(cfg.RPM), cfg.perWindow(cfg.TPM))
	if err != nil {
		return nil, fmt.Errorf("ratelimit: create quota: %w", err)
	}
	return l, nil
}

// Window is the provider window the limiter counts over.
func (l *Limiter) Window() time.Duration { return l.cfg.Window }

// Wait blocks until one request and tokens tokens fit the window, admits them
// atomically for every process sharing the key and returns the admission to
// Settle. A request larger than the tokens per window fails at once with a
// *model.ConfigError of kind model.KindQuotaTooSmall: it would never fit.
func (l *Limiter) Wait(ctx context.Context, tokens int) (*Admission, error) {
	tokens = max(tokens, 0)
	ticket := rand.Int64()
	var since *time.Time
	grace := l.cfg.MaxJitter.Seconds() + 1
	for {
		var (
			ok, tooLarge   *bool
			wait, tokLimit *float64
			id             *int64
			at             *time.Time
		)
		err := l.cfg.Pool.QueryRow(ctx, `SELECT ok, wait, admission, too_large, tok_limit, at FROM ratelimit_admit($1, $2, $3, $4, $5, $6)`,
			l.hash, float64(tokens), ticket, since, l.cfg.MaxSleep.Seconds(), grace).Scan(&ok, &wait, &id, &tooLarge, &tokLimit, &at)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("ratelimit: wait: %w", ctx.Err())
			}
			return nil, fmt.Errorf("ratelimit: admit: %w", err)
		}
		if ok == nil {
			return nil, ErrNoBucket
		}
		if *tooLarge {
			perMin := *tokLimit * 60 / l.cfg.Window.Seconds()
			return nil, &model.ConfigError{Kind: model.KindQuotaTooSmall,
				Message: fmt.Sprintf("one request would count %d tokens against a quota of %.0f tokens per minute: it can never be admitted", tokens, perMin),
				Fix:     "raise --tpm to the provider's real quota, or lower the reply allowance (--max-tokens) or the slice size"}
		}
		if *ok {
			if id == nil {
				return nil, errors.New("ratelimit: admitted without an admission row")
			}
			return &Admission{ID: *id, Tokens: tokens, At: *at, lim: l}, nil
		}
		if since == nil {
			since = at
		}
		d := time.Duration(*wait * float64(time.Second))
		sleep := min(d, l.cfg.MaxSleep)
		if j := min(l.cfg.MaxJitter, d/8); j > 0 {
			sleep += rand.N(j)
		}
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("ratelimit: wait: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Settle replaces a's charge with what the provider counted (so a
// request's estimate becomes the provider's count), and learns from what the
// provider said of its quota: a limit it names (which lowers, never raises, a
// configured one), and remaining budget below what the log leaves, which is
// recorded as spent by someone else until the window forgets it.
func (l *Limiter) Settle(ctx context.Context, a *Admission, tokens int, said model.Limits) error {
	if a == nil {
		return errors.New("ratelimit: settle: nil admission")
	}
	if !a.settled.CompareAndSwap(false, true) {
		return ErrSettled
	}
	var found *bool
	err := l.cfg.Pool.QueryRow(ctx, `SELECT ratelimit_settle($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		l.hash, a.ID, float64(max(tokens, 0)),
		said.HaveRequests, float64(said.LimitRequests), float64(said.RemainingRequests),
		said.HaveTokens, float64(said.LimitTokens), float64(said.RemainingTokens), settleSlack.Seconds()).Scan(&found)
	if err != nil {
		a.settled.Store(false)
		return fmt.Errorf("ratelimit: settle admission %d: %w", a.ID, err)
	}
	if found == nil || !*found {
		return ErrNoBucket
	}
	return nil
}

// Sent stamps a's admission with the moment its request was written to the
// provider (the database's clock when Sent runs): the provider counts the
// request from its arrival, so the admission counts from then too, however
// long the request took to be written after it was admitted. Until Sent or
// Settle, an admission is held a window longer than a written one, since its
// request may still be written at any moment. A second Sent, or Sent after
// Settle, changes nothing.
func (l *Limiter) Sent(ctx context.Context, a *Admission) error {
	if a == nil {
		return errors.New("ratelimit: sent: nil admission")
	}
	if a.settled.Load() {
		return nil
	}
	var ok *bool
	var at *time.Time
	err := l.cfg.Pool.QueryRow(ctx, `SELECT ok, at FROM ratelimit_sent($1, $2)`, l.hash, a.ID).Scan(&ok, &at)
	if err != nil {
		return fmt.Errorf("ratelimit: stamp admission %d as sent: %w", a.ID, err)
	}
	if ok == nil || !*ok {
		return ErrNoBucket
	}
	if at != nil {
		a.At = *at
	}
	return nil
}

// Pause makes everyone sharing the quota wait until now+d (a 429); each
// waiter adds its own jitter. A shorter pause never cuts a longer one short.
func (l *Limiter) Pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	tag, err := l.cfg.Pool.Exec(ctx, `
UPDATE ratelimit_windows
SET paused_until = greatest(paused_until, clock_timestamp() + make_interval(secs => $2::float8))
WHERE key_hash = $1`, l.hash, d.Seconds())
	if err != nil {
		return fmt.Errorf("ratelimit: pause: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNoBucket
	}
	return nil
}

// Quota is what the shared window holds now: its limits per minute (0:
// unknown) and what is left of them (+Inf where the limit is unknown).
type Quota struct {
	RPM, TPM                     float64
	RequestsLeft, TokensLeft     float64
	RequestsUsed, TokensUsed     float64
	WindowRequests, WindowTokens float64 // the limits per window
}

// Available reports the quota as it stands, with what left the window taken out.
func (l *Limiter) Available(ctx context.Context) (Quota, error) {
	var q Quota
	var reqLimit, tokLimit, reqUsed, tokUsed *float64
	err := l.cfg.Pool.QueryRow(ctx, `SELECT req_limit, tok_limit, req_used, tok_used FROM ratelimit_refresh($1)`, l.hash).
		Scan(&reqLimit, &tokLimit, &reqUsed, &tokUsed)
	if err != nil {
		return q, fmt.Errorf("ratelimit: available: %w", err)
	}
	if reqLimit == nil {
		return q, ErrNoBucket
	}
	q.WindowRequests, q.WindowTokens, q.RequestsUsed, q.TokensUsed = *reqLimit, *tokLimit, *reqUsed, *tokUsed
	perMin := 60 / l.cfg.Window.Seconds()
	q.RPM, q.TPM = q.WindowRequests*perMin, q.WindowTokens*perMin
	q.RequestsLeft, q.TokensLeft = math.Inf(1), math.Inf(1)
	if q.WindowRequests > 0 {
		q.RequestsLeft = max(0, q.WindowRequests-q.RequestsUsed)
	}
	if q.WindowTokens > 0 {
		q.TokensLeft = max(0, q.WindowTokens-q.TokensUsed)
	}
	return q, nil
}

// Acquire is Wait for callers that know only model.Limiter.
func (l *Limiter) Acquire(ctx context.Context, tokens int) (model.Permit, error) {
	a, err := l.Wait(ctx, tokens)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Sent is Limiter.Sent on the limiter that admitted a.
func (a *Admission) Sent(ctx context.Context) error {
	if a.lim == nil {
		return errors.New("ratelimit: sent: admission has no limiter")
	}
	return a.lim.Sent(ctx, a)
}

// Settle is Limiter.Settle on the limiter that admitted a.
func (a *Admission) Settle(ctx context.Context, tokens int, said model.Limits) error {
	if a.lim == nil {
		return errors.New("ratelimit: settle: admission has no limiter")
	}
	return a.lim.Settle(ctx, a, tokens, said)
}

var _ model.Limiter = (*Limiter)(nil)
