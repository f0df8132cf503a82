package e2e

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/provider"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// BenchmarkTokensPerScenario is what a provider bills per kept scenario: a
// run of examples/retail (SUITEGEN_BENCH_SCENARIOS scenarios, default 60) by
// three writers driving the builtin model behind an in-process provider-sim,
// which counts tokens as OpenAI-compatible providers do. The figures are the
// ledger's meter (equal to the sim's own count, see TestBudgetCap) divided by
// the scenarios the run kept. No reviewer rounds, so every token is a
// writer's.
func BenchmarkTokensPerScenario(b *testing.B) {
	n := 60
	if v := os.Getenv("SUITEGEN_BENCH_SCENARIOS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("SUITEGEN_BENCH_SCENARIOS=%q is not a positive number", v)
		}
	}
	dir := examples(b, "retail")
	c, err := engine.LoadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var prompt, completion, served int64
	var kept, calls int
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
		db := testenv.PostgresURL(b)
		res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: n, Writers: 3, Out: b.TempDir(), Seed: 7,
			Model: "sim-writer", Provider: provider.Settings{BaseURL: "http://" + addr + "/v1", APIKey: "sim-key"},
			NATSURL: testenv.NATS(b), DatabaseURL: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			b.Fatalf("run: %v", err)
		}
		pool, err := pgxpool.New(ctx, db)
		if err != nil {
			b.Fatal(err)
		}
		pr, co, err := canvas.New(pool).Spent(ctx, res[0].RunID)
		pool.Close()
		if err != nil {
			b.Fatal(err)
		}
		st := sim.Stats()
		stopSim()
		_ = sim.Wait()
		cancel()
		if pr+co != st.Tokens {
			b.Fatalf("the meter says %d tokens, the provider served %d", pr+co, st.Tokens)
		}
		prompt, completion, served = prompt+pr, completion+co, served+st.Tokens
		kept += res[0].Proved
		calls += int(st.Calls)
	}
	if kept == 0 {
		b.Fatal("no scenario kept")
	}
	runs := float64(b.N)
	b.ReportMetric(float64(kept)/runs, "kept")
	b.ReportMetric(float64(prompt)/float64(kept), "prompt-tokens/kept")
	b.ReportMetric(float64(completion)/float64(kept), "completion-tokens/kept")
	b.ReportMetric(float64(prompt)/float64(calls), "prompt-tokens/call")
	b.ReportMetric(float64(calls)/runs, "calls")
}
