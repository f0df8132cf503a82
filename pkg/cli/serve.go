package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/progress"
)

func init() {
	register(command{"serve", "[--addr ADDR] [--database URL] [--token-file F]", "serve the progress page and API over a ledger", cmdServe})
}

// loopback reports whether a listen address only accepts connections from
// this machine: a loopback IP or "localhost". An empty host listens on every
// interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pageGuard are the flags that guard a served progress page (serve's, and
// the one planner and run serve with --progress-addr): the token every
// endpoint but /healthz then requires, and the rule that an address beyond
// loopback needs one.
type pageGuard struct{ token, tokenFile *string }

func (f *flags) pageGuard() pageGuard {
	return pageGuard{
		token:     f.secret("token", "", "bearer token every endpoint of the progress page but /healthz requires, needed to listen beyond loopback (prefer SUITEGEN_TOKEN or --token-file: a flag shows in ps)"),
		tokenFile: f.str("token-file", "", "read the token from this file (e.g. a mounted secret); used when --token is empty"),
	}
}

// forAddr is the token of a page served on addr, given by the flag named
// flagName: --token, else the first line of --token-file. A file that
// cannot be read, or an address beyond loopback without a token, is a
// *UsageError naming the flag.
func (g pageGuard) forAddr(flagName, addr string) (string, error) {
	tok := *g.token
	if tok == "" && *g.tokenFile != "" {
		b, err := os.ReadFile(*g.tokenFile)
		if err != nil {
			return "", &UsageError{fmt.Sprintf("--token-file: %v", err)}
		}
		if tok = strings.TrimSpace(string(b)); tok == "" {
			return "", &UsageError{fmt.Sprintf("--token-file %s is empty", *g.tokenFile)}
		}
	}
	if tok == "" && !loopback(addr) {
		return "", &UsageError{fmt.Sprintf("%s %s listens beyond loopback: give a token (SUITEGEN_TOKEN or --token-file), or listen on 127.0.0.1", flagName, addr)}
	}
	return tok, nil
}

// progressFlags are --progress-addr and the flags that guard the page it
// serves (planner and run).
type progressFlags struct {
	addr  *string
	guard pageGuard
}

func (f *flags) progress() progressFlags {
	return progressFlags{
		addr:  f.str("progress-addr", "", "serve the progress page and API on this address (e.g. 127.0.0.1:8080); one beyond loopback (e.g. :8080) needs a token"),
		guard: f.pageGuard(),
	}
}

// token is the token the page requires ("" for none, or no page): a
// *UsageError when --progress-addr listens beyond loopback without one.
func (p progressFlags) token() (string, error) {
	if *p.addr == "" {
		return "", nil
	}
	return p.guard.forAddr("--progress-addr", *p.addr)
}

// pageHint is what to open a page served with tok at.
func pageHint(tok string) string {
	if tok != "" {
		return "; open the page as /?token=TOKEN"
	}
	return ""
}

func cmdServe(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen serve", "[--addr ADDR] [--database URL] [--token-file F] [--metrics-addr ADDR]",
		"Serve the live progress page (GET /), its read-only JSON API (GET /api/runs, /api/runs/{id}) and GET /healthz\n"+
			"over the ledger at --database, until signalled. Any number of these may run beside the planners and writers.\n"+
			"With a token every endpoint but /healthz requires it (Authorization: Bearer TOKEN, or open the page as\n"+
			"/?token=TOKEN); an --addr beyond loopback is refused without one.\n"+
			"With --metrics-addr it is also the exporter of run figures read from the ledger (suitegen_run_*: asked,\n"+
			"proved, refused, buckets, slices, spend, budget, last activity) on /metrics, beside /healthz and /readyz.")
	addr := f.str("addr", "127.0.0.1:8080", "listen address; one beyond loopback (e.g. :8080) needs a token")
	database := f.secret("database", env.Getenv("SUITEGEN_DATABASE_URL"), "PostgreSQL URL of the ledger (required)")
	databaseFile := f.str("database-url-file", "", "read the PostgreSQL URL from this file (e.g. a mounted secret); used when --database is empty")
	guard := f.pageGuard()
	metricsAddr := f.str("metrics-addr", "", "serve the ledger's run figures on /metrics (with /healthz and /readyz) on this address, e.g. :9090")
	retain := f.dur("metrics-retain", 24*time.Hour, "export a run until this long after it finished, or after its last activity when it never did")
	maxRuns := f.num("metrics-max-runs", 50, "export at most this many runs, newest first (bounds the cost of a read)")
	cacheFor := f.dur("metrics-cache", 10*time.Second, "one ledger read serves every scrape for this long")
	stallAfter := f.dur("stall-after", progress.DefaultStallAfter, "the page shows an unfinished run with no ledger activity for this long as stalled")
	if _, err := f.parse(args); err != nil {
		return err
	}
	for name, d := range map[string]time.Duration{"--metrics-retain": *retain, "--metrics-cache": *cacheFor, "--stall-after": *stallAfter} {
		if d <= 0 {
			return &UsageError{fmt.Sprintf("%s %s: must be positive", name, d)}
		}
	}
	if *maxRuns < 1 {
		return &UsageError{fmt.Sprintf("--metrics-max-runs %d: must be at least 1", *maxRuns)}
	}
	tok, err := guard.forAddr("--addr", *addr)
	if err != nil {
		return err
	}
	cn := conn{database: database, databaseFile: databaseFile}
	url, err := cn.databaseURL()
	if err != nil {
		return &UsageError{err.Error()}
	}
	if url == "" {
		return &UsageError{"--database (or SUITEGEN_DATABASE_URL) is required: serve reads an existing ledger"}
	}
	// Both addresses are taken before anything else, so a port in use is an
	// error at start.
	var lc net.ListenConfig
	var mln net.Listener
	if *metricsAddr != "" {
		if mln, err = lc.Listen(ctx, "tcp", *metricsAddr); err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer mln.Close()
	}
	pln, err := lc.Listen(ctx, "tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	defer pln.Close()
	pool, err := engine.Pool(ctx, url, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	// The schema the API reads, so serve may start before the first planner.
	if err := migrate.Apply(ctx, pool); err != nil {
		return err
	}
	store := ledger.New(pool)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	if mln == nil {
		errc <- nil
	} else {
		ledger, err := metrics.NewLedger(store, metrics.LedgerOptions{Retain: *retain, MaxRuns: *maxRuns, CacheFor: *cacheFor, Logger: env.Log})
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "run figures for Prometheus on http://%s/metrics\n", mln.Addr())
		go func() {
			err := serveExporter(ctx, mln, ledger, pool)
			cancel() // one server down takes the other with it
			errc <- err
		}()
	}
	opts := progress.Options{Token: tok, Logger: env.Log, Health: pool.Ping, StallAfter: *stallAfter}
	fmt.Fprintf(env.Stdout, "progress page on http://%s/ (API at /api/runs, health at /healthz%s)\n", pln.Addr(), pageHint(tok))
	perr := metrics.ServeHandler(ctx, pln, progress.Handler(store, opts))
	cancel()
	return errors.Join(perr, <-errc)
}

// serveExporter serves the ledger's run figures on ln (/metrics, with
// /healthz and /readyz: ready while the ledger answers a ping) until ctx ends.
func serveExporter(ctx context.Context, ln net.Listener, ledger *metrics.Ledger, pool *pgxpool.Pool) error {
	ready := func() error {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return pool.Ping(pctx)
	}
	reg := metrics.NewRegistry()
	reg.MustRegister(buildInfo("serve"), ledger, metrics.NewReady("serve", ready))
	return metrics.ServeListener(ctx, ln, reg, ready)
}

// serveProgress serves the progress page and API on addr in the background,
// behind tok when it is not empty (pageGuard.forAddr), and returns the
// function that stops it and waits (defer it before the store's pool
// closes). The address is taken before it returns, so a port in use is an
// error at start.
func serveProgress(ctx context.Context, env *Env, addr, tok string, store *ledger.Store) (stop func(), err error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--progress-addr: %w", err)
	}
	env.Log.Info("progress page", "url", "http://"+ln.Addr().String()+"/", "token", tok != "")
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := metrics.ServeHandler(ctx, ln, progress.Handler(store, progress.Options{Token: tok, Logger: env.Log})); err != nil && !errors.Is(err, context.Canceled) {
			env.Log.Error("progress server", "err", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}
