package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// RunReader reads run figures from the ledger; *ledger.Store is one.
type RunReader interface {
	Stats(ctx context.Context, q ledger.StatsQuery) ([]ledger.RunStats, error)
}

// LedgerOptions configures NewLedger. Zero values take the defaults.
type LedgerOptions struct {
	// Retain is how long a run stays exported after it finished, or after
	// its last activity when it never finished (default 24h).
	Retain time.Duration
	// MaxRuns bounds the runs one read covers, newest first (default 50):
	// the read's cost does not grow with the ledger's history.
	MaxRuns int
	// CacheFor is how long one read serves every scrape (default 10s), so
	// several Prometheus servers, or a short scrape interval, cost one read.
	CacheFor time.Duration
	// Timeout bounds one read (default 10s).
	Timeout time.Duration
	// Refusals are the (gate, code) pairs every run's refused family starts
	// with at zero (default RefusalCodes).
	Refusals []RefusalCode
	// Logger receives read errors (default slog.Default()).
	Logger *slog.Logger
}

func (o *LedgerOptions) validate() error {
	if o.Retain < 0 {
		return fmt.Errorf("metrics: LedgerOptions.Retain %s is negative", o.Retain)
	}
	if o.MaxRuns < 0 {
		return fmt.Errorf("metrics: LedgerOptions.MaxRuns %d is negative", o.MaxRuns)
	}
	if o.CacheFor < 0 {
		return fmt.Errorf("metrics: LedgerOptions.CacheFor %s is negative", o.CacheFor)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("metrics: LedgerOptions.Timeout %s is negative", o.Timeout)
	}
	if o.Retain == 0 {
		o.Retain = 24 * time.Hour
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = 50
	}
	if o.CacheFor == 0 {
		o.CacheFor = 10 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Refusals == nil {
		o.Refusals = RefusalCodes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return nil
}

// Ledger is a prometheus.Collector of run-level figures read from the ledger
// at scrape time: what a run has been asked, proved, refused and spent, its
// buckets and slices by state, its budget and its last activity. A
// long-lived process (suitegen serve) exports them, so the totals do not
// depend on which writer pods or planner Jobs are alive, and they are right
// after a writer is scaled away or a Job ends: the ledger is the source of
// truth, a pod's counters are only what that pod did since it started.
//
// Every series carries the label run. Several exporters of one ledger
// export the same values; dashboards take max by run, never sum.
type Ledger struct {
	r    RunReader
	opts LedgerOptions

	now    func() time.Time
	mu     sync.Mutex // one read at a time; scrapes meanwhile wait for it
	at     time.Time  // when cached was read
	cached []ledger.RunStats
	err    error

	reads, readErrors uint64
	lastRead          time.Duration
}

// NewLedger returns the collector over r; register it on a registry.
func NewLedger(r RunReader, opts LedgerOptions) (*Ledger, error) {
	if r == nil {
		return nil, errors.New("metrics: NewLedger: no RunReader")
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Ledger{r: r, opts: opts, now: time.Now}, nil
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(Namespace+"_"+name, help, labels, nil)
}

// The ledger's families. Labels are bounded: run (at most MaxRuns at a
// time), states and causes (fixed lists), gate and code (the gates'
// codes), kind (prompt or completion), agent and model (one per run).
var (
	runInfo     = desc("run_info", "Always 1; labels the run with its agent and model.", "run", "agent", "model")
	runState    = desc("run_state", "1 for the state the run is in, 0 for every other state.", "run", "state")
	runAsked    = desc("run_scenarios_asked", "Scenarios the run was asked for.", "run")
	runProved   = desc("run_scenarios_proved_total", "Scenarios proved and journalled in the ledger for the run.", "run")
	runRefused  = desc("run_scenarios_refused_total", "Gate refusals the ledger recorded for the run, by gate and code.", "run", "gate", "code")
	runBuckets  = desc("run_buckets", "The run's plan buckets by ledger state.", "run", "state")
	runSlices   = desc("run_slices", "The run's slices by ledger state (published, done, dead).", "run", "state")
	runDead     = desc("run_slices_dead", "The run's dead slices by cause: failed (a writer's last delivery failed) or lost (no writer finished it).", "run", "cause")
	runCalls    = desc("run_model_calls_total", "Model calls the ledger metered for the run, including calls of slices that later failed.", "run")
	runTokens   = desc("run_spent_tokens_total", "Tokens the ledger metered for the run, by kind (prompt, completion, and cached_prompt and reasoning inside them).", "run", "kind")
	runUSD      = desc("run_spent_usd_total", "Dollars the ledger metered for the run at its model's price (calls of an unpriced model add nothing).", "run")
	runCap      = desc("run_budget_cap_tokens", "The run's token cap; 0 means no cap.", "run")
	runCapUSD   = desc("run_budget_cap_usd", "The run's dollar cap; 0 means no cap.", "run")
	runLeft     = desc("run_budget_remaining_tokens", "Tokens left under the run's cap (negative when overspent); absent when the run has no cap.", "run")
	runRound    = desc("run_round", "The planning round the run is in.", "run")
	runStarted  = desc("run_started_timestamp_seconds", "When the run was created, in Unix seconds.", "run")
	runFinished = desc("run_finished_timestamp_seconds", "When the run finished, in Unix seconds; absent while it has not.", "run")
	runActive   = desc("run_last_activity_timestamp_seconds", "The run's latest ledger write (a slice dealt or finished, a scenario, a refusal, a model call), in Unix seconds.", "run")

	ledgerUp          = desc("ledger_up", "1 when the last read of the ledger succeeded, else 0 (and no run series are exported).")
	ledgerReads       = desc("ledger_reads_total", "Reads of the ledger for run figures (one serves every scrape within the cache period).")
	ledgerReadErrors  = desc("ledger_read_errors_total", "Reads of the ledger for run figures that failed.")
	ledgerReadSeconds = desc("ledger_read_duration_seconds", "How long the last read of the ledger for run figures took.")
	ledgerRuns        = desc("ledger_runs", "Runs the last read exported (unfinished or recently finished, at most the configured limit).")
)

var ledgerDescs = []*prometheus.Desc{runInfo, runState, runAsked, runProved, runRefused, runBuckets, runSlices, runDead,
	runCalls, runTokens, runUSD, runCap, runCapUSD, runLeft, runRound, runStarted, runFinished, runActive,
	ledgerUp, ledgerReads, ledgerReadErrors, ledgerReadSeconds, ledgerRuns}

// Describe sends every family's description.
func (l *Ledger) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range ledgerDescs {
		ch <- d
	}
}

// read returns the figures, reading the ledger when the cache is older than
// CacheFor.
func (l *Ledger) read() ([]ledger.RunStats, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.at.IsZero() && l.now().Sub(l.at) < l.opts.CacheFor {
		return l.cached, l.err
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.opts.Timeout)
	defer cancel()
	start := time.Now()
	rs, err := l.r.Stats(ctx, ledger.StatsQuery{Since: l.now().Add(-l.opts.Retain), Limit: l.opts.MaxRuns})
	l.lastRead = time.Since(start)
	l.reads++
	if err != nil {
		l.readErrors++
		l.opts.Logger.Error("metrics: read run figures from the ledger", "err", err)
	}
	l.at, l.cached, l.err = l.now(), rs, err
	return rs, err
}

// Collect reads the ledger (or the cache) and sends every run's series. On a
// failed read it sends no run series and ledger_up 0: a gap, never a stale
// or partial total.
func (l *Ledger) Collect(ch chan<- prometheus.Metric) {
	rs, err := l.read()
	l.mu.Lock()
	reads, readErrors, last := l.reads, l.readErrors, l.lastRead
	l.mu.Unlock()
	up := 1.0
	if err != nil {
		up, rs = 0, nil
	}
	gauge := func(d *prometheus.Desc, v float64, lvs ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lvs...)
	}
	counter := func(d *prometheus.Desc, v float64, lvs ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, lvs...)
	}
	gauge(ledgerUp, up)
	counter(ledgerReads, float64(reads))
	counter(ledgerReadErrors, float64(readErrors))
	gauge(ledgerReadSeconds, last.Seconds())
	gauge(ledgerRuns, float64(len(rs)))
	for _, r := range rs {
		l.collectRun(r, gauge, counter)
	}
}

func (l *Ledger) collectRun(r ledger.RunStats, gauge, counter func(*prometheus.Desc, float64, ...string)) {
	id := r.ID
	gauge(runInfo, 1, id, r.Agent, r.Model)
	for _, s := range withExtra(ledger.RunStates, map[string]int{string(r.State): 1}) {
		v := 0.0
		if s == string(r.State) {
			v = 1
		}
		gauge(runState, v, id, s)
	}
	gauge(runAsked, float64(r.Asked), id)
	counter(runProved, float64(r.Proved), id)
	refused := map[RefusalCode]int{}
	for _, rc := range l.opts.Refusals {
		refused[rc] = 0
	}
	for gc, n := range r.Refusals {
		refused[RefusalCode{gc.Gate, gc.Code}] += n
	}
	for rc, n := range refused {
		counter(runRefused, float64(n), id, rc.Gate, rc.Code)
	}
	for _, s := range withExtra(ledger.BucketStates, r.Buckets) {
		gauge(runBuckets, float64(r.Buckets[s]), id, s)
	}
	for _, s := range withExtra(ledger.SliceStates, r.Slices) {
		gauge(runSlices, float64(r.Slices[s]), id, s)
	}
	for _, c := range withExtra(ledger.DeadCauses, r.Dead) {
		gauge(runDead, float64(r.Dead[c]), id, c)
	}
	counter(runCalls, float64(r.Calls), id)
	counter(runTokens, float64(r.PromptTokens), id, KindPrompt)
	counter(runTokens, float64(r.CompletionTokens), id, KindCompletion)
	counter(runTokens, float64(r.CachedPromptTokens), id, KindCachedPrompt)
	counter(runTokens, float64(r.ReasoningTokens), id, KindReasoning)
	counter(runUSD, r.CostUSD, id)
	gauge(runCap, float64(r.BudgetTokens), id)
	gauge(runCapUSD, r.BudgetUSD, id)
	if r.BudgetTokens > 0 {
		gauge(runLeft, float64(r.BudgetTokens-r.PromptTokens-r.CompletionTokens), id)
	}
	gauge(runRound, float64(r.Round), id)
	gauge(runStarted, unix(r.CreatedAt), id)
	if r.FinishedAt != nil {
		gauge(runFinished, unix(*r.FinishedAt), id)
	}
	gauge(runActive, unix(r.LastActivity), id)
}

// withExtra is known followed by any key of seen it lacks, sorted: a state
// the ledger holds that this build does not know is exported, not dropped.
func withExtra(known []string, seen map[string]int) []string {
	out := append([]string(nil), known...)
	var extra []string
	for k := range seen {
		found := false
		for _, s := range known {
			found = found || s == k
		}
		if !found {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
