package metrics_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
)

// The collector reads the ledger's figures of runs.
var _ metrics.RunReader = (*ledger.Store)(nil)

// fakeLedger serves fixed figures, or an error, and counts reads. It derives
// no figure: the Store does, from the ledger's rows (pkg/ledger's TestStats
// holds it to them), and the collector only exports what it is given, so
// its tests need canned figures, not ledgertest's ledger.
type fakeLedger struct {
	mu    sync.Mutex
	runs  []ledger.RunStats
	err   error
	reads atomic.Int64
	gate  chan struct{} // when set, a read waits for it
	last  ledger.StatsQuery
}

func (f *fakeLedger) Stats(ctx context.Context, q ledger.StatsQuery) ([]ledger.RunStats, error) {
	f.reads.Add(1)
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = q
	return f.runs, f.err
}

func (f *fakeLedger) set(runs []ledger.RunStats, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs, f.err = runs, err
}

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func sampleRun() ledger.RunStats {
	return ledger.RunStats{
		Run: ledger.Run{ID: "r1", Agent: "shop", Model: "gpt-x", State: ledger.RunWriting, Asked: 200, Round: 2,
			CreatedAt: t0},
		At: t0.Add(time.Hour), Proved: 120, ProvedRecent: 30,
		Buckets:      map[string]int{string(ledger.BucketOpen): 5, string(ledger.BucketDone): 40},
		Slices:       map[string]int{string(ledger.SliceDone): 20, string(ledger.SliceDead): 2},
		Dead:         map[string]int{ledger.DeadLost: 2},
		Refusals:     map[ledger.GateCode]int{{Gate: "static", Code: "placeholder"}: 7, {Gate: "future-gate", Code: "new-code"}: 1},
		Calls:        90,
		PromptTokens: 100_000, CompletionTokens: 20_000, CachedPromptTokens: 64_000, CostUSD: 0.25,
		LastActivity: t0.Add(50 * time.Minute),
	}
}

// series gathers reg into "name{labels}" -> value, labels sorted by name.
func series(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, lp := range m.GetLabel() {
				ls = append(ls, lp.GetName()+"="+lp.GetValue())
			}
			out[mf.GetName()+"{"+strings.Join(ls, ",")+"}"] = value(m)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	}
	return m.GetUntyped().GetValue()
}

func ledgerRegistry(t *testing.T, f *fakeLedger, opts metrics.LedgerOptions) (*prometheus.Registry, *metrics.Ledger) {
	t.Helper()
	l, err := metrics.NewLedger(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(l)
	return reg, l
}

func TestLedgerSeries(t *testing.T) {
	f := &fakeLedger{runs: []ledger.RunStats{sampleRun()}}
	reg, _ := ledgerRegistry(t, f, metrics.LedgerOptions{})
	got := series(t, reg)
	want := map[string]float64{
		"suitegen_ledger_up{}":                                                      1,
		"suitegen_ledger_runs{}":                                                    1,
		"suitegen_run_info{agent=shop,model=gpt-x,run=r1}":                          1,
		"suitegen_run_state{run=r1,state=writing}":                                  1,
		"suitegen_run_state{run=r1,state=done}":                                     0,
		"suitegen_run_scenarios_asked{run=r1}":                                      200,
		"suitegen_run_scenarios_proved_total{run=r1}":                               120,
		"suitegen_run_scenarios_refused_total{code=placeholder,gate=static,run=r1}": 7,
		// Every documented code exists at zero before its first refusal...
		"suitegen_run_scenarios_refused_total{code=check-failed,gate=solvable,run=r1}": 0,
		"suitegen_run_scenarios_refused_total{code=duplicate-code,gate=suite,run=r1}":  0,
		// ...and a code this build does not know is exported, not dropped.
		"suitegen_run_scenarios_refused_total{code=new-code,gate=future-gate,run=r1}": 1,
		"suitegen_run_buckets{run=r1,state=open}":                                     5,
		"suitegen_run_buckets{run=r1,state=claimed}":                                  0,
		"suitegen_run_buckets{run=r1,state=done}":                                     40,
		"suitegen_run_buckets{run=r1,state=blocked}":                                  0,
		"suitegen_run_slices{run=r1,state=published}":                                 0,
		"suitegen_run_slices{run=r1,state=dead}":                                      2,
		"suitegen_run_slices_dead{cause=lost,run=r1}":                                 2,
		"suitegen_run_slices_dead{cause=failed,run=r1}":                               0,
		"suitegen_run_model_calls_total{run=r1}":                                      90,
		"suitegen_run_spent_tokens_total{kind=prompt,run=r1}":                         100_000,
		"suitegen_run_spent_tokens_total{kind=completion,run=r1}":                     20_000,
		"suitegen_run_spent_tokens_total{kind=cached_prompt,run=r1}":                  64_000,
		"suitegen_run_spent_tokens_total{kind=reasoning,run=r1}":                      0,
		"suitegen_run_spent_usd_total{run=r1}":                                        0.25,
		"suitegen_run_budget_cap_usd{run=r1}":                                         0,
		// No cap: the cap reads 0 and spend is still there.
		"suitegen_run_budget_cap_tokens{run=r1}":               0,
		"suitegen_run_round{run=r1}":                           2,
		"suitegen_run_started_timestamp_seconds{run=r1}":       float64(t0.Unix()),
		"suitegen_run_last_activity_timestamp_seconds{run=r1}": float64(t0.Add(50 * time.Minute).Unix()),
		"suitegen_ledger_reads_total{}":                        1,
		"suitegen_ledger_read_errors_total{}":                  0,
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s missing", k)
		} else if g != v {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
	for _, absent := range []string{"suitegen_run_budget_remaining_tokens{run=r1}", "suitegen_run_finished_timestamp_seconds{run=r1}"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%s exported for an uncapped, unfinished run", absent)
		}
	}
	n := 0
	for k := range got {
		if strings.HasPrefix(k, "suitegen_run_scenarios_refused_total{") {
			n++
		}
	}
	if n != len(metrics.RefusalCodes)+1 {
		t.Errorf("%d refused series, want every documented code and the unknown one (%d)", n, len(metrics.RefusalCodes)+1)
	}
	if f.last.Limit != 50 || f.last.Since.IsZero() {
		t.Errorf("query %+v: want the default limit and a retention window", f.last)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}

func TestLedgerBudgetAndFinish(t *testing.T) {
	r := sampleRun()
	r.BudgetTokens = 150_000
	fin := t0.Add(2 * time.Hour)
	r.State, r.FinishedAt = ledger.RunDone, &fin
	reg, _ := ledgerRegistry(t, &fakeLedger{runs: []ledger.RunStats{r}}, metrics.LedgerOptions{})
	got := series(t, reg)
	for k, v := range map[string]float64{
		"suitegen_run_budget_cap_tokens{run=r1}":          150_000,
		"suitegen_run_budget_remaining_tokens{run=r1}":    30_000,
		"suitegen_run_finished_timestamp_seconds{run=r1}": float64(fin.Unix()),
		"suitegen_run_state{run=r1,state=done}":           1,
		"suitegen_run_state{run=r1,state=writing}":        0,
	} {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// One read serves every scrape within CacheFor; the next scrape after it
// reads again.
func TestLedgerCache(t *testing.T) {
	f := &fakeLedger{runs: []ledger.RunStats{sampleRun()}}
	reg, l := ledgerRegistry(t, f, metrics.LedgerOptions{CacheFor: 10 * time.Second})
	now := t0
	l.SetClock(func() time.Time { return now })
	for range 3 {
		series(t, reg)
	}
	if n := f.reads.Load(); n != 1 {
		t.Errorf("3 scrapes within the cache period read the ledger %d times, want 1", n)
	}
	r := sampleRun()
	r.Proved = 121
	f.set([]ledger.RunStats{r}, nil)
	now = now.Add(10 * time.Second)
	if got := series(t, reg)["suitegen_run_scenarios_proved_total{run=r1}"]; got != 121 || f.reads.Load() != 2 {
		t.Errorf("after the cache period: proved %v after %d reads, want 121 after 2", got, f.reads.Load())
	}
}

// Scrapes that arrive while a read is under way wait for it and share it.
func TestLedgerConcurrentScrapes(t *testing.T) {
	f := &fakeLedger{runs: []ledger.RunStats{sampleRun()}, gate: make(chan struct{})}
	reg, _ := ledgerRegistry(t, f, metrics.LedgerOptions{CacheFor: time.Hour})
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
			}
		})
	}
	// Wait until one scrape is inside the read, then let it finish.
	for f.reads.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(f.gate)
	wg.Wait()
	if n := f.reads.Load(); n != 1 {
		t.Errorf("5 concurrent scrapes read the ledger %d times, want 1", n)
	}
}

// A failed read exports ledger_up 0 and no run series (a gap, never a stale
// total); the next good read brings them back.
func TestLedgerReadError(t *testing.T) {
	f := &fakeLedger{err: errors.New("connection refused")}
	reg, l := ledgerRegistry(t, f, metrics.LedgerOptions{CacheFor: time.Second})
	now := t0
	l.SetClock(func() time.Time { return now })
	got := series(t, reg)
	if got["suitegen_ledger_up{}"] != 0 || got["suitegen_ledger_read_errors_total{}"] != 1 || got["suitegen_ledger_runs{}"] != 0 {
		t.Errorf("after a failed read: %v", got)
	}
	for k := range got {
		if strings.HasPrefix(k, "suitegen_run_") {
			t.Errorf("%s exported after a failed read", k)
		}
	}
	f.set([]ledger.RunStats{sampleRun()}, nil)
	now = now.Add(time.Second)
	got = series(t, reg)
	if got["suitegen_ledger_up{}"] != 1 || got["suitegen_run_scenarios_proved_total{run=r1}"] != 120 || got["suitegen_ledger_read_errors_total{}"] != 1 {
		t.Errorf("after recovering: up %v proved %v errors %v", got["suitegen_ledger_up{}"],
			got["suitegen_run_scenarios_proved_total{run=r1}"], got["suitegen_ledger_read_errors_total{}"])
	}
}

func TestLedgerOptions(t *testing.T) {
	f := &fakeLedger{}
	for _, c := range []struct {
		opts  metrics.LedgerOptions
		field string
	}{
		{metrics.LedgerOptions{Retain: -1}, "Retain"},
		{metrics.LedgerOptions{MaxRuns: -1}, "MaxRuns"},
		{metrics.LedgerOptions{CacheFor: -1}, "CacheFor"},
		{metrics.LedgerOptions{Timeout: -1}, "Timeout"},
	} {
		if _, err := metrics.NewLedger(f, c.opts); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: %v, want an error naming %s", c.opts, err, c.field)
		}
	}
	if _, err := metrics.NewLedger(nil, metrics.LedgerOptions{}); err == nil {
		t.Error("a nil reader was accepted")
	}
}

// Every bound run view starts its refused family at zero for every
// documented code, so a panel reads 0 rather than "no data".
func TestRefusedStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	w := metrics.New(reg, "", "writer")
	if n := testutil.CollectAndCount(w.ScenariosRefused); n != 0 {
		t.Errorf("the unbound writer view exports %d refused series, want none", n)
	}
	a := w.For("run-a")
	if n := testutil.CollectAndCount(a.ScenariosRefused); n != len(metrics.RefusalCodes) {
		t.Errorf("run view exports %d refused series, want %d", n, len(metrics.RefusalCodes))
	}
	a.Refused("static", "placeholder")
	if got := testutil.ToFloat64(a.ScenariosRefused.WithLabelValues("static", "placeholder")); got != 1 {
		t.Errorf("placeholder = %v, want 1", got)
	}
}

func TestReady(t *testing.T) {
	var err error
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(metrics.NewReady("writer", func() error { return err }))
	if got := series(t, reg)["suitegen_ready{role=writer}"]; got != 1 {
		t.Errorf("ready = %v, want 1", got)
	}
	err = errors.New("provider answers 401")
	if got := series(t, reg)["suitegen_ready{role=writer}"]; got != 0 {
		t.Errorf("not ready = %v, want 0", got)
	}
}

// exporterNames are the families of the ledger collector and the readiness
// gauge, which processes register beside New's.
func exporterNames(t *testing.T) []string {
	t.Helper()
	r := sampleRun()
	r.BudgetTokens = 1
	fin := t0
	r.FinishedAt = &fin
	l, err := metrics.NewLedger(&fakeLedger{runs: []ledger.RunStats{r}}, metrics.LedgerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(l, metrics.NewReady("writer", nil))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	return names
}

// InitModel starts every outcome of a model's calls at zero.
func TestInitModelOutcomes(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, "r1", "writer")
	m.InitModel("gpt-x")
	got := series(t, reg)
	for _, o := range metrics.Outcomes {
		k := "suitegen_model_calls_total{model=gpt-x,outcome=" + o + ",role=writer,run=r1}"
		if v, ok := got[k]; !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", k, v, ok)
		}
	}
}
