package e2e

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// BenchmarkScale is what one scenario costs as a suite grows from 1,000 to
// 10,000 on one contract (examples/airline, whose code shapes hold about
// 17,000 distinct cases) with no flag but the ask: templates serve as often
// as the ask needs. Per size it reports the wall time and the write stage
// per proved scenario, and the duplicate-code refusals (0: no minted code
// is dealt twice). 4 writers in one process, one reviewer round, servers of
// the benchmark's own. Long: it runs only with SUITEGEN_BENCH=1 (make bench
// sets it), at 1,000 within make bench's time; SUITEGEN_BENCH_SCALE=1000,10000
// runs both sizes (over an hour).
func BenchmarkScale(b *testing.B) {
	if os.Getenv("SUITEGEN_BENCH") != "1" {
		b.Skip("set SUITEGEN_BENCH=1 to run the 1,000 and 10,000-scenario scale benchmark")
	}
	sizes := []int{1000}
	if v := os.Getenv("SUITEGEN_BENCH_SCALE"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("SUITEGEN_BENCH_SCALE=%q: %q is not a positive number", v, f)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var proved, dups, slices int
			var wall, write, fold time.Duration
			var peak, alloc uint64
			for b.Loop() {
				out := b.TempDir()
				// Time enough for the ask at a scenario a second.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute+time.Duration(n)*time.Second)
				stop := sampleHeap(&peak)
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				start := time.Now()
				res, err := run.Run(ctx, run.Config{Dirs: []string{examples(b, "airline")}, Asked: n, Writers: 4, Out: out, Seed: 7,
					NATSURL: testenv.NATS(b), DatabaseURL: testenv.PostgresURL(b), Rounds: 1,
					Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
				wall += time.Since(start)
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				alloc += after.TotalAlloc - before.TotalAlloc
				stop()
				cancel()
				if err != nil {
					b.Fatalf("run: %v", err)
				}
				if res[0].Err != nil { // short of the ask: the figures say by how much
					b.Logf("run %d: %v", n, res[0].Err)
				}
				proved += res[0].Proved
				write += res[0].Stages.Write
				fold += res[0].Stages.Fold
				slices += res[0].Stages.Slices
				body, err := os.ReadFile(filepath.Join(out, "report.json"))
				if err != nil {
					b.Fatal(err)
				}
				var rep struct {
					Refusals map[string]map[string]int `json:"refusals"`
				}
				if err := json.Unmarshal(body, &rep); err != nil {
					b.Fatal(err)
				}
				dups += rep.Refusals[string(prove.GateSuite)][string(prove.CodeDuplicateCode)]
			}
			b.ReportMetric(float64(proved)/float64(b.N), "proved")
			b.ReportMetric(float64(wall.Milliseconds())/float64(proved), "ms/scenario")
			b.ReportMetric(float64(write.Milliseconds())/float64(proved), "write-ms/scenario")
			b.ReportMetric(float64(fold.Microseconds())/1000/float64(max(slices, 1)), "fold-ms/slice")
			b.ReportMetric(float64(slices)/float64(b.N), "slices")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(alloc)/1024/float64(max(proved, 1)), "alloc-KB/scenario")
			b.ReportMetric(float64(dups)/float64(b.N), "duplicate-codes")
		})
	}
}

// sampleHeap records the largest live heap (HeapInuse) seen every 250 ms
// into peak until stop is called. Planner, writers and reviewer share the
// process here, so it is their sum.
func sampleHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			*peak = max(*peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
