package stack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv("STACK_HELPER_DATADIR") != "" {
		helperPostgres(os.Getenv("STACK_HELPER_DATADIR"))
		return
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) {
		if seedDir != "" {
			os.RemoveAll(filepath.Dir(seedDir))
		}
	}))
}

// serverDir is a new directory the postgres user may reach (as root, the
// server runs as that user): the test's own, searchable by others, removed
// at cleanup. t.TempDir's parent is not searchable, and a data dir under it
// would be placed in the postgres user's home.
func serverDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "stack-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func quiet() PostgresConfig {
	return PostgresConfig{Fast: true, Logger: discard}
}

var (
	seedOnce sync.Once
	seedDir  string
	seedErr  error
)

// clusterDir returns dir/pg holding a copy of a cluster initialised once per
// test binary: initdb dominates start time, and what these tests exercise is
// everything after it (TestPostgresStartStopRestart covers initdb itself).
func clusterDir(t *testing.T) string {
	t.Helper()
	seedOnce.Do(func() {
		var tmp string
		if tmp, seedErr = os.MkdirTemp("", "stack-seed-"); seedErr != nil {
			return
		}
		if seedErr = os.Chmod(tmp, 0o711); seedErr != nil {
			return
		}
		seedDir = filepath.Join(tmp, "pg")
		var p *Postgres
		if p, seedErr = StartPostgres(context.Background(), PostgresConfig{DataDir: seedDir, Fast: true, Logger: discard}); seedErr == nil {
			seedErr = p.Stop(context.Background())
		}
	})
	if seedErr != nil {
		t.Fatalf("seed cluster: %v", seedErr)
	}
	dst := filepath.Join(serverDir(t), "pg")
	if out, err := exec.Command("cp", "-a", seedDir, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy seed cluster: %v\n%s", err, out)
	}
	return dst
}

func startPG(t *testing.T, dir string) *Postgres {
	t.Helper()
	cfg := quiet()
	cfg.DataDir = dir
	p, err := StartPostgres(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func query(t *testing.T, url, sql string, dst ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if len(dst) == 0 {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := conn.QueryRow(ctx, sql).Scan(dst...); err != nil {
		t.Fatal(err)
	}
}

func procUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return -1
}

func TestPostgresStartStopRestart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(serverDir(t), "pg")
	p := startPG(t, dir)
	pid := p.Pid()
	url := p.URL()

	var db, who string
	var super bool
	query(t, p.URL(), `SELECT current_database(), current_user, rolsuper FROM pg_roles WHERE rolname = current_user`, &db, &who, &super)
	if db != "suitegen" || who != "suitegen" || super {
		t.Fatalf("connected to %s as %s (superuser %v), want suitegen as the non-superuser suitegen", db, who, super)
	}
	if !strings.HasPrefix(p.URL(), "postgres://suitegen:") || !strings.Contains(p.URL(), "@127.0.0.1:") {
		t.Fatalf("URL = %s", p.URL())
	}
	fi, err := os.Stat(dir + ".password")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("password file: %v %v", fi, err)
	}
	if os.Geteuid() == 0 {
		if uid := procUID(t, pid); uid == 0 {
			t.Fatal("postgres runs as root")
		}
	}
	query(t, p.URL(), `CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)`)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Fatal("postmaster still alive after Stop")
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("postmaster.pid left after clean stop: %v", err)
	}

	p = startPG(t, dir) // existing cluster: no initdb, data kept
	defer p.Stop(context.Background())
	if p.URL()[:strings.LastIndex(p.URL(), ":")] != url[:strings.LastIndex(url, ":")] {
		t.Errorf("the application role's password changed across a restart: %s, then %s", url, p.URL())
	}
	var n int
	query(t, p.URL(), `SELECT n FROM kept`, &n)
	if n != 42 {
		t.Fatalf("kept.n = %d after restart", n)
	}
}

func TestPostgresDataDirLocked(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	p := startPG(t, dir)
	defer p.Stop(context.Background())
	cfg := quiet()
	cfg.DataDir = dir
	if _, err := StartPostgres(context.Background(), cfg); !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second start on a running data dir: %v, want ErrDataDirInUse", err)
	}
	var one int
	query(t, p.URL(), `SELECT 1`, &one) // the first server is untouched
}

func TestPostgresRefusesForeignNonEmptyDir(t *testing.T) {
	dir := filepath.Join(serverDir(t), "pg")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "precious.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := quiet()
	cfg.DataDir = dir
	if _, err := StartPostgres(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("StartPostgres on a non-empty non-cluster dir: %v", err)
	}
}

// writePid writes a postmaster.pid in the format postgres uses.
func writePid(t *testing.T, dir string, pid int) {
	t.Helper()
	body := fmt.Sprintf("%d\n%s\n1700000000\n5432\n/tmp\n127.0.0.1\n  5432001  0\nready   \n", pid, dir)
	if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestPostgresStalePidFile(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	p := startPG(t, dir)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}

	t.Run("dead pid", func(t *testing.T) {
		gone := exec.Command("true")
		if err := gone.Run(); err != nil {
			t.Fatal(err)
		}
		writePid(t, dir, gone.Process.Pid)
		p := startPG(t, dir)
		if err := p.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("live pid of another program", func(t *testing.T) {
		// A recycled pid: postgres alone would refuse to start over it.
		other := exec.Command("sleep", "60")
		if err := other.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
		writePid(t, dir, other.Process.Pid)
		p := startPG(t, dir)
		if err := p.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := other.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("the unrelated process was harmed: %v", err)
		}
	})
	t.Run("garbage", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(dir, "postmaster.pid"), []byte("nonsense"), 0o600); err != nil {
			t.Fatal(err)
		}
		p := startPG(t, dir)
		if err := p.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// A server whose owner died (lock released) but which kept running is an
// orphan: the next start stops it and starts its own.
func TestPostgresStopsOrphanedServer(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	orphan := startPG(t, dir)
	orphanPid := orphan.Pid()
	orphan.lock.Close() // what the kernel does when the owning process dies
	orphan.lock = nil

	p := startPG(t, dir)
	defer p.Stop(context.Background())
	select {
	case <-orphan.proc.done:
	case <-time.After(5 * time.Second):
		t.Fatal("orphaned postmaster still running")
	}
	if p.Pid() == orphanPid {
		t.Fatal("new server has the orphan's pid")
	}
	if err := orphan.Stop(context.Background()); err == nil {
		t.Fatal("Stop of a server stopped by someone else reported no error")
	}
	var one int
	query(t, p.URL(), `SELECT 1`, &one)
}

// SIGKILLed postmaster: pid file and possibly shared memory left behind.
func TestPostgresRecoversFromKilledServer(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	// Durable settings: with Fast, a commit may still sit in WAL buffers
	// when the server is killed.
	p, err := StartPostgres(context.Background(), PostgresConfig{DataDir: dir, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	query(t, p.URL(), `CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)`)
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.proc.done
	if err := p.Stop(context.Background()); err == nil {
		t.Fatal("Stop after the server was killed reported no error")
	}
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); err != nil {
		t.Fatalf("expected a stale postmaster.pid: %v", err)
	}
	p = startPG(t, dir)
	defer p.Stop(context.Background())
	var n int
	query(t, p.URL(), `SELECT n FROM kept`, &n)
	if n != 7 {
		t.Fatalf("kept.n = %d after crash recovery", n)
	}
}

// helperPostgres runs in a child test binary: start a server, report its
// pid, and wait to be killed.
func helperPostgres(dir string) {
	p, err := StartPostgres(context.Background(), PostgresConfig{DataDir: dir, Fast: true, Logger: discard})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("PID", p.Pid(), p.socketDir)
	time.Sleep(time.Minute)
	os.Exit(2)
}

func TestPostgresDiesWithParent(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STACK_HELPER_DATADIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "PID ") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper said %q (%v)", line, err)
	}
	f := strings.Fields(line)
	pid, _ := strconv.Atoi(f[1])
	t.Cleanup(func() { os.RemoveAll(f[2]) })
	if !alive(pid) {
		t.Fatalf("postgres %d not running", pid)
	}
	_ = cmd.Process.Kill() // SIGKILL: no chance to clean up
	_ = cmd.Wait()
	if !waitGone(context.Background(), pid, 15*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("postgres %d outlived its SIGKILLed parent", pid)
	}
}

func TestPostgresConfigValidation(t *testing.T) {
	if _, err := StartPostgres(context.Background(), PostgresConfig{}); err == nil || !strings.Contains(err.Error(), "DataDir") {
		t.Fatalf("empty config: %v, want an error naming DataDir", err)
	}
	if _, err := StartPostgres(context.Background(), PostgresConfig{DataDir: t.TempDir(), Port: 70000}); err == nil || !strings.Contains(err.Error(), "Port") {
		t.Fatalf("bad port: %v, want an error naming Port", err)
	}
	if _, err := findBinDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "BinDir") {
		t.Fatalf("bad BinDir: %v", err)
	}
	if dir, err := findBinDir(""); err != nil || !strings.HasSuffix(dir, "bin") {
		t.Fatalf("findBinDir = %q, %v", dir, err)
	}
}
