package ratelimit

import (
	"context"
	"errors"
	"math"
	"sort"
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
		"Config.Key":            {},
		"Config.Pool":           {Key: "k"},
		"Config.RPM":            {Key: "k", Pool: &pgxpool.Pool{}, RPM: -1},
		"Config.TPM":            {Key: "k", Pool: &pgxpool.Pool{}, TPM: -1},
		"Config.Burst":          {Key: "k", Pool: &pgxpool.Pool{}, Burst: -1},
		"Config.ReservationTTL": {Key: "k", Pool: &pgxpool.Pool{}, ReservationTTL: -1},
	}
	for field, cfg := range cases {
		_, err := New(context.Background(), cfg)
		if err == nil || !contains(err.Error(), field) {
			t.Errorf("%s: got %v, want an error naming the field", field, err)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestKeyIsNeverStored(t *testing.T) {
	pool := testenv.Postgres(t)
	newLimiter(t, Config{Key: "https://api.example|sk-very-secret", RPM: 60, Pool: pool})
	var n int
	if err := pool.QueryRow(context.Background(),
		`SELECT count(*) FROM ratelimit_buckets WHERE key_hash LIKE '%secret%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("the provider key is stored in clear")
	}
}

// maxInWindow is the largest number of events within any window of length w.
func maxInWindow(ts []time.Time, w time.Duration) int {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
	best, j := 0, 0
	for i := range ts {
		for ts[i].Sub(ts[j]) >= w {
			j++
		}
		best = max(best, i-j+1)
	}
	return best
}

// hammer runs takers goroutines per limiter, each taking tokens and settling
// them at once, until d has passed, and returns the database times of takes.
func hammer(t *testing.T, lims []*Limiter, takers int, tokens int, d time.Duration) []time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu    sync.Mutex
		times []time.Time
		wg    sync.WaitGroup
	)
	for _, l := range lims {
		for range takers {
			wg.Go(func() {
				for {
					r, err := l.Wait(ctx, tokens)
					if err != nil {
						if !errors.Is(err, context.DeadlineExceeded) {
							t.Error(err)
						}
						return
					}
					mu.Lock()
					times = append(times, r.At)
					mu.Unlock()
					if err := l.Settle(context.Background(), r, tokens); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	return times
}

func TestRequestQuotaHeldAcrossPods(t *testing.T) {
	t.Parallel()
	p := pods(t, 2)
	// RPM 600 = 10/s, burst 1 s = 10 requests.
	var lims []*Limiter
	for _, pool := range p {
		lims = append(lims, newLimiter(t, Config{RPM: 600, Burst: time.Second, Pool: pool}))
	}
	const run = 3 * time.Second
	times := hammer(t, lims, 8, 1, run)
	// Token bucket bound: capacity + rate*T over any window T.
	if got, limit := len(times), 10+10*3; got > limit {
		t.Fatalf("%d takes in %s, quota allows %d", got, run, limit)
	} else if got < 25 {
		t.Fatalf("only %d takes in %s: the limiter starves its takers", got, run)
	}
	if got := maxInWindow(times, time.Second); got > 10+10 {
		t.Fatalf("%d takes within one second, quota allows 20", got)
	}
	if got := maxInWindow(times, 200*time.Millisecond); got > 10+2 {
		t.Fatalf("%d takes within 200ms, quota allows 12", got)
	}
}

func TestTokenQuotaHeldAcrossPods(t *testing.T) {
	t.Parallel()
	p := pods(t, 2)
	// TPM 6000 = 100 tokens/s, burst 1 s = 100 tokens; 20 tokens a take → 5 takes/s.
	var lims []*Limiter
	for _, pool := range p {
		lims = append(lims, newLimiter(t, Config{RPM: 60000, TPM: 6000, Burst: time.Second, Pool: pool}))
	}
	times := hammer(t, lims, 6, 20, 2*time.Second)
	if got, limit := len(times), 5+5*2; got > limit {
		t.Fatalf("%d takes of 20 tokens in 2s, quota allows %d", got, limit)
	} else if got < 10 {
		t.Fatalf("only %d takes in 2s", got)
	}
	if got := maxInWindow(times, time.Second); got > 5+5 {
		t.Fatalf("%d takes within one second, quota allows 10", got)
	}
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Fatalf("%s = %.1f, want %.1f ± %.1f", what, got, want, tol)
	}
}

func TestSettleReturnsUnusedTokens(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// 600 tokens/min = 10/s, bucket of 600.
	l := newLimiter(t, Config{TPM: 600, Burst: time.Minute, Pool: testenv.Postgres(t)})
	r, err := l.Wait(ctx, 500)
	if err != nil {
		t.Fatal(err)
	}
	if r.Tokens != 500 {
		t.Fatalf("reserved %d, want 500", r.Tokens)
	}
	_, tok, err := l.Available(ctx)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "available while held", tok, 100, 15)
	if err := l.Settle(ctx, r, 120); err != nil {
		t.Fatal(err)
	}
	_, tok, err = l.Available(ctx)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "available after settling 120 of 500", tok, 480, 15)
	if err := l.Settle(ctx, r, 120); !errors.Is(err, ErrSettled) {
		t.Fatalf("second settle: %v, want ErrSettled", err)
	}

	// Using more than reserved takes the difference.
	r, err = l.Wait(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Settle(ctx, r, 300); err != nil {
		t.Fatal(err)
	}
	_, tok, err = l.Available(ctx)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "available after overspending", tok, 180, 20)
}

func TestPauseBlocksAllSharers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pods(t, 2)
	a := newLimiter(t, Config{RPM: 6000, Pool: p[0]})
	b := newLimiter(t, Config{RPM: 6000, Pool: p[1]})
	if err := a.Pause(ctx, 400*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, l := range []*Limiter{a, b, a, b} {
		wg.Go(func() {
			if _, err := l.Wait(ctx, 1); err != nil {
				t.Error(err)
				return
			}
			if el := time.Since(start); el < 350*time.Millisecond {
				t.Errorf("a sharer went after %s of a 400ms pause", el)
			}
		})
	}
	wg.Wait()
	// A shorter pause does not cut a longer one.
	if err := a.Pause(ctx, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := b.Pause(ctx, 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := b.Wait(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 250*time.Millisecond {
		t.Fatalf("waited %s; the 300ms pause was cut short", el)
	}
}

func TestExpiredReservationComesBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := pods(t, 2)
	// 60 tokens/min refills 1/s: without expiry a 500-token hold would
	// block a second 500-token take for ever (refill cannot beat a hold).
	cfg := Config{TPM: 60, Burst: 10 * time.Minute, ReservationTTL: 500 * time.Millisecond,
		MaxSleep: 50 * time.Millisecond}
	cfg.Pool = p[0]
	dead := newLimiter(t, cfg)
	cfg.Pool = p[1]
	alive := newLimiter(t, cfg)

	if _, err := dead.Wait(ctx, 500); err != nil { // and the writer dies: never settled
		t.Fatal(err)
	}
	_, tok, err := alive.Available(ctx)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "available while the dead writer holds 500", tok, 100, 5)

	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := alive.Wait(wctx, 500)
	if err != nil {
		t.Fatalf("the abandoned hold never came back: %v", err)
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Fatalf("took 500 tokens after %s, before the hold expired", el)
	}
	var rows int
	if err := p[0].QueryRow(ctx, `SELECT count(*) FROM ratelimit_reservations`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Fatalf("%d reservation rows, want only the live one", rows)
	}
	if err := alive.Settle(ctx, r, 10); err != nil {
		t.Fatal(err)
	}
	_, tok, err = alive.Available(ctx)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "available after the live writer settled 10", tok, 590, 5)
}

func TestLateSettleChargesActual(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLimiter(t, Config{TPM: 60, Burst: 10 * time.Minute, ReservationTTL: 50 * time.Millisecond,
		Pool: testenv.Postgres(t)})
	r, err := l.Wait(ctx, 300)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, _, err := l.Available(ctx); err != nil { // sweeps the expired hold
		t.Fatal(err)
	}
	if err := l.Settle(ctx, r, 200); err != nil {
		t.Fatal(err)
	}
	_, tok, err := l.Available(ctx)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "available after a late settle of 200", tok, 400, 5)
}

func TestObserveLowersAndLearns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newLimiter(t, Config{TPM: 6000, Burst: time.Minute, Pool: testenv.Postgres(t)})
	req, tok, err := l.Available(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsInf(req, 1) {
		t.Fatalf("requests available %v with no RPM known, want +Inf", req)
	}
	near(t, "tokens before", tok, 6000, 1)
	err = l.Observe(ctx, model.Limits{
		HaveTokens: true, LimitTokens: 90000, RemainingTokens: 1000,
		HaveRequests: true, LimitRequests: 60, RemainingRequests: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	req, tok, err = l.Available(ctx)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "tokens after the provider said 1000 remain", tok, 1000, 10)
	near(t, "requests learnt from headers", req, 5, 0.5)
	var rpm, tpm float64
	if err := l.cfg.Pool.QueryRow(ctx, `SELECT rpm, tpm FROM ratelimit_buckets`).Scan(&rpm, &tpm); err != nil {
		t.Fatal(err)
	}
	if rpm != 60 || tpm != 6000 {
		t.Fatalf("rpm %v tpm %v: want rpm learnt (60) and configured tpm kept (6000)", rpm, tpm)
	}
	// A remaining count above ours changes nothing.
	if err := l.Observe(ctx, model.Limits{HaveTokens: true, RemainingTokens: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	_, tok, err = l.Available(ctx)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "tokens after a generous header", tok, 1000, 20)
}

func TestOversizedRequestIsClamped(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	l := newLimiter(t, Config{TPM: 600, Burst: 6 * time.Second, Pool: testenv.Postgres(t)})
	r, err := l.Wait(ctx, 100000)
	if err != nil {
		t.Fatalf("a request above capacity: %v", err)
	}
	if r.Tokens != 60 {
		t.Fatalf("held %d, want the whole capacity (60)", r.Tokens)
	}
}

func TestLargeRequestNotStarved(t *testing.T) {
	t.Parallel()
	p := pods(t, 2)
	// 1200 TPM = 20 tokens/s, bucket of 20. Small takers want 4 each.
	cfg := Config{TPM: 1200, Burst: time.Second, MaxSleep: 200 * time.Millisecond}
	cfg.Pool = p[0]
	small := newLimiter(t, cfg)
	cfg.Pool = p[1]
	big := newLimiter(t, cfg)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for ctx.Err() == nil {
				r, err := small.Wait(ctx, 4)
				if err != nil {
					return
				}
				_ = small.Settle(context.Background(), r, 4)
			}
		})
	}
	time.Sleep(300 * time.Millisecond) // let the small ones drain the bucket
	start := time.Now()
	bctx, bcancel := context.WithTimeout(context.Background(), 5*time.Second)
	r, err := big.Wait(bctx, 20)
	bcancel()
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatalf("the large request starved: %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("the large request waited %s for a bucket that refills in 1s", el)
	}
	if r.Tokens != 20 {
		t.Fatalf("held %d, want 20", r.Tokens)
	}
}

func TestWaitRespectsContext(t *testing.T) {
	t.Parallel()
	l := newLimiter(t, Config{RPM: 1, Burst: time.Second, Pool: testenv.Postgres(t)})
	ctx := context.Background()
	if _, err := l.Wait(ctx, 0); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := l.Wait(cctx, 0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want deadline exceeded", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("cancellation noticed after %s", el)
	}
}

func BenchmarkWait(b *testing.B) {
	l, err := New(context.Background(), Config{Key: "bench", RPM: 1 << 30, TPM: 1 << 30, Pool: testenv.Postgres(b)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := l.Wait(ctx, 100); err != nil {
			b.Fatal(err)
		}
	}
}
