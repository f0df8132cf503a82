package e2e

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// quotaSetup is one utilization measurement of the real pipeline: a
// provider-sim process with a quota per Window, writers told exactly that
// quota (as one `suitegen run` with Writers goroutines, or as Writers
// separate writer processes and a planner), and the counting proxy between
// them, which is what the figures come from.
type quotaSetup struct {
	Window    time.Duration // the provider's quota window
	RPM, TPM  int           // the quota per Window
	Latency   time.Duration // the provider's mean answer time
	Writers   int
	Processes bool // separate writer processes instead of one `suitegen run`
	Minutes   int  // whole windows measured, after the first
	Scenarios int  // asked of the run (QUOTA_SCENARIOS overrides): 50, the default of `suitegen run`
}

// quotaResult is what the counting proxy saw.
type quotaResult struct {
	Windows          []second // the measured windows
	All              second   // the whole run, first window included
	TokUtil, ReqUtil float64  // mean quota tokens (admitted requests) per window ÷ TPM (RPM)
}

func (r quotaResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d windows: token utilization %.1f%%, request utilization %.1f%%; whole run: %v\n", len(r.Windows), 100*r.TokUtil, 100*r.ReqUtil, r.All)
	for i, m := range r.Windows {
		fmt.Fprintf(&b, "  window %d: %v, mean charge per request %d\n", i+1, m, m.QuotaTokens/int64(max(m.Admitted, 1)))
	}
	return b.String()
}

var (
	listening = regexp.MustCompile(`listening on (http://[0-9.:]+)/v1`)
	runEnded  = regexp.MustCompile(`\d+ of \d+ (scenarios )?proved`)
)

// measureQuota runs the setup until Minutes whole windows after the first
// one with a request have passed through the proxy.
func measureQuota(t *testing.T, s quotaSetup) quotaResult {
	t.Helper()
	dir := examples(t, "retail")
	if s.Minutes == 0 {
		s.Minutes = 3
	}
	if s.Scenarios == 0 {
		s.Scenarios = 50
	}
	if v, err := strconv.Atoi(os.Getenv("QUOTA_SCENARIOS")); err == nil {
		s.Scenarios = v
	}
	sim := start(t, nil, "suitegen", "provider-sim", dir, "--addr", "127.0.0.1:0", "--window", s.Window.String(),
		"--rpm", strconv.Itoa(s.RPM), "--tpm", strconv.Itoa(s.TPM), "--latency", s.Latency.String(),
		"--latency-jitter", (s.Latency / 3).String(), "--seed", "3")
	var base string
	for deadline := time.Now().Add(testenv.Patience); base == ""; {
		if m := listening.FindStringSubmatch(sim.output()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("provider-sim did not start:\n%s", sim.output())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	proxy := newCountingProxy(t, base)
	// What suitegen is told: the true quota, per minute.
	perMin := float64(time.Minute) / float64(s.Window)
	quota := []string{"--model", "sim-writer", "--base-url", proxy.url + "/v1", "--rpm", strconv.Itoa(int(float64(s.RPM) * perMin)),
		"--tpm", strconv.Itoa(int(float64(s.TPM) * perMin)), "--quota-window", s.Window.String()}
	natsURL, dbURL := testenv.NATS(t), testenv.PostgresURL(t)
	env := []string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + dbURL, "OPENAI_API_KEY=sim-key"}
	var driver *proc // the process whose end ends the demand
	if s.Processes {
		precreateQueue(t, queue.Config{URL: natsURL})
		for i := 0; i < s.Writers; i++ {
			start(t, env, "writer", append([]string{"--id", fmt.Sprintf("q%d", i+1), "--drain-timeout", "1s"}, quota...)...)
		}
		driver = start(t, env, "planner", dir, "--run", "quota-1", "--scenarios", strconv.Itoa(s.Scenarios), "--seed", "7", "--model", "sim-writer")
	} else {
		driver = start(t, env, "suitegen", append([]string{"run", dir, "--scenarios", strconv.Itoa(s.Scenarios), "--writers", strconv.Itoa(s.Writers),
			"--out", t.TempDir(), "--seed", "7"}, quota...)...)
	}
	for deadline := time.Now().Add(3 * time.Minute); proxy.firstSecond() < 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no model call within 3 minutes:\nsim:\n%s", sim.output())
		}
	}
	// Until the windows are measured, or the run has ended (it prints its
	// count of proved scenarios): then the whole windows it filled.
	for len(proxy.minutes(s.Window)) < s.Minutes+1 && !runEnded.MatchString(driver.output()) {
		time.Sleep(time.Second)
	}
	ms := proxy.minutes(s.Window)
	if len(ms) < 2 {
		t.Fatalf("the run ended within %d whole windows:\n%s", len(ms), driver.output())
	}
	s.Minutes = min(s.Minutes, len(ms)-1)
	var r quotaResult
	r.Windows = ms[1 : s.Minutes+1]
	r.All = proxy.totals()
	for _, m := range r.Windows {
		r.TokUtil += float64(m.QuotaTokens)
		r.ReqUtil += float64(m.Admitted)
	}
	r.TokUtil /= float64(s.Minutes) * float64(s.TPM)
	r.ReqUtil /= float64(s.Minutes) * float64(s.RPM)
	return r
}

// TestQuotaTargets, run by make bench (SUITEGEN_BENCH=1): the real pipeline
// against provider-sim with one-minute windows, judged by the counting
// proxy over three whole minutes after the first. Told the true quota,
// suitegen must cause no 429 at all; at RPM 500 / TPM 200k, where tokens
// bind, it must use at least 95% of the tokens quota.
func TestQuotaTargets(t *testing.T) {
	if os.Getenv("SUITEGEN_BENCH") == "" {
		t.Skip("SUITEGEN_BENCH=1 runs the quota measurements (about 20 minutes)")
	}
	for _, tc := range []struct {
		name   string
		setup  quotaSetup
		minTok float64
	}{
		{"rpm500-tpm200k-run", quotaSetup{RPM: 500, TPM: 200_000, Writers: 3}, 0.95},
		{"rpm500-tpm200k-processes", quotaSetup{RPM: 500, TPM: 200_000, Writers: 3, Processes: true}, 0.95},
		{"rpm600-tpm30k-run", quotaSetup{RPM: 600, TPM: 30_000, Writers: 3}, 0},
		{"rpm600-tpm30k-processes", quotaSetup{RPM: 600, TPM: 30_000, Writers: 3, Processes: true}, 0},
	} {
		if only := os.Getenv("QUOTA_CASE"); only != "" && only != tc.name {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			s := tc.setup
			s.Window, s.Latency = time.Minute, 100*time.Millisecond
			r := measureQuota(t, s)
			t.Logf("%s: %s", tc.name, r)
			if len(r.Windows) < 3 {
				t.Errorf("the run ended after %d measured windows, want 3 (ask for more scenarios: QUOTA_SCENARIOS)", len(r.Windows))
			}
			if r.All.RateLimited != 0 {
				t.Errorf("%d requests answered 429, want none", r.All.RateLimited)
			}
			if r.TokUtil < tc.minTok {
				t.Errorf("token utilization %.1f%%, want ≥ %.0f%%", 100*r.TokUtil, 100*tc.minTok)
			}
		})
	}
}
