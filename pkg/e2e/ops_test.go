package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/deploy/grafanatest"
	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/provider"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// freeAddr returns a loopback address nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDashboardLiveRun checks every query of the Grafana dashboard against a
// real Prometheus scraping a real `suitegen run` (in-process, through the
// OpenAI client and the shared limiter) writing against provider-sim with
// injected 429s, malformed tool calls and latency, so that every panel,
// 429s and refusals included, has data of a live run rather than of
// synthetic activity. The run asks for more than it can write while the
// check runs and is stopped (drained) afterwards. It also reads the run
// through the progress API the run serves.
func TestDashboardLiveRun(t *testing.T) {
	t.Parallel()
	grafanatest.Binary(t) // skip (or, under CI, fail) before starting anything
	// retail: its writers meet gate refusals early in a run (rides now
	// rarely does), so the refusal panels have live data too.
	dir := examples(t, "retail")
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := providersim.New(providersim.Config{
		Model:   builtin.New(c),
		Latency: 40 * time.Millisecond, LatencyJitter: 20 * time.Millisecond,
		Faults: providersim.Faults{RateLimit429: 0.04, MalformedJSON: 0.03},
		Seed:   3,
	})
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

	const runID = "ops-live"
	metricsAddr, progressAddr := freeAddr(t), freeAddr(t)
	rctx, stopRun := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := run.Run(rctx, run.Config{Dirs: []string{dir}, Asked: 1000, Writers: 3, Out: t.TempDir(), Seed: 7,
			// One model call per rehearsal, so that the run meets the
			// simulator's 429s within the test's window.
			MaxTokens: 2048,
			Model:     "sim-model", Provider: provider.Settings{BaseURL: "http://" + simAddr + "/v1", RPM: 6000, TPM: 20_000_000}, RunID: runID,
			NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t), MetricsAddr: metricsAddr, ProgressAddr: progressAddr})
		done <- err
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		stopRun()
		select {
		case err := <-done:
			t.Logf("run stopped: %v", err)
		case <-time.After(3 * time.Minute):
			t.Error("the run did not stop within 3 minutes of its context ending")
		}
	}
	t.Cleanup(stop)

	// The run serves its metrics once its stack is up.
	if err := waitHTTP(rctx, "http://"+metricsAddr+"/metrics", time.Minute); err != nil {
		t.Fatalf("metrics endpoint: %v", err)
	}

	// The 429 panel is to be checked on a run that has met a 429 (4% of
	// calls), not on a flat line: wait for the simulator to serve one,
	// however slowly the machine runs, rather than hope one falls in the
	// scraping window.
	for deadline := time.Now().Add(testenv.Patience); sim.Stats().RateLimited == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no 429 served within %s (%d calls)", testenv.Patience, sim.Stats().Calls)
		}
	}
	prom := grafanatest.ScrapeAndCheckWith(t, grafanatest.Check{Dashboard: "../../deploy/grafana/suitegen.json",
		Vars: grafanatest.DefaultVars(runID), Rules: "../../deploy/grafana/alerts.yaml"}, metricsAddr)
	// The run's figures come from the ledger, every refusal code at 0 or more
	// from the start. A scrape whose ledger read failed (a slow read on a busy
	// machine) exports no run series, by design (ledger_up 0): wait for one
	// that read it, however slowly the machine runs.
	refusedQuery := `count(suitegen_run_scenarios_refused_total{run="` + runID + `"})`
	for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(time.Second) {
		v, err := prom.Value(context.Background(), refusedQuery)
		if err == nil && v >= float64(len(metrics.RefusalCodes)) {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("refused series of the run: %v, %v; want every documented code (%d) within %s", v, err, len(metrics.RefusalCodes), testenv.Patience)
			break
		}
	}

	// The progress API the run serves reads the same run from the ledger.
	resp, err := http.Get("http://" + progressAddr + "/api/runs/" + runID)
	if err != nil {
		t.Fatalf("progress API: %v", err)
	}
	var d progress.RunDetail
	err = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("progress API: %d, %v", resp.StatusCode, err)
	}
	if d.Asked != 1000 || d.Proved == 0 {
		t.Errorf("progress API: asked %d proved %d, want 1000 and some", d.Asked, d.Proved)
	}
	// The wiring the dashboard relies on, read from the run's own /metrics:
	// the provider bucket's gauges are set (and unlabelled by run), the
	// configured quota is exported, waits are observed, and a 429 is counted
	// once (model_rate_limited_total equals the rate_limited calls).
	m := scrape(t, "http://"+metricsAddr+"/metrics")
	for name, want := range map[string]float64{
		`suitegen_limiter_requests_per_minute_quota{role="writer"}`: 6000,
		`suitegen_limiter_tokens_per_minute_quota{role="writer"}`:   20_000_000,
	} {
		if m[name] != want {
			t.Errorf("%s = %v, want %v", name, m[name], want)
		}
	}
	for _, name := range []string{`suitegen_limiter_tokens_available{role="writer"}`, `suitegen_limiter_requests_available{role="writer"}`,
		`suitegen_limiter_wait_seconds_count{role="writer"}`, `suitegen_scenarios_asked{role="planner",run="ops-live"}`} {
		if m[name] <= 0 {
			t.Errorf("%s = %v, want it set", name, m[name])
		}
	}
	if _, ok := m[`suitegen_limiter_tokens_available{role="planner"}`]; ok {
		t.Error("the planner exports a limiter gauge it never sets")
	}
	// The two counters move one after the other while the run goes on: a
	// scrape between them sees one ahead, so scrape until one sees them
	// equal. Counting a 429 twice (or never) keeps them apart for good.
	for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(100 * time.Millisecond) {
		rl, calls := m[`suitegen_model_rate_limited_total{model="sim-model",role="writer",run="ops-live"}`],
			m[`suitegen_model_calls_total{model="sim-model",outcome="rate_limited",role="writer",run="ops-live"}`]
		if rl == calls {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("429s counted %v times, rate-limited calls %v: each 429 must count once", rl, calls)
			break
		}
		m = scrape(t, "http://"+metricsAddr+"/metrics")
	}
	st := sim.Stats()
	t.Logf("provider-sim: %d calls, %d 429s, faults %v; progress: %d of %d proved", st.Calls, st.RateLimited, st.Faults, d.Proved, d.Asked)
	stop()
}

// scrape reads a Prometheus text exposition into series -> value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func waitHTTP(ctx context.Context, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
