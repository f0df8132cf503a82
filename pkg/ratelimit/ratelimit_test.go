package ratelimit

import (
	"context"
	"errors"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// pods opens n pools on one fresh database: n writer processes.
func pods(t *testing.T, n int) []*pgxpool.Pool {
	t.Helper()
	url := testenv.PostgresURL(t)
	var out []*pgxpool.Pool
	for range n {
		p, err := pgxpool.New(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		out = append(out, p)
	}
	return out
}

func newLimiter(t *testing.T, cfg Config) *Limiter {
	t.Helper()
	if cfg.Key == "" {
		cfg.Key = "test-provider|sk-secret"
	}
	if cfg.MaxJitter == 0 {
		cfg.MaxJitter = 5 * time.Millisecond
	}
	l, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestConfigValidation(t *testing.T) {
	cases := map[string]Config{
		"Config.Key":      {},
		"Config.Pool":     {Key: "k"},
		"Config.RPM":      {Key: "k", Pool: &pgxpool.Pool{}, RPM: -1},
		"Config.TPM":      {Key: "k", Pool: &pgxpool.Pool{}, TPM: -1},
		"Config.Window":   {Key: "k", Pool: &pgxpool.Pool{}, Window: -1},
		"Config.Margin":   {Key: "k", Pool: &pgxpool.Pool{}, Margin: -1},
		"Config.MaxSleep": {Key: "k", Pool: &pgxpool.Pool{}, MaxSleep: -1},
	}
	for field, cfg := range cases {
		_, err := New(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: got %v, want an error naming the field", field, err)
		}
	}
}

func TestKeyIsNeverStored(t *testing.T) {
	pool := testenv.Postgres(t)
	newLimiter(t, Config{Key: "https://api.example|sk-very-secret", RPM: 60, Pool: pool})
	var n int
	if err := pool.QueryRow(context.Background(),
		`SELECT count(*) FROM ratelimit_windows WHERE key_hash LIKE '%secret%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("the provider key is stored in clear")
	}
}

type admitted struct {
	at     time.Time
	tokens int
}

// maxInWindow is the largest count and token sum of admissions within any
// window of length w (admissions at the window's two ends apart by less than w).
func maxInWindow(as []admitted, w time.Duration) (count, tokens int) {
	sort.Slice(as, func(i, j int) bool { return as[i].at.Before(as[j].at) })
	j, sum := 0, 0
	for i := range as {
		sum += as[i].tokens
		for as[i].at.Sub(as[j].at) >= w {
			sum -= as[j].tokens
			j++
		}
		count, tokens = max(count, i-j+1), max(tokens, sum)
	}
	return count, tokens
}

// hammer runs takers goroutines per limiter, each admitting tokens and
// settling them at once, until d has passed, and returns the admissions.
func hammer(t *testing.T, lims []*Limiter, takers int, tokens int, d time.Duration) []admitted {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu  sync.Mutex
		out []admitted
		wg  sync.WaitGroup
	)
	for _, l := range lims {
		for range takers {
			wg.Go(func() {
				for {
					a, err := l.Wait(ctx, tokens)
					if err != nil {
						if !errors.Is(err, context.DeadlineExceeded) {
							t.Error(err)
						}
						return
					}
					mu.Lock()
					out = append(out, admitted{a.At, tokens})
					mu.Unlock()
					if err := l.Settle(context.Background(), a, tokens, model.Limits{}); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	return out
}

// Three processes sharing a quota of 6 requests per 600 ms window: no window
// of the database's clock ever holds more than 6, margin or not.
func TestRequestQuotaHeldAcrossPods(t *testing.T) {
	t.Parallel()
	p := pods(t, 3)
	window := 600 * time.Millisecond
	var lims []*Limiter
	for _, pool := range p {
		lims = append(lims, newLimiter(t, Config{RPM: 600, Window: window, Pool: pool, MaxSleep: 100 * time.Millisecond}))
	}
	as := hammer(t, lims, 3, 0, 2*time.Second)
	n, _ := maxInWindow(as, window)
	if n > 6 {
		t.Fatalf("%d requests within one %s window, quota 6", n, window)
	}
	if len(as) < 6 {
		t.Fatalf("only %d admitted: the quota was never filled", len(as))
	}
}

func TestTokenQuotaHeldAcrossPods(t *testing.T) {
	t.Parallel()
	p := pods(t, 2)
	window := 500 * time.Millisecond
	var lims []*Limiter
	for _, pool := range p {
		// 120k per minute = 1000 per 500 ms window.
		lims = append(lims, newLimiter(t, Config{TPM: 120_000, Window: window, Pool: pool, MaxSleep: 100 * time.Millisecond}))
	}
	as := hammer(t, lims, 3, 130, 2*time.Second)
	if _, tok := maxInWindow(as, window); tok > 1000 {
		t.Fatalf("%d tokens within one window, quota 1000", tok)
	}
	if len(as) < 7 {
		t.Fatalf("only %d admitted", len(as))
	}
}

// The window is the provider's: an admission is forgotten exactly one window
// (plus the margin) after it was made, not before.
func TestWindowForgetsAfterItsLength(t *testing.T) {
	t.Parallel()
	window, margin := 400*time.Millisecond, 50*time.Millisecond
	l := newLimiter(t, Config{TPM: 150_000 /* 1000 per window */, Window: window, Margin: margin, Pool: testenv.Postgres(t), MaxSleep: 50 * time.Millisecond})
	ctx := context.Background()
	first, err := l.Wait(ctx, 900)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Sent(ctx); err != nil {
		t.Fatal(err)
	}
	second, err := l.Wait(ctx, 300)
	if err != nil {
		t.Fatal(err)
	}
	if gap := second.At.Sub(first.At); gap < window+margin {
		t.Fatalf("admitted %s after a full window, want at least %s", gap, window+margin)
	}
}

func TestSettleReplacesTheCharge(t *testing.T) {
	t.Parallel()
	l := newLimiter(t, Config{TPM: 1000, Pool: testenv.Postgres(t)})
	ctx := context.Background()
	a, err := l.Wait(ctx, 800)
	if err != nil {
		t.Fatal(err)
	}
	q, err := l.Available(ctx)
	if err != nil || q.TokensLeft != 200 || q.TPM != 1000 {
		t.Fatalf("after admitting 800: %+v %v", q, err)
	}
	// The provider counted 300 (prompt + max_tokens as it reported them).
	if err := a.Settle(ctx, 300, model.Limits{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Settle(ctx, 300, model.Limits{}); !errors.Is(err, ErrSettled) {
		t.Fatalf("second settle: %v", err)
	}
	if q, _ := l.Available(ctx); q.TokensLeft != 700 {
		t.Fatalf("after settling 300: %+v", q)
	}
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := l.Wait(cctx, 700); err != nil {
		t.Fatalf("700 more in a 1000 window holding 300: %v", err)
	}
}

func TestTooLargeIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	l := newLimiter(t, Config{TPM: 30_000, Pool: testenv.Postgres(t)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := l.Wait(ctx, 30_001)
	ce, ok := model.IsFatal(err)
	if !ok || ce.Kind != model.KindQuotaTooSmall || !strings.Contains(ce.Message, "30000 tokens per minute") || ctx.Err() != nil {
		t.Fatalf("got %v, want a quota-too-small refusal without waiting", err)
	}
	if _, err := l.Wait(ctx, 30_000); err != nil {
		t.Fatalf("a request of exactly the quota: %v", err)
	}
}

func TestPauseBlocksAllSharers(t *testing.T) {
	t.Parallel()
	p := pods(t, 2)
	a := newLimiter(t, Config{RPM: 6000, Pool: p[0]})
	b := newLimiter(t, Config{RPM: 6000, Pool: p[1]})
	ctx := context.Background()
	before, err := b.Wait(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Pause(ctx, 400*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	after, err := b.Wait(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if gap := after.At.Sub(before.At); gap < 400*time.Millisecond {
		t.Fatalf("admitted %s after a 400ms pause began", gap)
	}
}

// What the provider says of its quota is learnt: the limit when none was
// configured (or a lower one than configured), and remaining budget below
// what our log leaves as spent by someone else.
func TestHeadersTeachLimitAndRemaining(t *testing.T) {
	t.Parallel()
	pool := testenv.Postgres(t)
	ctx := context.Background()
	l := newLimiter(t, Config{Key: "unknown-quota", Pool: pool})
	a, err := l.Wait(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if q, _ := l.Available(ctx); !math.IsInf(q.TokensLeft, 1) {
		t.Fatalf("an unknown quota is limited: %+v", q)
	}
	// Another client of the key spent 700 of 1000.
	if err := a.Settle(ctx, 100, model.Limits{HaveTokens: true, LimitTokens: 1000, RemainingTokens: 200,
		HaveRequests: true, LimitRequests: 50, RemainingRequests: 45}); err != nil {
		t.Fatal(err)
	}
	q, err := l.Available(ctx)
	if err != nil || q.TPM != 1000 || q.TokensLeft != 200 || q.RPM != 50 || q.RequestsLeft != 45 {
		t.Fatalf("after the headers: %+v %v", q, err)
	}

	// A configured quota is lowered by a smaller limit, never raised.
	hi := newLimiter(t, Config{Key: "configured", TPM: 5000, Pool: pool})
	a, _ = hi.Wait(ctx, 10)
	_ = a.Settle(ctx, 10, model.Limits{HaveTokens: true, LimitTokens: 4000, RemainingTokens: 3990})
	if q, _ := hi.Available(ctx); q.TPM != 4000 || q.TokensLeft != 3990 {
		t.Fatalf("lowered: %+v", q)
	}
	a, _ = hi.Wait(ctx, 10)
	_ = a.Settle(ctx, 10, model.Limits{HaveTokens: true, LimitTokens: 9000, RemainingTokens: 8980})
	if q, _ := hi.Available(ctx); q.TPM != 4000 || q.TokensLeft != 3980 {
		t.Fatalf("a larger header limit raised the configured one: %+v", q)
	}
}

// The oldest waiter is served whatever its size: small requests that keep
// fitting do not starve a request that needs the whole window.
func TestLargeRequestNotStarved(t *testing.T) {
	t.Parallel()
	p := pods(t, 2)
	window := 500 * time.Millisecond
	cfg := Config{TPM: 12_000 /* 100 per window */, Window: window, MaxSleep: 50 * time.Millisecond}
	cfg.Pool = p[0]
	small := newLimiter(t, cfg)
	cfg.Pool = p[1]
	big := newLimiter(t, cfg)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for ctx.Err() == nil {
				a, err := small.Wait(ctx, 10)
				if err != nil {
					return
				}
				_ = a.Settle(context.Background(), a.Tokens, model.Limits{})
			}
		})
	}
	time.Sleep(2 * window) // the small ones keep the window full
	bctx, bcancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, err := big.Wait(bctx, 100)
	bcancel()
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatalf("the request of a whole window starved: %v", err)
	}
}

func TestWaitRespectsContext(t *testing.T) {
	t.Parallel()
	l := newLimiter(t, Config{RPM: 1, Pool: testenv.Postgres(t)})
	ctx := context.Background()
	if _, err := l.Wait(ctx, 0); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	_, err := l.Wait(cctx, 0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
}

func BenchmarkWait(b *testing.B) {
	l, err := New(context.Background(), Config{Key: "bench", RPM: 1 << 30, TPM: 1 << 30, Pool: testenv.Postgres(b)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for b.Loop() {
		a, err := l.Wait(ctx, 100)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Settle(ctx, 100, model.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}

// A request that fits the room the oldest waiter cannot use goes ahead of it
// without delaying it; one that would delay it waits.
func TestBackfillNeverDelaysTheHead(t *testing.T) {
	t.Parallel()
	pool := testenv.Postgres(t)
	window := 2 * time.Second
	l := newLimiter(t, Config{Key: "backfill", TPM: 30_000 /* 1000 per window */, Window: window, Pool: pool, MaxSleep: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first, err := l.Wait(ctx, 600)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Sent(ctx); err != nil {
		t.Fatal(err)
	}
	// The head needs 700 of the 400 left: it waits for the first to expire.
	headDone := make(chan *Admission, 1)
	go func() {
		a, err := l.Wait(ctx, 700)
		if err != nil {
			t.Error(err)
		}
		headDone <- a
	}()
	for {
		var head *int64
		if err := pool.QueryRow(ctx, `SELECT head_ticket FROM ratelimit_windows WHERE key_hash = $1`, l.hash).Scan(&head); err != nil {
			t.Fatal(err)
		}
		if head != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// 300 fits now and in what is left when the head fits (400 + 600 - 700).
	small, err := l.Wait(ctx, 300)
	if err != nil {
		t.Fatal(err)
	}
	if small.At.Sub(first.At) >= window {
		t.Fatalf("the small request waited for the window (%s after the first)", small.At.Sub(first.At))
	}
	head := <-headDone
	// The head got in while the small one still counted: the small one took
	// only room the head did not need.
	if head == nil || head.At.Sub(small.At) >= window+l.cfg.Margin {
		t.Fatalf("the head was admitted only after the small request left the window: %v", head)
	}
	if _, tok := maxInWindow([]admitted{{first.At, 600}, {small.At, 300}, {head.At, 700}}, window); tok > 1000 {
		t.Fatalf("%d tokens in one window", tok)
	}
}
