package metrics_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/suitegen/suitegen/pkg/metrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// touch writes each instrument that creates its series on first use.
func touch(m *metrics.Metrics) {
	m.InitModel("gpt-x")
	m.Refused("static", "placeholder-data")
	m.LimiterWait.Observe(0.1)
	m.LimiterTokensAvailable.Set(1)
	m.LimiterRequestsAvailable.Set(1)
	m.TokensPerMinuteQuota.Set(1)
	m.RequestsPerMinuteQuota.Set(1)
}

// registered returns the names of every metric family New registers, after
// touching each vector once so that it has a child to gather.
func registered(t *testing.T) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m := metrics.New(reg, "r1", "writer")
	touch(m)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	return names
}

func TestNamesAndLint(t *testing.T) {
	names := registered(t)
	if len(names) != 33 {
		t.Errorf("registered %d families, want 33: %v", len(names), names)
	}
	for _, n := range names {
		if !strings.HasPrefix(n, "suitegen_") {
			t.Errorf("%s: missing suitegen_ prefix", n)
		}
	}

	reg := prometheus.NewPedanticRegistry()
	m := metrics.New(reg, "r1", "writer")
	touch(m)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatalf("lint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

func TestConstantLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "run-7", "planner")
	m.ScenariosProved.Add(3)
	want := `
# HELP suitegen_scenarios_proved_total Scenarios that passed every gate and were journalled in the ledger.
# TYPE suitegen_scenarios_proved_total counter
suitegen_scenarios_proved_total{role="planner",run="run-7"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "suitegen_scenarios_proved_total"); err != nil {
		t.Fatal(err)
	}
}

func TestTwoRolesShareRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	w := metrics.New(reg, "r1", "writer")
	p := metrics.New(reg, "r1", "planner")
	w.SlicesAcked.Inc()
	p.SlicesPublished.Add(2)
	if n := testutil.CollectAndCount(reg, "suitegen_slices_acked_total"); n != 2 {
		t.Errorf("acked series = %d, want 2 (one per role)", n)
	}
	if got := testutil.ToFloat64(p.SlicesPublished); got != 2 {
		t.Errorf("published = %v, want 2", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering the same role twice did not panic")
		}
	}()
	metrics.New(reg, "r2", "writer")
}

// A writer serves every run: For binds the same registration to another run,
// and the provider-wide limiter instruments are one series whatever the run.
func TestForRun(t *testing.T) {
	reg := prometheus.NewRegistry()
	base := metrics.New(reg, "", "writer")
	a, b := base.For("run-a"), base.For("run-b")
	if base.For("run-a") != a {
		t.Error("For does not cache its views")
	}
	if a.Run() != "run-a" || base.For("") != base {
		t.Errorf("Run() = %q; For(\"\") is not the base", a.Run())
	}
	a.ScenariosProved.Add(3)
	b.ScenariosProved.Inc()
	a.Refused("static", "placeholder-data")
	a.ObserveModelCall("m", metrics.OutcomeOK, time.Second, 10, 5)
	a.LimiterTokensAvailable.Set(7)
	b.LimiterTokensAvailable.Set(9)
	want := `
# HELP suitegen_scenarios_proved_total Scenarios that passed every gate and were journalled in the ledger.
# TYPE suitegen_scenarios_proved_total counter
suitegen_scenarios_proved_total{role="writer",run="run-a"} 3
suitegen_scenarios_proved_total{role="writer",run="run-b"} 1
# HELP suitegen_limiter_tokens_available Tokens available in the shared provider quota's window at the last look.
# TYPE suitegen_limiter_tokens_available gauge
suitegen_limiter_tokens_available{role="writer"} 9
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "suitegen_scenarios_proved_total",
		"suitegen_limiter_tokens_available"); err != nil {
		t.Error(err)
	}
	if a, b := testutil.ToFloat64(a.ScenariosRefused.WithLabelValues("static", "placeholder-data")),
		testutil.ToFloat64(b.ScenariosRefused.WithLabelValues("static", "placeholder-data")); a != 1 || b != 0 {
		t.Errorf("refused placeholder-data: run-a %v, run-b %v; want 1 and 0", a, b)
	}
	// A role without a provider exports no bucket gauges: a planner's zero
	// would win the dashboard's min across processes.
	metrics.New(reg, "run-a", "planner")
	if n, err := testutil.GatherAndCount(reg, "suitegen_limiter_tokens_available", "suitegen_limiter_wait_seconds"); err != nil || n != 1 {
		t.Errorf("limiter series = %d, %v; want 1 (the writer's gauge only)", n, err)
	}
	if got := testutil.ToFloat64(a.ModelTokens.WithLabelValues("m", metrics.KindPrompt)); got != 10 {
		t.Errorf("run-a prompt tokens = %v, want 10", got)
	}
	if got := testutil.ToFloat64(b.ModelTokens.WithLabelValues("m", metrics.KindPrompt)); got != 0 {
		t.Errorf("run-b prompt tokens = %v, want 0", got)
	}
}

// TestAckRetriedAndReproved: a writer's unbound metrics count each ack
// under its slice's run, by outcome; a run's view counts a re-proved suite
// by result; every label of both exists at 0 in a run's view from the start.
func TestAckRetriedAndReproved(t *testing.T) {
	reg := prometheus.NewRegistry()
	w := metrics.New(reg, "", "writer")
	w.For("run-b") // a run the writer works on whose acks all land at once
	w.AckRetried("run-a", true)
	w.AckRetried("run-a", true)
	w.AckRetried("run-a", false)
	p := metrics.New(reg, "run-a", "planner")
	p.Reproved(38, 2)
	want := `
# HELP suitegen_acks_retried_total Slice acks that met a transient failure, by outcome: confirmed on a later try, or gave_up (not confirmed).
# TYPE suitegen_acks_retried_total counter
suitegen_acks_retried_total{outcome="confirmed",role="planner",run="run-a"} 0
suitegen_acks_retried_total{outcome="confirmed",role="writer",run="run-a"} 2
suitegen_acks_retried_total{outcome="confirmed",role="writer",run="run-b"} 0
suitegen_acks_retried_total{outcome="gave_up",role="planner",run="run-a"} 0
suitegen_acks_retried_total{outcome="gave_up",role="writer",run="run-a"} 1
suitegen_acks_retried_total{outcome="gave_up",role="writer",run="run-b"} 0
# HELP suitegen_scenarios_reproved_total Scenarios of a written suite re-proved against its contract before a run over it, by result: fresh (still proves) or stale.
# TYPE suitegen_scenarios_reproved_total counter
suitegen_scenarios_reproved_total{result="fresh",role="planner",run="run-a"} 38
suitegen_scenarios_reproved_total{result="fresh",role="writer",run="run-a"} 0
suitegen_scenarios_reproved_total{result="fresh",role="writer",run="run-b"} 0
suitegen_scenarios_reproved_total{result="stale",role="planner",run="run-a"} 2
suitegen_scenarios_reproved_total{result="stale",role="writer",run="run-a"} 0
suitegen_scenarios_reproved_total{result="stale",role="writer",run="run-b"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "suitegen_acks_retried_total", "suitegen_scenarios_reproved_total"); err != nil {
		t.Error(err)
	}
}

func TestModelCall(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "r1", "writer")
	m.ObserveModelCall("gpt-x", metrics.OutcomeOK, 1200*time.Millisecond, 900, 150)
	m.ObserveModelCall("gpt-x", metrics.OutcomeOK, 800*time.Millisecond, 100, 50)
	m.ObserveModelCall("gpt-x", metrics.OutcomeRateLimited, 50*time.Millisecond, 0, 0)

	checks := []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"ok calls", m.ModelCalls.WithLabelValues("gpt-x", metrics.OutcomeOK), 2},
		{"429 calls", m.ModelCalls.WithLabelValues("gpt-x", metrics.OutcomeRateLimited), 1},
		{"prompt tokens", m.ModelTokens.WithLabelValues("gpt-x", metrics.KindPrompt), 1000},
		{"completion tokens", m.ModelTokens.WithLabelValues("gpt-x", metrics.KindCompletion), 200},
		{"rate limited", m.ModelRateLimited.WithLabelValues("gpt-x"), 1},
	}
	for _, c := range checks {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.ModelCallDuration); n != 1 {
		t.Errorf("duration series = %d, want 1", n)
	}
	want := `
# HELP suitegen_model_call_duration_seconds Wall time of one model provider call from request to answer; the wait for the shared quota is limiter_wait_seconds.
# TYPE suitegen_model_call_duration_seconds histogram
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="0.1"} 1
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="0.25"} 1
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="0.5"} 1
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="1"} 2
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="2"} 3
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="5"} 3
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="10"} 3
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="20"} 3
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="30"} 3
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="60"} 3
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="120"} 3
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="300"} 3
suitegen_model_call_duration_seconds_bucket{model="gpt-x",role="writer",run="r1",le="+Inf"} 3
suitegen_model_call_duration_seconds_sum{model="gpt-x",role="writer",run="r1"} 2.05
suitegen_model_call_duration_seconds_count{model="gpt-x",role="writer",run="r1"} 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "suitegen_model_call_duration_seconds"); err != nil {
		t.Error(err)
	}
}

func TestSpend(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := metrics.New(reg, "r1", "writer")
	m.InitModel("gpt-x")
	m.ObserveModelCall("gpt-x", metrics.OutcomeOK, time.Second, 1000, 200)
	m.ObserveModelSpend("gpt-x", 600, 50, 0.0125)
	m.ObserveModelSpend("gpt-x", 0, 0, 0.0025)
	m.SetSpend(1200, 0.015, 0, 5)
	m.SetPerKept(500, 100, 0.0075)
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"cached", testutil.ToFloat64(m.ModelTokens.WithLabelValues("gpt-x", metrics.KindCachedPrompt)), 600},
		{"reasoning", testutil.ToFloat64(m.ModelTokens.WithLabelValues("gpt-x", metrics.KindReasoning)), 50},
		{"prompt", testutil.ToFloat64(m.ModelTokens.WithLabelValues("gpt-x", metrics.KindPrompt)), 1000},
		{"cost", testutil.ToFloat64(m.ModelCost.WithLabelValues("gpt-x")), 0.015},
		{"spent usd", testutil.ToFloat64(m.BudgetSpentUSD), 0.015},
		{"cap usd", testutil.ToFloat64(m.BudgetCapUSD), 5},
		{"spent tokens", testutil.ToFloat64(m.BudgetSpentTokens), 1200},
		{"prompt per kept", testutil.ToFloat64(m.TokensPerKept.WithLabelValues(metrics.KindPrompt)), 500},
		{"usd per kept", testutil.ToFloat64(m.CostPerKept), 0.0075},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestBucketsAndQueue(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "r1", "planner")
	if n := testutil.CollectAndCount(m.Buckets); n != 4 {
		t.Errorf("bucket series before any set = %d, want 4 (every state at zero)", n)
	}
	m.SetBuckets(map[string]int{metrics.StateOpen: 5, metrics.StateDone: 2})
	m.SetBuckets(map[string]int{metrics.StateDone: 7, metrics.StateBlocked: 1})
	want := map[string]float64{metrics.StateOpen: 0, metrics.StateClaimed: 0, metrics.StateDone: 7, metrics.StateBlocked: 1}
	for s, w := range want {
		if got := testutil.ToFloat64(m.Buckets.WithLabelValues(s)); got != w {
			t.Errorf("buckets{state=%q} = %v, want %v", s, got, w)
		}
	}
	m.SetQueue(12, 3)
	if got := testutil.ToFloat64(m.QueuePending); got != 12 {
		t.Errorf("pending = %v, want 12", got)
	}
	if got := testutil.ToFloat64(m.QueueAckPending); got != 3 {
		t.Errorf("ack pending = %v, want 3", got)
	}
}

func TestProofBucketsResolveMilliseconds(t *testing.T) {
	// p50/p95/p99 of proofs between 1 and 50 ms need several buckets there.
	n := 0
	for _, b := range metrics.ProofBuckets {
		if b >= 0.001 && b <= 0.05 {
			n++
		}
	}
	if n < 8 {
		t.Errorf("only %d proof buckets within 1–50 ms", n)
	}
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "r1", "writer")
	metrics.Since(m.ProofDuration, time.Now().Add(-4*time.Millisecond))
	if got := testutil.CollectAndCount(m.ProofDuration); got != 1 {
		t.Errorf("proof series = %d", got)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

func TestServe(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "r1", "writer")
	m.ScenariosProved.Add(4)

	var notReady atomic.Pointer[error]
	starting := errors.New("nats: not connected")
	notReady.Store(&starting)
	ready := func() error {
		if p := notReady.Load(); p != nil {
			return *p
		}
		return nil
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- metrics.ServeListener(ctx, ln, reg, ready) }()

	if code, body := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz = %d %q, want 200", code, body)
	}
	code, body := get(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "nats: not connected") {
		t.Errorf("/readyz while not ready = %d %q, want 503 with the reason", code, body)
	}
	notReady.Store(nil)
	if code, body := get(t, base+"/readyz"); code != 200 {
		t.Errorf("/readyz when ready = %d %q, want 200", code, body)
	}
	code, body = get(t, base+"/metrics")
	if code != 200 || !strings.Contains(body, `suitegen_scenarios_proved_total{role="writer",run="r1"} 4`) {
		t.Errorf("/metrics = %d, body lacks the proved counter:\n%s", code, body)
	}
	if code, _ := get(t, base+"/nope"); code != 404 {
		t.Errorf("/nope = %d, want 404", code)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeListener after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeListener did not return after cancel")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("server still answering after shutdown")
	}
}

func TestServeAddr(t *testing.T) {
	err := metrics.Serve(context.Background(), "256.0.0.1:bad", prometheus.NewRegistry(), nil)
	if err == nil || !strings.Contains(err.Error(), "metrics: listen") {
		t.Errorf("Serve on a bad address = %v, want a listen error", err)
	}
}

func TestNewRegistryHasRuntimeCollectors(t *testing.T) {
	reg := metrics.NewRegistry()
	metrics.New(reg, "r1", "writer")
	if n, err := testutil.GatherAndCount(reg, "go_goroutines", "suitegen_slices_acked_total"); err != nil || n != 2 {
		t.Errorf("GatherAndCount = %d, %v; want 2", n, err)
	}
}

// TestMetricsDoc keeps docs/METRICS.md listing exactly the registered metrics.
func TestMetricsDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `(suitegen_[a-z_]+)`").FindAllStringSubmatch(string(b), -1) {
		if documented[m[1]] {
			t.Errorf("METRICS.md lists %s twice", m[1])
		}
		documented[m[1]] = true
	}
	names := append(registered(t), exporterNames(t)...)
	for _, n := range names {
		if !documented[n] {
			t.Errorf("METRICS.md does not document %s", n)
		}
	}
	for n := range documented {
		if !slices.Contains(names, n) {
			t.Errorf("METRICS.md documents %s, which pkg/metrics does not register", n)
		}
	}
}

// Metrics sit on the writer's hot path (every proof, every model call).
func BenchmarkObserveModelCall(b *testing.B) {
	m := metrics.New(prometheus.NewRegistry(), "r1", "writer")
	b.ReportAllocs()
	for b.Loop() {
		m.ObserveModelCall("gpt-x", metrics.OutcomeOK, time.Second, 1000, 200)
	}
}

func BenchmarkProofDuration(b *testing.B) {
	m := metrics.New(prometheus.NewRegistry(), "r1", "writer")
	start := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		metrics.Since(m.ProofDuration, start)
	}
}
