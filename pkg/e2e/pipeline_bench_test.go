package e2e

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// BenchmarkPipeline is the pipeline's own cost with the builtin model: a
// portfolio of examples/retail and examples/rides, SUITEGEN_BENCH_SCENARIOS
// scenarios each (default 1,000: 2,000 in all), 4 writers in one process,
// one reviewer round, on servers of the benchmark's own. Both contracts hold
// fewer than 1,000 at the plan's default want, so MaxWant is raised to 40.
// It reports scenarios/s end to end and the wall time of each stage, summed
// over the two contracts (they run one after the other). Long: it runs only
// with SUITEGEN_BENCH=1 (make bench sets it).
func BenchmarkPipeline(b *testing.B) {
	if os.Getenv("SUITEGEN_BENCH") != "1" {
		b.Skip("set SUITEGEN_BENCH=1 to run the 2,000-scenario pipeline benchmark")
	}
	n := 1000
	if v := os.Getenv("SUITEGEN_BENCH_SCENARIOS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("SUITEGEN_BENCH_SCENARIOS=%q is not a positive number", v)
		}
	}
	dirs := []string{examples(b, "retail"), examples(b, "rides")}
	var proved int
	var wall time.Duration
	var st run.Stages
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		start := time.Now()
		res, err := run.Run(ctx, run.Config{Dirs: dirs, Asked: n, Writers: 4, Out: b.TempDir(), Seed: 7,
			NATSURL: testenv.NATS(b), DatabaseURL: testenv.PostgresURL(b), Rounds: 1, MaxWant: 40,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		wall += time.Since(start)
		cancel()
		if err != nil {
			b.Fatalf("run: %v", err)
		}
		for _, r := range res {
			proved += r.Proved
			st.Plan += r.Stages.Plan
			st.Write += r.Stages.Write
			st.Review += r.Stages.Review
			st.Output += r.Stages.Output
		}
	}
	runs := float64(b.N)
	b.ReportMetric(float64(proved)/wall.Seconds(), "scenarios/s")
	b.ReportMetric(float64(proved)/runs, "proved")
	b.ReportMetric(st.Plan.Seconds()/runs, "plan-s")
	b.ReportMetric(st.Write.Seconds()/runs, "write-s")
	b.ReportMetric(st.Review.Seconds()/runs, "review-s")
	b.ReportMetric(st.Output.Seconds()/runs, "output-s")
	b.ReportMetric(float64(proved)/st.Write.Seconds(), "write-scenarios/s")
}
