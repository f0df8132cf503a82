package e2e

// The servers of the cluster test (cluster_test.go): a JetStream cluster of
// real nats-server processes, a PostgreSQL primary with a synchronous hot
// standby, and loopback TCP proxies a writer can be cut off through.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// freePorts reserves n loopback ports at once, so no two are the same, and
// lets them go for the servers to bind.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var lns []net.Listener
	ports := make([]int, n)
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// natsNode is one nats-server process of the cluster, restartable on its
// config (same ports, same store).
type natsNode struct {
	name, conf    string
	port, monitor int
	mu            sync.Mutex
	cmd           *exec.Cmd
	done          chan struct{}
	log           *os.File
}

type natsCluster struct {
	bin   string
	nodes []*natsNode
}

// natsServerBin is the nats-server binary `make test-cluster` builds into
// ./bin, or $SUITEGEN_NATS_SERVER.
func natsServerBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("SUITEGEN_NATS_SERVER")
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", "..", "bin", "nats-server"))
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no nats-server binary (make test-cluster builds it into ./bin): %v", err)
	}
	return bin
}

// startNATSCluster starts n routed JetStream servers. Servers do not
// advertise each other to clients, so a client reaches only the URLs it was
// given (a writer behind a proxy stays behind it).
func startNATSCluster(t *testing.T, n int) *natsCluster {
	t.Helper()
	c := &natsCluster{bin: natsServerBin(t)}
	ports := freePorts(t, 3*n)
	dir := t.TempDir()
	var routes []string
	for i := range n {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", ports[3*i+2]))
	}
	for i := range n {
		nd := &natsNode{name: fmt.Sprintf("n%d", i+1), port: ports[3*i], monitor: ports[3*i+1]}
		store := filepath.Join(dir, nd.name)
		nd.conf = filepath.Join(dir, nd.name+".conf")
		conf := fmt.Sprintf(`server_name: %s
listen: 127.0.0.1:%d
http: 127.0.0.1:%d
jetstream { store_dir: %q }
cluster {
  name: suitegen
  listen: 127.0.0.1:%d
  routes: [%s]
  no_advertise: true
}
`, nd.name, nd.port, nd.monitor, store, ports[3*i+2], strings.Join(routes, ", "))
		if err := os.WriteFile(nd.conf, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, nd.name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		nd.log = f
		c.nodes = append(c.nodes, nd)
	}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			nd.stop()
		}
	})
	for _, nd := range c.nodes {
		if err := c.start(nd); err != nil {
			t.Fatal(err)
		}
	}
	for _, nd := range c.nodes {
		if err := nd.healthy(context.Background(), 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func (c *natsCluster) start(nd *natsNode) error {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	cmd := exec.Command(c.bin, "-c", nd.conf)
	cmd.Stdout, cmd.Stderr = nd.log, nd.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start nats %s: %w", nd.name, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	nd.cmd, nd.done = cmd, done
	return nil
}

// running reports whether the node's process is up.
func (nd *natsNode) running() bool {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return false
	}
	select {
	case <-nd.done:
		return false
	default:
		return true
	}
}

// kill SIGKILLs the node and waits for it to be gone.
func (nd *natsNode) kill() {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return
	}
	_ = nd.cmd.Process.Signal(syscall.SIGKILL)
	<-nd.done
	nd.cmd = nil
}

func (nd *natsNode) stop() {
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.cmd == nil {
		return
	}
	_ = nd.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-nd.done:
	case <-time.After(30 * time.Second):
		_ = nd.cmd.Process.Kill()
		<-nd.done
	}
	nd.cmd = nil
}

// healthy polls the node's /healthz until it answers 200: running, and its
// JetStream assets current with their leaders. Bounded by within.
func (nd *natsNode) healthy(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	var last error
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if !nd.running() {
			return fmt.Errorf("nats %s is not running", nd.name)
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", nd.monitor))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("healthz: %s", resp.Status)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("nats %s not healthy within %s: %v", nd.name, within, last)
}

// urls lists the client URLs of every node, or of the given ports.
func natsURLs(ports []int) string {
	var us []string
	for _, p := range ports {
		us = append(us, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	return strings.Join(us, ",")
}

func (c *natsCluster) ports() []int {
	var ps []int
	for _, nd := range c.nodes {
		ps = append(ps, nd.port)
	}
	return ps
}

// streamLeader asks the live nodes' /jsz which server leads stream.
func (c *natsCluster) streamLeader(stream string) (*natsNode, error) {
	var last error
	for _, nd := range c.nodes {
		var jsz struct {
			Accounts []struct {
				Streams []struct {
					Name    string `json:"name"`
					Cluster struct {
						Leader string `json:"leader"`
					} `json:"cluster"`
				} `json:"stream_detail"`
			} `json:"account_details"`
		}
		if err := getJSON(fmt.Sprintf("http://127.0.0.1:%d/jsz?accounts=true&streams=true", nd.monitor), &jsz); err != nil {
			last = err
			continue
		}
		for _, a := range jsz.Accounts {
			for _, s := range a.Streams {
				if s.Name != stream || s.Cluster.Leader == "" {
					continue
				}
				for _, l := range c.nodes {
					if l.name == s.Cluster.Leader {
						return l, nil
					}
				}
			}
		}
	}
	return nil, fmt.Errorf("no leader of %s reported: %v", stream, last)
}

// pgPair is a PostgreSQL primary (started by pkg/stack) and a hot standby
// streaming from it synchronously, made with pg_basebackup -R.
type pgPair struct {
	primary     *stack.Postgres
	standbyDir  string
	standbyPort int
	standby     *exec.Cmd
	standbyDone chan struct{}
	bin         string
	cred        *syscall.Credential
}

func pgBin(t *testing.T) string {
	t.Helper()
	bin := "/usr/lib/postgresql/15/bin"
	if _, err := os.Stat(filepath.Join(bin, "pg_basebackup")); err != nil {
		t.Fatalf("PostgreSQL 15 binaries: %v", err)
	}
	return bin
}

func postgresCred(t *testing.T) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}
}

func startPGPair(t *testing.T, ctx context.Context) *pgPair {
	t.Helper()
	p := &pgPair{bin: pgBin(t), cred: postgresCred(t)}
	root := testenv.ServerDir(t)
	// Durable (not Fast): synchronous_commit must stay on for a commit to
	// wait for the standby.
	primary, err := stack.StartPostgres(ctx, stack.PostgresConfig{DataDir: filepath.Join(root, "primary"), BinDir: p.bin})
	if err != nil {
		t.Fatal(err)
	}
	p.primary = primary
	t.Cleanup(func() { _ = primary.Stop(context.Background()) })

	admin, err := pgx.Connect(ctx, primary.AdminURL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	// Replication connections from loopback for the superuser only.
	hba := filepath.Join(primary.ClusterDir(), "pg_hba.conf")
	f, err := os.OpenFile(hba, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("host replication postgres 127.0.0.1/32 trust\n")
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		t.Fatal(err)
	}

	p.standbyDir = filepath.Join(root, "standby")
	if err := os.Mkdir(p.standbyDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if p.cred != nil {
		if err := os.Chown(p.standbyDir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	conn := fmt.Sprintf("host=127.0.0.1 port=%d user=postgres application_name=standby1", primary.Port())
	if out, err := p.asServer(ctx, "pg_basebackup", "-D", p.standbyDir, "-d", conn, "-R", "-X", "stream", "-c", "fast").CombinedOutput(); err != nil {
		t.Fatalf("pg_basebackup: %v\n%s", err, out)
	}
	p.standbyPort = freePorts(t, 1)[0]
	p.standby = p.asServer(ctx, "postgres", "-D", p.standbyDir, "-k", p.standbyDir, "-h", "127.0.0.1",
		"-p", strconv.Itoa(p.standbyPort), "-c", "max_connections=200", "-c", "hot_standby=on",
		"-c", "unix_socket_permissions=0700")
	logf, err := os.Create(filepath.Join(root, "standby.log"))
	if err != nil {
		t.Fatal(err)
	}
	p.standby.Stdout, p.standby.Stderr = logf, logf
	if err := p.standby.Start(); err != nil {
		t.Fatal(err)
	}
	p.standbyDone = make(chan struct{})
	go func() {
		_ = p.standby.Wait()
		close(p.standbyDone)
	}()
	t.Cleanup(func() {
		_ = p.standby.Process.Signal(syscall.SIGINT)
		select {
		case <-p.standbyDone:
		case <-time.After(30 * time.Second):
			_ = p.standby.Process.Kill()
			<-p.standbyDone
		}
	})
	// Synchronous only once the standby streams: a commit on the primary
	// then returns only when the standby has it, so a promotion loses no
	// acknowledged write. Set after the base backup, so the standby (and
	// the primary it becomes) does not wait for a standby of its own.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_replication WHERE application_name = 'standby1' AND state = 'streaming'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby did not stream within 2m")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, q := range []string{`ALTER SYSTEM SET synchronous_standby_names = 'standby1'`, `SELECT pg_reload_conf()`} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func (p *pgPair) asServer(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(p.bin, name), args...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	return cmd
}

// url is the primary's application URL with both hosts, the read-write one
// chosen at every connect.
func (p *pgPair) url(t *testing.T, primaryPort, standbyPort int) string {
	t.Helper()
	u, err := url.Parse(p.primary.URL())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d,127.0.0.1:%d%s?%s", u.User.String(), primaryPort, standbyPort, u.Path, q.Encode())
}

// killPrimary SIGKILLs the primary: from then on no server takes writes
// until promote.
func (p *pgPair) killPrimary() error {
	return syscall.Kill(p.primary.Pid(), syscall.SIGKILL)
}

// promote promotes the standby and waits for it to take writes.
func (p *pgPair) promote(ctx context.Context) error {
	if out, err := p.asServer(ctx, "pg_ctl", "promote", "-D", p.standbyDir, "-w", "-t", "120").CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl promote: %w\n%s", err, out)
	}
	return nil
}

// proxy forwards loopback TCP connections to a target; cut resets every
// connection and refuses new ones until restore.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  map[net.Conn]struct{}
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() {
		ln.Close()
		p.setCut(true)
	})
	go p.serve()
	return p
}

func (p *proxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		go p.pipe(c)
	}
}

func (p *proxy) pipe(c net.Conn) {
	defer p.drop(c)
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		up.Close()
		return
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	defer p.drop(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

func (p *proxy) drop(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
	}
}
