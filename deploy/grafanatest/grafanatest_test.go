package grafanatest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSubstitute(t *testing.T) {
	vars := DefaultVars("r1")
	got, err := Substitute(`rate(x{run=~"$run"}[$__rate_interval]) + y{run="${run}"} + z{run="[[run]]"} + w{a="${run:regex}"}`, vars)
	if err != nil {
		t.Fatal(err)
	}
	want := `rate(x{run=~"r1"}[10s]) + y{run="r1"} + z{run="r1"} + w{a="r1"}`
	if got != want {
		t.Errorf("Substitute = %s, want %s", got, want)
	}
	if _, err := Substitute(`x{a="$runner"}`, vars); !errors.Is(err, ErrUnknownVariable) {
		t.Errorf("unknown variable: err = %v, want ErrUnknownVariable", err)
	}
}

func TestTargets(t *testing.T) {
	d := []byte(`{"panels":[
	  {"title":"a","targets":[{"refId":"A","expr":"up"}]},
	  {"title":"row","type":"row","panels":[{"title":"b","targets":[{"refId":"A","expr":"x","instant":true,"range":false}]}]}
	]}`)
	tgs, err := Targets(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(tgs) != 2 || tgs[0].Expr != "up" || tgs[1].Panel != "b" || !tgs[1].Instant || tgs[0].Instant {
		t.Errorf("Targets = %+v", tgs)
	}
	if _, err := Targets([]byte(`{"panels":[{"title":"a","targets":[{"refId":"A","expr":" "}]}]}`)); err == nil {
		t.Error("empty expr accepted")
	}
}

// serve exposes reg on a loopback port until the test ends and returns host:port.
func serve(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- metrics.ServeListener(ctx, ln, reg, nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("metrics server: %v", err)
		}
	})
	return ln.Addr().String()
}

// ledger is a RunReader whose one run grows as drive plays it: the figures suitegen serve
// would read from a real ledger.
type fakeLedger struct {
	mu sync.Mutex
	r  ledger.RunStats
}

func (l *fakeLedger) Stats(context.Context, ledger.StatsQuery) ([]ledger.RunStats, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.r
	r.At = time.Now()
	return []ledger.RunStats{r}, nil
}

func (l *fakeLedger) step(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &l.r
	r.Proved, r.ProvedRecent = 2*i, min(2*i, 60)
	r.Buckets = map[string]int{string(ledger.BucketOpen): max(0, 200-i), string(ledger.BucketClaimed): 4, string(ledger.BucketDone): min(200, i), string(ledger.BucketBlocked): i / 50}
	r.Slices = map[string]int{string(ledger.SlicePublished): 4, string(ledger.SliceDone): i, string(ledger.SliceDead): i / 13}
	r.Dead = map[string]int{ledger.DeadFailed: i / 26, ledger.DeadLost: i/13 - i/26}
	r.Refusals = map[ledger.GateCode]int{{Gate: "static", Code: "placeholder"}: i / 2, {Gate: "solvable", Code: "check-failed"}: i / 3}
	r.Calls, r.PromptTokens, r.CompletionTokens = int64(2*i), int64(1000*i), int64(200*i)
	r.LastActivity = time.Now()
}

// drive plays a small run on the metrics until ctx ends: a planner publishing slices and
// tracking buckets, writers calling a model, proving and refusing scenarios, and the ledger
// those leave behind.
func drive(ctx context.Context, planner *metrics.Metrics, writers []*metrics.Metrics, led *fakeLedger) {
	rng := rand.New(rand.NewPCG(1, 2))
	planner.ScenariosAsked.Set(1000)
	planner.BudgetCapTokens.Set(5e6)
	gates := [][2]string{{"static", "placeholder-data"}, {"solvable", "check-failed"}, {"not-vacuous", "nothing-fails"}}
	var spent float64
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		planner.SlicesPublished.Add(2)
		planner.SetBuckets(map[string]int{
			metrics.StateOpen: max(0, 200-i), metrics.StateClaimed: 4,
			metrics.StateDone: min(200, i), metrics.StateBlocked: i / 50,
		})
		planner.SetQueue(uint64(max(0, 100-i/2)), 4)
		for _, w := range writers {
			w.InitModel("gpt-test")
			w.SlicesInFlight.Set(float64(1 + rng.IntN(2)))
			w.ScenariosSubmitted.Inc()
			w.ScenariosProved.Inc()
			g := gates[rng.IntN(len(gates))]
			w.Refused(g[0], g[1])
			outcome := metrics.OutcomeOK
			if i%7 == 0 {
				outcome = metrics.OutcomeRateLimited
			}
			prompt, completion := 800+rng.IntN(400), 100+rng.IntN(200)
			w.ObserveModelCall("gpt-test", outcome, time.Duration(500+rng.IntN(3000))*time.Millisecond, prompt, completion)
			spent += float64(prompt + completion)
			w.LimiterWait.Observe(rng.Float64() * 0.5)
			w.LimiterTokensAvailable.Set(float64(20000 + rng.IntN(10000)))
			w.LimiterRequestsAvailable.Set(float64(50 + rng.IntN(20)))
			w.TokensPerMinuteQuota.Set(30000)
			w.RequestsPerMinuteQuota.Set(100)
			w.ProofDuration.Observe(0.001 + rng.Float64()*0.04)
			w.LedgerWriteDuration.Observe(0.002 + rng.Float64()*0.01)
			if i%3 == 0 {
				w.SlicesAcked.Inc()
			}
			if i%11 == 0 {
				w.SlicesRedelivered.Inc()
			}
			if i%13 == 0 {
				w.SlicesDeadLettered.Inc()
			}
			w.SetQueue(uint64(max(0, 100-i/2)), 4)
		}
		planner.BudgetSpentTokens.Set(spent)
		led.step(i)
	}
}

// TestDashboardAgainstPrometheus runs every query of deploy/grafana/suitegen.json against a
// real prometheus scraping two writers and a planner fed with synthetic activity.
func TestDashboardAgainstPrometheus(t *testing.T) {
	Binary(t) // skip early, before starting servers, when there is no prometheus
	const run = "run-test"
	var addrs []string
	plannerReg := prometheus.NewRegistry()
	planner := metrics.New(plannerReg, run, "planner")
	addrs = append(addrs, serve(t, plannerReg))
	var writers []*metrics.Metrics
	for range 2 {
		reg := prometheus.NewRegistry()
		// As a writer process does: unbound, recording under the slice's run.
		writers = append(writers, metrics.New(reg, "", "writer").For(run))
		reg.MustRegister(metrics.NewReady("writer", nil))
		addrs = append(addrs, serve(t, reg))
	}
	// As suitegen serve does: the run figures, read from the ledger at scrape time.
	led := &fakeLedger{r: ledger.RunStats{Run: ledger.Run{ID: run, Agent: "shop", Model: "gpt-test", State: ledger.RunWriting,
		Asked: 1000, BudgetTokens: 5e6, CreatedAt: time.Now()}}}
	led.step(0)
	exporter, err := metrics.NewLedger(led, metrics.LedgerOptions{CacheFor: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	serveReg := prometheus.NewRegistry()
	serveReg.MustRegister(exporter)
	addrs = append(addrs, serve(t, serveReg))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { drive(ctx, planner, writers, led) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	ScrapeAndCheckWith(t, Check{Dashboard: "../grafana/suitegen.json", Vars: DefaultVars(run), Rules: "../grafana/alerts.yaml"}, addrs...)
}

// TestCheckCanFail shows the check rejects a query that does not parse (at once) and one
// that returns nothing (as retryable), so a broken panel cannot pass.
func TestCheckCanFail(t *testing.T) {
	Binary(t)
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "r1", "writer")
	m.ScenariosProved.Inc()
	p := Start(t, serve(t, reg))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	vars := DefaultVars("r1")

	retry, err := p.check(ctx, Target{Panel: "bad", RefID: "A", Expr: `sum by (run (suitegen_scenarios_proved_total)`}, vars)
	if err == nil || retry {
		t.Errorf("unparsable query: retry=%v err=%v, want a final error", retry, err)
	}
	retry, err = p.check(ctx, Target{Panel: "empty", RefID: "A", Expr: `suitegen_no_such_metric{run=~"$run"}`}, vars)
	if err == nil || !retry {
		t.Errorf("empty query: retry=%v err=%v, want a retryable error", retry, err)
	}
	if err := poll(ctx, 20*time.Second, func() error {
		_, err := p.check(ctx, Target{Panel: "ok", RefID: "A", Expr: `suitegen_scenarios_proved_total{run=~"$run"}`}, vars)
		return err
	}); err != nil {
		t.Errorf("a good query never passed: %v", err)
	}
}

// TestRulesCanFail: a rule that fails when evaluated is reported as such, so the rule check
// of a live run cannot pass on rules that never work.
func TestRulesCanFail(t *testing.T) {
	Binary(t)
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	// Two series on the right for one match group: a runtime error, not a parse error.
	bad := `groups:
  - name: g
    rules:
      - alert: Broken
        expr: vector(1) + on () (label_replace(vector(1), "x", "1", "", "") or label_replace(vector(1), "x", "2", "", ""))
      - alert: Fine
        expr: vector(1) == 2
`
	if err := os.WriteFile(rules, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	p := StartWith(t, Options{RuleFiles: []string{rules}}, serve(t, reg))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := poll(ctx, 20*time.Second, func() error {
		rs, err := p.Rules(ctx)
		if err != nil {
			return err
		}
		health := map[string]string{}
		for _, r := range rs {
			if !r.Evaluated {
				return errors.New("not evaluated yet")
			}
			health[r.Name] = r.Health
		}
		if health["Broken"] != "err" || health["Fine"] != "ok" {
			return fmt.Errorf("health %v, want Broken err and Fine ok", health)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
}
