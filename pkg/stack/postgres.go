package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrDataDirInUse is returned by StartPostgres when another live process (or
// another Postgres in this process) holds the data directory's lock.
var ErrDataDirInUse = errors.New("stack: postgres data directory in use")

// PostgresConfig configures a PostgreSQL server run as our child process.
type PostgresConfig struct {
	// DataDir is the cluster directory; initdb runs there when it is empty.
	// Required.
	DataDir string
	// Port to listen on (127.0.0.1 only); 0 picks a free port.
	Port int
	// Database is created after start when missing, and is the database in
	// URL; default "suitegen".
	Database string
	// BinDir holds initdb and postgres; default: `pg_config --bindir`, then
	// PATH, then the highest /usr/lib/postgresql/*/bin.
	BinDir string
	// Fast trades durability for speed (fsync, synchronous_commit and
	// full_page_writes off): for tests and throwaway clusters only.
	Fast bool
	// MaxConnections is postgres's max_connections; default 200.
	MaxConnections int
	// StartTimeout bounds the wait for the server to accept connections;
	// default 30s.
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits after SIGINT before SIGKILL;
	// default 15s.
	StopTimeout time.Duration
	// Logger receives lifecycle messages. The server's own output is kept in
	// memory (see Log) and quoted in start errors. Default: slog.Default().
	Logger *slog.Logger
}

func (c *PostgresConfig) validate() error {
	if c.DataDir == "" {
		return errors.New("stack: PostgresConfig.DataDir is required")
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return fmt.Errorf("stack: PostgresConfig.DataDir: %w", err)
	}
	c.DataDir = abs
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("stack: PostgresConfig.Port %d out of range", c.Port)
	}
	if c.Database == "" {
		c.Database = "suitegen"
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("stack: PostgresConfig.MaxConnections %d must not be negative", c.MaxConnections)
	}
	if c.MaxConnections == 0 {
		c.MaxConnections = 200
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 30 * time.Second
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = 15 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Postgres is a running PostgreSQL server owned by this process.
type Postgres struct {
	cfg       PostgresConfig
	port      int
	socketDir string
	lock      *os.File
	proc      *child
	out       *tail

	stopOnce sync.Once
	stopErr  error
}

// StartPostgres initialises cfg.DataDir when empty, clears a stale server left
// by a killed run, starts postgres as our child and waits until it accepts
// connections and cfg.Database exists.
//
// Run as root, the server runs as the "postgres" system user: the data and
// socket directories are chowned to it, and any ancestor of the data directory
// it cannot traverse gets the search bit (o+x, not read) added, with a warning
// logged for each.
func StartPostgres(ctx context.Context, cfg PostgresConfig) (*Postgres, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger.With("component", "postgres", "data_dir", cfg.DataDir)

	if err := os.MkdirAll(filepath.Dir(cfg.DataDir), 0o755); err != nil {
		return nil, fmt.Errorf("stack: create parent of data dir: %w", err)
	}
	lock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	p := &Postgres{cfg: cfg, lock: lock, out: newTail(32 << 10)}
	ok := false
	defer func() {
		if !ok {
			p.release()
		}
	}()

	bin, err := findBinDir(cfg.BinDir)
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	if err := prepareDataDir(cfg.DataDir, cred, log); err != nil {
		return nil, err
	}
	if err := initdb(ctx, bin, cfg.DataDir, cred, log); err != nil {
		return nil, err
	}
	if err := clearStale(ctx, cfg.DataDir, log); err != nil {
		return nil, err
	}
	if err := p.run(ctx, bin, cred, log); err != nil {
		return nil, err
	}
	if err := p.ensureDatabase(ctx); err != nil {
		_ = p.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	ok = true
	log.Info("postgres started", "port", p.port, "pid", p.proc.cmd.Process.Pid)
	return p, nil
}

// URL is the connection URL of cfg.Database, e.g.
// postgres://postgres@127.0.0.1:5432/suitegen?sslmode=disable.
func (p *Postgres) URL() string { return p.URLFor(p.cfg.Database) }

// URLFor is the connection URL of another database on the same server.
func (p *Postgres) URLFor(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the TCP port the server listens on.
func (p *Postgres) Port() int { return p.port }

// Pid is the postmaster's process id.
func (p *Postgres) Pid() int { return p.proc.cmd.Process.Pid }

// Log returns the tail of the server's output, for diagnostics.
func (p *Postgres) Log() string { return p.out.String() }

// Stop shuts the server down: SIGINT (fast shutdown: sessions are ended,
// nothing is lost), then SIGKILL if it has not exited within StopTimeout or
// before ctx is done. It releases the data directory. Safe to call twice; an
// error reports a server that had already died or would not stop cleanly.
func (p *Postgres) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		defer p.release()
		select {
		case <-p.proc.done:
			p.stopErr = fmt.Errorf("stack: postgres exited before Stop: %v\n%s", p.proc.err, p.out.String())
			return
		default:
		}
		_ = p.proc.cmd.Process.Signal(syscall.SIGINT)
		timer := time.NewTimer(p.cfg.StopTimeout)
		defer timer.Stop()
		select {
		case <-p.proc.done:
			if p.proc.err != nil {
				p.stopErr = fmt.Errorf("stack: postgres shutdown: %w", p.proc.err)
			}
			return
		case <-timer.C:
		case <-ctx.Done():
		}
		_ = p.proc.cmd.Process.Kill()
		<-p.proc.done
		p.stopErr = fmt.Errorf("stack: postgres did not stop within %s, killed", p.cfg.StopTimeout)
	})
	return p.stopErr
}

func (p *Postgres) release() {
	if p.socketDir != "" {
		_ = os.RemoveAll(p.socketDir)
	}
	if p.lock != nil {
		_ = p.lock.Close() // closing drops the flock
		p.lock = nil
	}
}

// run starts the postmaster, retrying the few failures that a retry cures:
// a randomly chosen port taken in the meantime, or shared memory still held
// by the dying backends of a server we just stopped.
func (p *Postgres) run(ctx context.Context, bin string, cred *syscall.Credential, log *slog.Logger) error {
	deadline := time.Now().Add(p.cfg.StartTimeout)
	sock, err := os.MkdirTemp("", "sgpg-") // short: socket paths are limited to ~107 bytes
	if err != nil {
		return fmt.Errorf("stack: create socket dir: %w", err)
	}
	p.socketDir = sock
	if cred != nil {
		if err := os.Chown(sock, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("stack: chown socket dir: %w", err)
		}
	}
	for attempt := 1; ; attempt++ {
		port := p.cfg.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return err
			}
		}
		p.port = port
		p.out.Reset()
		err := p.startOnce(ctx, bin, cred, deadline)
		if err == nil {
			return nil
		}
		logText := p.out.String()
		retry := strings.Contains(logText, "pre-existing shared memory block") ||
			strings.Contains(logText, "postmaster.pid\" already exists") ||
			(p.cfg.Port == 0 && strings.Contains(logText, "could not bind"))
		if !retry || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		log.Debug("postgres start failed, retrying", "attempt", attempt, "err", err)
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *Postgres) startOnce(ctx context.Context, bin string, cred *syscall.Credential, deadline time.Time) error {
	args := []string{
		"-D", p.cfg.DataDir,
		"-k", p.socketDir,
		"-h", "127.0.0.1",
		"-p", strconv.Itoa(p.port),
		"-c", "max_connections=" + strconv.Itoa(p.cfg.MaxConnections),
	}
	if p.cfg.Fast {
		args = append(args,
			"-c", "fsync=off",
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
			"-c", "shared_buffers=32MB",
		)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.Dir = p.cfg.DataDir
	cmd.Env = childEnv()
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	// Backends inherit the output pipe; do not let a straggler hold Wait forever.
	cmd.WaitDelay = 5 * time.Second
	// SIGTERM (smart shutdown) when we die: no clients are left by then, so
	// it exits promptly, and a SIGKILLed parent leaves no server behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGTERM}
	proc, err := startChild(cmd)
	if err != nil {
		return fmt.Errorf("stack: start postgres: %w", err)
	}
	p.proc = proc
	if err := p.waitReady(ctx, deadline); err != nil {
		_ = cmd.Process.Kill()
		<-proc.done
		return err
	}
	return nil
}

func (p *Postgres) waitReady(ctx context.Context, deadline time.Time) error {
	var last error
	for {
		select {
		case <-p.proc.done:
			return fmt.Errorf("stack: postgres exited during start: %v\n%s", p.proc.err, p.out.String())
		default:
		}
		attempt, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgx.Connect(attempt, p.URLFor("postgres"))
		cancel()
		if err == nil {
			_ = conn.Close(ctx)
			return nil
		}
		last = err
		if ctx.Err() != nil {
			return fmt.Errorf("stack: waiting for postgres: %w", ctx.Err())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("stack: postgres not ready within %s: %w\n%s", p.cfg.StartTimeout, last, p.out.String())
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-p.proc.done:
		case <-ctx.Done():
		}
	}
}

func (p *Postgres) ensureDatabase(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, p.URLFor("postgres"))
	if err != nil {
		return fmt.Errorf("stack: connect to postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, p.cfg.Database).Scan(&exists); err != nil {
		return fmt.Errorf("stack: look up database %q: %w", p.cfg.Database, err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{p.cfg.Database}.Sanitize())
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: someone beat us to it
		err = nil
	}
	if err != nil {
		return fmt.Errorf("stack: create database %q: %w", p.cfg.Database, err)
	}
	return nil
}

func initdb(ctx context.Context, bin, dataDir string, cred *syscall.Credential, log *slog.Logger) error {
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return fmt.Errorf("stack: read data dir: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("stack: data dir %s is not empty and holds no cluster (no PG_VERSION); refusing to initdb over it", dataDir)
	}
	log.Info("initialising cluster")
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", dataDir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C",
		"--no-sync", "--no-instructions")
	cmd.Dir = dataDir
	cmd.Env = childEnv()
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	proc, err := startChild(cmd)
	if err != nil {
		return fmt.Errorf("stack: start initdb: %w", err)
	}
	<-proc.done
	if proc.err != nil {
		return fmt.Errorf("stack: initdb: %w\n%s", proc.err, out.String())
	}
	return nil
}

// childEnv is our environment minus variables that would steer the server or
// its tools, with messages in English so failures can be recognised.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("stack: find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func (t *tail) Reset() {
	t.mu.Lock()
	t.buf = t.buf[:0]
	t.mu.Unlock()
}
