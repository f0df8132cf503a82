// Package writer is a stateless writer: it pulls one slice at a time from the
// queue, drives a model session over the slice with the writer tools, proves
// and journals every scenario the moment it passes, and acks only after the
// slice's writes have committed. Nothing it holds outlives a slice: a writer
// killed at any point loses no proved scenario (they are in the ledger) and
// credits none twice (the journal is idempotent).
package writer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/queue"
)

// Config configures a writer.
type Config struct {
	// ID names this writer in the ledger and logs. Default: host-pid.
	ID      string
	Queue   *queue.Queue
	Store   *canvas.Store
	Engines *engine.Cache
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
	// MaxTokens is the completion cap per model call. Default 2048.
	MaxTokens int
	// BeforeSlice, when set, is called with each delivery's slice id before
	// any work. It exists for the fault suite's poison slice (the writer
	// command sets it from SUITEGEN_FAULT_POISON to exit the process);
	// see docs/RELIABILITY.md.
	BeforeSlice func(sliceID string)
}

func (c *Config) validate() error {
	switch {
	case c.Queue == nil:
		return errors.New("writer: Config.Queue is required")
	case c.Store == nil:
		return errors.New("writer: Config.Store is required")
	case c.Engines == nil:
		return errors.New("writer: Config.Engines is required")
	case c.Model == nil:
		return errors.New("writer: Config.Model is required")
	}
	if c.ID == "" {
		h, _ := os.Hostname()
		c.ID = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = metrics.New(prometheus.NewRegistry(), "", "writer")
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = 2 * time.Minute
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 30 * time.Minute
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = 90 * time.Second
	}
	if c.MaxRateLimitWait <= 0 {
		c.MaxRateLimitWait = 10 * time.Minute
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 2048
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
}

// New validates the config.
func New(cfg Config) (*Writer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Writer{cfg: cfg, log: cfg.Logger.With("writer", cfg.ID), goals: newGoalCache()}, nil
}

// Run pulls and writes slices until ctx ends. When ctx ends mid-slice, the
// slice gets DrainTimeout to finish; past that it is released for another
// writer (its proved scenarios are already journalled). When the provider
// refuses the writer's configuration (a *model.ConfigError: bad key,
// unsupported parameter, unknown model), the slice is released and Run
// returns that error: no slice can succeed until the configuration changes.
func (w *Writer) Run(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return nil
		}
		if err := w.refused.Load(); err != nil {
			return *err
		}
		d, err := w.cfg.Queue.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var bad *queue.BadMessageError
			if errors.As(err, &bad) {
				w.log.Warn("terminated a slice message that does not decode", "err", err)
				continue
			}
			w.log.Error("fetching a slice", "err", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			continue
		}
		w.handle(ctx, d)
	}
}

// handle works one delivery to its end: ack, release or dead letter.
func (w *Writer) handle(ctx context.Context, d *queue.Delivery) {
	s := d.Slice
	// A writer serves every run: its work is counted under the slice's run.
	m := w.cfg.Metrics.For(s.RunId)
	m.InitModel(w.cfg.Model.Name()) // a flat 429 line, not a missing one
	m.SlicesInFlight.Inc()
	defer m.SlicesInFlight.Dec()
	if d.NumDelivered > 1 {
		m.SlicesRedelivered.Inc()
	}
	log := w.log.With("run", s.RunId, "slice", s.SliceId, "delivery", d.NumDelivered)
	if w.cfg.BeforeSlice != nil {
		w.cfg.BeforeSlice(s.SliceId)
	}
	// Work continues past ctx's end for the drain period, then stops.
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stopDrain := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(w.cfg.DrainTimeout, cancel)
		context.AfterFunc(work, func() { t.Stop() })
	})
	defer stopDrain()
	stopBeat := d.Heartbeat(work, 0)
	err := w.writeSlice(work, d)
	stopBeat()
	fin, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer fcancel()
	var unknown *unknownRunError
	switch {
	case err == nil:
		if ferr := w.cfg.Store.FinishSlice(fin, s.RunId, s.SliceId, "done", w.cfg.ID, "", int(d.NumDelivered)); ferr != nil {
			log.Error("recording the finished slice; releasing it", "err", ferr)
			_ = d.Nak(fin, time.Second)
			return
		}
		if aerr := d.Ack(fin); aerr != nil {
			log.Error("ack", "err", aerr)
			return
		}
		m.SlicesAcked.Inc()
		log.Info("slice written")
	case errors.As(err, &unknown):
		log.Warn("rejected a slice of an unknown run", "err", err)
		_ = d.Term(fin, err.Error())
	case isRefusal(err):
		// Not the slice's fault: released (after a pause, so a fleet with one
		// bad pod does not spin it) for a writer whose configuration works.
		log.Error("the provider refused this writer's configuration; released the slice, stopping", "err", err)
		_ = d.Nak(fin, 30*time.Second)
		w.refused.CompareAndSwap(nil, &err)
	case work.Err() != nil && ctx.Err() != nil:
		log.Info("released the slice on shutdown", "err", err)
		_ = d.Nak(fin, 0)
	case d.Last():
		reason := err.Error()
		if ferr := w.cfg.Store.FinishSlice(fin, s.RunId, s.SliceId, "dead", w.cfg.ID, reason, int(d.NumDelivered)); ferr != nil {
			log.Error("recording a dead slice; releasing it", "err", ferr)
			_ = d.Nak(fin, time.Second)
			return
		}
		m.SlicesDeadLettered.Inc()
		_ = d.Term(fin, reason)
		log.Error("slice dead-lettered after its last delivery", "err", err)
	default:
		log.Warn("slice failed; released for redelivery", "err", err)
		_ = d.Nak(fin, 2*time.Second)
	}
}

func isRefusal(err error) bool {
	_, ok := model.IsFatal(err)
	return ok
}

type unknownRunError struct{ run string }

func (e *unknownRunError) Error() string { return fmt.Sprintf("writer: unknown run %q", e.run) }
