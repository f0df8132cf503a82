package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/reviewer"
	"github.com/suitegen/suitegen/pkg/wire"
	"github.com/suitegen/suitegen/pkg/writer"
)

// The distributed binaries run as Kubernetes Jobs (planner, reviewer) and a
// Deployment (writers). Their exit codes follow Job semantics: 0 when their
// part of the run succeeded; ExitFail when the run failed or cannot succeed
// (retrying changes nothing: a short run, a refused plan, use cases left
// unplanned without --allow-partial, an ask larger than the contract can
// mint, an invalid contract, an unknown run); ExitRetry when a retry may succeed (a signal,
// a server out of reach, a run not ready for the reviewer yet). A retried
// planner or reviewer continues from the ledger and deals nothing twice.

func init() {
	register(command{"planner", "DIR --run ID --scenarios N --nats URL --database URL [flags]", "plan a run and deal its slices until nothing is open (distributed)", cmdPlanner})
	register(command{"writer", "--nats URL --database URL [flags]", "consume slices and write proved scenarios until signalled (distributed)", cmdWriter})
	register(command{"reviewer", "--run ID --out DIR --nats URL --database URL [flags]", "review a run, deal gap slices, write the suite (distributed)", cmdReviewer})
}

func cmdPlanner(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "planner", "DIR --run ID --scenarios N --nats URL --database URL [flags]",
		"Plan a run for one contract and deal its slices in rounds until nothing is open. Exit 0 when the run holds\nits ask (it is then the reviewer's), 1 when it ended short or cannot run, 75 when a retry may succeed.")
	runID := f.str("run", "", "run id (required; reusing one resumes it)")
	asked := f.num("scenarios", 50, "scenarios to write")
	seed := f.num64("seed", 1, "seed recorded in provenance and briefs")
	budget := f.num64("budget-tokens", 0, "stop dispatch at this many tokens (0: no cap)")
	budgetUSD := f.float("budget-usd", 0, "stop dispatch at this many dollars at the writers' price (0: no cap)")
	planFile := f.str("plan", "", "JSON file steering the split")
	modelName := f.str("model", env.defaultModel(), "the model the run is written with (default as the writers'); writers of other models leave its slices alone")
	maxWant := f.num("max-want", 0, "most scenarios one bucket may ask for (0: the plan's default, 10)")
	allowPartial := f.boolean("allow-partial", false, "run even when some use cases cannot be planned (without it the planner stops before spending, naming why)")
	progress := f.progress()
	cn := f.roleConn()
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &UsageError{"planner takes one contract directory"}
	}
	if *runID == "" {
		return &UsageError{"--run is required"}
	}
	progressToken, err := progress.token()
	if err != nil {
		return err
	}
	if err := requireServers("planner", cn); err != nil {
		return err
	}
	c, err := contract.LoadValid(pos[0])
	if err != nil {
		return err
	}
	var steer []plan.Steer
	if *planFile != "" {
		if steer, err = wire.ReadPlanFile(*planFile); err != nil {
			return &UsageError{err.Error()}
		}
	}
	// Probes answer from the start: /healthz while the planner waits for its
	// servers, /readyz once the ledger takes writes and the queue answers.
	var ready readiness
	mx, err := serveMetrics(ctx, env, *cn.metricsAddr, *runID, "planner", ready.check)
	if err != nil {
		return err
	}
	in, err := openInfra(ctx, env, cn)
	if err != nil {
		return jobError(err)
	}
	defer in.close(ctx)
	q, err := in.queue(ctx)
	if err != nil {
		return jobError(err)
	}
	defer q.Close()
	store := storeOf(in)
	ready.set(wire.Ready(ctx, wire.Dependencies(store, q)))
	e, err := engine.Open(ctx, in.pool, c)
	if err != nil {
		return jobError(err)
	}
	defer e.Close()
	if *progress.addr != "" {
		stop, err := serveProgress(ctx, env, *progress.addr, progressToken, store)
		if err != nil {
			return err
		}
		defer stop()
	}
	p, err := planner.New(planner.Config{Ledger: store, Queue: q, Engine: e, Metrics: mx, Logger: env.Log, RunID: *runID,
		Asked: *asked, Seed: *seed, Model: *modelName, BudgetTokens: *budget, BudgetUSD: *budgetUSD, MaxWant: *maxWant, AllowPartial: *allowPartial, Steer: steer,
		PlanCache: plan.EnvCache(env.Getenv)})
	if err != nil {
		return &UsageError{err.Error()}
	}
	if err := p.Prepare(ctx); err != nil {
		return jobError(err)
	}
	res, err := p.Run(ctx)
	if err == nil || isFinal(err) {
		fmt.Fprintf(env.Stdout, "%s: %d of %d proved in %d rounds, %d buckets blocked, %d left short; the run is %s\n",
			*runID, res.Proved, res.Asked, res.Rounds, res.Blocked, res.Short, res.State)
	}
	return jobError(err)
}

func cmdWriter(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "writer", "--nats URL --database URL [flags]",
		"Consume slices from the queue and write proved scenarios until SIGTERM, then drain. A writer writes the slices\nof runs recorded with the model it drives (--model) and leaves the others for writers of theirs.")
	id := f.str("id", "", "writer id in the ledger (default host-pid)")
	drain := f.dur("drain-timeout", 90*time.Second, "how long a stopping writer may finish its current slice")
	maxTokens := f.num("max-tokens", writer.DefaultMaxTokens, "cap of a model call's reply allowance; each call's is sized below it from the replies seen")
	maxFailures := f.num("max-failures", writer.DefaultMaxFailures, "deliveries of a slice that may fail on it before it is dead-lettered (same on every writer)")
	maxLost := f.num("max-lost", writer.DefaultMaxLost, "deliveries of a slice that may be lost with their writer before it progressed, before it is dead-lettered (same on every writer)")
	cn := f.roleConn()
	mf := f.model()
	if _, err := f.parse(args); err != nil {
		return err
	}
	if *maxTokens < 1 {
		return &UsageError{Msg: fmt.Sprintf("--max-tokens %d: must be at least 1", *maxTokens)}
	}
	m, err := mf.wire()
	if err != nil {
		return err
	}
	if err := requireServers("writer", cn); err != nil {
		return err
	}
	// Probes answer from the start: /healthz while the writer waits for its
	// servers (--startup-timeout), /readyz once the ledger takes writes, the
	// queue answers and the provider takes the key.
	var ready readiness
	mx, err := serveMetrics(ctx, env, *cn.metricsAddr, "", "writer", ready.check)
	if err != nil {
		return err
	}
	in, err := openInfra(ctx, env, cn)
	if err != nil {
		return jobError(err)
	}
	defer in.close(ctx)
	in.qc.Acks = mx // acks that meet a transient failure, by how they end
	q, err := in.queue(ctx)
	if err != nil {
		return jobError(err)
	}
	defer q.Close()
	store := storeOf(in)
	engines := engine.NewCache(in.pool, store)
	defer engines.Close()
	deps := wire.Dependencies(store, q)
	ready.set(wire.Ready(ctx, deps, func() error { return errors.New("writer: the model provider is not checked yet") }))
	// A writer that cannot reach its provider, or whose key or model the
	// provider refuses, exits here instead of failing every slice.
	client, err := wire.Client(ctx, m, in.pool, engines, mx, env.Log)
	if err != nil {
		return err
	}
	providerReady := func() error { return nil }
	if r, ok := client.(interface{ Ready() error }); ok {
		providerReady = r.Ready
	}
	ready.set(wire.Ready(ctx, deps, providerReady))
	wcfg := writer.Config{ID: *id, Slices: wire.WriterSource(q), Ledger: store, Engines: engines, Model: client,
		Metrics: mx, Logger: env.Log, DrainTimeout: *drain, Dependencies: deps, MaxTokens: *maxTokens,
		MaxFailures: *maxFailures, MaxLost: *maxLost}
	if poison := env.Getenv("SUITEGEN_FAULT_POISON"); poison != "" {
		// Test-only fault hook (docs/RELIABILITY.md): die on every delivery
		// of one slice, as a writer crashed by its content would.
		env.Log.Warn("fault hook armed: this writer exits on slice " + poison)
		wcfg.BeforeSlice = func(slice string) {
			if slice == poison {
				env.Log.Error("fault hook: exiting on poison slice", "slice", slice)
				os.Exit(3)
			}
		}
	}
	w, err := writer.New(wcfg)
	if err != nil {
		return &UsageError{err.Error()}
	}
	return w.Run(ctx)
}

func cmdReviewer(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "reviewer", "--run ID --out DIR --nats URL --database URL [flags]",
		"Review a run's suite, deal gap slices for what can be filled, and write the suite from the ledger. Exit 0 when\nthe run is done, 1 when it failed (the suite holds what it proved), 75 when the run is not ready or a retry may succeed.")
	runID := f.str("run", "", "run id (required)")
	out := f.str("out", "", "output directory (default out/<agent>)")
	rounds := f.num("rounds", 1, "gap rounds")
	cn := f.roleConn()
	if _, err := f.parse(args); err != nil {
		return err
	}
	if *runID == "" {
		return &UsageError{"--run is required"}
	}
	if *rounds < 0 {
		return &UsageError{fmt.Sprintf("--rounds must not be negative, got %d", *rounds)}
	}
	if err := requireServers("reviewer", cn); err != nil {
		return err
	}
	// Probes answer from the start, /readyz once the servers answer.
	var ready readiness
	mx, err := serveMetrics(ctx, env, *cn.metricsAddr, *runID, "reviewer", ready.check)
	if err != nil {
		return err
	}
	in, err := openInfra(ctx, env, cn)
	if err != nil {
		return jobError(err)
	}
	defer in.close(ctx)
	store := storeOf(in)
	r, err := store.Run(ctx, *runID)
	if err != nil {
		return jobError(err) // it names the run
	}
	engines := engine.NewCache(in.pool, store)
	defer engines.Close()
	e, err := engines.Get(ctx, r.ContractSHA256)
	if err != nil {
		return jobError(err)
	}
	q, err := in.queue(ctx)
	if err != nil {
		return jobError(err)
	}
	defer q.Close()
	ready.set(wire.Ready(ctx, wire.Dependencies(store, q)))
	// The run's own planner settings, so the gap rounds deal as it did and
	// the plan (for the report) is the one it derived.
	p, err := planner.New(planner.Config{Ledger: store, Queue: q, Engine: e, Metrics: mx, Logger: env.Log, RunID: r.ID,
		Asked: r.Asked, Seed: r.Seed, Model: r.Model, BudgetTokens: r.BudgetTokens, MaxWant: r.Config.MaxWant, AllowPartial: r.Config.AllowPartial,
		PlanCache: plan.EnvCache(env.Getenv)})
	if err != nil {
		return err
	}
	if err := p.Prepare(ctx); err != nil && !errors.Is(err, planner.ErrPlanRefused) {
		return jobError(err)
	}
	dir := defaultOut(e.C.Agent, *out)
	rep, err := reviewer.Run(ctx, reviewer.Config{Ledger: store, Dealer: p, RunID: r.ID, Contract: e.C, Plan: p.Plan,
		Out: dir, Rounds: *rounds, Prover: e.Prover, Logger: env.Log})
	if err == nil || isFinal(err) {
		fmt.Fprintf(env.Stdout, "%s: %d of %d scenarios proved, suite in %s\n", e.C.Agent, rep.Count, r.Asked, dir)
	}
	return jobError(err)
}

// requireServers refuses a distributed role without the servers it shares
// with the others: on an embedded NATS or PostgreSQL of its own it would
// never see the run's work.
func requireServers(role string, cn conn) error {
	if *cn.nats == "" {
		return &UsageError{fmt.Sprintf("--nats (or SUITEGEN_NATS_URL) is required: a %s on a private NATS of its own never sees the run's slices", role)}
	}
	db, err := cn.databaseURL()
	if err != nil {
		return &UsageError{err.Error()}
	}
	if db == "" {
		return &UsageError{fmt.Sprintf("--database (or SUITEGEN_DATABASE_URL, --database-url-file) is required: a %s on a private PostgreSQL of its own never sees the run's ledger", role)}
	}
	return nil
}

// isFinal reports an error after which retrying the role changes nothing:
// the run failed, or cannot run as given.
func isFinal(err error) bool {
	var short *planner.ShortError
	var failed *reviewer.FailedError
	var probs contract.Problems
	var te *ledger.TransitionError
	var usage *UsageError
	var tooMany *plan.TooMany
	var unplanned *plan.Unplanned
	return errors.As(err, &tooMany) || errors.As(err, &unplanned) || errors.As(err, &short) || errors.As(err, &failed) || errors.As(err, &probs) || errors.As(err, &te) ||
		errors.As(err, &usage) || errors.Is(err, planner.ErrPlanRefused) || errors.Is(err, reviewer.ErrCancelled) ||
		errors.Is(err, ledger.ErrNotFound)
}

// jobError is err as the role's exit should say it: final errors as they
// are (ExitFail, or ExitUsage), any other as a *RetryError (ExitRetry).
func jobError(err error) error {
	if err == nil || isFinal(err) {
		return err
	}
	return &RetryError{Err: err}
}

// readiness is a role's /readyz and suitegen_ready, served before the role
// reaches its servers: not ready ("starting") until set.
type readiness struct{ p atomic.Pointer[func() error] }

var errStarting = errors.New("starting: waiting for the database and NATS")

func (r *readiness) check() error {
	if f := r.p.Load(); f != nil {
		return (*f)()
	}
	return errStarting
}

func (r *readiness) set(f func() error) { r.p.Store(&f) }
