// Package writer is a stateless writer: it pulls one slice at a time from the
// queue, drives a model session over the slice with the writer tools, proves
// and journals every scenario the moment it passes, and acks only after the
// slice's writes have committed. Nothing it holds outlives a slice: a writer
// killed at any point loses no proved scenario (they are in the ledger) and
// credits none twice (the journal is idempotent).
//
// A writer serves every run on the queue, each with that run's settings from
// the ledger (its contract, seed and budget), and only runs recorded with the
// model it drives: a slice of a run written with another model is left for
// a writer that drives it.
package writer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/suitegen/suitegen/pkg/allowance"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/outage"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Source hands out slices one delivery at a time (Queue adapts *jetstream.Queue).
type Source interface {
	// Next blocks until it holds one delivery or ctx ends. A message that is
	// not a slice comes back as a *queue.BadMessageError, already dropped.
	Next(ctx context.Context) (Delivery, error)
}

// SourceFunc is a Source from a function.
type SourceFunc func(ctx context.Context) (Delivery, error)

// Next calls f.
func (f SourceFunc) Next(ctx context.Context) (Delivery, error) { return f(ctx) }

// Delivery is one delivery of one slice, finished exactly once with Ack, Nak
// or Term.
type Delivery interface {
	Slice() queue.Slice
	// Attempt counts this slice's deliveries, this one included.
	Attempt() int
	// Last reports the final delivery the queue allows.
	Last() bool
	Ack(ctx context.Context) error
	Nak(ctx context.Context, delay time.Duration) error
	Term(ctx context.Context, reason string) error
	// Heartbeat keeps the delivery alive until stop is called.
	Heartbeat(ctx context.Context, every time.Duration) (stop func())
}

// Ledger is what a writer reads and writes of the ledger (*ledger.Store).
type Ledger interface {
	Run(ctx context.Context, id string) (ledger.Run, error)
	Buckets(ctx context.Context, run string) ([]ledger.Bucket, error)
	// BucketsOf reads only the buckets a slice names (a brief's).
	BucketsOf(ctx context.Context, run string, ids []string) ([]ledger.Bucket, error)
	Slices(ctx context.Context, run string, round int) ([]ledger.Slice, error)
	FinishSlice(ctx context.Context, run, id string, to ledger.SliceState, writer, reason string, deliveries int) error
	// BeginDelivery and EndDelivery record a delivery's start and end and
	// return what the slice's deliveries count against it (charge.go).
	BeginDelivery(ctx context.Context, run, slice string, n int, writer string) (ledger.Charges, error)
	EndDelivery(ctx context.Context, run, slice string, n int, writer string, outcome ledger.DeliveryOutcome, reason string) (ledger.Charges, error)
	Budget(ctx context.Context, r ledger.Run) (ledger.Budget, error)
	SpendCall(ctx context.Context, c ledger.Call) error
	Refuse(ctx context.Context, run, slice, bucket, gate, code, message string) error
	Journal(ctx context.Context, run string, sc *scenario.Scenario, slice, writer string, codes []string) (ledger.JournalResult, error)
	AddBucket(ctx context.Context, run string, b ledger.Bucket) (ledger.Bucket, error)
	SubGoals(ctx context.Context, run string) ([]ledger.SubGoal, error)
	AddSubGoal(ctx context.Context, run string, g ledger.SubGoal) (created bool, err error)
}

// Engines finds the engine of a run's contract by hash (*engine.Cache).
type Engines interface {
	Get(ctx context.Context, sha string) (*engine.Engine, error)
}

// Config configures a writer.
type Config struct {
	// ID names this writer in the ledger and logs. Default: host-pid.
	ID      string
	Slices  Source
	Ledger  Ledger
	Engines Engines
	Model   model.Client
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// CallTimeout bounds one model call. Default 2m.
	CallTimeout time.Duration
	// SessionTimeout bounds one slice's session (the silence watchdog's outer
	// bound). Default 30m.
	SessionTimeout time.Duration
	// DrainTimeout is how long a stopping writer may spend finishing its
	// current slice before releasing it. Default 90s.
	DrainTimeout time.Duration
	// MaxRateLimitWait bounds the total time one slice waits out 429s before
	// it is released to another writer. Default 10m.
	MaxRateLimitWait time.Duration
	// OtherModelDelay is how long a slice of a run written with another
	// model waits before it is offered again, to a writer that drives it.
	// Default 30s.
	OtherModelDelay time.Duration
	// MaxTokens is the completion cap per model call. Default
	// DefaultMaxTokens. A call's allowance is sized below it from the
	// replies to earlier calls of its kind (pkg/allowance), and kept to a
	// share of the provider's tokens quota when the model knows one
	// (model.TokenQuota).
	MaxTokens int
	// Replies, when set, sizes the allowances (writers of one process
	// driving one model share it, so each learns from all their replies);
	// nil: the writer's own, capped at MaxTokens.
	Replies *allowance.Sizer
	// Dependencies reports whether the servers the writer needs answer (the
	// database reachable and writable, the queue reachable). A writer paused
	// by an outage asks it, with backoff, before it works again (outage.go).
	// Nil: the writer only backs off, and the next try is the probe.
	Dependencies func(ctx context.Context) error
	// OutageBackoff is the first wait of a writer paused by an outage (and
	// of one whose queue does not answer); each failed probe doubles it up
	// to MaxOutageBackoff, and a paused writer waits between half and all of
	// it. Defaults 250ms and 5s: a writer finds its servers back at most 5 s
	// late, and probes a server that stays down about once in 3.75 s.
	OutageBackoff, MaxOutageBackoff time.Duration
	// Up, shared by the writers of one process, wakes those paused by an
	// outage as soon as one of them sees the servers answer (a probe, a
	// slice written). Nil: each finds out by its own probes.
	Up *outage.Up
	// ProbeTimeout bounds one Dependencies probe. Default 5s.
	ProbeTimeout time.Duration
	// MaxFailures is how many of a slice's deliveries may fail on the slice
	// before it is dead; MaxLost how many may be lost with their writer
	// before the slice progressed (charge.go). Defaults DefaultMaxFailures
	// and DefaultMaxLost. Every writer of a queue should agree on them.
	MaxFailures, MaxLost int
	// BeforeSlice, when set, is called with each delivery's slice id before
	// any work, once the delivery is recorded begun. It exists for the
	// fault suite's poison slice (the writer command sets it from
	// SUITEGEN_FAULT_POISON to exit the process); see docs/RELIABILITY.md.
	BeforeSlice func(sliceID string)
}

// DefaultMaxTokens is Config.MaxTokens' default: a reply that holds a
// round of a slice's scenarios (each one's rehearsal, or each one's
// submission), so that the slice's prompt (system prompt, tools, brief) is
// sent about once a round rather than once a scenario and move. Models of
// the OpenAI API write at least this much in one reply.
const DefaultMaxTokens = 16384

// withDefaults returns c with every unset field at its default.
func (c Config) withDefaults() Config {
	if c.ID == "" {
		h, _ := os.Hostname()
		c.ID = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.Metrics == nil {
		c.Metrics = metrics.New(prometheus.NewRegistry(), "", "writer")
	}
	c.CallTimeout = cmp.Or(c.CallTimeout, 2*time.Minute)
	c.SessionTimeout = cmp.Or(c.SessionTimeout, 30*time.Minute)
	c.DrainTimeout = cmp.Or(c.DrainTimeout, 90*time.Second)
	c.MaxRateLimitWait = cmp.Or(c.MaxRateLimitWait, 10*time.Minute)
	c.OtherModelDelay = cmp.Or(c.OtherModelDelay, 30*time.Second)
	c.MaxTokens = cmp.Or(c.MaxTokens, DefaultMaxTokens)
	c.OutageBackoff = cmp.Or(c.OutageBackoff, 250*time.Millisecond)
	c.MaxOutageBackoff = max(cmp.Or(c.MaxOutageBackoff, 5*time.Second), c.OutageBackoff)
	c.ProbeTimeout = cmp.Or(c.ProbeTimeout, 5*time.Second)
	c.MaxFailures = cmp.Or(c.MaxFailures, DefaultMaxFailures)
	c.MaxLost = cmp.Or(c.MaxLost, DefaultMaxLost)
	return c
}

// Validate names the first field that is wrong once defaults are applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Slices == nil:
		return errors.New("writer: Config.Slices is required")
	case c.Ledger == nil:
		return errors.New("writer: Config.Ledger is required")
	case c.Engines == nil:
		return errors.New("writer: Config.Engines is required")
	case c.Model == nil:
		return errors.New("writer: Config.Model is required")
	case c.CallTimeout < 0, c.SessionTimeout < 0, c.DrainTimeout < 0, c.MaxRateLimitWait < 0, c.OtherModelDelay < 0,
		c.OutageBackoff < 0, c.ProbeTimeout < 0:
		return errors.New("writer: Config timeouts must not be negative")
	case c.MaxFailures < 0, c.MaxLost < 0:
		return errors.New("writer: Config.MaxFailures and MaxLost must not be negative")
	case c.MaxTokens < 0:
		return fmt.Errorf("writer: Config.MaxTokens must not be negative, got %d", c.MaxTokens)
	}
	return nil
}

// Writer consumes slices.
type Writer struct {
	cfg Config
	log *slog.Logger
	// goals caches each run's added sub-goals, compiled (subgoal.go).
	goals *goalCache
	// refused is the provider's refusal of this writer's configuration (a
	// *model.ConfigError): once set the writer takes no more slices.
	refused atomic.Pointer[error]
	// replies sizes each request's reply allowance from the replies to
	// earlier requests of its kind (replyKind), up to MaxTokens.
	replies *allowance.Sizer
	// after and jitter time an outage's backoff waits (await); tests give
	// a fake clock and a fixed draw.
	after  func(time.Duration) (<-chan time.Time, func() bool)
	jitter func() float64
}

// New validates the config.
func New(cfg Config) (*Writer, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Writer{cfg: cfg, log: cfg.Logger.With("writer", cfg.ID), goals: newGoalCache(), replies: cmp.Or(cfg.Replies, allowance.New(cfg.MaxTokens)),
		after: after, jitter: rand.Float64}, nil
}

// Run pulls and writes slices until ctx ends. When ctx ends mid-slice, the
// slice gets DrainTimeout to finish; past that it is released for another
// writer (its proved scenarios are already journalled). An outage pauses the
// writer on the slice it holds (outage.go); a queue that does not answer
// pauses it before the next, backing off. When the provider
// refuses the writer's configuration (a *model.ConfigError: bad key,
// unsupported parameter, unknown model), the slice is released and Run
// returns that error: no slice can succeed until the configuration changes.
func (w *Writer) Run(ctx context.Context) error {
	wait := w.cfg.OutageBackoff
	for {
		if ctx.Err() != nil {
			return nil
		}
		if err := w.refused.Load(); err != nil {
			return *err
		}
		d, err := w.cfg.Slices.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var bad *queue.BadMessageError
			if errors.As(err, &bad) {
				w.log.Warn("terminated a slice message that does not decode", "err", err)
				continue
			}
			// The queue (or the way to it) is down: take nothing until it
			// answers, backing off.
			w.log.Error("fetching a slice; backing off", "err", err, "next", wait)
			if !sleep(ctx, outage.Jitter(wait, w.jitter())) {
				return nil
			}
			wait = min(2*wait, w.cfg.MaxOutageBackoff)
			continue
		}
		wait = w.cfg.OutageBackoff
		w.handle(ctx, d)
	}
}

// handle works one delivery to its end: it writes the slice, then settles the
// delivery as the outcome says (settle).
func (w *Writer) handle(ctx context.Context, d Delivery) {
	s := d.Slice()
	// A writer serves every run: its work is counted under the slice's run.
	m := w.cfg.Metrics.For(s.Run)
	m.InitModel(w.cfg.Model.Name()) // a flat 429 line, not a missing one
	m.SlicesInFlight.Inc()
	defer m.SlicesInFlight.Dec()
	if d.Attempt() > 1 {
		m.SlicesRedelivered.Inc()
	}
	log := w.log.With("run", s.Run, "slice", s.ID, "delivery", d.Attempt())
	// Work continues past ctx's end for the drain period, then stops.
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stopDrain := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(w.cfg.DrainTimeout, cancel)
		context.AfterFunc(work, func() { t.Stop() })
	})
	defer stopDrain()
	// The heartbeat holds the delivery through the work, an outage's pause
	// and the ledger write that settles it; finishing it stops the beat.
	stopBeat := d.Heartbeat(work, 0)
	defer stopBeat()
	err := w.writeThrough(work, ctx.Done(), log, d)
	fin, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer fcancel()
	// The ledger write that settles the slice waits out an outage as the
	// work did: for as long as the writer is not stopping (work), else for
	// the finishing time.
	hold := work
	if ctx.Err() != nil {
		hold = fin
	}
	w.settle(fin, hold, log, m, d, w.outcome(err, d, ctx.Err() != nil && (work.Err() != nil || isOutage(err))))
}

// An outcome is how a delivery ends.
type outcome struct {
	kind   outcomeKind
	err    error         // what went wrong, if anything
	reason string        // dead and term: why, for the ledger and the server
	delay  time.Duration // release: how long before the slice is offered again
	what   string        // dropped: what kind of slice, for the log
}

type outcomeKind int

const (
	// written: the slice is done; it is recorded done, then acked.
	written outcomeKind = iota + 1
	// already: the ledger had the slice done before this delivery began (an
	// earlier delivery committed it and its ack was lost): acked, and
	// nothing else done, written or counted.
	already
	// failed: the work failed on the slice; recorded as a failed delivery,
	// then naked for redelivery after delay, or dead once the slice's
	// failures reach MaxFailures or the queue allows no more deliveries.
	failed
	// released: naked for redelivery after delay, charging the slice
	// nothing (a writer stopping).
	released
	// dropped: terminated, the ledger untouched: a run the ledger does not
	// know, or one already over.
	dropped
	// dead: the slice's deliveries reached their bound (charge.go), or the
	// final delivery the queue allows failed; recorded dead in the ledger
	// with its reason, then terminated, so the round counts it as finished.
	dead
	// refused: the provider refused this writer's configuration. Not the
	// slice's fault: released after delay (so a fleet with one bad pod does
	// not spin it) for a writer whose configuration works, and this writer
	// stops.
	refused
)

// unbriefableError is a slice whose brief cannot be made from the buckets
// the ledger holds for it. The brief is read from the run's plan alone, so
// every writer would fail it alike: the slice is dead at once, not after
// every delivery it has, and the planner deals its buckets again one by
// one, so the others are written.
type unbriefableError struct{ err error }

func (e *unbriefableError) Error() string {
	return "the slice's brief cannot be made (any writer would fail it the same way): " + e.err.Error()
}

func (e *unbriefableError) Unwrap() error { return e.err }

// outcome decides how a delivery ends from how its work ended: err from
// writeSlice, and whether the writer is stopping and cut the work short.
func (w *Writer) outcome(err error, d Delivery, stopped bool) outcome {
	var unknown *unknownRunError
	var over *runOverError
	var other *otherModelError
	var charged *chargedError
	var unbriefable *unbriefableError
	switch {
	case err == nil:
		return outcome{kind: written}
	case errors.Is(err, errAlreadyDone):
		return outcome{kind: already}
	case errors.As(err, &unknown):
		return outcome{kind: dropped, err: err, reason: err.Error(), what: "a slice of an unknown run"}
	case errors.As(err, &over):
		return outcome{kind: dropped, err: err, reason: err.Error(), what: "a slice of a finished run"}
	case errors.As(err, &charged), errors.As(err, &unbriefable):
		return outcome{kind: dead, err: err, reason: err.Error()}
	case isRefusal(err):
		return outcome{kind: refused, err: err, delay: 30 * time.Second}
	case stopped:
		return outcome{kind: released, err: err}
	case errors.As(err, &other):
		// No writer of its model may be serving the queue: charged as a
		// failure, so such a slice still ends.
		return outcome{kind: failed, err: err, reason: err.Error(), delay: w.cfg.OtherModelDelay}
	default:
		return outcome{kind: failed, err: err, reason: err.Error(), delay: 2 * time.Second}
	}
}

// settle ends the delivery as o says, acknowledging it under ctx. A ledger
// write that meets an outage is tried again once the servers answer, for as
// long as hold lasts; one that fails otherwise, or outlasts hold, releases
// the slice instead (a second later), so no state is acked that the ledger
// does not hold.
func (w *Writer) settle(ctx, hold context.Context, log *slog.Logger, m *metrics.Metrics, d Delivery, o outcome) {
	s := d.Slice()
	switch o.kind {
	case written:
		if err := w.untilUp(hold, log, func(ctx context.Context) error {
			return w.cfg.Ledger.FinishSlice(ctx, s.Run, s.ID, ledger.SliceDone, w.cfg.ID, "", d.Attempt())
		}); err != nil {
			log.Error("recording the finished slice; releasing it", "err", err)
			_ = d.Nak(ctx, time.Second)
			return
		}
		if err := d.Ack(ctx); err != nil {
			log.Error("ack not confirmed; the slice is done in the ledger, so its redelivery will be acked without work", "err", err)
			return
		}
		m.SlicesAcked.Inc()
		log.Info("slice written")
	case already:
		if err := d.Ack(ctx); err != nil {
			log.Error("ack of a slice already done not confirmed; its next delivery will be acked the same way", "err", err)
			return
		}
		m.SlicesAcked.Inc()
		log.Info("slice already done in the ledger; acked this delivery without work")
	case dropped:
		log.Warn("rejected "+o.what, "err", o.err)
		_ = d.Term(ctx, o.reason)
	case dead:
		if err := w.untilUp(hold, log, func(ctx context.Context) error {
			return w.cfg.Ledger.FinishSlice(ctx, s.Run, s.ID, ledger.SliceDead, w.cfg.ID, o.reason, d.Attempt())
		}); err != nil && !isTransition(err) {
			log.Error("recording a dead slice; releasing it", "err", err)
			_ = d.Nak(ctx, time.Second)
			return
		}
		m.SlicesDeadLettered.Inc()
		_ = d.Term(ctx, o.reason)
		log.Error("slice dead-lettered after its last delivery", "err", o.err)
	case failed:
		var exhausted bool
		err := w.untilUp(hold, log, func(ctx context.Context) (err error) {
			exhausted, err = w.end(ctx, d, ledger.DeliveryFailed, o.reason)
			return err
		})
		if err != nil {
			log.Error("recording a failed delivery", "err", err)
		}
		if exhausted || d.Last() {
			w.settle(ctx, hold, log, m, d, outcome{kind: dead, err: o.err, reason: o.reason})
			return
		}
		log.Warn("slice not written; released for redelivery", "err", o.err, "after", o.delay)
		_ = d.Nak(ctx, o.delay)
	case released:
		w.released(ctx, log, d, "the writer stopped")
		log.Info("released the slice on shutdown", "err", o.err)
		_ = d.Nak(ctx, o.delay)
	case refused:
		w.released(ctx, log, d, "the provider refused the writer's configuration")
		log.Error("the provider refused this writer's configuration; released the slice, stopping", "err", o.err)
		_ = d.Nak(ctx, o.delay)
		w.refused.CompareAndSwap(nil, &o.err)
	}
}

// released records, with one try of at most a few seconds, that the
// delivery ended for a reason that is not the slice's, so it is not taken
// for a delivery lost with its writer. Unrecorded, it is charged as lost.
func (w *Writer) released(ctx context.Context, log *slog.Logger, d Delivery, why string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := w.end(ctx, d, ledger.DeliveryReleased, why); err != nil {
		log.Warn("recording a released delivery", "err", err)
	}
}

// isRefusal: the provider refused the writer's configuration (bad key,
// unsupported parameter, unknown model or deployment).
func isRefusal(err error) bool {
	_, ok := model.IsFatal(err)
	return ok
}

// isTransition: the slice was finished by someone else first (done).
func isTransition(err error) bool {
	var te *ledger.TransitionError
	return errors.As(err, &te)
}

// unknownRunError is a slice of a run the ledger does not have.
type unknownRunError struct{ run string }

func (e *unknownRunError) Error() string { return fmt.Sprintf("writer: unknown run %q", e.run) }

// runOverError is a slice of a run that is done or failed: nothing it asks
// for can change the run.
type runOverError struct {
	run   string
	state ledger.RunState
}

func (e *runOverError) Error() string { return fmt.Sprintf("writer: run %s is %s", e.run, e.state) }

// otherModelError is a slice of a run recorded with a model this writer does
// not drive: writing it here would break the run's provenance and settings.
type otherModelError struct{ run, model, mine string }

func (e *otherModelError) Error() string {
	return fmt.Sprintf("writer: run %s is written with model %s; this writer drives %s", e.run, e.model, e.mine)
}
