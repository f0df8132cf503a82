package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// quotaSetup is one utilization measurement: a provider-sim with a quota per
// Window, three writer processes told Factor × that quota, and a planner
// asking for more than the quota can serve in the time measured.
type quotaSetup struct {
	Window   time.Duration // the sim's quota window (a scaled "minute")
	RPM, TPM int           // the sim's quota per Window
	Factor   float64       // what suitegen is told, as a multiple of the true quota
	Windows  int           // steady-state windows measured (after the first busy one)
	Latency  time.Duration
	Writers  int
}

// quotaResult is what /stats said about the steady-state windows.
type quotaResult struct {
	Windows     []providersim.Minute
	Calls       int64
	RateLimited int64
	QuotaTokens int64   // counted against TPM (prompt + max_tokens)
	Billed      int64   // usage on the answers
	TokUtil     float64 // mean QuotaTokens per window / TPM
	ReqUtil     float64 // mean admitted requests per window / RPM
}

func (r quotaResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d windows: calls %d, 429s %d (%.2f%%), quota tokens %d, billed %d, token utilization %.1f%%, request utilization %.1f%%\n",
		len(r.Windows), r.Calls, r.RateLimited, 100*float64(r.RateLimited)/float64(max(r.Calls, 1)), r.QuotaTokens, r.Billed, 100*r.TokUtil, 100*r.ReqUtil)
	for i, m := range r.Windows {
		fmt.Fprintf(&b, "  window %d: calls %d admitted %d 429s %d quota_tokens %d billed %d\n", i, m.Calls, m.Admitted, m.RateLimited, m.QuotaTokens, m.Tokens)
	}
	return b.String()
}

var listening = regexp.MustCompile(`listening on (http://[0-9.:]+/v1)`)

// measureQuota runs the setup and reads the sim's per-window counters.
func measureQuota(t *testing.T, s quotaSetup) quotaResult {
	t.Helper()
	dir := examples(t, "retail")
	if s.Writers == 0 {
		s.Writers = 3
	}
	simArgs := []string{"provider-sim", dir, "--addr", "127.0.0.1:0", "--window", s.Window.String(),
		"--rpm", strconv.Itoa(s.RPM), "--tpm", strconv.Itoa(s.TPM), "--latency", s.Latency.String(),
		"--latency-jitter", (s.Latency / 3).String(), "--seed", "3"}
	sim := start(t, nil, "suitegen", simArgs...)
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; {
		if m := listening.FindStringSubmatch(sim.output()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("provider-sim did not start:\n%s", sim.output())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	// What suitegen is told: the quota per real minute, times Factor.
	perMin := float64(time.Minute) / float64(s.Window)
	rpm := int(float64(s.RPM) * perMin * s.Factor)
	tpm := int(float64(s.TPM) * perMin * s.Factor)
	natsURL := testenv.NATS(t)
	precreateQueue(t, queue.Config{URL: natsURL})
	env := []string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + testenv.PostgresURL(t), "OPENAI_API_KEY=sim-key"}
	for i := 0; i < s.Writers; i++ {
		start(t, env, "writer", "--id", fmt.Sprintf("q%d", i+1), "--model", "sim-writer", "--base-url", base,
			"--rpm", strconv.Itoa(rpm), "--tpm", strconv.Itoa(tpm), "--quota-window", s.Window.String(), "--drain-timeout", "1s")
	}
	start(t, env, "planner", dir, "--run", "quota-1", "--scenarios", "2000", "--seed", "7", "--model", "sim-writer")

	stats := func() providersim.Stats {
		resp, err := http.Get(strings.TrimSuffix(base, "/v1") + "/stats")
		if err != nil {
			t.Fatalf("GET /stats: %v", err)
		}
		defer resp.Body.Close()
		var st providersim.Stats
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatalf("GET /stats: %v", err)
		}
		return st
	}
	// Steady state starts one window after the first window with a call in it.
	first := -1
	for deadline := time.Now().Add(2 * time.Minute); first < 0; time.Sleep(100 * time.Millisecond) {
		st := stats()
		for i, m := range st.PerMinute {
			if m.Calls > 0 {
				first = i
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no model call within 2 minutes:\nsim:\n%s", sim.output())
		}
	}
	from, to := first+1, first+1+s.Windows // [from, to)
	for {
		st := stats()
		if len(st.PerMinute) > to { // window to-1 is complete
			var r quotaResult
			r.Windows = st.PerMinute[from:to]
			for _, m := range r.Windows {
				r.Calls += m.Calls
				r.RateLimited += m.RateLimited
				r.QuotaTokens += m.QuotaTokens
				r.Billed += m.Tokens
				r.ReqUtil += float64(m.Admitted)
			}
			r.TokUtil = float64(r.QuotaTokens) / float64(s.Windows) / float64(s.TPM)
			r.ReqUtil = r.ReqUtil / float64(s.Windows) / float64(s.RPM)
			return r
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestQuotaUtilization is the quota target, run by make bench
// (SUITEGEN_BENCH=1): provider-sim with a one-minute quota about 2.5× below
// what three writer processes ask for, measured over three steady-state
// minutes (the first busy minute is skipped). Told the true quota, suitegen
// must use ≥95% of the tokens quota with no 429 at all; told 20% more than
// the truth, the 429s must stay under 2% of calls and utilization ≥90%.
//
// A real minute, not a shortened one: the shared bucket gives up
// Burst/(Window+Burst) of the quota to guarantee no window is overrun, and
// its burst must hold a few calls of ~35k tokens, so a quota of only ~30
// calls per window (what a 10 s window gives at this demand) cannot reach
// 95% — see docs/BENCHMARKS.md (provider economics).
func TestQuotaUtilization(t *testing.T) {
	if os.Getenv("SUITEGEN_BENCH") == "" {
		t.Skip("SUITEGEN_BENCH=1 runs the quota measurements (about 11 minutes)")
	}
	setup := quotaSetup{Window: time.Minute, RPM: 600, TPM: 6_000_000, Windows: 3, Latency: 300 * time.Millisecond}
	t.Run("true-quota", func(t *testing.T) {
		s := setup
		s.Factor = 1
		r := measureQuota(t, s)
		t.Logf("told the true quota: %s", r)
		if r.RateLimited != 0 {
			t.Errorf("%d 429s with the true quota, want none", r.RateLimited)
		}
		if r.TokUtil < 0.95 {
			t.Errorf("token utilization %.1f%%, want ≥95%%", 100*r.TokUtil)
		}
	})
	t.Run("quota+20%", func(t *testing.T) {
		s := setup
		s.Factor = 1.2
		r := measureQuota(t, s)
		t.Logf("told 20%% above the quota: %s", r)
		if share := float64(r.RateLimited) / float64(max(r.Calls, 1)); share >= 0.02 {
			t.Errorf("429s on %.2f%% of calls, want under 2%%", 100*share)
		}
		if r.TokUtil < 0.90 {
			t.Errorf("token utilization %.1f%%, want ≥90%%", 100*r.TokUtil)
		}
	})
}

// TestQuotaShortWindow is the same measurement on a 10-second quota window
// (Q_FACTOR sets what suitegen is told): quick to run by hand while tuning.
func TestQuotaShortWindow(t *testing.T) {
	if os.Getenv("SUITEGEN_BENCH") == "" {
		t.Skip("SUITEGEN_BENCH=1 runs the quota measurements")
	}
	f, err := strconv.ParseFloat(os.Getenv("Q_FACTOR"), 64)
	if err != nil {
		f = 1
	}
	r := measureQuota(t, quotaSetup{Window: 10 * time.Second, RPM: 100, TPM: 1_000_000, Factor: f, Windows: 4, Latency: 300 * time.Millisecond})
	t.Log(r)
	if f <= 1 && r.RateLimited != 0 {
		t.Errorf("%d 429s with at most the true quota, want none", r.RateLimited)
	}
}
