// Package run is `suitegen run`: planner, writers and reviewer in one process,
// talking only through JetStream and Postgres with the same clients the
// separate binaries use, on the embedded stack unless URLs are given.
package run

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/ratelimit"
	"github.com/suitegen/suitegen/pkg/reviewer"
	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/writer"
)

// Config is `suitegen run`'s configuration.
type Config struct {
	Dirs        []string
	Scenarios   int
	Writers     int
	Concurrency int
	Out         string
	Model       string // "builtin" or a provider model name
	BaseURL     string // OpenAI-compatible endpoint
	APIKey      string
	Seed        int64
	Rounds      int // reviewer rounds
	StateDir    string
	NATSURL     string
	// Queue carries the NATS credential and TLS files; its URL is NATSURL
	// (or the embedded server's).
	Queue       queue.Config
	DatabaseURL string
	MetricsAddr string
	// ProgressAddr, when set, serves the progress page and API (progress.Handler) there.
	ProgressAddr string
	BudgetTokens int64
	RPM, TPM     int
	// QuotaWindow is the provider's quota window (see ratelimit.Config.Window).
	QuotaWindow time.Duration
	PlanFile    string
	RunID       string
	// MaxWant caps one bucket's want (0: the plan's default, 10); raise it to
	// ask one contract for more than its default capacity.
	MaxWant int
	// AllowPartial writes a suite even when some use cases cannot be
	// planned (the report names them); without it such a run stops before
	// spending.
	AllowPartial bool
	Logger       *slog.Logger
	// Progress, when set, gets a progress bar (TTY says whether it is a terminal).
	Progress io.Writer
	TTY      bool
	// ByUseCase adds a progress line per use case under the bar.
	ByUseCase bool
	// Client, when set, is the model every writer drives instead of Model's
	// (tests inject a scripted model.Client here).
	Client model.Client
}

// Validate fills defaults and names the bad field.
func (c *Config) Validate() error {
	if len(c.Dirs) == 0 {
		return errors.New("run: at least one contract directory is required")
	}
	if c.Scenarios <= 0 {
		return fmt.Errorf("run: --scenarios must be positive, got %d", c.Scenarios)
	}
	if c.Writers <= 0 {
		c.Writers = 4
	}
	if c.Writers > 64 {
		return fmt.Errorf("run: --writers %d is more than 64", c.Writers)
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 1
	}
	if c.Model == "" {
		c.Model = "builtin"
	}
	if c.Client == nil && c.Model != "builtin" && c.BaseURL == "" && c.APIKey == "" {
		return fmt.Errorf("run: --model %s needs OPENAI_API_KEY or OPENAI_BASE_URL", c.Model)
	}
	if c.Rounds < 0 {
		return fmt.Errorf("run: --rounds must not be negative, got %d", c.Rounds)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// ShortError is a run that ended with fewer scenarios than asked: what the
// agent supports, with the blocked buckets in report.json.
type ShortError struct {
	Agent         string
	Proved, Asked int
	Blocked       int
	Budget        bool
	Out           string
}

func (e *ShortError) Error() string {
	why := fmt.Sprintf("%d buckets blocked, reasons in %s", e.Blocked, filepath.Join(e.Out, "report.json"))
	if e.Budget {
		why = "the token budget was reached"
	}
	return fmt.Sprintf("%s: %d of %d scenarios proved (%s)", e.Agent, e.Proved, e.Asked, why)
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
}

// Stages is the wall time of each stage of one contract's run.
type Stages struct {
	Plan   time.Duration // deriving the plan and writing the canvas
	Write  time.Duration // dealing slices until the ledger has the ask (writers at work)
	Review time.Duration // reviewer rounds
	Output time.Duration // writing the suite from the ledger
}

// Run runs the whole job.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	var contracts []*contract.Contract
	for _, d := range cfg.Dirs {
		c, err := engine.LoadDir(d)
		if err != nil {
			return nil, fmt.Errorf("run: %s: %w", d, err)
		}
		contracts = append(contracts, c)
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
	if err := migrate.Apply(ctx, pool); err != nil {
		return nil, err
	}
	store := canvas.New(pool)
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
	// The writers here are goroutines of this process: ready while it runs.
	reg.MustRegister(ledger, metrics.NewReady("writer", nil))
	if cfg.MetricsAddr != "" {
		mctx, mcancel := context.WithCancel(ctx)
		defer mcancel()
		go func() {
			if err := metrics.Serve(mctx, cfg.MetricsAddr, reg, func() error { return nil }); err != nil {
				log.Error("metrics server", "err", err)
			}
		}()
	}
	if cfg.ProgressAddr != "" {
		pctx, pcancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := ServeProgress(pctx, cfg.ProgressAddr, store, progress.Options{Logger: log}, nil); err != nil {
				log.Error("progress server", "err", err)
			}
		}()
		defer func() { pcancel(); <-done }()
	}
	engines := engine.NewCache(pool)
	for _, c := range contracts {
		e, err := engine.Open(ctx, pool, c)
		if err != nil {
			return nil, err
		}
		engines.Put(e)
	}
	client := cfg.Client
	if client == nil {
		client, err = Client(ctx, cfg.Model, cfg.BaseURL, cfg.APIKey, cfg.RPM, cfg.TPM, cfg.QuotaWindow, pool, wmx, log, contracts...)
		if err != nil {
			return nil, err
		}
	}
	// Slices of other runs left on the queue (an interrupted run on the same
	// state dir) are written too, into their own run's ledger.
	FetchContracts(client, engines)

	// Writers: each its own queue connection, like a pod.
	wctx, stopWriters := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	writerErr := make(chan error, cfg.Writers)
	for i := 0; i < cfg.Writers; i++ {
		q, err := queue.Connect(ctx, cfg.queueConfig(st.NATSURL))
		if err != nil {
			stopWriters()
			wg.Wait()
			return nil, err
		}
		w, err := writer.New(writer.Config{ID: fmt.Sprintf("writer-%d", i+1), Queue: q, Store: store, Engines: engines,
			Model: client, Metrics: wmx, Logger: log})
		if err != nil {
			q.Close()
			stopWriters()
			wg.Wait()
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer q.Close()
			if err := w.Run(wctx); err != nil {
				writerErr <- err
			}
		}()
	}
	defer func() {
		stopWriters()
		wg.Wait()
	}()
	// A signal stops the writers too (they drain), after planners return.
	context.AfterFunc(ctx, stopWriters)

	pq, err := queue.Connect(ctx, cfg.queueConfig(st.NATSURL))
	if err != nil {
		return nil, err
	}
	defer pq.Close()
	var steer []plan.Steer
	if cfg.PlanFile != "" {
		if steer, err = ReadPlanFile(cfg.PlanFile); err != nil {
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
			e, _ := engines.Get(ctx, c.SHA256)
			results[i] = one(ctx, cfg, c, e, store, pq, mx, steer, log)
		}()
	}
	pw.Wait()
	// One contract failing never cancels its siblings; it is recorded.
	if err := writeFailures(context.WithoutCancel(ctx), store, cfg.Out, results); err != nil {
		log.Error("writing failures.json", "err", err)
	}
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return results, errors.Join(errs...)
}

// one runs one contract: plan, deal, review, write the suite.
func one(ctx context.Context, cfg Config, c *contract.Contract, e *engine.Engine, store *canvas.Store, q *queue.Queue, mx *metrics.Metrics, steer []plan.Steer, log *slog.Logger) Result {
	out := cfg.Out
	if out == "" {
		out = filepath.Join("out", c.Agent)
	} else if len(cfg.Dirs) > 1 {
		out = filepath.Join(out, c.Agent)
	}
	id := cfg.RunID
	if id == "" || len(cfg.Dirs) > 1 {
		id = c.Agent + "-" + randomHex(4)
	}
	res := Result{RunID: id, Agent: c.Agent, Out: out, Asked: cfg.Scenarios}
	p, err := planner.New(planner.Config{Store: store, Queue: q, Engine: e, Metrics: mx.For(id), Logger: log, RunID: id,
		Asked: cfg.Scenarios, Seed: cfg.Seed, Model: cfg.Model, BudgetTokens: cfg.BudgetTokens, Steer: steer, MaxWant: cfg.MaxWant, AllowPartial: cfg.AllowPartial})
	if err != nil {
		res.Err = err
		return res
	}
	t0 := time.Now()
	defer func() {
		log.Info("run stages", "run", id, "plan", res.Stages.Plan, "write", res.Stages.Write,
			"review", res.Stages.Review, "output", res.Stages.Output)
	}()
	if err := p.Prepare(ctx); err != nil {
		res.Err = fmt.Errorf("%s: %w", c.Agent, err)
		_ = store.SetRunState(context.WithoutCancel(ctx), id, "failed", err.Error())
		return res
	}
	log.Info("run planned", "run", id, "agent", c.Agent, "asked", cfg.Scenarios, "capacity", p.Plan.Capacity)
	var bar context.CancelFunc
	if cfg.Progress != nil {
		bctx, cancel := context.WithCancel(ctx)
		bar = cancel
		done := make(chan struct{})
		go func() {
			defer close(done)
			progress.Bar(bctx, cfg.Progress, cfg.TTY, progress.Poller(store, id, cfg.ByUseCase), time.Second)
		}()
		defer func() { cancel(); <-done }()
	}
	t1 := time.Now()
	res.Stages.Plan = t1.Sub(t0)
	pr, err := p.Run(ctx)
	t2 := time.Now()
	res.Stages.Write = t2.Sub(t1)
	if err == nil && cfg.Rounds > 0 {
		_ = store.SetRunState(ctx, id, "reviewing", "")
		_, err = reviewer.Fill(ctx, p, cfg.Rounds, log)
	}
	res.Stages.Review = time.Since(t2)
	if bar != nil {
		bar()
	}
	if err != nil && ctx.Err() != nil {
		// Interrupted: what the ledger holds is still the user's. Write it,
		// and say how to carry on (the ledger keeps the run in --state-dir).
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
		defer cancel()
		_ = store.SetRunState(fctx, id, "interrupted", "stopped by a signal")
		if rep, ferr := Finish(fctx, store, id, c, p.Plan, out); ferr == nil {
			res.Report, res.Proved = rep, rep.Count
		}
		res.Err = fmt.Errorf("%s: interrupted with %d of %d proved (suite so far in %s); resume with --run %s and the same --state-dir: %w",
			c.Agent, res.Proved, cfg.Scenarios, out, id, err)
		return res
	}
	if err != nil {
		res.Err = fmt.Errorf("%s: %w", c.Agent, err)
		_ = store.SetRunState(context.WithoutCancel(ctx), id, "failed", err.Error())
		return res
	}
	t3 := time.Now()
	rep, err := Finish(ctx, store, id, c, p.Plan, out)
	res.Stages.Output = time.Since(t3)
	if err != nil {
		res.Err = err
		return res
	}
	res.Report = rep
	res.Proved = rep.Count
	state, msg := "done", ""
	if rep.Count < cfg.Scenarios {
		se := &ShortError{Agent: c.Agent, Proved: rep.Count, Asked: cfg.Scenarios, Blocked: len(rep.Blocked), Budget: pr.Budget, Out: out}
		res.Err = se
		state, msg = "done", se.Error()
	}
	_ = store.SetRunState(ctx, id, state, msg)
	return res
}

// Finish writes a run's suite from the ledger, with the review beside it.
func Finish(ctx context.Context, store *canvas.Store, id string, c *contract.Contract, p *plan.Plan, out string) (suite.Report, error) {
	rv, err := reviewer.Read(ctx, store, id, c)
	if err != nil {
		return suite.Report{}, err
	}
	rep, err := suite.Write(ctx, store, id, c, out, reportExtra(c, p))
	if err != nil {
		return suite.Report{}, err
	}
	if err := writeJSON(filepath.Join(out, "review.json"), rv); err != nil {
		return suite.Report{}, err
	}
	return rep, nil
}

func reportExtra(c *contract.Contract, p *plan.Plan) suite.ReportExtra {
	var x suite.ReportExtra
	for _, b := range prove.Builtins {
		x.BuiltinSubGoals = append(x.BuiltinSubGoals, suite.SubGoalInfo{Name: b.Name, What: b.What, Params: b.Params, Origin: "builtin"})
	}
	for _, r := range c.Rules {
		x.Rules = append(x.Rules, r.ID)
	}
	for _, t := range c.Tools {
		if len(t.Requires) > 0 {
			x.GatedTools = append(x.GatedTools, t.Name)
		}
	}
	if p != nil {
		for _, g := range p.Gaps {
			x.Unplanned = append(x.Unplanned, suite.UseCaseNote{UseCase: g.UseCase, Reason: g.Reason})
		}
		for _, g := range p.RefusalsOnly {
			x.RefusalsOnly = append(x.RefusalsOnly, suite.UseCaseNote{UseCase: g.UseCase, Reason: g.Reason})
		}
		x.Cells = len(p.Cells)
		cv := p.Measure(c)
		tested := map[string]bool{}
		for _, r := range cv.UntestedRules {
			tested[r] = true
		}
		for _, r := range c.Rules {
			if !tested[r.ID] {
				x.RulesTested = append(x.RulesTested, r.ID)
			}
		}
		unnamed := map[string]bool{}
		for _, t := range cv.UnnamedGated {
			unnamed[t] = true
		}
		for _, t := range x.GatedTools {
			if !unnamed[t] {
				x.GatedToolsNamed = append(x.GatedToolsNamed, t)
			}
		}
	}
	return x
}

// Client returns the model a writer drives: the builtin writer, or an
// OpenAI-compatible provider under the cluster-wide rate limiter. With mx
// set, the limiter's waits, headroom and quota are recorded there.
func Client(ctx context.Context, name, baseURL, apiKey string, rpm, tpm int, window time.Duration, pool *pgxpool.Pool, mx *metrics.Metrics, log *slog.Logger, cs ...*contract.Contract) (model.Client, error) {
	if name == "builtin" {
		return builtin.New(cs...), nil
	}
	lim, err := ratelimit.New(ctx, ratelimit.Config{Key: baseURL + "\x00" + apiKey, RPM: rpm, TPM: tpm, Window: window, Pool: pool, Logger: log})
	if err != nil {
		return nil, err
	}
	var ml model.Limiter = lim
	if mx != nil {
		ml = meterLimiter(lim, mx, rpm, tpm, log)
	}
	return model.NewOpenAI(model.OpenAIConfig{BaseURL: baseURL, APIKey: apiKey, Model: name, Limiter: ml, Logger: log})
}

// FetchContracts lets the builtin model write slices of any run whose
// contract is in the ledger, as a writer pod does.
func FetchContracts(client model.Client, engines *engine.Cache) {
	if b, ok := client.(*builtin.Model); ok {
		b.Fetch = func(ctx context.Context, sha string) (*contract.Contract, error) {
			e, err := engines.Get(ctx, sha)
			if err != nil {
				return nil, err
			}
			return e.C, nil
		}
	}
}

// ReadPlanFile reads a --plan file: a JSON list of {use_case, angle, count, why}.
func ReadPlanFile(path string) ([]plan.Steer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("run: --plan: %w", err)
	}
	var s []plan.Steer
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("run: --plan %s: %w", path, err)
	}
	for i, e := range s {
		if e.UseCase == "" || e.Count <= 0 {
			return nil, fmt.Errorf("run: --plan %s: entry %d needs use_case and a positive count", path, i+1)
		}
	}
	return s, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (c *Config) queueConfig(url string) queue.Config {
	qc := c.Queue
	qc.URL = url
	return qc
}
