// Package runcmd is the `suitegen run` command, and `suitegen revise` (a run
// over a written suite): their flags, read into the orchestrator's
// configuration (pkg/run). cmd/suitegen adds them to the commands of
// pkg/cli; the distributed binaries do not.
package runcmd

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/suitegen/suitegen/pkg/cli"
	"github.com/suitegen/suitegen/pkg/refresh"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/writer"
)

// Command is `suitegen run`.
func Command() cli.Command {
	return cli.Command{Name: "run", Args: "DIR... [flags]",
		Summary: "write a proved suite end to end (planner, writers, reviewer in one process)", Run: cmdRun}
}

func cmdRun(ctx context.Context, env *cli.Env, args []string) error {
	f := cli.NewFlags(env, "suitegen run", "DIR... [flags]", "Write a proved suite for each contract directory.")
	asked := f.Int("scenarios", 50, "scenarios to write per contract (with --into: how many to add, +N)")
	writers := f.Int("writers", 4, "writers (goroutines, each with its own queue connection)")
	maxTokens := f.Int("max-tokens", writer.DefaultMaxTokens, "cap of a model call's reply allowance; each call's is sized below it from the replies seen")
	conc := f.Int("concurrency", 1, "contracts planned at once in a portfolio run")
	out := f.String("out", "", "output directory (default out/<agent>)")
	seed := f.Int64("seed", 1, "seed recorded in provenance and briefs")
	rounds := f.Int("rounds", 1, "reviewer rounds")
	budget := f.Int64("budget-tokens", 0, "stop dispatch once the run spent this many tokens (0: no cap)")
	budgetUSD := f.Float64("budget-usd", 0, "stop dispatch once the run spent this many dollars at the model's price (0: no cap)")
	planFile := f.String("plan", "", "JSON file of {use_case, angle, count, why} entries steering the split")
	runID := f.String("run", "", "run id (reusing one resumes it)")
	byUseCase := f.Bool("by-use-case", false, "show progress per use case under the bar")
	maxWant := f.Int("max-want", 0, "most scenarios one bucket may ask for (0: the plan's default, 10); raise it for suites larger than the plan's capacity")
	allowPartial := f.Bool("allow-partial", false, "write the suite even when some use cases cannot be planned (without it the run stops before spending, naming why)")
	update := f.String("update", "", "a suite written for DIR: re-prove it and write again only its stale scenarios, under their names (docs/REFRESH.md)")
	into := f.String("into", "", "a suite written for DIR: add --scenarios +N new proved scenarios to it, filling its gaps first; nothing in it changes (docs/REFRESH.md)")
	progress := f.Progress()
	cn := f.Conn()
	mf := f.Model()
	dirs, err := f.Parse(args)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return &cli.UsageError{Msg: "at least one contract directory is required"}
	}
	for name, v := range map[string]int{"--scenarios": *asked, "--writers": *writers, "--concurrency": *conc, "--max-tokens": *maxTokens} {
		if v < 1 {
			return &cli.UsageError{Msg: fmt.Sprintf("%s %d: must be at least 1", name, v)}
		}
	}
	progressToken, err := progress.Token()
	if err != nil {
		return err
	}
	dbURL, err := cn.DatabaseURL()
	if err != nil {
		return &cli.UsageError{Msg: err.Error()}
	}
	m, err := mf.Model()
	if err != nil {
		return err
	}
	cfg := run.Config{Queue: cn.Queue(), Dirs: dirs, Asked: *asked, Writers: *writers, MaxTokens: *maxTokens, Concurrency: *conc, Out: *out,
		Model: m.Name, Provider: m.Provider,
		Seed: *seed, Rounds: *rounds, StateDir: cn.StateDir(), NATSURL: cn.NATS(), DatabaseURL: dbURL,
		MetricsAddr: cn.MetricsAddr(), ProgressAddr: progress.Addr(), ProgressToken: progressToken, BudgetTokens: *budget, BudgetUSD: *budgetUSD, PlanFile: *planFile,
		RunID: *runID, Logger: env.Log, Progress: env.Stderr, TTY: env.TTY, ByUseCase: *byUseCase, MaxWant: *maxWant, AllowPartial: *allowPartial,
		Update: *update, Into: *into}
	if *update != "" && *out != "" {
		return &cli.UsageError{Msg: "--update writes into the suite it updates: leave --out out"}
	}
	if *into != "" && *out != "" {
		return &cli.UsageError{Msg: "--into writes into the suite it extends: leave --out out"}
	}
	if *update != "" {
		cfg.Asked = 1 // the stale scenarios are the ask; --scenarios is not read
	}
	if err := cfg.Validate(); err != nil {
		return &cli.UsageError{Msg: err.Error()}
	}
	results, err := run.Run(ctx, cfg)
	for _, r := range results {
		if r.Refresh != nil {
			printRefresh(env, r)
			continue
		}
		if r.Out != "" && r.Report.Count > 0 {
			fmt.Fprintf(env.Stdout, "%s: %d of %d scenarios proved, suite in %s (run %s)\n", r.Agent, r.Report.Count, r.Asked, r.Out, r.RunID)
		}
	}
	return err
}

// printRefresh says what --update or --into did to the suite.
func printRefresh(env *cli.Env, r run.Result) {
	o := r.Refresh
	for _, x := range o.Replaced {
		if x.Ask != "" {
			fmt.Fprintf(env.Stdout, "revised %s (%q): now %s, %s\n", x.Name, x.Ask, x.UseCase, x.Branch)
		} else if x.OldBranch != "" {
			fmt.Fprintf(env.Stdout, "replaced %s (branch not kept: was %q, now %q)\n", x.Name, x.OldBranch, x.Branch)
		} else {
			fmt.Fprintf(env.Stdout, "replaced %s\n", x.Name)
		}
	}
	for _, x := range o.Added {
		fmt.Fprintf(env.Stdout, "added %s (%s: %s)\n", x.Name, x.UseCase, x.Branch)
	}
	for _, x := range o.NotKept {
		fmt.Fprintf(env.Stdout, "not kept %s: %s\n", x.Name, x.Reason)
	}
	switch o.Mode {
	case refresh.ModeRevise:
		fmt.Fprintf(env.Stdout, "%s: %d chosen, %d revised, %d kept as they were; suite in %s, old versions in %s (run %s)\n",
			r.Agent, o.Asked, len(o.Replaced), len(o.NotKept), r.Out, filepath.Join(r.Out, refresh.HistoryFile), o.Run)
	case refresh.ModeUpdate:
		fmt.Fprintf(env.Stdout, "%s: %d stale, %d replaced, %d not kept (removed); suite in %s, details in %s\n",
			r.Agent, o.Asked, len(o.Replaced), len(o.NotKept), r.Out, filepath.Join(r.Out, refresh.OutcomeFile))
	default:
		fmt.Fprintf(env.Stdout, "%s: %d of %d new scenarios added; suite in %s, details in %s\n",
			r.Agent, len(o.Added), o.Asked, r.Out, filepath.Join(r.Out, refresh.OutcomeFile))
	}
}
