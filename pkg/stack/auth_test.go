package stack

import (
	"context"
	"errors"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connectErr tries a connection and returns why it failed (nil if it did
// not).
func connectErr(t *testing.T, raw string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, raw)
	if err == nil {
		conn.Close(ctx)
	}
	return err
}

func withUser(t *testing.T, raw, name, password string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if password == "" {
		u.User = url.User(name)
	} else {
		u.User = url.UserPassword(name, password)
	}
	return u.String()
}

// Nobody reaches the server without a password: not the superuser over
// TCP (with or without its password), not the application role with a
// wrong one, not anyone on the socket but the superuser with its password.
func TestPostgresAskForPasswords(t *testing.T) {
	t.Parallel()
	p := startPG(t, clusterDir(t))
	defer p.Stop(context.Background())

	var super bool
	query(t, p.AdminURL("suitegen"), `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`, &super)
	if !super {
		t.Fatal("AdminURL is not a superuser's")
	}
	admin, _ := url.Parse(p.AdminURL("postgres"))
	superPass, _ := admin.User.Password()
	appPass, _ := url.Parse(p.URL())
	pw, _ := appPass.User.Password()

	tcp := p.URL()
	for what, raw := range map[string]string{
		"superuser over TCP, no password":      withUser(t, tcp, "postgres", ""),
		"superuser over TCP, its password":     withUser(t, tcp, "postgres", superPass),
		"application role, no password":        withUser(t, tcp, "suitegen", ""),
		"application role, wrong password":     withUser(t, tcp, "suitegen", pw+"x"),
		"superuser on the socket, no password": withUser(t, p.AdminURL("postgres"), "postgres", ""),
		"application role on the socket":       withUser(t, p.AdminURL("postgres"), "suitegen", pw),
	} {
		err := connectErr(t, raw)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || (pe.Code != "28P01" && pe.Code != "28000") {
			t.Errorf("%s: %v, want an authentication failure", what, err)
		}
	}
	// The socket's directory is the server user's alone.
	fi, err := os.Stat(p.socketDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket dir %s: %v %v, want mode 0700", p.socketDir, fi, err)
	}
	hba, err := os.ReadFile(filepath.Join(p.ClusterDir(), "pg_hba.conf"))
	if err != nil || strings.Contains(string(hba), "trust") {
		t.Errorf("pg_hba.conf after start: %v\n%s", err, hba)
	}
}

// The URL file holds the application role's URL, for the owner alone.
func TestPostgresWritesURLFile(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	cfg := quiet()
	cfg.DataDir = dir
	cfg.URLFile = filepath.Join(filepath.Dir(dir), "database-url")
	p, err := StartPostgres(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(context.Background())
	b, err := os.ReadFile(cfg.URLFile)
	if err != nil || strings.TrimSpace(string(b)) != p.URL() {
		t.Fatalf("URL file holds %q (%v), want %q", b, err, p.URL())
	}
	if fi, _ := os.Stat(cfg.URLFile); fi.Mode().Perm() != 0o600 {
		t.Fatalf("URL file mode %v", fi.Mode())
	}
}

// Run as root with a state dir the postgres user cannot reach, the cluster
// goes to that user's home and no directory above the state dir changes.
func TestPostgresPlacedInServerHomeAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root hands the server to the postgres user")
	}
	t.Parallel()
	private, err := os.MkdirTemp("", "stack-private-") // 0700: closed to postgres
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(private) })
	state := filepath.Join(private, "home", "state")
	if err := os.MkdirAll(state, 0o700); err != nil {
		t.Fatal(err)
	}
	modes := map[string]os.FileMode{}
	for d := state; d != "/"; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		modes[d] = fi.Mode()
	}
	dataDir := filepath.Join(state, "pg")
	t.Cleanup(func() {
		if target, err := os.Readlink(dataDir); err == nil {
			os.RemoveAll(filepath.Dir(target))
		}
	})
	cfg := quiet()
	cfg.DataDir = dataDir
	p, err := StartPostgres(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var one int
	query(t, p.URL(), `SELECT 1`, &one)
	pgUser, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.ClusterDir(), filepath.Join(pgUser.HomeDir, "suitegen")+"/") {
		t.Errorf("cluster in %s, want under %s/suitegen", p.ClusterDir(), pgUser.HomeDir)
	}
	if target, err := os.Readlink(dataDir); err != nil || target != p.ClusterDir() {
		t.Errorf("data dir link: %q, %v", target, err)
	}
	for d, m := range modes {
		if fi, err := os.Stat(d); err != nil || fi.Mode() != m {
			t.Errorf("%s changed from %v to %v (%v)", d, m, fi.Mode(), err)
		}
	}
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Started again, it follows the link to the same cluster.
	p2, err := StartPostgres(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Stop(context.Background())
	if p2.ClusterDir() != p.ClusterDir() {
		t.Errorf("restart used %s, not %s", p2.ClusterDir(), p.ClusterDir())
	}
	var uid int
	st, _ := os.Stat(p2.ClusterDir())
	uid = int(st.Sys().(*syscall.Stat_t).Uid)
	if strconv.Itoa(uid) != pgUser.Uid {
		t.Errorf("cluster owned by uid %d, want postgres", uid)
	}
}

// A database an older suitegen made as the superuser (its ledger owned by
// postgres, a world whose role never logs in) is handed to the
// application role, and the old world is dropped.
func TestPostgresUpgradesSuperuserDatabase(t *testing.T) {
	t.Parallel()
	dir := clusterDir(t)
	p := startPG(t, dir)
	admin := p.AdminURL("suitegen")
	query(t, p.AdminURL("postgres"), `ALTER DATABASE suitegen OWNER TO postgres`)
	query(t, admin, `CREATE TABLE runs (id text PRIMARY KEY, n serial);
INSERT INTO runs (id) VALUES ('old-run');
CREATE FUNCTION bump(int) RETURNS int LANGUAGE sql AS 'SELECT $1 + 1';
CREATE TABLE suitegen_worlds (schema text PRIMARY KEY, contract_sha256 text NOT NULL, world_sha256 text NOT NULL);
CREATE SCHEMA w_0123456789abcdef; CREATE TABLE w_0123456789abcdef.orders (id text);
CREATE SCHEMA w_0123456789abcdef_b;
CREATE ROLE w_0123456789abcdef_r NOLOGIN;
GRANT USAGE ON SCHEMA w_0123456789abcdef TO w_0123456789abcdef_r;
INSERT INTO suitegen_worlds VALUES ('w_0123456789abcdef', 'c', 'w')`)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	p = startPG(t, dir)
	defer p.Stop(context.Background())
	admin = p.AdminURL("suitegen")
	var id string
	var n, next, worlds int
	query(t, p.URL(), `SELECT id, n, bump(n), (SELECT count(*) FROM suitegen_worlds) FROM runs`, &id, &n, &next, &worlds)
	if id != "old-run" || next != n+1 || worlds != 0 {
		t.Fatalf("ledger after the upgrade: %s %d %d, %d worlds", id, n, next, worlds)
	}
	query(t, p.URL(), `INSERT INTO runs (id) VALUES ('new-run')`) // the sequence moved with its table
	var schemas, roles int
	var owner string
	query(t, admin, `SELECT (SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'w\_0123456789abcdef%'),
		(SELECT count(*) FROM pg_roles WHERE rolname = 'w_0123456789abcdef_r'),
		(SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'suitegen')`, &schemas, &roles, &owner)
	if schemas != 0 || roles != 0 || owner != "suitegen" {
		t.Fatalf("after the upgrade: %d old world schemas, %d old world roles, database owned by %s", schemas, roles, owner)
	}
}
