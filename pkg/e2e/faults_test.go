package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/cli"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/provider"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// faultPlan is how hard a fault run pushes. The default fits `go test` on two
// busy cores; SUITEGEN_FAULTS=full (make test-faults) is the 1,000-scenario run.
type faultPlan struct {
	scenarios int
	// kills is how many writers are SIGKILLed, one every killEvery.
	kills     int
	killEvery time.Duration
	timeout   time.Duration
	// maxWant raises the plan's cap per bucket so the example can hold the
	// full size (rides holds about 500 at the default cap of 10).
	maxWant int
}

func faultPlanFromEnv() faultPlan {
	fp := faultPlan{scenarios: 60, kills: 1, killEvery: 3 * time.Second, timeout: 20 * time.Minute}
	if os.Getenv("SUITEGEN_FAULTS") == "full" {
		fp = faultPlan{scenarios: 1000, kills: 1000, killEvery: 4 * time.Second, timeout: 40 * time.Minute, maxWant: 25}
	}
	// SUITEGEN_FAULTS_SCENARIOS overrides the size (e.g. to find the largest
	// run the example supports fault-free).
	if n, err := strconv.Atoi(os.Getenv("SUITEGEN_FAULTS_SCENARIOS")); err == nil && n > 0 {
		fp.scenarios = n
	}
	return fp
}

// Queue tuning shared by every process of the fault run: a short ack wait so
// a SIGKILLed writer's slice and the poison slice come back in seconds; the
// queue's backstop at its default, and the writers' bound on deliveries lost
// with their writer before the slice progressed at 5, so the poison slice
// kills as many writers as it did when the queue's 5 deliveries bounded it.
const (
	faultAckWait    = 2 * time.Second
	faultMaxDeliver = queue.DefaultMaxDeliver
	faultMaxLost    = 5
	faultModel      = "sim-builtin"
	faultSeed       = 7
	faultAPIKey     = "sk-fault-suite-key"
)

var simListening = regexp.MustCompile(`listening on (http://[0-9.:]+)/v1`)

// TestFaults is the fault suite: a run of the builtin model behind
// provider-sim (429s, 500s, malformed and unknown tool calls, stalls past the
// ack wait), three writer processes SIGKILLed and restarted, NATS and
// PostgreSQL restarted on their data, the planner SIGKILLed and restarted,
// and a poison slice that kills every writer it reaches. It must end with
// exactly the asked count, no duplicates, nothing journalled missing from the
// suite, the poison slice dead in the ledger with its reason, and the suite
// byte for byte that of a fault-free run.
func TestFaults(t *testing.T) {
	testenv.OutsideRace(t, inBinaries)
	t.Parallel()
	fp := faultPlanFromEnv()
	dir := examples(t, "rides")
	// The reference first: if the example cannot give this many scenarios
	// without faults, that is a capacity problem, not a fault absorbed badly.
	want := faultFreeRun(t, dir, fp.scenarios, fp.maxWant)
	runID := "faults"
	poison := runID + "-r1-s002"
	ctx, cancel := context.WithTimeout(t.Context(), fp.timeout)
	defer cancel()
	flog := NewFaultLog()
	started := time.Now()

	// Servers the harness can restart on their own data and port.
	pgDir, natsDir := filepath.Join(testenv.ServerDir(t), "pg"), t.TempDir()
	pg, err := stack.StartPostgres(ctx, stack.PostgresConfig{DataDir: pgDir, Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	pgPort := pg.Port()
	t.Cleanup(func() { _ = pg.Stop(context.Background()) })
	ns, err := stack.StartNATS(stack.NATSConfig{StoreDir: natsDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Shutdown() })
	natsURL := ns.URL()
	natsPort := urlPort(t, natsURL)
	dbURL := pg.URL()

	// The provider: the builtin writer policy behind the OpenAI wire, faulty.
	sim := startF(t, nil, "suitegen", "provider-sim", dir, "--addr", "127.0.0.1:0", "--seed", "11",
		"--fault-429", "0.10", "--fault-500", "0.02", "--fault-malformed", "0.01", "--fault-unknown-tool", "0.01", "--fault-unknown-record", "0.01",
		"--fault-stall", "0.01", "--stall-for", (faultAckWait + time.Second).String())
	simBase := waitFor(t, sim, simListening, 30*time.Second)

	env := []string{
		"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + dbURL,
		"SUITEGEN_ACK_WAIT=" + faultAckWait.String(), "SUITEGEN_MAX_DELIVER=" + strconv.Itoa(faultMaxDeliver),
		"SUITEGEN_MODEL=" + faultModel, "OPENAI_BASE_URL=" + simBase + "/v1", "OPENAI_API_KEY=" + faultAPIKey,
	}
	// One model call per rehearsal, as the provider faults' rates were
	// sized for: with a larger reply allowance a run makes fewer calls,
	// and a fault kind may never fire.
	writerEnv := append(append([]string(nil), env...), "SUITEGEN_FAULT_POISON="+poison, "SUITEGEN_MAX_TOKENS=2048",
		"SUITEGEN_MAX_LOST="+strconv.Itoa(faultMaxLost))
	precreateQueue(t, queue.Config{URL: natsURL, AckWait: faultAckWait, MaxDeliver: faultMaxDeliver})

	var (
		mu      sync.Mutex
		writers []*fproc
		nextID  int
	)
	startWriter := func() {
		mu.Lock()
		defer mu.Unlock()
		nextID++
		writers = append(writers, startF(t, writerEnv, "writer", "--id", fmt.Sprintf("fw%d", nextID), "--drain-timeout", "5s"))
	}
	for range 3 {
		startWriter()
	}
	plannerArgs := []string{dir, "--run", runID, "--scenarios", strconv.Itoa(fp.scenarios), "--seed", strconv.Itoa(faultSeed),
		"--max-want", strconv.Itoa(fp.maxWant)}
	planner := startF(t, env, "planner", plannerArgs...)
	var plannerMu sync.Mutex

	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	journalled := func() int {
		var n int
		qctx, qcancel := context.WithTimeout(ctx, 2*time.Second)
		defer qcancel()
		if err := pool.QueryRow(qctx, `SELECT count(*) FROM scenarios WHERE run_id = $1`, runID).Scan(&n); err != nil {
			return -1
		}
		return n
	}

	// The chaos loop: it owns the restarts; stop() ends it and waits.
	chaosCtx, stopChaos := context.WithCancel(ctx)
	chaosDone := make(chan struct{})
	var pgMu sync.Mutex
	go func() {
		defer close(chaosDone)
		rng := rand.New(rand.NewPCG(faultSeed, 1))
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		lastKill, lastServer := time.Now(), time.Now()
		kills := 0
		step := 0 // 0: planner restart next, 1: NATS, 2: Postgres, 3: done
		for {
			select {
			case <-chaosCtx.Done():
				return
			case <-tick.C:
			}
			// Writers that died (the poison slice, or a failed start while a
			// server was down) are replaced.
			mu.Lock()
			live := writers[:0]
			var dead []*fproc
			for _, w := range writers {
				if w.exited() {
					dead = append(dead, w)
				} else {
					live = append(live, w)
				}
			}
			writers = live
			mu.Unlock()
			for _, w := range dead {
				code := w.code()
				switch {
				case code == 3:
					flog.Add("writer_poisoned", "%s exited 3 on the poison slice", argAfter(w.cmd.Args, "--id"))
				case code == -1:
					flog.Add("writer_restart", "a replacement for %s, which was SIGKILLed", argAfter(w.cmd.Args, "--id"))
				default:
					flog.Add("writer_exit", "%s exited %d", argAfter(w.cmd.Args, "--id"), code)
				}
				// Every writer that ends is replaced: three stay up.
				startWriter()
			}
			n := journalled()
			if kills < fp.kills && n > 0 && time.Since(lastKill) >= fp.killEvery {
				mu.Lock()
				if len(writers) > 0 {
					w := writers[rng.IntN(len(writers))]
					_ = w.cmd.Process.Signal(syscall.SIGKILL)
					w.sigkilled = true
					kills++
					flog.Add("writer_sigkill", "%s SIGKILLed with %d journalled", argAfter(w.cmd.Args, "--id"), n)
				}
				mu.Unlock()
				lastKill = time.Now()
			}
			if step >= 3 || time.Since(lastServer) < 2*time.Second || n < 0 {
				continue
			}
			frac := float64(n) / float64(fp.scenarios)
			switch {
			case step == 0 && frac >= 0.10:
				plannerMu.Lock()
				planner.kill()
				planner = startF(t, env, "planner", plannerArgs...)
				plannerMu.Unlock()
				flog.Add("planner_restart", "planner SIGKILLed and started again on run %s with %d journalled", runID, n)
			case step == 1 && frac >= 0.25:
				ns.Shutdown()
				ns2, err := stack.StartNATS(stack.NATSConfig{StoreDir: natsDir, Port: natsPort})
				if err != nil {
					flog.Add("harness_error", "NATS restart: %v", err)
					return
				}
				ns = ns2
				flog.Add("nats_restart", "NATS stopped and started on its file store with %d journalled", n)
			case step == 2 && frac >= 0.40:
				pgMu.Lock()
				// A fast shutdown that outlasts StopTimeout (a checkpoint on a
				// busy machine) ends in SIGKILL: a crash the server recovers
				// from on its WAL, a harsher fault of the same kind.
				how := "stopped"
				err := pg.Stop(chaosCtx)
				if errors.Is(err, stack.ErrKilled) {
					how, err = "killed", nil
				}
				if err == nil {
					pg, err = stack.StartPostgres(chaosCtx, stack.PostgresConfig{DataDir: pgDir, Port: pgPort, Fast: true})
				}
				pgMu.Unlock()
				if err != nil {
					flog.Add("harness_error", "Postgres restart: %v", err)
					return
				}
				flog.Add("postgres_restart", "PostgreSQL %s and started on its data dir with %d journalled", how, n)
			default:
				continue
			}
			step++
			lastServer = time.Now()
		}
	}()
	stopChaosAndWait := func() {
		stopChaos()
		<-chaosDone
	}
	defer stopChaosAndWait()

	// The run ends when the (latest) planner exits. A planner that exits
	// ExitRetry (a server it needs was down) is started again, as its Job
	// would be.
	var perr error
	for {
		plannerMu.Lock()
		p := planner
		plannerMu.Unlock()
		perr = p.await(fp.timeout)
		plannerMu.Lock()
		same := p == planner
		if same && perr != nil && p.code() == cli.ExitRetry {
			flog.Add("planner_retry", "planner exited %d and was started again", cli.ExitRetry)
			planner, same = startF(t, env, "planner", plannerArgs...), false
		}
		plannerMu.Unlock()
		if same {
			break
		}
	}
	stopChaosAndWait()
	if perr != nil {
		t.Fatalf("planner: %v\n%s\nfaults so far:\n%v", perr, planner.output(), flog.Events())
	}
	out := t.TempDir()
	rev := start(t, env, "reviewer", "--run", runID, "--out", out)
	if err := rev.wait(t, 15*time.Minute); err != nil {
		t.Fatalf("reviewer: %v\n%s", err, rev.output())
	}
	mu.Lock()
	for _, w := range writers {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, w := range writers {
		if err := w.await(2 * time.Minute); err != nil && !w.sigkilled {
			t.Errorf("writer did not drain on SIGTERM: %v\n%s", err, w.output())
		}
	}
	mu.Unlock()
	for _, e := range flog.Events() {
		if e.Kind == "harness_error" {
			t.Errorf("harness: %s", e.Detail)
		}
	}

	// What the run came out as.
	rep := FaultReport{Command: "SUITEGEN_FAULTS=" + os.Getenv("SUITEGEN_FAULTS") + " go test -run TestFaults ./pkg/e2e", Scenarios: fp.scenarios}
	got := tree(t, filepath.Join(out, "scenarios"))
	rep.Kept = len(got)
	if rep.Kept != fp.scenarios {
		t.Errorf("the suite holds %d scenarios, want exactly %d", rep.Kept, fp.scenarios)
	}
	rep.Duplicates = duplicates(t, got)
	if rep.Duplicates > 0 {
		t.Errorf("%d scenarios duplicate another's content", rep.Duplicates)
	}
	store := ledger.New(pool)
	inLedger, err := store.Scenarios(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range inLedger {
		if _, ok := got[filepath.Join(sc.Name, "scenario.json")]; !ok {
			rep.Lost++
			t.Errorf("%s was journalled but is not in the suite", sc.Name)
		}
	}
	slices, err := store.Slices(ctx, runID, -1)
	if err != nil {
		t.Fatal(err)
	}
	var poisonSlice *ledger.Slice
	for i, s := range slices {
		if s.Deliveries > 1 {
			rep.Redelivered++
		}
		if s.State == ledger.SliceDead {
			rep.Dead = append(rep.Dead, s.ID+": "+s.Reason)
		}
		if s.ID == poison {
			poisonSlice = &slices[i]
		}
	}
	switch {
	case poisonSlice == nil:
		t.Errorf("no slice %s was dealt: the poison slice was never delivered", poison)
	case poisonSlice.State != ledger.SliceDead || !strings.Contains(poisonSlice.Reason, "dead-lettered"):
		t.Errorf("poison slice %s ended %q with reason %q; want dead with its dead-letter reason", poison, poisonSlice.State, poisonSlice.Reason)
	}
	if n := flog.Count("writer_poisoned"); n == 0 || n > faultMaxLost {
		t.Errorf("the poison slice killed %d writers; want between 1 and the writers' --max-lost (%d)", n, faultMaxLost)
	}
	for _, kind := range []string{"writer_sigkill", "planner_restart", "nats_restart", "postgres_restart"} {
		if flog.Count(kind) == 0 {
			t.Errorf("fault %s was never injected (the run ended first)", kind)
		}
	}
	var stats providersim.Stats
	if err := getJSON(simBase+"/stats", &stats); err != nil {
		t.Errorf("provider-sim stats: %v", err)
	}
	rep.ProviderSim, rep.ProviderReqs = stats.Faults, stats.Calls
	for _, kind := range []string{providersim.FaultRateLimit, providersim.FaultError500} {
		if stats.Faults[kind] == 0 {
			t.Errorf("provider-sim injected no %s in %d requests", kind, stats.Calls)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "report.json")); err == nil {
		var r struct {
			Refusals map[string]int `json:"refusals"`
		}
		_ = json.Unmarshal(b, &r)
		rep.Refusals = r.Refusals
	}

	// The same suite, byte for byte, as the fault-free run of the same model.
	rep.Identical = len(want) == len(got)
	for name, body := range want {
		if !bytes.Equal(body, got[name]) {
			rep.Identical = false
			t.Errorf("%s differs from the fault-free run: %s", name, firstDiff(body, got[name]))
		}
	}
	rep.Elapsed = time.Since(started).Round(time.Second).String()
	rep.Summarise(flog.Events())
	t.Logf("fault report:\n%s", rep)
	if path := os.Getenv("SUITEGEN_FAULTS_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(rep.String()+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// faultFreeRun writes the same suite with the same model behind a provider
// that injects nothing, in one process, and returns its scenarios.
func faultFreeRun(t *testing.T, dir string, n, maxWant int) map[string][]byte {
	t.Helper()
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := providersim.New(providersim.Config{Model: builtin.New(c)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	addr, err := sim.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = sim.Wait()
	}()
	out := t.TempDir()
	_, err = run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: n, Writers: 3, Out: out, Seed: faultSeed,
		Model: faultModel, Provider: provider.Settings{BaseURL: "http://" + addr + "/v1", APIKey: faultAPIKey},
		NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t), Rounds: 1, MaxWant: maxWant})
	if err != nil {
		t.Fatalf("the fault-free reference run of %d scenarios failed (before any fault): %v", n, err)
	}
	return tree(t, filepath.Join(out, "scenarios"))
}

// duplicates counts scenarios whose content, name and provenance aside,
// equals another's.
func duplicates(t *testing.T, files map[string][]byte) int {
	t.Helper()
	seen := map[string]string{}
	dups := 0
	for name, body := range files {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		delete(m, "name")
		delete(m, "provenance")
		b, _ := json.Marshal(m)
		sum := sha256.Sum256(b)
		h := hex.EncodeToString(sum[:])
		if other, ok := seen[h]; ok {
			dups++
			t.Logf("%s has the content of %s", name, other)
		}
		seen[h] = name
	}
	return dups
}

// fproc is a process the fault harness may kill at any time: a goroutine
// owns its Wait, and done closes when it has exited.
type fproc struct {
	*proc
	done chan struct{}
	// sigkilled: the chaos SIGKILLed it (under mu); one killed on the
	// chaos's last tick is still in the list when the run ends, and is no
	// writer to drain.
	sigkilled bool
}

func startF(t *testing.T, env []string, bin string, args ...string) *fproc {
	t.Helper()
	p := spawn(t, env, bin, args...)
	f := &fproc{proc: p, done: make(chan struct{})}
	go func() {
		_ = p.cmd.Wait()
		close(f.done)
	}()
	t.Cleanup(func() {
		if !f.exited() {
			_ = p.cmd.Process.Kill()
		}
		<-f.done
	})
	return f
}

func (f *fproc) exited() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// code is the exit status once exited: -1 when a signal ended it.
func (f *fproc) code() int {
	<-f.done
	return f.cmd.ProcessState.ExitCode()
}

// await waits for the process to exit and returns its failure, if any.
func (f *fproc) await(within time.Duration) error {
	select {
	case <-f.done:
	case <-time.After(within):
		_ = f.cmd.Process.Kill()
		<-f.done
		return fmt.Errorf("%s did not finish within %s", f.cmd.Path, within)
	}
	if !f.cmd.ProcessState.Success() {
		return fmt.Errorf("%s: %s", f.cmd.Path, f.cmd.ProcessState)
	}
	return nil
}

func (f *fproc) kill() {
	_ = f.cmd.Process.Signal(syscall.SIGKILL)
	<-f.done
}

func argAfter(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return "?"
}

func urlPort(t *testing.T, raw string) int {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// waitFor waits until p's output matches re and returns the first group.
func waitFor(t *testing.T, p *fproc, re *regexp.Regexp, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(p.output()); m != nil {
			return m[1]
		}
		if p.exited() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: no %q in its output:\n%s", p.cmd.Path, re, p.output())
	return ""
}

func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// firstDiff quotes the first line where a and b differ.
func firstDiff(a, b []byte) string {
	if b == nil {
		return "missing"
	}
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: fault-free %q, faulted %q", i+1, strings.TrimSpace(al[i]), strings.TrimSpace(bl[i]))
		}
	}
	return fmt.Sprintf("%d lines against %d", len(al), len(bl))
}
