package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/suitegen/suitegen/deploy/grafanatest"
	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestTotalsSurviveScaling: a distributed run (planner, three writer processes, reviewer,
// each a separate process with its own metrics, writing through provider-sim so tokens are
// spent, the queue replicated on a 3-server NATS cluster) watched by `suitegen serve` as the
// ledger's exporter, scraped by a real Prometheus.
// One writer is killed mid-run, another scaled down (SIGTERM), the planner and reviewer exit
// and the last writer goes too. Prometheus then still shows the run's true totals, equal to
// the ledger: asked = proved = N, every bucket and slice state, tokens spent, calls and
// refusals; the alert rules evaluate cleanly on that data; and serve's page API agrees.
func TestTotalsSurviveScaling(t *testing.T) {
	testenv.OutsideRace(t, inBinaries)
	t.Parallel()
	grafanatest.Binary(t) // skip (or, under CI, fail) before starting anything
	const (
		runID = "obs-1"
		n     = 40
	)
	dir := examples(t, "retail")
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := providersim.New(providersim.Config{Model: builtin.New(c), Latency: 20 * time.Millisecond, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stopSim := context.WithCancel(context.Background())
	simAddr, err := sim.Start(sctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopSim()
		_ = sim.Wait()
	})

	// The queue on a 3-server NATS cluster, every slice on all three, as in production.
	natsURL, dbURL := testenv.NATSCluster(t, 3), testenv.PostgresURL(t)
	// A killed writer's slice comes back after the ack wait: short here, and the same for
	// every process (the queue is created with it).
	precreateQueue(t, queue.Config{URL: natsURL, AckWait: 10 * time.Second, Replicas: 3})
	env := []string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + dbURL, "SUITEGEN_ACK_WAIT=10s", "SUITEGEN_QUEUE_REPLICAS=3",
		"OPENAI_API_KEY=sk-test-observe", "OPENAI_BASE_URL=http://" + simAddr + "/v1"}

	// Every address at once, so no two processes are handed the same port.
	addrs := freeAddrs(t, 6)
	serveAddr, serveMetrics, plannerMetrics := addrs[0], addrs[1], addrs[2]
	serve := start(t, env, "suitegen", "serve", "--addr", serveAddr, "--metrics-addr", serveMetrics, "--metrics-cache", "1s")
	targets := []string{serveMetrics, plannerMetrics}
	var writers []*proc
	for i := range 3 {
		addr := addrs[3+i]
		targets = append(targets, addr)
		writers = append(writers, start(t, env, "writer", "--id", fmt.Sprintf("w%d", i+1), "--model", "sim-model",
			"--rpm", "6000", "--tpm", "20000000", "--drain-timeout", "5s", "--metrics-addr", addr))
	}
	prom := grafanatest.StartWith(t, grafanatest.Options{RuleFiles: []string{"../../deploy/grafana/alerts.yaml"}}, targets...)
	if err := waitHTTP(context.Background(), "http://"+serveMetrics+"/metrics", time.Minute); err != nil {
		t.Fatalf("serve's metrics: %v\n%s", err, serve.output())
	}

	// The run is recorded with the model its writers drive; writers of
	// another model would leave its slices alone.
	planner := start(t, env, "planner", dir, "--run", runID, "--scenarios", fmt.Sprint(n), "--seed", "7", "--model", "sim-model", "--metrics-addr", plannerMetrics)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool, err := engine.Pool(ctx, dbURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := ledger.New(pool)
	proved := func() int {
		r, err := store.RunStats(ctx, runID)
		if err != nil {
			return 0
		}
		return r.Proved
	}

	// Kill w1 once the writers are at work; scale w2 down (SIGTERM, a drain) once a quarter
	// of the run is proved.
	waitUntil(t, ctx, "a slice written", func() bool {
		for _, w := range writers {
			if strings.Contains(w.output(), "slice written") {
				return true
			}
		}
		return false
	})
	_ = writers[0].cmd.Process.Signal(syscall.SIGKILL)
	_ = writers[0].cmd.Wait()
	waitUntil(t, ctx, "a quarter of the run", func() bool { return proved() >= n/4 })
	_ = writers[1].cmd.Process.Signal(syscall.SIGTERM)
	if err := writers[1].wait(t, testenv.Patience); err != nil {
		t.Errorf("w2 did not drain cleanly on SIGTERM: %v\n%s", err, writers[1].output())
	}
	if err := planner.wait(t, testenv.Patience); err != nil {
		t.Fatalf("planner: %v\n%s", err, planner.output())
	}
	rev := start(t, env, "reviewer", "--run", runID, "--out", t.TempDir())
	if err := rev.wait(t, testenv.Patience); err != nil {
		t.Fatalf("reviewer: %v\n%s", err, rev.output())
	}
	_ = writers[2].cmd.Process.Signal(syscall.SIGTERM)
	if err := writers[2].wait(t, testenv.Patience); err != nil {
		t.Errorf("w3 did not drain cleanly: %v\n%s", err, writers[2].output())
	}

	// Only serve is left. What Prometheus shows must be the ledger's figures.
	led, err := store.RunStats(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if led.Proved != n || led.Asked != n {
		t.Fatalf("the ledger holds %d of %d proved, want %d", led.Proved, led.Asked, n)
	}
	if led.PromptTokens == 0 || led.Calls == 0 {
		t.Fatalf("the ledger metered no spend (%d calls, %d prompt tokens): the spend check would be vacuous", led.Calls, led.PromptTokens)
	}
	refused := 0
	for _, k := range led.Refusals {
		refused += k
	}
	sel := fmt.Sprintf(`{run=%q}`, runID)
	want := map[string]float64{
		`max(suitegen_run_scenarios_asked` + sel + `)`:                                   n,
		`max(suitegen_run_scenarios_proved_total` + sel + `)`:                            n,
		`max(suitegen_run_spent_tokens_total{run="` + runID + `",kind="prompt"})`:        float64(led.PromptTokens),
		`max(suitegen_run_spent_tokens_total{run="` + runID + `",kind="completion"})`:    float64(led.CompletionTokens),
		`max(suitegen_run_model_calls_total` + sel + `)`:                                 float64(led.Calls),
		`sum(max by (gate, code) (suitegen_run_scenarios_refused_total` + sel + `))`:     float64(refused),
		`sum(max by (state) (suitegen_run_buckets` + sel + `))`:                          float64(sumOf(led.Buckets)),
		`max(suitegen_run_state{run="` + runID + `",state="` + string(led.State) + `"})`: 1,
		`sum(max by (cause) (suitegen_run_slices_dead` + sel + `))`:                      float64(led.Slices[string(ledger.SliceDead)]),
		`max(suitegen_run_last_activity_timestamp_seconds` + sel + `)`:                   float64(led.LastActivity.UnixNano()) / 1e9,
		`count(up{job="suitegen"} == 1)`:                                                 1, // serve alone
	}
	for _, st := range ledger.BucketStates {
		want[`max(suitegen_run_buckets{run="`+runID+`",state="`+st+`"})`] = float64(led.Buckets[st])
	}
	for _, st := range ledger.SliceStates {
		want[`max(suitegen_run_slices{run="`+runID+`",state="`+st+`"})`] = float64(led.Slices[st])
	}
	err = pollUntil(ctx, testenv.Patience, func() error {
		var bad []string
		for q, w := range want {
			got, err := prom.Value(ctx, q)
			if err != nil {
				bad = append(bad, err.Error())
			} else if diff := got - w; diff > 1e-3 || diff < -1e-3 {
				bad = append(bad, fmt.Sprintf("%s = %v, want %v", q, got, w))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%s", strings.Join(bad, "\n"))
		}
		return nil
	})
	if err != nil {
		t.Errorf("Prometheus after the writers and the planner are gone:\n%v\nserve:\n%s", err, serve.output())
	}
	// What summing the pods' own counters would say now: a writer's counters left with it.
	if v, err := prom.Value(ctx, `sum(suitegen_scenarios_proved_total`+sel+`) or vector(0)`); err == nil {
		t.Logf("ledger: %d proved; the live pods' counters sum to %v", led.Proved, v)
	}

	// The alert rules evaluate on this data without error.
	rules, err := prom.Rules(ctx)
	if err != nil || len(rules) == 0 {
		t.Fatalf("rules: %v (%d loaded)", err, len(rules))
	}
	for _, r := range rules {
		if r.Health == "err" || r.LastError != "" {
			t.Errorf("rule %s: %s %s", r.Name, r.Health, r.LastError)
		}
	}

	// serve's page API reads the same run.
	resp, err := http.Get("http://" + serveAddr + "/api/runs/" + runID)
	if err != nil {
		t.Fatal(err)
	}
	var d progress.RunDetail
	err = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if err != nil || d.Summary.Proved != n || d.Summary.SpentTokens != led.PromptTokens+led.CompletionTokens {
		t.Errorf("serve's API: %v, summary %+v", err, d.Summary)
	}
	t.Logf("run %s: %d proved, state %s, %d calls, %d+%d tokens, %d refusals, %d dead slices",
		runID, led.Proved, led.State, led.Calls, led.PromptTokens, led.CompletionTokens, refused, led.Slices[string(ledger.SliceDead)])
}

// freeAddrs returns k distinct loopback addresses nobody listens on right now.
func freeAddrs(t *testing.T, k int) []string {
	t.Helper()
	var out []string
	for range k {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		out = append(out, ln.Addr().String())
	}
	return out
}

func sumOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// waitUntil polls cond until it holds or ctx ends.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// pollUntil calls f until it returns nil, ctx ends or timeout passes; the last error.
func pollUntil(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}
