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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/model"
)

// Defaults for Config.
const (
	DefaultBurst          = 10 * time.Second
	DefaultReservationTTL = 5 * time.Minute
	DefaultMaxSleep       = 2 * time.Second
	DefaultMaxJitter      = time.Second
)

// ErrNoBucket is returned when the bucket row has vanished (deleted under us).
var ErrNoBucket = errors.New("ratelimit: bucket not found")

// ErrSettled is returned by Settle for a reservation already settled.
var ErrSettled = errors.New("ratelimit: reservation already settled")

// Config is one provider quota.
type Config struct {
	// Key identifies the provider account (e.g. base URL + API key). Only its
	// SHA-256 is stored; everyone with the same Key shares one bucket.
	Key string
	// RPM and TPM are the quota per minute; 0 means unknown (not limited until
	// Observe learns it from headers).
	RPM, TPM int
	// Burst is how many seconds of quota the bucket can hold (default 10 s,
	// or Window/30 when Window is set).
	Burst time.Duration
	// Window, when set, is the provider's quota window (OpenAI's is one
	// minute): the provider admits at most RPM×Window/1m requests (and the
	// like for tokens) in any Window-long stretch. A token bucket admits up to
	// its capacity plus rate×Window in that stretch, so the bucket's rate is
	// derated by Window/(Window+Burst): configured with the provider's true
	// quota, it is never refused for rate, at the cost of Burst/(Window+Burst)
	// of the quota (3% with the default Burst). Zero keeps the rates as given.
	Window time.Duration
	// ReservationTTL is how long an unsettled reservation holds its tokens
	// before it is presumed abandoned (default 5 min). Keep it above the
	// longest call plus one minute.
	ReservationTTL time.Duration
	// MaxSleep bounds one sleep of a waiter between takes (default 2 s), so a
	// waiter notices settled holds and a dead head soon enough.
	MaxSleep time.Duration
	// MaxJitter bounds the random delay each waiter adds to its sleep
	// (default 1 s; the jitter is also at most an eighth of the wait).
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
	if c.Burst == 0 {
		c.Burst = DefaultBurst
		if c.Window > 0 {
			c.Burst = c.Window / 30
		}
	}
	if c.Burst < 0 {
		return fmt.Errorf("ratelimit: Config.Burst %s is negative", c.Burst)
	}
	if c.ReservationTTL == 0 {
		c.ReservationTTL = DefaultReservationTTL
	}
	if c.ReservationTTL < 0 {
		return fmt.Errorf("ratelimit: Config.ReservationTTL %s is negative", c.ReservationTTL)
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

// Limiter takes from one shared bucket. It is safe for concurrent use.
type Limiter struct {
	cfg  Config
	hash string
}

// Reservation is one successful take: one request and Tokens held until
// Settle (Tokens may be below the asked amount when it exceeded capacity).
type Reservation struct {
	ID     int64
	Tokens int
	At     time.Time // the database's time of the take

	lim     *Limiter
	settled atomic.Bool
}

// Hash is the stored identity of a provider key.
func Hash(key string) string {
	sum := sha256.Sum256([]byte("suitegen/ratelimit\x00" + key))
	return hex.EncodeToString(sum[:])
}

// New creates the bucket for cfg.Key, or updates its configured quota. A new
// bucket starts full.
func New(ctx context.Context, cfg Config) (*Limiter, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	l := &Limiter{cfg: cfg, hash: Hash(cfg.Key)}
	burst := cfg.Burst.Seconds()
	rpm, tpm := float64(cfg.RPM), float64(cfg.TPM)
	if cfg.Window > 0 {
		f := cfg.Window.Seconds() / (cfg.Window.Seconds() + burst)
		rpm, tpm = rpm*f, tpm*f
	}
	// On conflict the levels are refilled to now and clamped to the new
	// capacity; a limit learnt from headers is kept when this config has none.
	_, err := cfg.Pool.Exec(ctx, `
INSERT INTO ratelimit_buckets AS b (key_hash, rpm, tpm, rpm_fixed, tpm_fixed, burst, req_level, tok_level)
VALUES ($1::text, $2::float8, $3::float8, $2::float8 > 0, $3::float8 > 0, $4::float8,
        greatest(1, $2::float8 * $4::float8 / 60), greatest(1, $3::float8 * $4::float8 / 60))
ON CONFLICT (key_hash) DO UPDATE SET
    (req_level, tok_level, updated_at) = (
        SELECT least(s.req_level, greatest(1, (CASE WHEN EXCLUDED.rpm > 0 THEN EXCLUDED.rpm ELSE b.rpm END) * EXCLUDED.burst / 60)),
               least(s.tok_level, greatest(1, (CASE WHEN EXCLUDED.tpm > 0 THEN EXCLUDED.tpm ELSE b.tpm END) * EXCLUDED.burst / 60)),
               s.updated_at
        FROM ratelimit_refill(b, clock_timestamp()) s),
    rpm = CASE WHEN EXCLUDED.rpm > 0 THEN EXCLUDED.rpm ELSE b.rpm END,
    tpm = CASE WHEN EXCLUDED.tpm > 0 THEN EXCLUDED.tpm ELSE b.tpm END,
    rpm_fixed = EXCLUDED.rpm > 0 OR b.rpm_fixed,
    tpm_fixed = EXCLUDED.tpm > 0 OR b.tpm_fixed,
    burst = EXCLUDED.burst`,
		l.hash, rpm, tpm, burst)
	if err != nil {
		return nil, fmt.Errorf("ratelimit: create bucket: %w", err)
	}
	return l, nil
}

// takeSQL is the atomic check-and-take: see doc.go.
const takeSQL = `
WITH t AS (
    UPDATE ratelimit_buckets b SET
        (req_level, tok_level, tok_held, updated_at, head_ticket, head_tokens, head_since, head_until,
         last_ticket, last_ok, last_wait, last_tokens) =
        (SELECT s.req_level, s.tok_level, s.tok_held, s.updated_at, s.head_ticket, s.head_tokens, s.head_since, s.head_until,
                s.last_ticket, s.last_ok, s.last_wait, s.last_tokens
         FROM ratelimit_take_step(b, $2::float8, $3::int8, coalesce($4::timestamptz, clock_timestamp()), clock_timestamp(), $5::float8, $6::float8) s)
    WHERE b.key_hash = $1
    RETURNING b.key_hash, b.last_ok, b.last_wait, b.last_tokens, b.tok_held, b.updated_at
), r AS (
    INSERT INTO ratelimit_reservations (key_hash, tokens, expires_at)
    SELECT key_hash, last_tokens, updated_at + make_interval(secs => $7::float8) FROM t WHERE last_ok
    RETURNING id
)
SELECT t.last_ok, t.last_wait, t.last_tokens, t.tok_held, t.updated_at, r.id
FROM t LEFT JOIN r ON true`

type takeResult struct {
	ok     bool
	wait   time.Duration
	tokens float64
	held   float64
	at     time.Time
	id     *int64
}

func (l *Limiter) take(ctx context.Context, tokens int, ticket int64, since *time.Time) (takeResult, error) {
	var (
		res  takeResult
		wait float64
	)
	grace := l.cfg.MaxJitter.Seconds() + 1
	err := l.cfg.Pool.QueryRow(ctx, takeSQL, l.hash, float64(tokens), ticket, since,
		l.cfg.MaxSleep.Seconds(), grace, l.cfg.ReservationTTL.Seconds()).
		Scan(&res.ok, &wait, &res.tokens, &res.held, &res.at, &res.id)
	if errors.Is(err, pgx.ErrNoRows) {
		return res, ErrNoBucket
	}
	if err != nil {
		return res, fmt.Errorf("ratelimit: take: %w", err)
	}
	res.wait = time.Duration(wait * float64(time.Second))
	return res, nil
}

// Wait blocks until one request and tokens tokens are available, takes them
// atomically for the whole cluster and returns the reservation to Settle.
func (l *Limiter) Wait(ctx context.Context, tokens int) (*Reservation, error) {
	if tokens < 0 {
		tokens = 0
	}
	ticket := rand.Int64()
	var since *time.Time
	for {
		res, err := l.take(ctx, tokens, ticket, since)
		if err != nil {
			return nil, err
		}
		if res.ok {
			if res.id == nil {
				return nil, errors.New("ratelimit: take succeeded without a reservation row")
			}
			return &Reservation{ID: *res.id, Tokens: int(math.Round(res.tokens)), At: res.at, lim: l}, nil
		}
		if since == nil {
			at := res.at
			since = &at
		}
		if res.held > 0 {
			// Abandoned holds are only worth collecting when they are in the way.
			released, err := l.sweep(ctx)
			if err != nil {
				return nil, err
			}
			if released > 0 {
				continue
			}
		}
		sleep := min(res.wait, l.cfg.MaxSleep)
		if j := min(l.cfg.MaxJitter, res.wait/8); j > 0 {
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

// sweep releases the holds of expired reservations and reports how many.
func (l *Limiter) sweep(ctx context.Context) (int, error) {
	var n int
	err := l.cfg.Pool.QueryRow(ctx, `
WITH gone AS (
    DELETE FROM ratelimit_reservations
    WHERE key_hash = $1 AND expires_at < clock_timestamp()
    RETURNING tokens
), u AS (
    UPDATE ratelimit_buckets
    SET tok_held = greatest(0, tok_held - (SELECT sum(tokens) FROM gone))
    WHERE key_hash = $1 AND EXISTS (SELECT 1 FROM gone)
)
SELECT count(*) FROM gone`, l.hash).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("ratelimit: sweep expired reservations: %w", err)
	}
	if n > 0 {
		l.cfg.Logger.Info("ratelimit: released abandoned reservations", "bucket", l.hash[:12], "count", n)
	}
	return n, nil
}

// Settle ends a reservation: the hold is released and actual tokens are spent
// (so estimate - actual comes back, or more is taken). Settling a reservation
// that expired spends actual only.
func (l *Limiter) Settle(ctx context.Context, r *Reservation, actual int) error {
	if r == nil {
		return errors.New("ratelimit: settle: nil reservation")
	}
	if !r.settled.CompareAndSwap(false, true) {
		return ErrSettled
	}
	if actual < 0 {
		actual = 0
	}
	tag, err := l.cfg.Pool.Exec(ctx, `
WITH r AS (
    DELETE FROM ratelimit_reservations WHERE id = $2::int8 AND key_hash = $1::text RETURNING tokens
)
UPDATE ratelimit_buckets b SET
    (req_level, tok_level, updated_at) =
        (SELECT s.req_level, s.tok_level - $3::float8, s.updated_at FROM ratelimit_refill(b, clock_timestamp()) s),
    tok_held = greatest(0, b.tok_held - coalesce((SELECT tokens FROM r), 0))
WHERE b.key_hash = $1`, l.hash, r.ID, float64(actual))
	if err != nil {
		r.settled.Store(false)
		return fmt.Errorf("ratelimit: settle reservation %d: %w", r.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNoBucket
	}
	return nil
}

// Observe corrects the bucket from what the provider said: a remaining count
// below ours lowers ours, and a limit is learnt where the config gave none.
func (l *Limiter) Observe(ctx context.Context, lim model.Limits) error {
	if !lim.HaveRequests && !lim.HaveTokens {
		return nil
	}
	_, err := l.cfg.Pool.Exec(ctx, `
UPDATE ratelimit_buckets b SET
    rpm = CASE WHEN $2::bool AND NOT b.rpm_fixed AND $3::float8 > 0 THEN $3::float8 ELSE b.rpm END,
    tpm = CASE WHEN $5::bool AND NOT b.tpm_fixed AND $6::float8 > 0 THEN $6::float8 ELSE b.tpm END,
    (req_level, tok_level, updated_at) = (
        SELECT CASE WHEN $2::bool THEN least(
                   CASE WHEN b.rpm > 0 THEN s.req_level ELSE 'infinity' END,
                   greatest(1, (CASE WHEN NOT b.rpm_fixed AND $3::float8 > 0 THEN $3::float8 ELSE b.rpm END) * b.burst / 60),
                   $4::float8)
               ELSE s.req_level END,
               CASE WHEN $5::bool THEN least(
                   CASE WHEN b.tpm > 0 THEN s.tok_level ELSE 'infinity' END,
                   greatest(1, (CASE WHEN NOT b.tpm_fixed AND $6::float8 > 0 THEN $6::float8 ELSE b.tpm END) * b.burst / 60),
                   $7::float8 + b.tok_held)
               ELSE s.tok_level END,
               s.updated_at
        FROM ratelimit_refill(b, clock_timestamp()) s)
WHERE b.key_hash = $1`,
		l.hash,
		lim.HaveRequests, float64(lim.LimitRequests), float64(lim.RemainingRequests),
		lim.HaveTokens, float64(lim.LimitTokens), float64(lim.RemainingTokens))
	if err != nil {
		return fmt.Errorf("ratelimit: observe: %w", err)
	}
	return nil
}

// Pause makes everyone sharing the bucket wait until now+d (a 429); each
// waiter adds its own jitter. A shorter pause never cuts a longer one short.
func (l *Limiter) Pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	tag, err := l.cfg.Pool.Exec(ctx, `
UPDATE ratelimit_buckets
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

// Available reports the requests and tokens that could be taken now
// (+Inf where the limit is unknown). Abandoned reservations are collected first.
func (l *Limiter) Available(ctx context.Context) (requests, tokens float64, err error) {
	if _, err := l.sweep(ctx); err != nil {
		return 0, 0, err
	}
	var rpm, tpm float64
	err = l.cfg.Pool.QueryRow(ctx, `
SELECT s.req_level, s.tok_level - s.tok_held, s.rpm, s.tpm
FROM ratelimit_buckets b, ratelimit_refill(b, clock_timestamp()) s
WHERE b.key_hash = $1`, l.hash).Scan(&requests, &tokens, &rpm, &tpm)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, ErrNoBucket
	}
	if err != nil {
		return 0, 0, fmt.Errorf("ratelimit: available: %w", err)
	}
	if rpm == 0 {
		requests = math.Inf(1)
	}
	if tpm == 0 {
		tokens = math.Inf(1)
	}
	return requests, tokens, nil
}

// Acquire is Wait for callers that know only model.Limiter.
func (l *Limiter) Acquire(ctx context.Context, tokens int) (model.Permit, error) {
	r, err := l.Wait(ctx, tokens)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Settle is Limiter.Settle on the limiter that made r.
func (r *Reservation) Settle(ctx context.Context, actual int) error {
	if r.lim == nil {
		return errors.New("ratelimit: settle: reservation has no limiter")
	}
	return r.lim.Settle(ctx, r, actual)
}

var _ model.Limiter = (*Limiter)(nil)
