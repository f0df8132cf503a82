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

	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/scram"
)

// ErrDataDirInUse is returned by StartPostgres when another live process (or
// another Postgres in this process) holds the data directory's lock.
var ErrDataDirInUse = errors.New("stack: postgres data directory in use")

// superuser is the cluster's bootstrap superuser (initdb -U).
const superuser = "postgres"

// PostgresConfig configures a PostgreSQL server run as our child process.
type PostgresConfig struct {
	// DataDir is where the cluster lives; initdb runs there when it is
	// empty. Beside it go DataDir+".lock" and DataDir+".password" (the
	// application role's password, mode 0600). Run as root, when the
	// postgres user cannot reach DataDir without a directory on the way
	// being opened to others, the cluster goes under the postgres user's
	// home instead and DataDir becomes a symbolic link to it; starting such
	// a server removes the clusters there whose DataDir is gone. Required.
	DataDir string
	// Port to listen on (127.0.0.1 only); 0 picks a free port.
	Port int
	// Database is created after start when missing, owned by AppRole and set
	// up for least privilege (migrate.Setup), and is the database in URL;
	// default "suitegen".
	Database string
	// AppRole is the login role URL connects as: no superuser, no CREATEROLE,
	// no CREATEDB; it owns Database. Default "suitegen".
	AppRole string
	// URLFile, when set, receives URL (mode 0600) at every start, for
	// processes that read it with --database-url-file.
	URLFile string
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
	if c.AppRole == "" {
		c.AppRole = "suitegen"
	}
	if c.AppRole == superuser || strings.HasPrefix(c.AppRole, "pg_") {
		return fmt.Errorf("stack: PostgresConfig.AppRole %q is reserved", c.AppRole)
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
//
// Nobody reaches it without a password: the application role and the world
// roles log in over 127.0.0.1 with SCRAM, and the superuser only through a
// Unix socket in a directory no one else may enter, with a password made
// afresh at every start and never written down.
type Postgres struct {
	cfg        PostgresConfig
	clusterDir string // where the data is: DataDir, or where its link points
	port       int
	socketDir  string
	tempSocket bool // socketDir is ours to remove at stop
	lock       *os.File
	homeLock   *os.File // held on a cluster placed in the server user's home
	proc       *child
	out        *tail
	appPass    string
	superPass  string // empty until the server is set up

	stopOnce sync.Once
	stopErr  error
}

// StartPostgres initialises the cluster when there is none, clears a stale
// server left by a killed run, starts postgres as our child, and sets it up:
// authentication (see Postgres), the application role, the database and
// migrate.Setup.
//
// Run as root, the server runs as the "postgres" system user. No directory
// outside DataDir is changed: when the postgres user cannot already reach
// DataDir, the cluster is placed under its home (see PostgresConfig.DataDir).
func StartPostgres(ctx context.Context, cfg PostgresConfig) (*Postgres, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger.With("component", "postgres", "data_dir", cfg.DataDir)

	if err := os.MkdirAll(filepath.Dir(cfg.DataDir), 0o700); err != nil {
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
	if p.clusterDir, p.homeLock, err = placeCluster(cfg.DataDir, cred, log); err != nil {
		return nil, err
	}
	if p.socketDir, p.tempSocket, err = makeSocketDir(p.clusterDir, cred); err != nil {
		return nil, err
	}
	if err := initdb(ctx, bin, p.clusterDir, cred, log); err != nil {
		return nil, err
	}
	if p.appPass, err = readOrMakePassword(cfg.DataDir + ".password"); err != nil {
		return nil, err
	}
	if err := writeHBA(p.clusterDir, cred, true); err != nil {
		return nil, err
	}
	if err := clearStale(ctx, p.clusterDir, log); err != nil {
		return nil, err
	}
	if err := p.run(ctx, bin, cred, log); err != nil {
		return nil, err
	}
	if err := p.setUp(ctx, cred, log); err != nil {
		_ = p.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	if cfg.URLFile != "" {
		if err := writeSecret(cfg.URLFile, p.URL()+"\n"); err != nil {
			_ = p.Stop(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	ok = true
	log.Info("postgres started", "port", p.port, "pid", p.proc.cmd.Process.Pid, "cluster", p.clusterDir)
	return p, nil
}

// URL is the application role's URL of cfg.Database, password included,
// e.g. postgres://suitegen:…@127.0.0.1:5432/suitegen?sslmode=disable.
func (p *Postgres) URL() string { return p.URLFor(p.cfg.Database) }

// URLFor is the application role's URL of another database on the server.
func (p *Postgres) URLFor(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(p.cfg.AppRole, p.appPass),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// AdminURL is the superuser's URL of a database, through the private
// socket: for setting up databases and roles, in this process only.
func (p *Postgres) AdminURL(database string) string {
	user := url.User(superuser)
	if p.superPass != "" {
		user = url.UserPassword(superuser, p.superPass)
	}
	q := url.Values{"host": {p.socketDir}, "port": {strconv.Itoa(p.port)}, "sslmode": {"disable"}}
	u := url.URL{Scheme: "postgres", User: user, Path: "/" + database, RawQuery: q.Encode()}
	return u.String()
}

// AppRole is the role URL connects as.
func (p *Postgres) AppRole() string { return p.cfg.AppRole }

// ClusterDir is the directory the data is in: DataDir, or where DataDir
// links to.
func (p *Postgres) ClusterDir() string { return p.clusterDir }

// Port is the TCP port the server listens on.
func (p *Postgres) Port() int { return p.port }

// Pid is the postmaster's process id.
func (p *Postgres) Pid() int { return p.proc.cmd.Process.Pid }

// Log returns the tail of the server's output, for diagnostics.
func (p *Postgres) Log() string { return p.out.String() }

// ErrKilled is a Stop that had to SIGKILL the postmaster: the data directory
// is intact but the next start replays the WAL, as after a crash.
var ErrKilled = errors.New("stack: postgres did not stop in time and was killed")

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
		p.stopErr = fmt.Errorf("%w (waited %s)", ErrKilled, p.cfg.StopTimeout)
	})
	return p.stopErr
}

func (p *Postgres) release() {
	if p.tempSocket && p.socketDir != "" {
		_ = os.RemoveAll(p.socketDir)
	}
	if p.homeLock != nil {
		_ = p.homeLock.Close()
		p.homeLock = nil
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
	for attempt := 1; ; attempt++ {
		port := p.cfg.Port
		if port == 0 {
			var err error
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
		"-D", p.clusterDir,
		"-k", p.socketDir,
		"-h", "127.0.0.1",
		"-p", strconv.Itoa(p.port),
		"-c", "unix_socket_permissions=0700",
		"-c", "password_encryption=scram-sha-256",
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
	cmd.Dir = p.clusterDir
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
		conn, err := pgx.Connect(attempt, p.AdminURL("postgres"))
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

// setUp runs while the private socket still lets the superuser in without a
// password: a new superuser password, the application role, the database
// and its least-privilege setup; then the password is required.
func (p *Postgres) setUp(ctx context.Context, cred *syscall.Credential, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.StartTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, p.AdminURL("postgres"))
	if err != nil {
		return fmt.Errorf("stack: connect to postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))

	super, err := scram.Password()
	if err != nil {
		return err
	}
	if err := setPassword(ctx, conn, "ALTER ROLE "+ident(superuser), super); err != nil {
		return fmt.Errorf("stack: superuser password: %w", err)
	}
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, p.cfg.AppRole).Scan(&exists); err != nil {
		return fmt.Errorf("stack: look up role %q: %w", p.cfg.AppRole, err)
	}
	verb := "CREATE ROLE "
	if exists {
		verb = "ALTER ROLE "
	}
	if err := setPassword(ctx, conn, verb+ident(p.cfg.AppRole)+" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS", p.appPass); err != nil {
		return fmt.Errorf("stack: role %q: %w", p.cfg.AppRole, err)
	}
	legacy, err := p.ensureDatabase(ctx, conn)
	if err != nil {
		return err
	}
	db, err := pgx.Connect(ctx, p.AdminURL(p.cfg.Database))
	if err != nil {
		return fmt.Errorf("stack: connect to %q: %w", p.cfg.Database, err)
	}
	defer db.Close(context.WithoutCancel(ctx))
	if legacy {
		log.Warn("database made by an older suitegen as the superuser: handing its ledger to the application role and dropping its worlds (rebuilt on first use)", "database", p.cfg.Database)
		if _, err := db.Exec(ctx, legacySQL(p.cfg.AppRole)); err != nil {
			return fmt.Errorf("stack: hand %q to %q: %w", p.cfg.Database, p.cfg.AppRole, err)
		}
	}
	if err := migrate.Setup(ctx, db, p.cfg.Database, p.cfg.AppRole); err != nil {
		return fmt.Errorf("stack: %w", err)
	}
	if err := writeHBA(p.clusterDir, cred, false); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		return fmt.Errorf("stack: reload pg_hba.conf: %w", err)
	}
	p.superPass = super
	return nil
}

// ensureDatabase creates the database owned by the application role. A
// database another role owns was made by an older suitegen that ran as the
// superuser: it is handed over, and legacy says so.
func (p *Postgres) ensureDatabase(ctx context.Context, conn *pgx.Conn) (legacy bool, err error) {
	var owner string
	err = conn.QueryRow(ctx, `SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = $1`, p.cfg.Database).Scan(&owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		_, err = conn.Exec(ctx, "CREATE DATABASE "+ident(p.cfg.Database)+" OWNER "+ident(p.cfg.AppRole))
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P04" { // duplicate_database: someone beat us to it
			err = nil
		}
		if err != nil {
			return false, fmt.Errorf("stack: create database %q: %w", p.cfg.Database, err)
		}
		return false, nil
	case err != nil:
		return false, fmt.Errorf("stack: look up database %q: %w", p.cfg.Database, err)
	case owner == p.cfg.AppRole:
		return false, nil
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+ident(p.cfg.Database)+" OWNER TO "+ident(p.cfg.AppRole)); err != nil {
		return false, fmt.Errorf("stack: hand database %q to %q: %w", p.cfg.Database, p.cfg.AppRole, err)
	}
	return true, nil
}

// legacySQL hands what an older suitegen made as the superuser in schema
// public (the ledger) to the application role, and drops that version's
// worlds, whose copies switched roles inside the superuser's session: their
// schemas, their NOLOGIN roles and their markers. Worlds are rebuilt from
// the ledger's contracts on first use.
func legacySQL(app string) string {
	return fmt.Sprintf(`DO $legacy$
DECLARE r record;
BEGIN
    FOR r IN SELECT c.oid::regclass AS obj, c.relkind FROM pg_class c
             WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
               AND c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
               AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                               AND d.objid = c.oid AND d.deptype IN ('a', 'i')) LOOP
        EXECUTE format('ALTER %%s %%s OWNER TO %%I', CASE r.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
            WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, r.obj, %[1]s);
    END LOOP;
    FOR r IN SELECT p.oid::regprocedure AS obj FROM pg_proc p
             WHERE p.pronamespace = 'public'::regnamespace
               AND p.proowner = (SELECT oid FROM pg_roles WHERE rolname = current_user) LOOP
        EXECUTE format('ALTER ROUTINE %%s OWNER TO %%I', r.obj, %[1]s);
    END LOOP;
    FOR r IN SELECT nspname FROM pg_namespace WHERE nspname ~ '^w_[0-9a-f]{16}(_b)?$' LOOP
        EXECUTE format('DROP SCHEMA %%I CASCADE', r.nspname);
    END LOOP;
    IF to_regclass('public.suitegen_worlds') IS NOT NULL THEN
        DELETE FROM public.suitegen_worlds;
    END IF;
    FOR r IN SELECT rolname FROM pg_roles WHERE rolname ~ '^w_[0-9a-f]{16}_r$' AND NOT rolcanlogin LOOP
        BEGIN
            EXECUTE format('DROP ROLE %%I', r.rolname);
        EXCEPTION WHEN dependent_objects_still_exist THEN
            NULL; -- still used in another database: left alone
        END;
    END LOOP;
END $legacy$`, quoteLiteral(app))
}

// setPassword runs stmt + " PASSWORD '<verifier of password>'": the server
// (and its log) sees a SCRAM verifier, never the password.
func setPassword(ctx context.Context, conn *pgx.Conn, stmt, password string) error {
	v, err := scram.Verifier(password)
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, stmt+" PASSWORD "+quoteLiteral(v))
	return err
}

func initdb(ctx context.Context, bin, dataDir string, cred *syscall.Credential, log *slog.Logger) error {
	if _, err := os.Stat(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stack: read data dir: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("stack: data dir %s is not empty and holds no cluster (no PG_VERSION); refusing to initdb over it", dataDir)
	}
	log.Info("initialising cluster")
	var out bytes.Buffer
	// pg_hba.conf is rewritten before every start (writeHBA); these are
	// only what initdb writes in the meantime.
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", dataDir, "-U", superuser, "--auth-local=peer", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C",
		"--no-sync", "--no-instructions")
	cmd.Dir = filepath.Dir(dataDir)
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

// writeHBA writes pg_hba.conf. The superuser is refused on TCP and reaches
// the server only through the private socket; everyone else logs in over
// 127.0.0.1 with SCRAM. While setting up, the socket lets the superuser in
// without a password (only the server's user and root can enter its
// directory); afterwards it asks for the password set up made.
func writeHBA(dataDir string, cred *syscall.Credential, settingUp bool) error {
	local := "scram-sha-256"
	if settingUp {
		local = "trust"
	}
	conf := fmt.Sprintf(`# Written by suitegen at every start; changes here are lost.
local all %[1]s %[2]s
host  all %[1]s 127.0.0.1/32 reject
host  all all 127.0.0.1/32 scram-sha-256
`, superuser, local)
	path := filepath.Join(dataDir, "pg_hba.conf")
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(conf), 0o600); err != nil {
		return fmt.Errorf("stack: write pg_hba.conf: %w", err)
	}
	if cred != nil {
		if err := os.Lchown(tmp, int(cred.Uid), int(cred.Gid)); err != nil {
			return fmt.Errorf("stack: chown pg_hba.conf: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("stack: write pg_hba.conf: %w", err)
	}
	return nil
}

// readOrMakePassword returns the password kept in path, making one (mode
// 0600) when there is none, so servers restarted on the same data keep
// accepting the URLs processes already hold.
func readOrMakePassword(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if pw := strings.TrimSpace(string(b)); pw != "" {
			return pw, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("stack: read %s: %w", path, err)
	}
	pw, err := scram.Password()
	if err != nil {
		return "", err
	}
	if err := writeSecret(path, pw+"\n"); err != nil {
		return "", err
	}
	return pw, nil
}

// writeSecret writes a file only its owner may read, replacing any other.
func writeSecret(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("stack: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("stack: write %s: %w", path, err)
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return fmt.Errorf("stack: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("stack: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("stack: write %s: %w", path, err)
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

func ident(s string) string { return pgx.Identifier{s}.Sanitize() }

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

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
