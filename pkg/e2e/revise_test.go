package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/refresh"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestReviseAcrossWriterProcesses: `suitegen revise --ask harder` over a
// small retail suite writes the same bytes whether its one writer does the
// work alone or two writer processes on the same NATS and PostgreSQL take
// slices too (the revision's run id, which differs, aside).
func TestReviseAcrossWriterProcesses(t *testing.T) {
	testenv.OutsideRace(t, inBinaries)
	t.Parallel()
	dir := examples(t, "retail")
	natsURL := testenv.NATS(t)
	precreateQueue(t, queue.Config{URL: natsURL})
	dbURL := testenv.PostgresURL(t)
	env := []string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + dbURL}
	base, _ := runSuite(t, dir, 12, 2)
	w, err := suite.Read(base)
	if err != nil {
		t.Fatal(err)
	}
	// Plain successes: each has a harder bucket in its use case.
	var chosen []string
	for _, sc := range w.Scenarios {
		if sc.Kind == "happy" && sc.Expects == "succeed" && len(chosen) < 4 {
			chosen = append(chosen, sc.Name)
		}
	}
	if len(chosen) < 2 {
		t.Fatalf("the suite has %d plain successes to revise", len(chosen))
	}
	led := ledgerAt(t, dbURL)
	revised := map[int]map[string][]byte{}
	for _, procs := range []int{1, 3} {
		out := t.TempDir()
		if err := os.CopyFS(out, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		var writers []*proc
		for i := 1; i < procs; i++ {
			writers = append(writers, start(t, env, "writer", "--id", fmt.Sprintf("p%d-w%d", procs, i), "--drain-timeout", "5s"))
		}
		rv := start(t, env, "suitegen", "revise", out, "--contract", dir, "--only", strings.Join(chosen, ","), "--ask", "harder", "--writers", "1")
		if err := rv.wait(t, testenv.Patience); err != nil {
			t.Fatalf("revise beside %d writer process(es): %v\n%s", procs-1, err, rv.output())
		}
		for _, wp := range writers {
			_ = wp.cmd.Process.Signal(syscall.SIGTERM)
			if err := wp.wait(t, time.Minute); err != nil {
				t.Errorf("writer did not drain on SIGTERM: %v\n%s", err, wp.output())
			}
		}
		files := tree(t, out)
		var o refresh.Outcome
		if err := json.Unmarshal(files[refresh.OutcomeFile], &o); err != nil {
			t.Fatal(err)
		}
		if len(o.Replaced) != len(chosen) || o.Run == "" {
			t.Fatalf("revise beside %d writer process(es) revised %d of %d:\n%s", procs-1, len(o.Replaced), len(chosen), rv.output())
		}
		sls, err := led.Slices(context.Background(), o.Run, -1)
		if err != nil {
			t.Fatal(err)
		}
		by := map[string]int{}
		for _, sl := range sls {
			by[sl.Writer]++
		}
		t.Logf("%d writer process(es): run %s, slices by writer %v", procs, o.Run, by)
		for p, b := range files {
			files[p] = bytes.ReplaceAll(b, []byte(o.Run), []byte("RUN"))
		}
		revised[procs] = files
	}
	testenv.SameFiles(t, revised[1], revised[3], [2]string{"1 writer process", "3 writer processes"})
	if t.Failed() {
		t.Logf("revised: %s", strings.Join(chosen, ", "))
	}
}
