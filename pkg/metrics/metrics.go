package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes every metric name.
const Namespace = "suitegen"

// Bucket states, the values of the state label of Buckets.
const (
	StateOpen    = "open"
	StateClaimed = "claimed"
	StateDone    = "done"
	StateBlocked = "blocked"
)

// BucketStates lists every bucket state, in the order dashboards show them.
var BucketStates = []string{StateOpen, StateClaimed, StateDone, StateBlocked}

// Model call outcomes, the values of the outcome label of ModelCalls.
const (
	OutcomeOK          = "ok"
	OutcomeRateLimited = "rate_limited"
	OutcomeError       = "error"
	OutcomeTimeout     = "timeout"
	OutcomeCanceled    = "canceled"
)

// Outcomes lists every model call outcome; InitModel starts each at zero.
var Outcomes = []string{OutcomeOK, OutcomeRateLimited, OutcomeError, OutcomeTimeout, OutcomeCanceled}

// Outcomes of an ack that met a transient failure, the values of the outcome
// label of AcksRetried: confirmed on a later try, or given up unconfirmed.
const (
	AckConfirmed = "confirmed"
	AckGaveUp    = "gave_up"
)

// Results of re-proving a written suite's scenario, the values of the
// result label of ScenariosReproved: it still proves (fresh) or no longer
// does (stale).
const (
	ResultFresh = "fresh"
	ResultStale = "stale"
)

// Token kinds, the values of the kind label of ModelTokens. Cached prompt
// tokens are counted inside prompt and reasoning tokens inside completion,
// as providers report them.
const (
	KindPrompt       = "prompt"
	KindCompletion   = "completion"
	KindCachedPrompt = "cached_prompt"
	KindReasoning    = "reasoning"
)

// Histogram bucket layouts. Proofs run a few Starlark calls inside a rolled
// back transaction, so they live between 1 and 50 ms; model calls take
// seconds; limiter waits range from nothing to a full minute window.
var (
	ProofBuckets       = []float64{0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.05, 0.1, 0.25, 1}
	ModelCallBuckets   = []float64{0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300}
	LimiterWaitBuckets = []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120}
	LedgerWriteBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5}
)

// Metrics is the set of instruments of one suitegen process, bound to one
// run. Fields are safe for concurrent use; a role that has nothing to report
// for a field (the planner makes no model calls) simply leaves it at zero.
//
// The run label is a variable label, not a constant one: a writer serves
// slices of every run on the queue, so it records each slice's work under
// For(slice run). The limiter and quota instruments belong to the provider
// quota, which every run shares, so they carry no run label at all (their
// fields are the same in every For view).
type Metrics struct {
	// Slices (the queue's unit of work).
	SlicesPublished    prometheus.Counter // planner/reviewer: slices published to the queue
	SlicesInFlight     prometheus.Gauge   // writer: slices held right now
	SlicesAcked        prometheus.Counter // writer: slices acked after their writes committed
	SlicesRedelivered  prometheus.Counter // writer: deliveries with a delivery count above 1
	SlicesDeadLettered prometheus.Counter // slices whose deliveries ran out, recorded in the ledger
	OutagePauses       prometheus.Counter // writer: pauses on a held slice for an outage of its servers
	// writer: acks that met a transient failure, by {outcome} (AckConfirmed,
	// AckGaveUp); AckRetried records them.
	AcksRetried *prometheus.CounterVec

	// Scenarios.
	ScenariosSubmitted prometheus.Counter     // submissions to the gates
	ScenariosProved    prometheus.Counter     // submissions that passed every gate and were journalled
	ScenariosRefused   *prometheus.CounterVec // {gate, code}: submissions a gate refused
	ScenariosAsked     prometheus.Gauge       // the run's target scenario count
	// A written suite's scenarios re-proved before a run over it (run
	// --update, --into, revise), by {result} (ResultFresh, ResultStale).
	ScenariosReproved *prometheus.CounterVec

	// Buckets by state (planner, from the ledger).
	Buckets *prometheus.GaugeVec // {state}

	// Model provider.
	ModelCalls        *prometheus.CounterVec // {model, outcome}
	ModelCallDuration prometheus.ObserverVec // {model}: the provider's answer only, not the limiter's wait
	ModelTokens       *prometheus.CounterVec // {model, kind}
	ModelCost         *prometheus.CounterVec // {model}: dollars at the model's price
	ModelRateLimited  *prometheus.CounterVec // {model}: HTTP 429 answers

	// The shared provider quota (no run label: every run shares it).
	LimiterWait              prometheus.Histogram // time spent waiting for provider tokens
	LimiterTokensAvailable   prometheus.Gauge     // tokens left in the shared quota's window
	LimiterRequestsAvailable prometheus.Gauge     // requests left in the shared quota's window
	TokensPerMinuteQuota     prometheus.Gauge     // the provider's tokens/min quota
	RequestsPerMinuteQuota   prometheus.Gauge     // the provider's requests/min quota

	// Budget.
	BudgetSpentTokens prometheus.Gauge // tokens spent by the run so far (from the ledger)
	BudgetCapTokens   prometheus.Gauge // the run's token cap; 0 means no cap
	BudgetSpentUSD    prometheus.Gauge // dollars spent by the run so far at its model's price (from the ledger)
	BudgetCapUSD      prometheus.Gauge // the run's dollar cap; 0 means no cap
	// Per kept scenario, from the ledger: {kind} prompt or completion tokens,
	// and dollars.
	TokensPerKept *prometheus.GaugeVec
	CostPerKept   prometheus.Gauge

	// Latencies.
	ProofDuration       prometheus.Histogram // one scenario's gate proofs
	LedgerWriteDuration prometheus.Histogram // one ledger transaction

	// Queue consumer state as JetStream reports it.
	QueuePending    prometheus.Gauge // messages not yet delivered (num_pending)
	QueueAckPending prometheus.Gauge // messages delivered, not yet acked (ack_pending)

	run string
	f   *family
}

// family is the registered vectors of one (registry, role), shared by every
// run's view of them.
type family struct {
	slicesPublished, slicesAcked, slicesRedelivered, slicesDeadLettered, outagePauses *prometheus.CounterVec
	acksRetried, scenariosReproved                                                    *prometheus.CounterVec
	slicesInFlight                                                                    *prometheus.GaugeVec
	scenariosSubmitted, scenariosProved, scenariosRefused                             *prometheus.CounterVec
	scenariosAsked, buckets                                                           *prometheus.GaugeVec
	modelCalls, modelTokens, modelRateLimited, modelCost                              *prometheus.CounterVec
	modelCallDuration                                                                 *prometheus.HistogramVec
	budgetSpent, budgetCap, queuePending, queueAckPending                             *prometheus.GaugeVec
	budgetSpentUSD, budgetCapUSD, tokensPerKept, costPerKept                          *prometheus.GaugeVec
	proofDuration, ledgerWriteDuration                                                *prometheus.HistogramVec

	// Provider-quota instruments: no run label, series created on first use.
	limiterWait                                  *prometheus.HistogramVec
	tokensAvailable, requestsAvailable, tpm, rpm *prometheus.GaugeVec

	mu    sync.Mutex
	byRun map[string]*Metrics
}

// LabelRun is the name of the run label.
const LabelRun = "run"

// New creates the instruments, registers them on reg with the constant label
// role, and returns them bound to run (which may be empty for a process that
// serves many runs and records through For). It panics if registration fails,
// as prometheus.MustRegister does: that is a programming error (two Metrics
// with the same role on one registry; use For for another run), not a
// runtime condition.
func New(reg prometheus.Registerer, run, role string) *Metrics {
	r := prometheus.WrapRegistererWith(prometheus.Labels{"role": role}, reg)
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, append([]string{LabelRun}, labels...))
		r.MustRegister(c)
		return c
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, append([]string{LabelRun}, labels...))
		r.MustRegister(g)
		return g
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, append([]string{LabelRun}, labels...))
		r.MustRegister(h)
		return h
	}
	shared := func(c prometheus.Collector) { r.MustRegister(c) }

	f := &family{
		slicesPublished:    counter("slices_published_total", "Slices published to the work queue."),
		slicesInFlight:     gauge("slices_in_flight", "Slices this process holds right now."),
		slicesAcked:        counter("slices_acked_total", "Slices acked after their ledger writes committed."),
		slicesRedelivered:  counter("slices_redelivered_total", "Slice deliveries that were redeliveries (delivery count above 1)."),
		slicesDeadLettered: counter("slices_dead_lettered_total", "Slices whose deliveries ran out, recorded in the ledger as dead letters."),
		outagePauses:       counter("outage_pauses_total", "Times a writer paused on the slice it holds because its database or queue did not answer, spending none of the slice's deliveries."),
		acksRetried:        counter("acks_retried_total", "Slice acks that met a transient failure, by outcome: confirmed on a later try, or gave_up (not confirmed).", "outcome"),

		scenariosSubmitted: counter("scenarios_submitted_total", "Scenarios submitted to the gates."),
		scenariosProved:    counter("scenarios_proved_total", "Scenarios that passed every gate and were journalled in the ledger."),
		scenariosRefused:   counter("scenarios_refused_total", "Scenario submissions refused, by gate and refusal code.", "gate", "code"),
		scenariosAsked:     gauge("scenarios_asked", "Scenarios the run was asked for (its target)."),
		buckets:            gauge("buckets", "Plan buckets by ledger state (open, claimed, done, blocked).", "state"),
		scenariosReproved:  counter("scenarios_reproved_total", "Scenarios of a written suite re-proved against its contract before a run over it, by result: fresh (still proves) or stale.", "result"),

		modelCalls:        counter("model_calls_total", "Model provider calls, by model and outcome.", "model", "outcome"),
		modelCallDuration: histogram("model_call_duration_seconds", "Wall time of one model provider call from request to answer; the wait for the shared quota is limiter_wait_seconds.", ModelCallBuckets, "model"),
		modelTokens:       counter("model_tokens_total", "Model tokens used, by model and kind (prompt, completion, and cached_prompt and reasoning inside them), from the provider's usage.", "model", "kind"),
		modelCost:         counter("model_cost_usd_total", "Dollars spent on model calls at the model's price (calls of unpriced models add nothing).", "model"),
		modelRateLimited:  counter("model_rate_limited_total", "Model provider answers with HTTP 429 (rate limited).", "model"),

		budgetSpent:    gauge("budget_spent_tokens", "Tokens the run has spent so far, as the ledger records them."),
		budgetCap:      gauge("budget_cap_tokens", "The run's token cap; 0 means no cap."),
		budgetSpentUSD: gauge("budget_spent_usd", "Dollars the run has spent so far at its model's price, as the ledger records them."),
		budgetCapUSD:   gauge("budget_cap_usd", "The run's dollar cap; 0 means no cap."),
		tokensPerKept:  gauge("tokens_per_kept_scenario", "Tokens spent per scenario kept so far, by kind (prompt or completion), from the ledger.", "kind"),
		costPerKept:    gauge("cost_per_kept_scenario_usd", "Dollars spent per scenario kept so far, from the ledger."),

		proofDuration:       histogram("proof_duration_seconds", "Wall time of one scenario's gate proofs.", ProofBuckets),
		ledgerWriteDuration: histogram("ledger_write_duration_seconds", "Wall time of one ledger write transaction.", LedgerWriteBuckets),

		queuePending:    gauge("queue_pending_messages", "Slice messages not yet delivered to the writers consumer (JetStream num_pending)."),
		queueAckPending: gauge("queue_ack_pending_messages", "Slice messages delivered but not yet acked (JetStream ack_pending)."),

		limiterWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "limiter_wait_seconds",
			Help: "Time spent waiting for the shared provider quota before a model call.", Buckets: LimiterWaitBuckets}, nil),
		tokensAvailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "limiter_tokens_available",
			Help: "Tokens available in the shared provider quota's window at the last look."}, nil),
		requestsAvailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "limiter_requests_available",
			Help: "Requests available in the shared provider quota's window at the last look."}, nil),
		tpm: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "limiter_tokens_per_minute_quota",
			Help: "The provider's tokens-per-minute quota the limiter enforces."}, nil),
		rpm: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "limiter_requests_per_minute_quota",
			Help: "The provider's requests-per-minute quota the limiter enforces."}, nil),
		byRun: map[string]*Metrics{},
	}
	shared(f.limiterWait)
	shared(f.tokensAvailable)
	shared(f.requestsAvailable)
	shared(f.tpm)
	shared(f.rpm)
	return f.bind(run)
}

// For returns the instruments bound to run, sharing this process's
// registration: a writer records each slice under its own run. Views are
// cached, so calling For on the hot path costs a map lookup.
func (m *Metrics) For(run string) *Metrics {
	if run == m.run {
		return m
	}
	return m.f.bind(run)
}

// Run is the run these instruments are bound to.
func (m *Metrics) Run() string { return m.run }

func (f *family) bind(run string) *Metrics {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m, ok := f.byRun[run]; ok {
		return m
	}
	cur := prometheus.Labels{LabelRun: run}
	// A run's view starts every series at zero so dashboards have a line from
	// the start; the unbound view ("") creates its series only if written.
	counter := func(v *prometheus.CounterVec) prometheus.Counter {
		if run == "" {
			return lazyCounter{v, []string{run}}
		}
		return v.WithLabelValues(run)
	}
	gauge := func(v *prometheus.GaugeVec) prometheus.Gauge {
		if run == "" {
			return lazyGauge{v, []string{run}}
		}
		return v.WithLabelValues(run)
	}
	histogram := func(v *prometheus.HistogramVec) prometheus.Histogram {
		if run == "" {
			return lazyHistogram{v, []string{run}}
		}
		return v.WithLabelValues(run).(prometheus.Histogram)
	}
	m := &Metrics{
		SlicesPublished:    counter(f.slicesPublished),
		SlicesInFlight:     gauge(f.slicesInFlight),
		SlicesAcked:        counter(f.slicesAcked),
		SlicesRedelivered:  counter(f.slicesRedelivered),
		SlicesDeadLettered: counter(f.slicesDeadLettered),
		OutagePauses:       counter(f.outagePauses),
		AcksRetried:        f.acksRetried.MustCurryWith(cur),

		ScenariosSubmitted: counter(f.scenariosSubmitted),
		ScenariosProved:    counter(f.scenariosProved),
		ScenariosRefused:   f.scenariosRefused.MustCurryWith(cur),
		ScenariosAsked:     gauge(f.scenariosAsked),
		Buckets:            f.buckets.MustCurryWith(cur),
		ScenariosReproved:  f.scenariosReproved.MustCurryWith(cur),

		ModelCalls:        f.modelCalls.MustCurryWith(cur),
		ModelCallDuration: f.modelCallDuration.MustCurryWith(cur),
		ModelTokens:       f.modelTokens.MustCurryWith(cur),
		ModelCost:         f.modelCost.MustCurryWith(cur),
		ModelRateLimited:  f.modelRateLimited.MustCurryWith(cur),

		LimiterWait:              lazyHistogram{f.limiterWait, nil},
		LimiterTokensAvailable:   lazyGauge{f.tokensAvailable, nil},
		LimiterRequestsAvailable: lazyGauge{f.requestsAvailable, nil},
		TokensPerMinuteQuota:     lazyGauge{f.tpm, nil},
		RequestsPerMinuteQuota:   lazyGauge{f.rpm, nil},

		BudgetSpentTokens: gauge(f.budgetSpent),
		BudgetCapTokens:   gauge(f.budgetCap),
		BudgetSpentUSD:    gauge(f.budgetSpentUSD),
		BudgetCapUSD:      gauge(f.budgetCapUSD),
		TokensPerKept:     f.tokensPerKept.MustCurryWith(cur),
		CostPerKept:       gauge(f.costPerKept),

		ProofDuration:       histogram(f.proofDuration),
		LedgerWriteDuration: histogram(f.ledgerWriteDuration),

		QueuePending:    gauge(f.queuePending),
		QueueAckPending: gauge(f.queueAckPending),

		run: run,
		f:   f,
	}
	if run != "" {
		for _, s := range BucketStates {
			m.Buckets.WithLabelValues(s)
		}
		m.TokensPerKept.WithLabelValues(KindPrompt)
		m.TokensPerKept.WithLabelValues(KindCompletion)
		m.AcksRetried.WithLabelValues(AckConfirmed)
		m.AcksRetried.WithLabelValues(AckGaveUp)
		m.ScenariosReproved.WithLabelValues(ResultFresh)
		m.ScenariosReproved.WithLabelValues(ResultStale)
		m.initRefusals()
	}
	f.byRun[run] = m
	return m
}

// ObserveModelCall records one provider call: its outcome and duration, the
// tokens it used, and a 429 when the outcome is OutcomeRateLimited.
func (m *Metrics) ObserveModelCall(model, outcome string, d time.Duration, promptTokens, completionTokens int) {
	m.ModelCalls.WithLabelValues(model, outcome).Inc()
	m.ModelCallDuration.WithLabelValues(model).Observe(d.Seconds())
	if promptTokens > 0 {
		m.ModelTokens.WithLabelValues(model, KindPrompt).Add(float64(promptTokens))
	}
	if completionTokens > 0 {
		m.ModelTokens.WithLabelValues(model, KindCompletion).Add(float64(completionTokens))
	}
	if outcome == OutcomeRateLimited {
		m.ModelRateLimited.WithLabelValues(model).Inc()
	}
}

// ObserveModelSpend records what a call's usage holds besides prompt and
// completion (cached prompt and reasoning tokens) and what it cost.
func (m *Metrics) ObserveModelSpend(model string, cachedPrompt, reasoning int, usd float64) {
	if cachedPrompt > 0 {
		m.ModelTokens.WithLabelValues(model, KindCachedPrompt).Add(float64(cachedPrompt))
	}
	if reasoning > 0 {
		m.ModelTokens.WithLabelValues(model, KindReasoning).Add(float64(reasoning))
	}
	if usd > 0 {
		m.ModelCost.WithLabelValues(model).Add(usd)
	}
}

// SetSpend sets the budget gauges from the ledger's meter and the run's caps.
func (m *Metrics) SetSpend(tokens int64, usd float64, capTokens int64, capUSD float64) {
	m.BudgetSpentTokens.Set(float64(tokens))
	m.BudgetSpentUSD.Set(usd)
	m.BudgetCapTokens.Set(float64(capTokens))
	m.BudgetCapUSD.Set(capUSD)
}

// SetPerKept sets the per-kept-scenario gauges.
func (m *Metrics) SetPerKept(prompt, completion, usd float64) {
	m.TokensPerKept.WithLabelValues(KindPrompt).Set(prompt)
	m.TokensPerKept.WithLabelValues(KindCompletion).Set(completion)
	m.CostPerKept.Set(usd)
}

// InitModel creates the model's series at zero, every outcome and token
// kind, so dashboards show the model (and flat 429 and error lines) before
// its first call.
func (m *Metrics) InitModel(model string) {
	for _, o := range Outcomes {
		m.ModelCalls.WithLabelValues(model, o)
	}
	m.ModelCallDuration.WithLabelValues(model)
	for _, k := range []string{KindPrompt, KindCompletion, KindCachedPrompt, KindReasoning} {
		m.ModelTokens.WithLabelValues(model, k)
	}
	m.ModelCost.WithLabelValues(model)
	m.ModelRateLimited.WithLabelValues(model)
}

// AckRetried counts one ack of a slice of run that met a transient failure:
// confirmed on a later try, or given up. It makes Metrics a queue's
// AckReporter (queue.Config.Acks).
func (m *Metrics) AckRetried(run string, confirmed bool) {
	outcome := AckGaveUp
	if confirmed {
		outcome = AckConfirmed
	}
	m.For(run).AcksRetried.WithLabelValues(outcome).Inc()
}

// Reproved counts what re-proving a written suite found: fresh scenarios
// still prove against the contract, stale ones no longer do.
func (m *Metrics) Reproved(fresh, stale int) {
	m.ScenariosReproved.WithLabelValues(ResultFresh).Add(float64(fresh))
	m.ScenariosReproved.WithLabelValues(ResultStale).Add(float64(stale))
}

// Refused counts one submission refused by gate with code.
func (m *Metrics) Refused(gate, code string) {
	m.ScenariosRefused.WithLabelValues(gate, code).Inc()
}

// SetBuckets sets the bucket gauges from counts by state; states absent from
// counts are set to zero, so a state that empties does not keep its old value.
func (m *Metrics) SetBuckets(counts map[string]int) {
	for _, s := range BucketStates {
		m.Buckets.WithLabelValues(s).Set(float64(counts[s]))
	}
	for s, n := range counts {
		m.Buckets.WithLabelValues(s).Set(float64(n))
	}
}

// SetQueue sets the consumer gauges from JetStream's consumer info.
func (m *Metrics) SetQueue(numPending, ackPending uint64) {
	m.QueuePending.Set(float64(numPending))
	m.QueueAckPending.Set(float64(ackPending))
}

// Since observes the time elapsed since start on h; use with defer:
//
//	defer metrics.Since(m.ProofDuration, time.Now())
func Since(h prometheus.Observer, start time.Time) {
	h.Observe(time.Since(start).Seconds())
}
