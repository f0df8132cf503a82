package prove_test

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// wire counts network round trips on every connection of a pool: one each
// time a connection reads after writing. That is what a query, a batch, or a
// prepare pgx sends inside a batch actually costs, whatever API sent it.
type wire struct{ trips atomic.Int64 }

type countedConn struct {
	net.Conn
	w       *wire
	written bool // wrote since the last read
}

func (c *countedConn) Write(p []byte) (int, error) {
	c.written = true
	return c.Conn.Write(p)
}

func (c *countedConn) Read(p []byte) (int, error) {
	if c.written {
		c.written = false
		c.w.trips.Add(1)
		if traceTrips {
			traceSite()
		}
	}
	return c.Conn.Read(p)
}

// countedPool is a pool on url whose connections count round trips.
func countedPool(tb testing.TB, url string, conns int32) (*pgxpool.Pool, *wire) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		tb.Fatal(err)
	}
	w := &wire{}
	var d net.Dialer
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countedConn{Conn: c, w: w}, nil
	}
	cfg.MaxConns = conns
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool, w
}

// exampleSuite writes a suite of n scenarios of examples/name with the
// builtin model on servers of the benchmark's own and returns the database it
// used and the suite's scenarios.
func exampleSuite(b *testing.B, name string, n int) (string, []*scenario.Scenario) {
	b.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		b.Fatal(err)
	}
	url := testenv.PostgresURL(b)
	out := b.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err = run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: n, Writers: 2, Out: out, Seed: 7,
		NATSURL: testenv.NATS(b), DatabaseURL: url, Logger: quiet()})
	if err != nil {
		b.Fatalf("run: %v", err)
	}
	paths, _ := filepath.Glob(filepath.Join(out, "scenarios", "*", "scenario.json"))
	sort.Strings(paths)
	var scs []*scenario.Scenario
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		sc, err := scenario.Decode(raw)
		if err != nil {
			b.Fatalf("%s: %v", p, err)
		}
		scs = append(scs, sc)
	}
	if len(scs) != n {
		b.Fatalf("asked %d scenarios, the run wrote %d", n, len(scs))
	}
	return url, scs
}

// BenchmarkProve proves real scenarios of an example (every gate, every
// copy) one after another, as one writer does: 40 of examples/retail, or of
// the example SUITEGEN_BENCH_EXAMPLE names. One op is one pass over the
// suite; the metrics are per proof: ms/proof (mean), median-ms and p90-ms,
// and roundtrips/proof counted on the wire.
func BenchmarkProve(b *testing.B) {
	name := cmp.Or(os.Getenv("SUITEGEN_BENCH_EXAMPLE"), "retail")
	url, scs := exampleSuite(b, name, 40)
	dir, _ := filepath.Abs(filepath.Join("..", "..", "examples", name))
	c, err := contract.LoadValid(dir)
	if err != nil {
		b.Fatal(err)
	}
	pool, w := countedPool(b, url, 8)
	ctx := context.Background()
	e, err := engine.Open(ctx, pool, c)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	// Warm up: each pooled connection prepares its statements once, as a
	// long-running writer's have.
	for range 2 {
		for _, sc := range scs {
			if v, err := e.Prover.Prove(ctx, sc); err != nil || !v.Kept {
				b.Fatalf("%s not kept: %v %v", sc.Name, err, v.Refusals)
			}
		}
	}
	// The world keeps what handlers answered (world/answers.go): unless
	// SUITEGEN_BENCH_WARM is set, the measured pass starts with none, as a
	// writer's first proof of each scenario does.
	warm := os.Getenv("SUITEGEN_BENCH_WARM") != ""
	var durs []time.Duration
	trips0 := w.trips.Load()
	traceMu.Lock()
	traceCount = map[string]int{}
	traceMu.Unlock()
	b.ResetTimer()
	for b.Loop() {
		if !warm {
			b.StopTimer()
			e.World.Forget()
			b.StartTimer()
		}
		for _, sc := range scs {
			start := time.Now()
			v, err := e.Prover.Prove(ctx, sc)
			durs = append(durs, time.Since(start))
			if err != nil || !v.Kept {
				b.Fatalf("%s not kept: %v %v", sc.Name, err, v.Refusals)
			}
		}
	}
	b.StopTimer()
	proofs := float64(len(durs))
	slices.Sort(durs)
	var sum time.Duration
	for _, d := range durs {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sum)/proofs, "ms/proof")
	b.ReportMetric(ms(durs[len(durs)/2]), "median-ms")
	b.ReportMetric(ms(durs[len(durs)*9/10]), "p90-ms")
	b.ReportMetric(float64(w.trips.Load()-trips0)/proofs, "roundtrips/proof")
	if traceTrips {
		dumpTrace(proofs)
	}
}

var traceTrips = os.Getenv("SUITEGEN_BENCH_TRACE") != ""
var traceMu sync.Mutex
var traceCount = map[string]int{}

func traceSite() {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(3, pcs)
	fr := runtime.CallersFrames(pcs[:n])
	var chain []string
	for {
		f, more := fr.Next()
		if strings.Contains(f.File, "/pkg/prove/") && !strings.HasSuffix(f.File, "_test.go") {
			chain = append(chain, fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line))
			if len(chain) == 3 {
				break
			}
		}
		if !more {
			break
		}
	}
	k := strings.Join(chain, " < ")
	traceMu.Lock()
	traceCount[k]++
	traceMu.Unlock()
}

func dumpTrace(proofs float64) {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range traceCount {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v })
	for _, e := range all {
		fmt.Fprintf(os.Stderr, "%7.2f %s\n", float64(e.v)/proofs, e.k)
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
