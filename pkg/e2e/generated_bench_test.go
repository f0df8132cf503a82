package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/contractgen"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// BenchmarkGeneratedSuites writes a 100-scenario suite with the builtin
// model for each of SUITEGEN_BENCH_SUITES generated contracts (20 unless
// set; SUITEGEN_BENCH_SUITE_SCENARIOS sets the size) and measures, against
// each contract's ground truth, the refusal branches the suite's kept
// scenarios reach (report.json's coverage.handler_branches): all of them,
// the rule branches (not existence guards), and per reason. It also checks
// that suitegen finds exactly the branches the author wrote and classes them
// as the author meant. Long: it runs only with SUITEGEN_BENCH=1.
func BenchmarkGeneratedSuites(b *testing.B) {
	if os.Getenv("SUITEGEN_BENCH") != "1" {
		b.Skip("set SUITEGEN_BENCH=1 to write suites for 20 generated contracts")
	}
	n := envInt(b, "SUITEGEN_BENCH_SUITES", 20)
	asked := envInt(b, "SUITEGEN_BENCH_SUITE_SCENARIOS", 100)
	var s suiteScore
	for b.Loop() {
		s = suiteScore{byReason: map[string][2]int{}}
		for seed := int64(1); seed <= int64(n); seed++ {
			s.score(b, seed, asked)
		}
	}
	b.ReportMetric(float64(s.contracts), "contracts")
	b.ReportMetric(frac(s.proved, s.asked), "proved/asked")
	b.ReportMetric(frac(s.countRight, s.contracts), "branch-count-right")
	b.ReportMetric(frac(s.classRight, s.uncov), "uncovered-class-right")
	b.ReportMetric(frac(s.covered, s.truth), "branches-covered")
	b.ReportMetric(frac(s.ruleCovered, s.rules), "rule-branches-covered")
	b.ReportMetric(frac(s.actingCovered, s.acting), "acting-rule-branches-covered")
	b.Log(s.String())
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q is not a positive number", name, v)
	}
	return n
}

func frac(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// suiteScore is what the suites of generated contracts reach of the
// refusal branches their authors wrote.
type suiteScore struct {
	contracts, failed, proved, asked int
	// truth: branches the authors wrote; countRight: contracts whose
	// report counts as many branches as the author wrote; uncovered and
	// classRight: the branches the report lists uncovered, with their
	// class, and those classed as the author meant.
	truth, countRight, uncov, classRight int
	covered, rules, ruleCovered          int
	// the rule branches of the tools use cases act with, and those covered
	acting, actingCovered int
	byReason              map[string][2]int // reason -> covered, total
	misses                contractgen.Misses
}

func (s *suiteScore) miss(kind, format string, a ...any) { s.misses.Addf(kind, format, a...) }

func (s *suiteScore) score(b *testing.B, seed int64, asked int) {
	b.Helper()
	s.contracts++
	dir := b.TempDir()
	truth, err := contractgen.Generate(seed, contractgen.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: asked, Writers: 2, Out: b.TempDir(), Seed: 7,
		NATSURL: testenv.NATS(b), DatabaseURL: testenv.PostgresURL(b), Rounds: 1, AllowPartial: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if len(res) != 1 {
		s.failed++
		s.miss("run failed", "seed %d: %v", seed, err)
		return
	}
	r := res[0]
	s.proved += r.Proved
	s.asked += asked
	if err != nil {
		// A suite short of the ask is still written, with its report.
		s.miss("suite short of the ask", "seed %d: %v", seed, err)
	}
	hb := r.Report.Coverage.HandlerBranches
	if hb == nil {
		s.failed++
		s.miss("report without handler branches", "seed %d", seed)
		return
	}
	uncovered := map[string]string{}
	class := map[string]string{}
	for _, u := range hb.Uncovered {
		uncovered[u.At] = u.Why
		class[u.At] = u.Class
	}
	var total int
	acts := map[string]bool{}
	for _, u := range truth.UseCases {
		acts[u.Act] = true
	}
	for _, t := range truth.Tools {
		for _, br := range t.Branches {
			total++
			s.truth++
			want := script.ClassRule
			if br.Guard() {
				want = script.ClassExistence
			}
			why, un := uncovered[br.At]
			if !un {
				s.covered++
			}
			if !br.Guard() {
				s.rules++
				if !un {
					s.ruleCovered++
				}
				if acts[t.Name] {
					s.acting++
					if !un {
						s.actingCovered++
					}
				}
			}
			c := s.byReason[br.Reason]
			c[1]++
			if !un {
				c[0]++
			} else {
				s.miss("uncovered "+br.Reason+" branch: "+contractgen.Gist(why), "seed %d %s (%s): %s", seed, br.At, t.Name, why)
			}
			s.byReason[br.Reason] = c
			// Only an uncovered branch carries its class in the report.
			if un {
				s.uncov++
				if class[br.At] == want {
					s.classRight++
				} else {
					s.miss("branch classed otherwise", "seed %d %s: %s, meant %s", seed, br.At, class[br.At], want)
				}
			}
		}
	}
	if hb.Total == total && len(hb.Uncovered) == total-hb.Covered {
		s.countRight++
	} else {
		s.miss("branch count differs from the author's", "seed %d: the report counts %d refusal branches, the author wrote %d", seed, hb.Total, total)
	}
}

func (s *suiteScore) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d contracts (%d runs failed): %d of %d scenarios asked were proved (%.3f)\n", s.contracts, s.failed, s.proved, s.asked, frac(s.proved, s.asked))
	fmt.Fprintf(&b, "refusal branches the authors wrote: %d; contracts whose report counts as many: %d/%d; uncovered ones classed as meant %d/%d\n",
		s.truth, s.countRight, s.contracts, s.classRight, s.uncov)
	fmt.Fprintf(&b, "covered by kept scenarios %d/%d (%.3f); rule branches covered %d/%d (%.3f); rule branches of acting tools covered %d/%d (%.3f)\n",
		s.covered, s.truth, frac(s.covered, s.truth), s.ruleCovered, s.rules, frac(s.ruleCovered, s.rules), s.actingCovered, s.acting, frac(s.actingCovered, s.acting))
	reasons := make([]string, 0, len(s.byReason))
	for k := range s.byReason {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	b.WriteString("covered by reason:")
	for _, k := range reasons {
		c := s.byReason[k]
		fmt.Fprintf(&b, " %s %d/%d", k, c[0], c[1])
	}
	b.WriteString("\n")
	b.WriteString(s.misses.String())
	return b.String()
}
