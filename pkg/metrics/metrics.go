package metrics

import (
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

// Token kinds, the values of the kind label of ModelTokens.
const (
	KindPrompt     = "prompt"
	KindCompletion = "completion"
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

// Metrics is the set of instruments of one suitegen process. Fields are safe
// for concurrent use; a role that has nothing to report for a field (the
// planner makes no model calls) simply leaves it at zero.
type Metrics struct {
	// Slices (the queue's unit of work).
	SlicesPublished    prometheus.Counter // planner/reviewer: slices published to the queue
	SlicesInFlight     prometheus.Gauge   // writer: slices held right now
	SlicesAcked        prometheus.Counter // writer: slices acked after their writes committed
	SlicesRedelivered  prometheus.Counter // writer: deliveries with a delivery count above 1
	SlicesDeadLettered prometheus.Counter // slices whose deliveries ran out, recorded in the ledger

	// Scenarios.
	ScenariosSubmitted prometheus.Counter     // submissions to the gates
	ScenariosProved    prometheus.Counter     // submissions that passed every gate and were journalled
	ScenariosRefused   *prometheus.CounterVec // {gate, code}: submissions a gate refused
	ScenariosAsked     prometheus.Gauge       // the run's target scenario count

	// Buckets by state (planner, from the ledger).
	Buckets *prometheus.GaugeVec // {state}

	// Model provider.
	ModelCalls               *prometheus.CounterVec   // {model, outcome}
	ModelCallDuration        *prometheus.HistogramVec // {model}
	ModelTokens              *prometheus.CounterVec   // {model, kind}
	ModelRateLimited         *prometheus.CounterVec   // {model}: HTTP 429 answers
	LimiterWait              prometheus.Histogram     // time spent waiting for provider tokens
	LimiterTokensAvailable   prometheus.Gauge         // tokens left in the shared bucket
	LimiterRequestsAvailable prometheus.Gauge         // requests left in the shared bucket
	TokensPerMinuteQuota     prometheus.Gauge         // the provider's tokens/min quota
	RequestsPerMinuteQuota   prometheus.Gauge         // the provider's requests/min quota

	// Budget.
	BudgetSpentTokens prometheus.Gauge // tokens spent by the run so far (from the ledger)
	BudgetCapTokens   prometheus.Gauge // the run's token cap; 0 means no cap

	// Latencies.
	ProofDuration       prometheus.Histogram // one scenario's gate proofs
	LedgerWriteDuration prometheus.Histogram // one ledger transaction

	// Queue consumer state as JetStream reports it.
	QueuePending    prometheus.Gauge // messages not yet delivered (num_pending)
	QueueAckPending prometheus.Gauge // messages delivered, not yet acked (ack_pending)
}

// New creates the instruments and registers them on reg with the constant
// labels run and role. It panics if registration fails, as
// prometheus.MustRegister does: that is a programming error (two Metrics with
// the same run and role on one registry), not a runtime condition.
func New(reg prometheus.Registerer, run, role string) *Metrics {
	r := prometheus.WrapRegistererWith(prometheus.Labels{"run": run, "role": role}, reg)
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})
		r.MustRegister(c)
		return c
	}
	gauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help})
		r.MustRegister(g)
		return g
	}
	histogram := func(name, help string, buckets []float64) prometheus.Histogram {
		h := prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets})
		r.MustRegister(h)
		return h
	}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
		r.MustRegister(c)
		return c
	}

	m := &Metrics{
		SlicesPublished:    counter("slices_published_total", "Slices published to the work queue."),
		SlicesInFlight:     gauge("slices_in_flight", "Slices this process holds right now."),
		SlicesAcked:        counter("slices_acked_total", "Slices acked after their ledger writes committed."),
		SlicesRedelivered:  counter("slices_redelivered_total", "Slice deliveries that were redeliveries (delivery count above 1)."),
		SlicesDeadLettered: counter("slices_dead_lettered_total", "Slices whose deliveries ran out, recorded in the ledger as dead letters."),

		ScenariosSubmitted: counter("scenarios_submitted_total", "Scenarios submitted to the gates."),
		ScenariosProved:    counter("scenarios_proved_total", "Scenarios that passed every gate and were journalled in the ledger."),
		ScenariosRefused:   counterVec("scenarios_refused_total", "Scenario submissions refused, by gate and refusal code.", "gate", "code"),
		ScenariosAsked:     gauge("scenarios_asked", "Scenarios the run was asked for (its target)."),

		Buckets: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: "buckets",
			Help: "Plan buckets by ledger state (open, claimed, done, blocked)."}, []string{"state"}),

		ModelCalls: counterVec("model_calls_total", "Model provider calls, by model and outcome.", "model", "outcome"),
		ModelCallDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "model_call_duration_seconds",
			Help: "Wall time of one model provider call, including retries of transport errors.", Buckets: ModelCallBuckets}, []string{"model"}),
		ModelTokens:              counterVec("model_tokens_total", "Model tokens used, by model and kind (prompt or completion), from the provider's usage.", "model", "kind"),
		ModelRateLimited:         counterVec("model_rate_limited_total", "Model provider answers with HTTP 429 (rate limited).", "model"),
		LimiterWait:              histogram("limiter_wait_seconds", "Time spent waiting for the shared provider token bucket before a model call.", LimiterWaitBuckets),
		LimiterTokensAvailable:   gauge("limiter_tokens_available", "Tokens available in the shared provider bucket at the last take."),
		LimiterRequestsAvailable: gauge("limiter_requests_available", "Requests available in the shared provider bucket at the last take."),
		TokensPerMinuteQuota:     gauge("limiter_tokens_per_minute_quota", "The provider's tokens-per-minute quota the limiter enforces."),
		RequestsPerMinuteQuota:   gauge("limiter_requests_per_minute_quota", "The provider's requests-per-minute quota the limiter enforces."),

		BudgetSpentTokens: gauge("budget_spent_tokens", "Tokens the run has spent so far, as the ledger records them."),
		BudgetCapTokens:   gauge("budget_cap_tokens", "The run's token cap; 0 means no cap."),

		ProofDuration:       histogram("proof_duration_seconds", "Wall time of one scenario's gate proofs.", ProofBuckets),
		LedgerWriteDuration: histogram("ledger_write_duration_seconds", "Wall time of one ledger write transaction.", LedgerWriteBuckets),

		QueuePending:    gauge("queue_pending_messages", "Slice messages not yet delivered to the writers consumer (JetStream num_pending)."),
		QueueAckPending: gauge("queue_ack_pending_messages", "Slice messages delivered but not yet acked (JetStream ack_pending)."),
	}
	r.MustRegister(m.Buckets, m.ModelCallDuration)
	// Known label values start at zero so dashboards show every state, not
	// only those that happened to move.
	for _, s := range BucketStates {
		m.Buckets.WithLabelValues(s)
	}
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

// InitModel creates the model's series at zero so dashboards show the model
// (and a flat 429 line) before its first call.
func (m *Metrics) InitModel(model string) {
	m.ModelCalls.WithLabelValues(model, OutcomeOK)
	m.ModelCallDuration.WithLabelValues(model)
	m.ModelTokens.WithLabelValues(model, KindPrompt)
	m.ModelTokens.WithLabelValues(model, KindCompletion)
	m.ModelRateLimited.WithLabelValues(model)
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
