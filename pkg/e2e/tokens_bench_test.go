package e2e

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/provider"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/writer"
)

// BenchmarkTokensPerScenario is what a provider bills per kept scenario: a
// run of examples/retail (SUITEGEN_BENCH_SCENARIOS scenarios, default 60;
// reply allowance cap SUITEGEN_BENCH_MAX_TOKENS, default --max-tokens' own) by three writers driving the builtin model behind an in-process provider-sim,
// which counts tokens as OpenAI-compatible providers do. The tokens are
// counted by a proxy in front of the simulator from the answers' usage (it
// shares no code with the writer's meter, which must agree with it), divided
// by the scenarios the run kept. No reviewer rounds, so every token is a
// writer's. The suite's quality is reported beside the cost, and the run
// fails if a planned use case is missing from it.
func BenchmarkTokensPerScenario(b *testing.B) {
	n := 60
	if v := os.Getenv("SUITEGEN_BENCH_SCENARIOS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("SUITEGEN_BENCH_SCENARIOS=%q is not a positive number", v)
		}
	}
	maxTokens := writer.DefaultMaxTokens
	if v := os.Getenv("SUITEGEN_BENCH_MAX_TOKENS"); v != "" {
		var err error
		if maxTokens, err = strconv.Atoi(v); err != nil || maxTokens <= 0 {
			b.Fatalf("SUITEGEN_BENCH_MAX_TOKENS=%q is not a positive number", v)
		}
	}
	dir := examples(b, "retail")
	c, err := contract.LoadValid(dir)
	if err != nil {
		b.Fatal(err)
	}
	price, _ := model.DefaultPrices().Lookup(benchPriced)
	var tot second
	var kept, useCases, cells int
	var cost, nameShare float64
	outcomes := map[string]int{}
	parts := map[string]int64{}
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		sim, err := providersim.New(providersim.Config{Model: builtin.New(c)})
		if err != nil {
			b.Fatal(err)
		}
		sctx, stopSim := context.WithCancel(ctx)
		addr, err := sim.Start(sctx)
		if err != nil {
			b.Fatal(err)
		}
		proxy := newCountingProxy(b, "http://"+addr)
		db := testenv.PostgresURL(b)
		res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: n, Writers: 3, MaxTokens: maxTokens, Out: b.TempDir(), Seed: 7,
			Model: "sim-writer", Provider: provider.Settings{BaseURL: proxy.url + "/v1", APIKey: "sim-key", Price: &price},
			NATSURL: testenv.NATS(b), DatabaseURL: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatalf("run: %v", err)
		}
		pool, err := pgxpool.New(ctx, db)
		if err != nil {
			b.Fatal(err)
		}
		pr, co, err := ledger.New(pool).Spent(ctx, res[0].RunID)
		pool.Close()
		if err != nil {
			b.Fatal(err)
		}
		counted := proxy.totals()
		for k, n := range proxy.promptParts() {
			parts[k] += n
		}
		stopSim()
		_ = sim.Wait()
		cancel()
		if pr != counted.Prompt || co != counted.Completion {
			b.Fatalf("the meter says %d prompt + %d completion tokens, the proxy counted %d + %d", pr, co, counted.Prompt, counted.Completion)
		}
		rep := res[0].Report
		if sp := rep.Spend; sp.CachedPromptTokens != counted.Cached {
			b.Fatalf("report.json says %d cached prompt tokens, the proxy counted %d", sp.CachedPromptTokens, counted.Cached)
		}
		cov := rep.Coverage
		if len(cov.MissingUseCases) > 0 {
			b.Fatalf("use cases missing from the suite: %v", cov.MissingUseCases)
		}
		tot.add(counted)
		kept += res[0].Proved
		cost += rep.Spend.CostUSD
		useCases += cov.UseCasesPresent
		cells += cov.CellsCovered
		nameShare += rep.Diversity.CallerNameShare
		for o, k := range cov.Outcomes {
			outcomes[o] += k
		}
	}
	if kept == 0 {
		b.Fatal("no scenario kept")
	}
	runs, k := float64(b.N), float64(kept)
	b.ReportMetric(k/runs, "kept")
	b.ReportMetric(float64(tot.Prompt+tot.Completion)/k, "tokens/kept")
	b.ReportMetric(float64(tot.Prompt)/k, "prompt-tokens/kept")
	b.ReportMetric(float64(tot.Completion)/k, "completion-tokens/kept")
	b.ReportMetric(float64(tot.Cached)/float64(max(tot.Prompt, 1)), "cached-share")
	b.ReportMetric(cost/k, "usd/kept")
	b.ReportMetric(float64(tot.Prompt)/float64(tot.Admitted), "prompt-tokens/call")
	b.ReportMetric(float64(tot.Admitted)/runs, "calls")
	b.ReportMetric(float64(tot.QuotaTokens)/float64(max(tot.Billed, 1)), "admitted/billed")
	b.ReportMetric(float64(useCases)/runs, "use-cases")
	b.ReportMetric(float64(cells)/runs, "cells")
	b.ReportMetric(nameShare/runs, "caller-name-share")
	for _, o := range scenario.Outcomes {
		b.ReportMetric(float64(outcomes[o])/k, o+"-share")
	}
	// Where a request's prompt goes, per call (see promptSections).
	for part, n := range parts {
		b.ReportMetric(float64(n)/float64(tot.Admitted), strings.ReplaceAll(part, " ", "-")+"-tokens/call")
	}
}

// benchPriced is the price-table entry the benchmark's money is reckoned at.
const benchPriced = "gpt-4.1"
