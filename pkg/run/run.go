// Package run is `suitegen run`: planner, writers and reviewer in one process,
// talking only through JetStream and Postgres with the same packages the
// separate binaries use, on the embedded stack unless URLs are given. It is
// the orchestrator only: the roles move their run through its lifecycle, and
// what a process is assembled from is pkg/wire's.
package run

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/suitegen/suitegen/pkg/allowance"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/outage"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/provider"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/queue/jetstream"
	"github.com/suitegen/suitegen/pkg/refresh"
	"github.com/suitegen/suitegen/pkg/reviewer"
	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/wire"
	"github.com/suitegen/suitegen/pkg/writer"
)

// Config is `suitegen run`'s configuration.
type Config struct {
	Dirs []string
	// Asked is how many scenarios each contract's run is asked for (--scenarios).
	Asked   int
	Writers int
	// MaxTokens caps each writer call's reply allowance (--max-tokens;
	// 0: the writer's default), below which it is sized by observation.
	MaxTokens   int
	Concurrency int
	Out         string
	Model       string // "builtin" or a provider model name (Azure: the deployment)
	// Provider is how writers reach and pay Model's provider.
	Provider provider.Settings
	Seed     int64
	Rounds   int // the reviewer's gap rounds (0: none)
	StateDir string
	NATSURL  string
	// Queue carries the NATS credential and TLS files; its URL is NATSURL
	// (or the embedded server's).
	Queue       queue.Config
	DatabaseURL string
	MetricsAddr string
	// ProgressAddr, when set, serves the progress page and API (progress.Handler) there.
	ProgressAddr string
	// ProgressToken, when set, is required by every endpoint of the
	// progress page but /healthz (progress.Options.Token).
	ProgressToken string
	BudgetTokens  int64
	// BudgetUSD caps the run's spend in dollars at Model's price (0: no cap).
	BudgetUSD float64
	PlanFile  string
	RunID     string
	// MaxWant caps one bucket's want (0: the plan's default, 10); raise it to
	// ask one contract for more than its default capacity.
	MaxWant int
	// AllowPartial writes a suite even when some use cases cannot be
	// planned (the report names them); without it such a run stops before
	// spending.
	AllowPartial bool
	// PlanCache keeps derived plans for later runs of the same contract
	// (plan.Options.Cache); nil: the one the environment names
	// (plan.EnvCache), or none.
	PlanCache plan.Cache
	Logger    *slog.Logger
	// Progress, when set, gets a progress bar (TTY says whether it is a terminal).
	Progress io.Writer
	TTY      bool
	// ByUseCase adds a progress line per use case under the bar.
	ByUseCase bool
	// Update, when set, is a written suite of the one contract whose stale
	// scenarios are written again (suitegen run DIR --update OUT); Out is
	// ignored.
	Update string
	// Into, when set, is a written suite of the one contract that Asked new
	// scenarios are added to (suitegen run DIR --into OUT --scenarios +N).
	Into string
	// Revise, when its Dir is set, replaces chosen scenarios of a written
	// suite of the one contract by ones its Ask describes (suitegen revise).
	Revise Revision
	// Client, when set, is the model every writer drives instead of Model's
	// (tests inject a scripted model.Client here).
	Client model.Client
}

// Revision is what suitegen revise asks of a written suite: the scenarios
// named (Only) or matching every key=value of Where (refresh.WhereKeys),
// and the ask in words (refresh.ParseAsk).
type Revision struct {
	Dir   string
	Only  []string
	Where map[string]string
	Ask   string
}

// suiteDir is the written suite a run over one works on ("" for a run that
// writes a suite from nothing).
func (c Config) suiteDir() string { return cmp.Or(c.Update, c.Into, c.Revise.Dir) }

// ModelWrites says whether a model writes the run (a provider's, or one a
// test injects), not the builtin writer: it takes a revision's ask in words.
func (c Config) ModelWrites() bool {
	return c.Client != nil || cmp.Or(c.Model, provider.Builtin) != provider.Builtin
}

// priced says whether the run's model has a price.
func (c Config) priced() bool {
	_, ok := c.Provider.PriceOf(c.Model)
	return ok
}

// withDefaults returns c with every unset field at its default.
func (c Config) withDefaults() Config {
	c.Writers = cmp.Or(c.Writers, 4)
	c.Concurrency = cmp.Or(c.Concurrency, 1)
	c.Model = cmp.Or(c.Model, "builtin")
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.PlanCache == nil {
		c.PlanCache = plan.EnvCache(os.Getenv)
	}
	return c
}

// Validate names the first field that is wrong once defaults are applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case len(c.Dirs) == 0:
		return errors.New("at least one contract directory is required")
	case c.Asked <= 0:
		return fmt.Errorf("--scenarios must be positive, got %d", c.Asked)
	case c.Writers < 0 || c.Writers > 64:
		return fmt.Errorf("--writers must be between 1 and 64, got %d", c.Writers)
	case c.Concurrency < 0:
		return fmt.Errorf("--concurrency must be positive, got %d", c.Concurrency)
	case c.Client == nil && c.Provider.Check(c.Model) != nil:
		return c.Provider.Check(c.Model)
	case c.Update != "" && c.Into != "", c.Revise.Dir != "" && (c.Update != "" || c.Into != ""):
		return errors.New("--update, --into and revise do not go together")
	case c.suiteDir() != "" && len(c.Dirs) != 1:
		return errors.New("--update and --into take exactly one contract directory")
	case c.Rounds < 0:
		return fmt.Errorf("--rounds must not be negative, got %d", c.Rounds)
	case c.BudgetTokens < 0:
		return fmt.Errorf("--budget-tokens must not be negative, got %d", c.BudgetTokens)
	case c.BudgetUSD < 0:
		return fmt.Errorf("--budget-usd must not be negative, got %v", c.BudgetUSD)
	case c.BudgetUSD > 0 && c.Client == nil && c.Model != provider.Builtin && !c.priced():
		return fmt.Errorf("--budget-usd needs a price for --model %s: give --price or --prices (docs/PROVIDERS.md)", c.Model)
	}
	return nil
}

// Result is what one contract's run produced.
type Result struct {
	RunID  string
	Agent  string
	Out    string
	Proved int
	Asked  int
	Report suite.Report
	Err    error
	// Stages is where the run's wall time went.
	Stages Stages
	// Refresh is what --update or --into did to the suite.
	Refresh *refresh.Outcome
}

// Stages is the wall time of each stage of one contract's run.
type Stages struct {
	Plan   time.Duration // deriving the plan and writing the canvas
	Write  time.Duration // dealing slices until the ledger has the ask (writers at work)
	Review time.Duration // reviewer rounds
	Output time.Duration // writing the suite from the ledger
	// Fold is the planner's folding (the ledger step between rounds, gap
	// rounds included) over the Slices it dealt.
	Fold   time.Duration
	Slices int
}

// Run runs the whole job: the embedded stack (unless URLs are given), the
// writers, and each contract's run, at most Concurrency at once. One
// contract failing never stops its siblings; its failure is in the results
// and in OUT/failures.json.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	var contracts []*contract.Contract
	for _, d := range cfg.Dirs {
		c, err := contract.LoadValid(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d, err)
		}
		contracts = append(contracts, c)
	}
	if dir := cfg.suiteDir(); dir != "" {
		// A suite that does not read, or is another contract's, is refused
		// before any server starts or anything is spent.
		w, err := suite.Read(dir)
		if err != nil {
			return nil, err
		}
		if c := contracts[0]; w.Index.Agent != c.Agent {
			return nil, &refresh.ForeignError{Suite: dir, SuiteAgent: w.Index.Agent, ContractAgent: c.Agent}
		}
		if rv := cfg.Revise; rv.Dir != "" {
			ask, err := refresh.ParseAsk(rv.Ask, cfg.ModelWrites())
			if err != nil {
				return nil, fmt.Errorf("--ask: %w", err)
			}
			names, err := refresh.Select(w, rv.Only, rv.Where)
			if err != nil {
				return nil, err
			}
			if err := refresh.Fits(w, contracts[0], names, ask, rv.Ask); err != nil {
				return nil, err
			}
		}
	}
	st, err := stack.Start(ctx, stack.Config{StateDir: cfg.StateDir, NATSURL: cfg.NATSURL, DatabaseURL: cfg.DatabaseURL, Logger: log})
	if err != nil {
		return nil, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := st.Stop(sctx); err != nil {
			log.Error("stopping the embedded stack", "err", err)
		}
	}()
	pool, err := engine.Pool(ctx, st.DatabaseURL, cfg.Writers*cfg.Concurrency)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	// A database starting, restarting or failing over is waited for, as the
	// queue is, up to --startup-timeout (Queue.StartupTimeout); any other
	// error ends the run at once.
	startup := outage.Backoff{First: 250 * time.Millisecond, Max: 5 * time.Second, Timeout: cfg.Queue.StartupTimeout}
	if err := startup.Retry(ctx, log, "database", func(ctx context.Context) error { return migrate.Apply(ctx, pool) }); err != nil {
		return nil, err
	}
	store := ledger.New(pool)
	reg := metrics.NewRegistry()
	// Writers and planners report under their own roles, as the separate
	// binaries do; both record each run's work under that run (For).
	wmx := metrics.New(reg, "", "writer")
	mx := metrics.New(reg, "", "planner")
	// The run figures from the ledger, as suitegen serve exports them, so the
	// dashboard's run-level panels work on an all-in-one run too.
	ledger, err := metrics.NewLedger(store, metrics.LedgerOptions{Logger: log})
	if err != nil {
		return nil, err
	}
	// The roles here are goroutines of this process: ready while the ledger
	// takes writes and the planners' queue answers (not before it connects).
	var readyQueue atomic.Pointer[jetstream.Queue]
	ready := wire.Ready(ctx, func(ctx context.Context) error { return wire.Dependencies(store, readyQueue.Load())(ctx) })
	reg.MustRegister(ledger, metrics.NewReady("writer", ready))
	if cfg.MetricsAddr != "" {
		mctx, mcancel := context.WithCancel(ctx)
		mdone := make(chan struct{})
		go func() {
			defer close(mdone)
			if err := metrics.Serve(mctx, cfg.MetricsAddr, reg, ready); err != nil {
				log.Error("metrics server", "err", err)
			}
		}()
		defer func() { mcancel(); <-mdone }()
	}
	if cfg.ProgressAddr != "" {
		pctx, pcancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := wire.ServeProgress(pctx, cfg.ProgressAddr, store, progress.Options{Token: cfg.ProgressToken, Logger: log}, nil); err != nil {
				log.Error("progress server", "err", err)
			}
		}()
		defer func() { pcancel(); <-done }()
	}
	engines := engine.NewCache(pool, store)
	defer engines.Close() // after the writers stop (deferred later), before the pool closes
	for _, c := range contracts {
		e, err := engine.Open(ctx, pool, c)
		if err != nil {
			return nil, err
		}
		engines.Put(e)
	}
	client := cfg.Client
	if client == nil {
		// Slices of other runs left on the queue (an interrupted run on the
		// same state dir) are written too, into their own run's ledger,
		// when that run is written with this model.
		m := wire.Model{Name: cfg.Model, Provider: cfg.Provider}
		if client, err = wire.Client(ctx, m, pool, engines, wmx, log, contracts...); err != nil {
			return nil, err
		}
	}

	// A writer stopped by a provider's refusal of its configuration (bad
	// key, unsupported parameter, unknown model) ends the whole run with it.
	ctx, failRun := context.WithCancelCause(ctx)
	defer failRun(nil)
	stopWriters, err := startWriters(ctx, cfg, st.NATSURL, store, engines, client, wmx, failRun)
	if err != nil {
		return nil, err
	}
	defer stopWriters()
	// A signal stops the writers too (they drain), after planners return.
	context.AfterFunc(ctx, stopWriters)

	pq, err := jetstream.Connect(ctx, cfg.queueConfig(st.NATSURL))
	if err != nil {
		return nil, err
	}
	defer pq.Close()
	readyQueue.Store(pq)
	var steer []plan.Steer
	if cfg.PlanFile != "" {
		if steer, err = wire.ReadPlanFile(cfg.PlanFile); err != nil {
			return nil, err
		}
	}
	results := make([]Result, len(contracts))
	sem := make(chan struct{}, cfg.Concurrency)
	var pw sync.WaitGroup
	for i, c := range contracts {
		pw.Add(1)
		go func() {
			defer pw.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// Opened above, so this fails only on a cache closed under it or
			// a contract the ledger cannot give back: that contract's failure.
			e, err := engines.Get(ctx, c.SHA256)
			if err != nil {
				results[i] = Result{Agent: c.Agent, Err: fmt.Errorf("%s: engine: %w", c.Agent, err)}
				return
			}
			j := job{cfg: cfg, c: c, e: e, store: store, q: pq, mx: mx, steer: steer, model: client.Name(), log: log}
			if cfg.suiteDir() != "" {
				results[i] = j.refreshSuite(ctx)
				return
			}
			results[i] = j.run(ctx)
		}()
	}
	pw.Wait()
	// One contract failing never cancels its siblings; it is recorded. A run
	// over an existing suite writes nothing beside it.
	if cfg.suiteDir() == "" {
		if err := writeFailures(context.WithoutCancel(ctx), store, cfg.Out, results); err != nil {
			log.Error("writing failures.json", "err", err)
		}
	}
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return results, errors.Join(errs...)
}

// startWriters starts cfg.Writers writers, each with its own queue
// connection like a pod, and returns what stops them and waits.
// A writer that stops on an error (a refused configuration) calls fail.
func startWriters(ctx context.Context, cfg Config, natsURL string, store *ledger.Store, engines *engine.Cache, client model.Client, mx *metrics.Metrics, fail func(error)) (stop func(), err error) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	replies := allowance.New(cmp.Or(cfg.MaxTokens, writer.DefaultMaxTokens))
	up := new(outage.Up) // the first writer to find the servers back wakes the others
	for i := range cfg.Writers {
		qc := cfg.queueConfig(natsURL)
		qc.Acks = mx // acks that meet a transient failure, by how they end
		q, err := jetstream.Connect(ctx, qc)
		if err != nil {
			stop()
			return nil, err
		}
		w, err := writer.New(writer.Config{ID: fmt.Sprintf("writer-%d", i+1), Slices: wire.WriterSource(q), Ledger: store, Engines: engines,
			Model: client, Metrics: mx, Logger: cfg.Logger, Dependencies: wire.Dependencies(store, q), MaxTokens: cfg.MaxTokens, Replies: replies, Up: up})
		if err != nil {
			q.Close()
			stop()
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer q.Close()
			if err := w.Run(wctx); err != nil {
				cfg.Logger.Error("writer stopped", "writer", i+1, "err", err)
				fail(err)
			}
		}()
	}
	return stop, nil
}

// job is one contract's run within Run.
type job struct {
	cfg   Config
	c     *contract.Contract
	e     *engine.Engine
	store *ledger.Store
	q     *jetstream.Queue
	mx    *metrics.Metrics
	steer []plan.Steer
	model string // the model the writers drive, recorded on the run
	log   *slog.Logger
}

// run is one contract's run in its phases: plan (the canvas), write (the
// planner's rounds, which end the run failed when it is short), review (gap
// rounds, then the suite written and the run done), each timed. A run
// interrupted or stopped by an error is cancelled, with what it proved
// written out, and resumes with its run id.
func (j job) run(ctx context.Context) (res Result) {
	res = Result{RunID: j.runID(), Agent: j.c.Agent, Out: j.out(), Asked: j.cfg.Asked}
	log := j.log.With("run", res.RunID)
	defer func() {
		log.Info("run stages", "plan", res.Stages.Plan, "write", res.Stages.Write, "fold", res.Stages.Fold, "slices", res.Stages.Slices,
			"review", res.Stages.Review, "output", res.Stages.Output)
	}()
	p, err := planner.New(planner.Config{Ledger: j.store, Queue: j.q, Engine: j.e, Metrics: j.mx.For(res.RunID), Logger: j.log,
		RunID: res.RunID, Asked: j.cfg.Asked, Seed: j.cfg.Seed, Model: j.model, BudgetTokens: j.cfg.BudgetTokens, BudgetUSD: j.cfg.BudgetUSD,
		Steer: j.steer, MaxWant: j.cfg.MaxWant, AllowPartial: j.cfg.AllowPartial, PlanCache: j.cfg.PlanCache})
	if err != nil {
		res.Err = err
		return res
	}

	t := time.Now()
	if err := p.Prepare(ctx); err != nil {
		res.Err = fmt.Errorf("%s: %w", j.c.Agent, err)
		return res
	}
	res.Stages.Plan = time.Since(t)
	log.Info("run planned", "agent", j.c.Agent, "asked", j.cfg.Asked, "capacity", p.Plan.Capacity)

	t = time.Now()
	stopBar := j.bar(ctx, res.RunID)
	_, err = p.Run(ctx)
	res.Stages.Write = time.Since(t)
	var short *planner.ShortError
	if err != nil && !errors.As(err, &short) {
		stopBar()
		return j.stopped(ctx, res, p.Plan, err)
	}

	t = time.Now()
	_, concluded, err := reviewer.Conclude(ctx, reviewer.Config{Ledger: j.store, Dealer: p, RunID: res.RunID, Contract: j.c,
		Plan: p.Plan, Out: res.Out, Rounds: j.cfg.Rounds, Logger: j.log})
	stopBar()
	res.Stages.Review = time.Since(t)
	fo := p.Folding()
	res.Stages.Fold, res.Stages.Slices = fo.Time, fo.Slices
	if err != nil {
		return j.stopped(ctx, res, p.Plan, err)
	}
	short = cmp.Or(short, concluded)

	t = time.Now()
	// The report says which refusal branches the kept scenarios reach: a
	// play per scenario on the run's own world.
	rep, err := reviewer.Write(ctx, j.store, res.RunID, j.c, p.Plan, res.Out, j.e.Prover)
	res.Stages.Output = time.Since(t)
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", j.c.Agent, err)
		return res
	}
	res.Report, res.Proved = rep, rep.Count
	if short != nil {
		// The planner's account of a short run when it had one (it knows
		// whether the budget stopped it), with what the suite holds.
		short.Proved, short.Report = rep.Count, filepath.Join(res.Out, "report.json")
		res.Err = short
	}
	return res
}

// stopped ends a run that an interruption or an error stopped before its
// end: it is cancelled (resumable with its run id), and what the ledger
// holds is written out.
func (j job) stopped(ctx context.Context, res Result, p *plan.Plan, cause error) Result {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	if refused, fatal := model.IsFatal(context.Cause(ctx)); fatal {
		// The provider refused the writers' configuration: no slice can be
		// written until it changes, so the run fails with the fix named.
		if _, err := j.store.MoveRun(fctx, res.RunID, ledger.RunFailed, refused.Error()); err != nil {
			j.log.Error("recording the failed run", "run", res.RunID, "err", err)
		}
		res.Err = fmt.Errorf("%s: %w", j.c.Agent, context.Cause(ctx))
		return res
	}
	why := "stopped by a signal"
	if ctx.Err() == nil {
		why = "stopped by an error: " + cause.Error()
	}
	if _, err := j.store.MoveRun(fctx, res.RunID, ledger.RunCancelled, why); err != nil {
		j.log.Error("recording the stopped run", "run", res.RunID, "err", err)
	}
	t := time.Now()
	// What it holds, within the stopped run's bounded write: the
	// branches' play is left out.
	if rep, err := reviewer.Write(fctx, j.store, res.RunID, j.c, p, res.Out, nil); err == nil {
		res.Report, res.Proved = rep, rep.Count
	}
	res.Stages.Output = time.Since(t)
	verb := "interrupted"
	if ctx.Err() == nil {
		verb = "stopped"
	}
	res.Err = fmt.Errorf("%s: %s with %d of %d proved (suite so far in %s); resume with --run %s and the same --state-dir: %w",
		j.c.Agent, verb, res.Proved, j.cfg.Asked, res.Out, res.RunID, cause)
	return res
}

// bar shows the run's progress while it writes and reviews, when asked; the
// returned function stops it and waits.
func (j job) bar(ctx context.Context, id string) (stop func()) {
	return j.barOf(ctx, progress.Poller(j.store, id, j.cfg.ByUseCase))
}

// barOf draws the progress line of what poll reads until stop is called.
func (j job) barOf(ctx context.Context, poll func(context.Context) (progress.Snapshot, error)) (stop func()) {
	if j.cfg.Progress == nil {
		return func() {}
	}
	bctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		progress.Bar(bctx, j.cfg.Progress, j.cfg.TTY, poll, time.Second)
	}()
	var once sync.Once
	return func() { once.Do(func() { cancel(); <-done }) }
}

// runID is the run's id: the one given, or a fresh one per contract.
func (j job) runID() string {
	if j.cfg.RunID != "" && len(j.cfg.Dirs) == 1 {
		return j.cfg.RunID
	}
	return j.c.Agent + "-" + randomHex(4)
}

// out is where the contract's suite is written.
func (j job) out() string {
	switch {
	case j.cfg.Out == "":
		return filepath.Join("out", j.c.Agent)
	case len(j.cfg.Dirs) > 1:
		return filepath.Join(j.cfg.Out, j.c.Agent)
	}
	return j.cfg.Out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (c *Config) queueConfig(url string) queue.Config {
	qc := c.Queue
	qc.URL = url
	return qc
}
