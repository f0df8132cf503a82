package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/reviewer"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/writer"
)

func init() {
	register(command{"planner", "DIR --run ID --scenarios N [flags]", "plan a run and deal its slices until nothing is open (distributed)", cmdPlanner})
	register(command{"writer", "[flags]", "consume slices and write proved scenarios until signalled (distributed)", cmdWriter})
	register(command{"reviewer", "--run ID --out DIR [flags]", "review a run, deal gap slices, write the suite (distributed)", cmdReviewer})
}

func cmdPlanner(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "planner", "DIR --run ID --scenarios N [flags]", "Plan a run for one contract and deal its slices in rounds until nothing is open.")
	runID := f.str("run", "", "run id (required; reusing one resumes it)")
	n := f.num("scenarios", 50, "scenarios to write")
	seed := f.num64("seed", 1, "seed recorded in provenance and briefs")
	budget := f.num64("budget-tokens", 0, "stop dispatch at this many tokens (0: no cap)")
	planFile := f.str("plan", "", "JSON file steering the split")
	modelName := f.str("model", "builtin", "model name recorded on the run")
	maxWant := f.num("max-want", 0, "most scenarios one bucket may ask for (0: the plan's default, 10)")
	allowPartial := f.boolean("allow-partial", false, "run even when some use cases cannot be planned (without it the planner stops before spending, naming why)")
	progressAddr := f.str("progress-addr", "", "serve the progress page and API on this address (e.g. :8080)")
	cn := f.conn()
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
	c, err := engine.LoadDir(pos[0])
	if err != nil {
		return err
	}
	in, err := openInfra(ctx, env, cn)
	if err != nil {
		return err
	}
	defer in.close(ctx)
	q, err := in.queue(ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	e, err := engine.Open(ctx, in.pool, c)
	if err != nil {
		return err
	}
	mx, err := serveMetrics(ctx, env, *cn.metricsAddr, *runID, "planner", func() error { return nil })
	if err != nil {
		return err
	}
	if *progressAddr != "" {
		stop, err := serveProgress(ctx, env, *progressAddr, storeOf(in))
		if err != nil {
			return err
		}
		defer stop()
	}
	cfg := planner.Config{Store: storeOf(in), Queue: q, Engine: e, Metrics: mx, Logger: env.Log, RunID: *runID,
		Asked: *n, Seed: *seed, Model: *modelName, BudgetTokens: *budget, MaxWant: *maxWant, AllowPartial: *allowPartial}
	if *planFile != "" {
		if cfg.Steer, err = run.ReadPlanFile(*planFile); err != nil {
			return err
		}
	}
	p, err := planner.New(cfg)
	if err != nil {
		return err
	}
	if err := p.Prepare(ctx); err != nil {
		return err
	}
	res, err := p.Run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: %d of %d proved in %d rounds, %d buckets blocked\n", *runID, res.Proved, res.Asked, res.Rounds, res.Blocked)
	return nil
}

func cmdWriter(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "writer", "[flags]", "Consume slices from the queue and write proved scenarios until SIGTERM, then drain.")
	id := f.str("id", "", "writer id in the ledger (default host-pid)")
	drain := f.dur("drain-timeout", 90*time.Second, "how long a stopping writer may finish its current slice")
	cn := f.conn()
	mf := f.model()
	if _, err := f.parse(args); err != nil {
		return err
	}
	in, err := openInfra(ctx, env, cn)
	if err != nil {
		return err
	}
	defer in.close(ctx)
	q, err := in.queue(ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	engines := engine.NewCache(in.pool)
	mx, err := serveMetrics(ctx, env, *cn.metricsAddr, "", "writer", func() error { return in.pool.Ping(ctx) })
	if err != nil {
		return err
	}
	client, err := run.Client(ctx, *mf.model, *mf.baseURL, *mf.apiKey, *mf.rpm, *mf.tpm, *mf.window, in.pool, mx, env.Log)
	if err != nil {
		return err
	}
	run.FetchContracts(client, engines)
	wcfg := writer.Config{ID: *id, Queue: q, Store: storeOf(in), Engines: engines, Model: client,
		Metrics: mx, Logger: env.Log, DrainTimeout: *drain}
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
		return err
	}
	return w.Run(ctx)
}

func cmdReviewer(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "reviewer", "--run ID --out DIR [flags]", "Review a run's suite, deal gap slices for what can be filled, and write the suite from the ledger.")
	runID := f.str("run", "", "run id (required)")
	out := f.str("out", "", "output directory (default out/<agent>)")
	rounds := f.num("rounds", 1, "gap rounds")
	cn := f.conn()
	if _, err := f.parse(args); err != nil {
		return err
	}
	if *runID == "" {
		return &UsageError{"--run is required"}
	}
	in, err := openInfra(ctx, env, cn)
	if err != nil {
		return err
	}
	defer in.close(ctx)
	store := storeOf(in)
	r, err := store.Run(ctx, *runID)
	if err != nil {
		return fmt.Errorf("run %s: %w", *runID, err)
	}
	e, err := engine.NewCache(in.pool).Get(ctx, r.ContractSHA256)
	if err != nil {
		return err
	}
	q, err := in.queue(ctx)
	if err != nil {
		return err
	}
	defer q.Close()
	mx, err := serveMetrics(ctx, env, *cn.metricsAddr, r.ID, "reviewer", func() error { return nil })
	if err != nil {
		return err
	}
	p, err := planner.New(planner.Config{Store: store, Queue: q, Engine: e, Metrics: mx, Logger: env.Log, RunID: r.ID, Asked: r.Asked, Seed: r.Seed, Model: r.Model, MaxWant: planner.MaxWantOf(r), AllowPartial: planner.AllowPartialOf(r)})
	if err != nil {
		return err
	}
	if err := p.Prepare(ctx); err != nil {
		return err
	}
	if *rounds > 0 {
		if _, err := reviewer.Fill(ctx, p, *rounds, env.Log); err != nil {
			return err
		}
	}
	dir := defaultOut(e.C.Agent, *out)
	rep, err := run.Finish(ctx, store, r.ID, e.C, p.Plan, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: %d of %d scenarios proved, suite in %s\n", e.C.Agent, rep.Count, r.Asked, dir)
	if rep.Count < r.Asked {
		return &run.ShortError{Agent: e.C.Agent, Proved: rep.Count, Asked: r.Asked, Blocked: len(rep.Blocked), Out: dir}
	}
	return nil
}
