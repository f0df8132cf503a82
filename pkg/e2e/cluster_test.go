package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// The cluster run's settings: the production overlay's (deploy/k8s): ack
// wait and max deliver at their defaults, three replicas of the stream.
const (
	clusterScenarios  = 300
	clusterAckWait    = queue.DefaultAckWait
	clusterMaxDeliver = queue.DefaultMaxDeliver
	clusterReplicas   = 3
	clusterRun        = "cluster"
	clusterSeed       = 7
	// clusterPrimaryWindow is how long the run goes without a primary: the
	// primary is SIGKILLed and the standby promoted this long after, about
	// what an operator's failure detection takes.
	clusterPrimaryWindow = 15 * time.Second
)

// clusterFault is one fault of the cluster run, as measured.
type clusterFault struct {
	Kind string `json:"kind"`
	// At is the number of scenarios journalled when it was injected.
	At int `json:"journalled_at"`
	// Since is the time from the run's start.
	Since string `json:"since_start"`
	// Recovered is the time from the fault until RecoveredWhen held.
	Recovered     string `json:"time_to_recover,omitempty"`
	RecoveredWhen string `json:"recovered_when,omitempty"`
	Detail        string `json:"detail"`
}

// clusterWindow is what the time without a primary cost the run.
type clusterWindow struct {
	// Without is from the primary's SIGKILL until the promoted standby
	// took writes; Promote is pg_ctl promote -w's part of it.
	Without string `json:"without_primary"`
	Promote string `json:"promote"`
	// FirstWrite is from the promotion to the first scenario journalled
	// on the new primary; Back, per writer at work when the primary died,
	// to its first one; EveryWriter is the longest of those: what the run
	// lost beyond the window.
	FirstWrite  string            `json:"promote_to_first_write"`
	Back        map[string]string `json:"promote_to_writer_back"`
	EveryWriter string            `json:"promote_to_every_writer_back"`
	// Dead is the run's dead slices (none may be).
	Dead int `json:"dead_slices"`
}

// TestCluster runs the distributed roles as real processes against a
// three-node JetStream cluster (real nats-server, streams with three
// replicas) and a PostgreSQL primary with a synchronous hot standby, reached
// through a multi-host URL with target_session_attrs=read-write. Mid-run,
// each fault triggered by the ledger's progress: the stream leader is
// SIGKILLed and later restarted; one writer is cut off from NATS and
// PostgreSQL past the ack wait and let back once its slice went to another
// writer; the primary is SIGKILLed and the standby promoted
// clusterPrimaryWindow later; one writer is SIGKILLed. The suite must come
// out exactly as a fault-free run's, with no slice dead.
//
// SUITEGEN_CLUSTER=1 turns it on (make test-cluster).
func TestCluster(t *testing.T) {
	if os.Getenv("SUITEGEN_CLUSTER") == "" {
		t.Skip("SUITEGEN_CLUSTER=1 runs the cluster test (make test-cluster)")
	}
	dir := examples(t, "rides")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	binaries(t)

	nc := startNATSCluster(t, 3)
	pg := startPGPair(t, ctx)
	dbURL := pg.url(t, pg.primary.Port(), pg.standbyPort)
	natsURL := natsURLs(nc.ports())
	// No queue made beforehand: the roles, started together, create the
	// replicated stream and consumer on the new cluster themselves.

	// The writer that gets cut off talks to every server through a proxy.
	var natsProxies []*proxy
	var cutPorts []int
	for _, p := range nc.ports() {
		px := startProxy(t, fmt.Sprintf("127.0.0.1:%d", p))
		natsProxies = append(natsProxies, px)
		cutPorts = append(cutPorts, px.port())
	}
	pgProxies := []*proxy{
		startProxy(t, fmt.Sprintf("127.0.0.1:%d", pg.primary.Port())),
		startProxy(t, fmt.Sprintf("127.0.0.1:%d", pg.standbyPort)),
	}
	proxies := append(append([]*proxy(nil), natsProxies...), pgProxies...)

	common := []string{
		"SUITEGEN_ACK_WAIT=" + clusterAckWait.String(), "SUITEGEN_MAX_DELIVER=" + strconv.Itoa(clusterMaxDeliver),
		"SUITEGEN_QUEUE_REPLICAS=" + strconv.Itoa(clusterReplicas), "SUITEGEN_MODEL=builtin",
	}
	env := append([]string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + dbURL}, common...)
	cutEnv := append([]string{"SUITEGEN_NATS_URL=" + natsURLs(cutPorts),
		"SUITEGEN_DATABASE_URL=" + pg.url(t, pgProxies[0].port(), pgProxies[1].port())}, common...)

	started := time.Now()
	writers := map[string]*fproc{}
	for _, id := range []string{"cw1", "cw2"} {
		writers[id] = startF(t, env, "writer", "--id", id, "--drain-timeout", "10s")
	}
	writers["cw3"] = startF(t, cutEnv, "writer", "--id", "cw3", "--drain-timeout", "10s")
	planner := startF(t, env, "planner", dir, "--run", clusterRun, "--scenarios", strconv.Itoa(clusterScenarios), "--seed", strconv.Itoa(clusterSeed))

	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// count runs one query on the ledger; -1 while it does not answer.
	count := func(q string, args ...any) int {
		qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
		defer qcancel()
		var n int
		if err := pool.QueryRow(qctx, q, args...).Scan(&n); err != nil {
			return -1
		}
		return n
	}
	journalled := func() int { return count(`SELECT count(*) FROM scenarios WHERE run_id = $1`, clusterRun) }

	// The fault schedule, driven by the ledger's progress. Every wait is
	// on an observed condition, bounded by the run's deadline.
	var (
		fmu    sync.Mutex
		faults []clusterFault
		ferr   []string
	)
	inject := func(kind string, at int, detail string) int {
		fmu.Lock()
		defer fmu.Unlock()
		faults = append(faults, clusterFault{Kind: kind, At: at, Since: time.Since(started).Round(time.Millisecond).String(), Detail: detail})
		return len(faults) - 1
	}
	failf := func(format string, args ...any) {
		fmu.Lock()
		defer fmu.Unlock()
		ferr = append(ferr, fmt.Sprintf(format, args...))
	}
	// until polls cond every 100 ms until it holds; false when the run ends
	// first (the planner exited) or the deadline passes.
	until := func(cond func() bool) bool {
		for ctx.Err() == nil && !planner.exited() {
			if cond() {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}
	// recovered waits (in the background) for cond and records the time
	// from the fault as fault i's time to recover.
	var recWG sync.WaitGroup
	recovered := func(i int, from time.Time, what string, cond func() bool) {
		recWG.Add(1)
		go func() {
			defer recWG.Done()
			for ctx.Err() == nil {
				// Read before cond: the planner ends only once every
				// slice is done, so a cond that still fails after it
				// never will.
				over := planner.exited()
				if cond() {
					fmu.Lock()
					faults[i].Recovered = time.Since(from).Round(time.Millisecond).String()
					faults[i].RecoveredWhen = what
					fmu.Unlock()
					return
				}
				if over {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	}
	atLeast := func(n int) func() bool { return func() bool { return journalled() >= n } }
	done := func() int {
		return count(`SELECT count(*) FROM slices WHERE run_id = $1 AND state = 'done'`, clusterRun)
	}
	// holding is a slice the writer has journalled into and not finished.
	holding := func(writer string) string {
		qctx, qcancel := context.WithTimeout(ctx, 3*time.Second)
		defer qcancel()
		var id string
		_ = pool.QueryRow(qctx, `SELECT s.id FROM slices s JOIN scenarios sc ON sc.run_id = s.run_id AND sc.slice_id = s.id
			WHERE s.run_id = $1 AND s.state = 'published' AND sc.writer = $2 LIMIT 1`, clusterRun, writer).Scan(&id)
		return id
	}
	// takenOver: another writer journalled into the slice or finished it.
	takenOver := func(slice, writer string) func() bool {
		return func() bool {
			return count(`SELECT count(*) FROM slices WHERE run_id = $1 AND id = $2 AND state = 'done' AND writer <> $3`, clusterRun, slice, writer) > 0 ||
				count(`SELECT count(*) FROM scenarios WHERE run_id = $1 AND slice_id = $2 AND writer <> $3`, clusterRun, slice, writer) > 0
		}
	}

	// Which writers are at work: the window's cost is measured on them.
	var cw3Cut, cw2Killed atomic.Bool
	var (
		promoted time.Time
		window   clusterWindow
		atWork   []string
	)

	var chaos sync.WaitGroup
	chaos.Add(3)
	// The servers: the stream leader SIGKILLed at 10% and started again
	// once the two others carried the run 10% further; the failover at 50%.
	go func() {
		defer chaos.Done()
		if !until(atLeast(clusterScenarios / 10)) {
			failf("the run ended before the stream leader was killed")
			return
		}
		for _, nd := range nc.nodes {
			if err := nd.healthy(ctx, 2*time.Minute); err != nil {
				failf("before the leader kill: %v", err)
				return
			}
		}
		leader, err := nc.streamLeader(queue.DefaultStream)
		if err != nil {
			failf("jsz: %v", err)
			return
		}
		n := journalled()
		from := time.Now()
		leader.kill()
		i := inject("nats_stream_leader_sigkill", n, "stream leader "+leader.name+" SIGKILLed")
		// Recovered once another server reports itself the stream's
		// leader; a slice finishing after that shows the queue at work.
		recovered(i, from, "a new stream leader on /jsz", func() bool {
			next, err := nc.streamLeader(queue.DefaultStream)
			return err == nil && next != leader
		})
		var next *natsNode
		until(func() bool {
			next, err = nc.streamLeader(queue.DefaultStream)
			return err == nil && next != leader
		})
		if next != nil {
			d := done()
			until(func() bool { return done() > d })
			inject("nats_stream_leader_elected", journalled(), fmt.Sprintf("%s leads; a slice finished %s after the kill", next.name, time.Since(from).Round(time.Millisecond)))
		}
		if !until(atLeast(n + clusterScenarios/10)) {
			failf("the run ended before the killed NATS node was restarted")
			return
		}
		restarted := time.Now()
		if err := nc.start(leader); err != nil {
			failf("%v", err)
			return
		}
		for _, nd := range nc.nodes {
			if err := nd.healthy(ctx, 5*time.Minute); err != nil {
				failf("after the restart: %v", err)
				return
			}
		}
		inject("nats_node_restart", journalled(), fmt.Sprintf("%s started again on its store, every node current after %s", leader.name, time.Since(restarted).Round(time.Millisecond)))

		if !until(atLeast(clusterScenarios / 2)) {
			failf("the run ended before the failover")
			return
		}
		n = journalled()
		working := []string{"cw1"}
		if !cw2Killed.Load() {
			working = append(working, "cw2")
		}
		if !cw3Cut.Load() {
			working = append(working, "cw3")
		}
		from = time.Now()
		if err := pg.killPrimary(); err != nil {
			failf("kill the primary: %v", err)
			return
		}
		i = inject("postgres_primary_sigkill", n, fmt.Sprintf("primary SIGKILLed; no primary for %s", clusterPrimaryWindow))
		recovered(i, from, "a scenario journalled on the new primary", func() bool { return journalled() > n })
		select {
		case <-ctx.Done():
			return
		case <-time.After(clusterPrimaryWindow):
		}
		promoting := time.Now()
		if err := pg.promote(ctx); err != nil {
			failf("failover: %v", err)
			return
		}
		end := time.Now()
		fmu.Lock()
		promoted, atWork = end, working
		window.Without = end.Sub(from).Round(time.Millisecond).String()
		window.Promote = end.Sub(promoting).Round(time.Millisecond).String()
		fmu.Unlock()
		i = inject("postgres_failover", n, fmt.Sprintf("standby promoted %s after the primary died (pg_ctl promote -w: %s)", window.Without, window.Promote))
		recovered(i, end, "a scenario journalled on the new primary", func() bool { return journalled() > n })
	}()
	// The writers, each on its own schedule (the partition lasts an ack
	// wait, longer than the rest of the run): cw3 cut off from every server
	// at 30% while it holds a slice, and let back once another writer took
	// that slice over; cw2 SIGKILLed at 70% while it holds one.
	go func() {
		defer chaos.Done()
		var held string
		if !until(func() bool { return journalled() >= 3*clusterScenarios/10 && holding("cw3") != "" }) {
			failf("the run ended before the partition")
			return
		}
		held = holding("cw3")
		n := journalled()
		from := time.Now()
		cw3Cut.Store(true)
		for _, px := range proxies {
			px.setCut(true)
		}
		i := inject("writer_partition", n, "cw3 cut off from NATS and PostgreSQL holding "+held)
		recovered(i, from, "its slice taken over by another writer", takenOver(held, "cw3"))
		if !until(takenOver(held, "cw3")) {
			failf("slice %s never went to another writer", held)
		}
		for _, px := range proxies {
			px.setCut(false)
		}
		cw3Cut.Store(false)
		inject("writer_partition_restored", journalled(), fmt.Sprintf("cw3 let back after %s", time.Since(from).Round(time.Millisecond)))
	}()
	go func() {
		defer chaos.Done()
		if !until(func() bool { return journalled() >= 7*clusterScenarios/10 && holding("cw2") != "" }) {
			failf("the run ended before the writer kill")
			return
		}
		held := holding("cw2")
		n := journalled()
		from := time.Now()
		cw2Killed.Store(true)
		_ = writers["cw2"].cmd.Process.Signal(syscall.SIGKILL)
		i := inject("writer_sigkill", n, "cw2 SIGKILLed holding "+held)
		recovered(i, from, "its slice taken over by another writer", takenOver(held, "cw2"))
	}()
	chaosDone := make(chan struct{})
	go func() {
		chaos.Wait()
		close(chaosDone)
	}()

	perr := planner.await(35 * time.Minute)
	<-chaosDone
	if perr != nil {
		t.Fatalf("planner: %v\n%s\nfaults: %+v %v", perr, planner.output(), faults, ferr)
	}
	out := t.TempDir()
	rev := start(t, env, "reviewer", "--run", clusterRun, "--out", out)
	if err := rev.wait(t, 5*time.Minute); err != nil {
		t.Fatalf("reviewer: %v\n%s", err, rev.output())
	}
	elapsed := time.Since(started)
	for id, w := range writers {
		if id == "cw2" {
			continue
		}
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
		if err := w.await(time.Minute); err != nil {
			t.Errorf("writer %s did not drain on SIGTERM: %v\n%s", id, err, w.output())
		}
	}
	recWG.Wait()
	for _, e := range ferr {
		t.Error(e)
	}
	if len(faults) < 8 {
		t.Errorf("only %d fault steps happened: %+v", len(faults), faults)
	}
	for _, f := range faults {
		if strings.HasSuffix(f.Kind, "_sigkill") || f.Kind == "writer_partition" || f.Kind == "postgres_failover" {
			if f.Recovered == "" {
				t.Errorf("%s: the run never recovered from it", f.Kind)
			}
		}
	}

	// The suite.
	got := tree(t, filepath.Join(out, "scenarios"))
	if len(got) != clusterScenarios {
		t.Errorf("the suite holds %d scenario files, want %d", len(got), clusterScenarios)
	}
	if d := duplicates(t, got); d > 0 {
		t.Errorf("%d scenarios duplicate another's content", d)
	}
	names, pairs := map[string]string{}, map[string]int{}
	for file, body := range got {
		var sc struct {
			Name    string `json:"name"`
			UseCase string `json:"use_case"`
			Branch  string `json:"branch"`
		}
		if err := json.Unmarshal(body, &sc); err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if other, ok := names[sc.Name]; ok {
			t.Errorf("%s and %s share the name %s", file, other, sc.Name)
		}
		names[sc.Name] = file
		pairs[sc.UseCase+" / "+sc.Branch]++
	}
	if n := count(`SELECT count(*) FROM scenarios WHERE run_id = $1`, clusterRun); n != len(got) {
		t.Errorf("the ledger holds %d scenarios, the suite %d files", n, len(got))
	}
	redelivered := count(`SELECT coalesce(sum(deliveries - 1), 0) FROM slices WHERE run_id = $1 AND deliveries > 1`, clusterRun)
	dead := count(`SELECT count(*) FROM slices WHERE run_id = $1 AND state = 'dead'`, clusterRun)
	if dead != 0 {
		t.Errorf("%d slices dead: an outage spent a slice's deliveries", dead)
	}
	// The window without a primary, from the ledger's own clock (the same
	// host's): each working writer's first scenario journalled after the
	// promotion. Printed, never asserted: the machine is shared.
	window.Dead = dead
	if !promoted.IsZero() {
		window.Back = map[string]string{}
		var first, every time.Duration
		for _, id := range atWork {
			var at *time.Time
			qctx, qcancel := context.WithTimeout(ctx, 10*time.Second)
			err := pool.QueryRow(qctx, `SELECT min(created_at) FROM scenarios WHERE run_id = $1 AND writer = $2 AND created_at >= $3`,
				clusterRun, id, promoted).Scan(&at)
			qcancel()
			if err != nil {
				t.Errorf("%s's first write after the promotion: %v", id, err)
				continue
			}
			if at == nil {
				window.Back[id] = "never"
				continue
			}
			d := at.Sub(promoted)
			window.Back[id] = d.Round(time.Millisecond).String()
			if first == 0 || d < first {
				first = d
			}
			every = max(every, d)
		}
		window.FirstWrite = first.Round(time.Millisecond).String()
		window.EveryWriter = every.Round(time.Millisecond).String()
	}

	// Every file proves again, on the promoted server.
	proveEnv := []string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + dbURL}
	files := make([]string, 0, len(got))
	for file := range got {
		files = append(files, file)
	}
	sort.Strings(files)
	for _, file := range files {
		p := start(t, proveEnv, "suitegen", "prove", dir, filepath.Join(out, "scenarios", file), "--catalogue", filepath.Join(out, "catalogue.json"))
		if err := p.wait(t, 2*time.Minute); err != nil {
			t.Errorf("%s does not prove again: %v\n%s", file, err, p.output())
		}
	}

	// The same suite as a fault-free run of the same seed.
	refStarted := time.Now()
	ref := clusterReference(t, dir)
	refElapsed := time.Since(refStarted)
	same := len(ref) == len(got)
	refPairs := map[string]int{}
	for name, body := range ref {
		if !bytes.Equal(body, got[name]) {
			same = false
			t.Errorf("%s differs from the fault-free run: %s", name, firstDiff(body, got[name]))
		}
		var sc struct {
			UseCase string `json:"use_case"`
			Branch  string `json:"branch"`
		}
		if json.Unmarshal(body, &sc) == nil {
			refPairs[sc.UseCase+" / "+sc.Branch]++
		}
	}
	for k, v := range refPairs {
		if pairs[k] != v {
			t.Errorf("(use case, branch) %s: %d scenarios, the fault-free run %d", k, pairs[k], v)
		}
	}
	// NATS reconnects, as each process logged them.
	reconnects := map[string]int{"planner": strings.Count(planner.output(), "queue: reconnected")}
	for id, w := range writers {
		reconnects[id] = strings.Count(w.output(), "queue: reconnected")
	}
	rep := struct {
		Command     string         `json:"command"`
		Scenarios   int            `json:"scenarios"`
		Elapsed     string         `json:"wall_time"`
		FaultFree   string         `json:"fault_free_wall_time"`
		Redelivered int            `json:"redeliveries"`
		Reconnects  map[string]int `json:"nats_reconnects"`
		Dead        int            `json:"dead_slices"`
		Identical   bool           `json:"identical_to_fault_free_run"`
		Faults      []clusterFault `json:"faults"`
		Window      clusterWindow  `json:"window_without_primary"`
		Load        string         `json:"load_average"`
	}{"make test-cluster", len(got), elapsed.Round(time.Second).String(), refElapsed.Round(time.Second).String(),
		redelivered, reconnects, dead, same, faults, window, loadAverage()}
	b, _ := json.MarshalIndent(rep, "", "  ")
	t.Logf("cluster report:\n%s", b)
	if path := os.Getenv("SUITEGEN_CLUSTER_REPORT"); path != "" {
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Error(err)
		}
	}
	// What the cut-off writer did with its slice once let back.
	var back []string
	for _, line := range strings.Split(writers["cw3"].output(), "\n") {
		if strings.Contains(line, "slice=") {
			back = append(back, line)
		}
	}
	t.Logf("cw3, its slices:\n%s", strings.Join(back[max(0, len(back)-8):], "\n"))
	if t.Failed() {
		t.Logf("planner:\n%s", tail(planner.output()))
		for id, w := range writers {
			t.Logf("writer %s:\n%s", id, tail(w.output()))
		}
	}
}

// clusterReference is the fault-free suite of the same seed, in one process
// on single servers.
func clusterReference(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: clusterScenarios, Writers: 3, Out: out, Seed: clusterSeed,
		NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t), Rounds: 1})
	if err != nil {
		t.Fatalf("the fault-free reference run: %v", err)
	}
	return tree(t, filepath.Join(out, "scenarios"))
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures, as uptime
// prints them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

// tail is the last 60 lines of a process's output.
func tail(s string) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-60):], "\n")
}
