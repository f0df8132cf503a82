package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/migrate"
	"github.com/suitegen/suitegen/pkg/outage"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/queue/jetstream"
	"github.com/suitegen/suitegen/pkg/refresh"
	"github.com/suitegen/suitegen/pkg/stack"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/tau2"
	"github.com/suitegen/suitegen/pkg/taubench"
)

func init() {
	register(command{"validate", "DIR", "check a contract directory and prove its world with probes", cmdValidate})
	register(command{"prove", "DIR SCENARIO.json", "run the gates on one scenario: exit 0 when it would be kept", cmdProve})
	register(command{"export", "OUT --format jsonl|tau-bench|tau2-bench [--contract DIR]", "export a written suite", cmdExport})
	register(command{"check", "OUT --contract DIR [--json]", "re-prove a written suite against its contract as it is now and list the stale scenarios", cmdCheck})
	register(command{"history", "OUT [NAME] [--json]", "print the versions of a suite's scenarios that revise replaced, with the ask", cmdHistory})
	register(command{"stack", "[--state-dir DIR]", "start the embedded NATS and PostgreSQL and print their URLs", cmdStack})
}

func cmdValidate(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen validate", "DIR", "Report every problem of a contract directory as path:line: code: message; on success, prove its world with probes.")
	cn := f.conn()
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &UsageError{"validate takes one contract directory"}
	}
	return validate(ctx, env, pos[0], cn)
}

// infra is the servers a command talks to.
type infra struct {
	st   *stack.Stack
	pool *pgxpool.Pool
	qc   queue.Config
}

func openInfra(ctx context.Context, env *Env, cn conn) (*infra, error) {
	dbURL, err := cn.databaseURL()
	if err != nil {
		return nil, err
	}
	cfg := stack.Config{StateDir: *cn.stateDir, NATSURL: *cn.nats, DatabaseURL: dbURL, Logger: env.Log}
	st, err := stack.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	pool, err := engine.Pool(ctx, st.DatabaseURL, 1)
	if err != nil {
		_ = st.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	// The first contact with the database: a server failing over or
	// starting is waited for, up to --startup-timeout.
	startup := outage.Backoff{First: 250 * time.Millisecond, Max: 5 * time.Second, Timeout: *cn.startup}
	if err := startup.Retry(ctx, env.Log, "database", func(ctx context.Context) error { return migrate.Apply(ctx, pool) }); err != nil {
		pool.Close()
		_ = st.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	warnSuperuser(ctx, env, pool)
	return &infra{st: st, pool: pool, qc: cn.queueConfig(st.NATSURL)}, nil
}

// openEngine opens the infrastructure and c's engine over it; closeEngine
// closes both.
func openEngine(ctx context.Context, env *Env, cn conn, c *contract.Contract) (e *engine.Engine, closeEngine func(), err error) {
	in, err := openInfra(ctx, env, cn)
	if err != nil {
		return nil, nil, err
	}
	if e, err = engine.Open(ctx, in.pool, c); err != nil {
		in.close(ctx)
		return nil, nil, err
	}
	return e, func() { e.Close(); in.close(ctx) }, nil
}

// warnSuperuser says so when the database URL is a superuser's: worlds
// still get roles of their own, but the ledger's role needs far less (the
// grants in docs/SECURITY.md).
func warnSuperuser(ctx context.Context, env *Env, pool *pgxpool.Pool) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return
	}
	defer c.Release()
	if c.Conn().PgConn().ParameterStatus("is_superuser") == "on" {
		env.Log.Warn("the database URL logs in as a superuser; suitegen needs only the application role of docs/SECURITY.md",
			"role", c.Conn().PgConn().ParameterStatus("session_authorization"))
	}
}

func (in *infra) close(ctx context.Context) {
	in.pool.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_ = in.st.Stop(sctx)
}

func (in *infra) queue(ctx context.Context) (*jetstream.Queue, error) {
	return jetstream.Connect(ctx, in.qc)
}

func cmdExport(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen export", "OUT --format jsonl|tau-bench|tau2-bench [--contract DIR] [-o FILE]", "Export a written suite.")
	format := f.str("format", "jsonl", "jsonl, tau-bench or tau2-bench")
	dest := f.str("o", "", "write to this file instead of standard output")
	dir := f.str("contract", "", "tau-bench, tau2-bench: the contract directory the suite was written for (its world is replayed)")
	mapFile := f.str("data-map", "", "tau-bench: the data map (default: "+taubench.MapFile+" in the contract directory); tau2-bench: the document map (default: "+tau2.MapFile+" there when it exists)")
	allowStale := f.Bool("allow-stale", false, "export even when the contract changed since the suite was written and some scenarios no longer prove against it")
	cn := f.conn()
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &UsageError{"export takes one output directory"}
	}
	if *format != suite.FormatJSONL && *format != taubench.Format && *format != tau2.Format {
		return &UsageError{fmt.Sprintf("--format %q: want %s, %s or %s", *format, suite.FormatJSONL, taubench.Format, tau2.Format)}
	}
	if *format == tau2.Format && *dir == "" {
		return &UsageError{"export --format tau2-bench needs --contract DIR"}
	}
	if *format == taubench.Format && *dir == "" {
		return &UsageError{"export --format tau-bench needs --contract DIR: each task carries the data its setup made, replayed in the contract's world"}
	}
	if *dir != "" {
		if err := refuseStale(ctx, env, cn, pos[0], *dir, *allowStale); err != nil {
			return err
		}
	}
	var w io.Writer = env.Stdout
	if *dest != "" {
		fh, err := os.Create(*dest)
		if err != nil {
			return err
		}
		defer fh.Close()
		w = fh
	}
	switch *format {
	case tau2.Format:
		return exportTau2(ctx, env, cn, pos[0], *dir, *mapFile, w)
	case taubench.Format:
		return exportTau(ctx, env, cn, pos[0], *dir, *mapFile, w)
	}
	return suite.Export(pos[0], *format, w)
}

// ErrStale is a suite export refuses: its contract changed since it was
// written and some of its scenarios no longer prove.
var ErrStale = errors.New("stale suite")

// refuseStale is export's look at the suite against the contract in dir:
// an unchanged hash exports at once; a changed (or unrecorded) one re-proves
// the suite, and any stale scenario refuses the export unless allowed.
func refuseStale(ctx context.Context, env *Env, cn conn, out, dir string, allow bool) error {
	w, err := suite.Read(out)
	if err != nil {
		return err
	}
	c, err := contract.LoadValid(dir)
	if err != nil {
		return err
	}
	if w.Index.Contract() == c.SHA256 {
		return nil
	}
	rep, err := check(ctx, env, cn, out, dir, refresh.Options{})
	if err != nil {
		return err
	}
	was := "the suite records no contract hash"
	if rep.Recorded != suite.ContractUnknown {
		was = fmt.Sprintf("the contract changed since the suite was written (%s, now %s)", short(rep.Recorded), short(rep.Contract))
	}
	if len(rep.Stale) == 0 {
		fmt.Fprintf(env.Stderr, "%s; all %d scenario(s) still prove against it\n", was, rep.Checked)
		return nil
	}
	for _, s := range rep.Stale {
		fmt.Fprintf(env.Stderr, "stale %s: %s/%s: %s\n", s.Name, s.Gate, s.Code, s.Reason)
	}
	if allow {
		fmt.Fprintf(env.Stderr, "%s and %d of %d scenario(s) are stale; exported anyway (--allow-stale)\n", was, len(rep.Stale), rep.Checked)
		return nil
	}
	return fmt.Errorf("%w: %s and %d of %d scenario(s) no longer prove; run suitegen run %s --update %s, or give --allow-stale",
		ErrStale, was, len(rep.Stale), rep.Checked, dir, out)
}

// exportTau replays the suite in its contract's world, writes the tasks with
// the data each starts from, and names every scenario it refused on standard
// error; it fails when nothing could be exported.
func exportTau(ctx context.Context, env *Env, cn conn, out, dir, mapFile string, w io.Writer) error {
	c, err := contract.LoadValid(dir)
	if err != nil {
		return err
	}
	if mapFile == "" {
		mapFile = filepath.Join(dir, taubench.MapFile)
	}
	m, err := taubench.LoadMap(mapFile, c)
	if err != nil {
		return err
	}
	e, closeEngine, err := openEngine(ctx, env, cn, c)
	if err != nil {
		return err
	}
	defer closeEngine()
	rep, err := taubench.Export(ctx, out, taubench.Source{Contract: c, World: e.World, Rehearser: e.Prover, Map: m}, w)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "%d task(s) exported, %d scenario(s) refused\n", rep.Exported, len(rep.Refused))
	printCodes(env.Stderr, rep.ByCode())
	for _, r := range rep.Refused {
		fmt.Fprintf(env.Stderr, "refused %s: %s: %s\n", r.Scenario, r.Code, r.Reason)
	}
	if rep.Exported == 0 && len(rep.Refused) > 0 {
		return fmt.Errorf("no scenario of %s could be exported as a tau-bench task", out)
	}
	return nil
}

// exportTau2 replays the suite in its contract's world, writes the tasks and
// names every scenario it refused on standard error.
func exportTau2(ctx context.Context, env *Env, cn conn, out, dir, mapFile string, w io.Writer) error {
	c, err := contract.LoadValid(dir)
	if err != nil {
		return err
	}
	// The document map is optional: without one, tables are written as
	// {table: {key: row}}. Named on the command line, it must exist.
	var m *tau2.Map
	if mapFile == "" {
		if p := filepath.Join(dir, tau2.MapFile); fileExists(p) {
			mapFile = p
		}
	}
	if mapFile != "" {
		if m, err = tau2.LoadMap(mapFile, c); err != nil {
			return err
		}
	}
	e, closeEngine, err := openEngine(ctx, env, cn, c)
	if err != nil {
		return err
	}
	defer closeEngine()
	sum, err := tau2.Export(ctx, out, tau2.Source{Contract: c, World: e.World, Replayer: e.Prover, Map: m}, w)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "%d task(s) exported, %d scenario(s) refused\n", sum.Tasks, len(sum.Refused))
	printCodes(env.Stderr, sum.ByCode())
	for _, r := range sum.Refused {
		fmt.Fprintf(env.Stderr, "refused %s: %s: %s\n", r.Scenario, r.Code, r.Reason)
	}
	return nil
}

// printCodes writes an export's refusals counted by code, one line each in
// the codes' order.
func printCodes[C ~string](w io.Writer, codes map[C]int) {
	for _, code := range slices.Sorted(maps.Keys(codes)) {
		fmt.Fprintf(w, "  %s: %d\n", code, codes[code])
	}
}

func cmdStack(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen stack", "[--state-dir DIR]", "Start the embedded NATS and PostgreSQL, print their URLs and export lines, and stay up until signalled.")
	stateDir := f.str("state-dir", "", "where the servers keep their data (default: the user cache dir)")
	if _, err := f.parse(args); err != nil {
		return err
	}
	return stack.Serve(ctx, stack.Config{StateDir: *stateDir, Logger: env.Log}, env.Stdout)
}

// serveMetrics starts the metrics endpoint in the background when asked. run
// is the run the process works for ("" for a writer, which serves every run
// and records each slice under its own), role its role label.
// serveMetrics serves /metrics, /healthz and /readyz on addr (none when
// empty) until ctx ends. The address is taken before it returns, so a port
// in use is an error at start rather than a log line.
func serveMetrics(ctx context.Context, env *Env, addr, run, role string, ready func() error) (*metrics.Metrics, error) {
	reg := metrics.NewRegistry()
	reg.MustRegister(buildInfo(role), metrics.NewReady(role, ready))
	if addr != "" {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("--metrics-addr: %w", err)
		}
		go func() {
			if err := metrics.ServeListener(ctx, ln, reg, ready); err != nil && !errors.Is(err, context.Canceled) {
				env.Log.Error("metrics server", "err", err)
			}
		}()
	}
	return metrics.New(reg, run, role), nil
}

func storeOf(in *infra) *ledger.Store { return ledger.New(in.pool) }

func defaultOut(agent, out string) string {
	if out != "" {
		return out
	}
	return filepath.Join("out", agent)
}

func validate(ctx context.Context, env *Env, dir string, cn conn) error {
	c, probs, err := contract.Load(dir)
	if err != nil {
		return err
	}
	if len(probs) > 0 {
		for _, p := range probs {
			fmt.Fprintln(env.Stdout, filepath.Join(dir, p.File)+strings.TrimPrefix(p.String(), p.File))
		}
		return fmt.Errorf("%d problem(s) in %s", len(probs), dir)
	}
	in, err := openInfra(ctx, env, cn)
	if err != nil {
		return err
	}
	defer in.close(ctx)
	e, err := engine.Open(ctx, in.pool, c)
	if err != nil {
		var wp interface{ Problems() contract.Problems }
		if errors.As(err, &wp) {
			for _, p := range wp.Problems() {
				fmt.Fprintln(env.Stdout, filepath.Join(dir, p.File)+strings.TrimPrefix(p.String(), p.File))
			}
		}
		return err
	}
	defer e.Close()
	rep, err := probe.Run(ctx, c, e.World)
	if err != nil {
		return err
	}
	// Derived as a run derives it, through the plan cache the environment
	// names: a run after validate reads this plan back instead of deriving
	// it again.
	pl, err := plan.Derive(ctx, c, probe.Rehearser(e.World), plan.Options{Rules: e.Prover, Mutants: probe.Mutants(e.World, c), Cache: plan.EnvCache(env.Getenv)})
	if err != nil {
		return err
	}
	// The plan's rehearsals confirm what the probes could not.
	printBindings(env.Stdout, dir, c, ground.Grounding{Bindings: pl.Bindings, Unanswered: pl.Unanswered})
	for _, s := range rep.Scores {
		if v, scored := s.Value(); scored {
			fmt.Fprintf(env.Stdout, "probe %-30s %.2f (%d/%d)\n", s.Probe, v, s.Passed, s.Total)
		} else {
			fmt.Fprintf(env.Stdout, "probe %-30s unscored: nothing to check\n", s.Probe)
		}
		for _, f := range s.Failures {
			fmt.Fprintf(env.Stdout, "  - %s\n", f)
		}
	}
	fmt.Fprintf(env.Stdout, "plan: %d buckets over %d of %d use cases, capacity %d scenarios\n", len(pl.Buckets), len(c.UseCases)-len(pl.Gaps), len(c.UseCases), pl.Capacity)
	for _, gp := range pl.Gaps {
		uc := c.UseCase(gp.UseCase)
		fmt.Fprintf(env.Stdout, "warning: %s:%d: use case %s has no bucket: %s\n", filepath.Join(dir, "contract.yaml"), uc.Line, gp.UseCase, gp.Reason)
	}
	for _, gp := range pl.RefusalsOnly {
		uc := c.UseCase(gp.UseCase)
		fmt.Fprintf(env.Stdout, "warning: %s:%d: use case %s is planned with refusals only: %s%s\n", filepath.Join(dir, "contract.yaml"), uc.Line, gp.UseCase, gp.Reason, answeredInGrounding(uc, pl.Unanswered))
	}
	for _, gp := range pl.EveryCaseBreaks {
		uc := c.UseCase(gp.UseCase)
		fmt.Fprintf(env.Stdout, "warning: %s:%d: use case %s: %s: a success must keep it (rule-broken); if the rule is not about this use case's callers, make its check hold where the rule does not apply (docs/contract.md, rules)\n", filepath.Join(dir, "contract.yaml"), uc.Line, gp.UseCase, gp.Reason)
	}
	for _, s := range pl.Shortfalls(c) {
		fmt.Fprintf(env.Stdout, "warning: %s: plan: %s\n", filepath.Join(dir, "contract.yaml"), s)
	}
	for _, t := range deadIdentity(c, pl.Unanswered) {
		fmt.Fprintf(env.Stdout, "warning: %s:%d: %s, a tool of caller.from, never answered ok on the world: no scenario identifies a caller through it; ground its arguments (an x-ref) or fix its handler if callers should\n", filepath.Join(dir, "contract.yaml"), c.Tool(t).Line, t)
	}
	for _, cr := range pl.Crashes {
		args, _ := json.Marshal(cr.Args)
		on := "on the world as seeded"
		if len(cr.Setup) > 0 {
			on = fmt.Sprintf("after the plan's %d setup statement(s), the first %q", len(cr.Setup), cr.Setup[0].SQL)
		}
		fmt.Fprintf(env.Stdout, "warning: %s: %s crashed on %d rehearsal(s) of the plan, with arguments its params accept: %s (e.g. %s %s); a refusal there would let the plan reach what lies behind it\n", filepath.Join(dir, cr.At), cr.Tool, cr.Calls, cr.Reason, args, on)
	}
	for _, sg := range c.SubGoals {
		if sg.Judged && len(sg.Tools) == 0 && len(c.UseCases) > 1 {
			fmt.Fprintf(env.Stdout, "warning: %s: judged sub-goal %s names no tools: it is listed, and graded, on every scenario of every use case; say which tools' calls it is about (tools = [...], docs/contract.md)\n", filepath.Join(dir, sg.File), sg.Name)
		}
	}
	if !rep.OK() {
		return fmt.Errorf("%s: the world's probes do not all hold", c.Agent)
	}

	if len(pl.Gaps) > 0 {
		fmt.Fprintf(env.Stdout, "%s: valid, every probe held; %d use case(s) cannot be planned (run stops before spending unless --allow-partial)\n", c.Agent, len(pl.Gaps))
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s: valid, every probe held, every use case planned\n", c.Agent)
	return nil
}

// printBindings prints where every tool argument's values come from, and the
// x-ref line that would ground each argument nothing grounds.
func printBindings(w io.Writer, dir string, c *contract.Contract, gr ground.Grounding) {
	if cl := c.Caller; cl != nil && cl.Inferred {
		fmt.Fprintf(w, "caller: %s.%s, read from %s (write caller: in contract.yaml to say otherwise)\n", cl.Table, cl.Key, strings.Join(cl.From, ", "))
	}
	fmt.Fprintln(w, "bindings (tool.argument -> table.column: how it was found):")
	var unbound []ground.Binding
	for _, b := range gr.Bindings {
		ref := b.Ref()
		if ref == "" {
			ref = "-"
		}
		found := b.Found()
		_, unanswered := gr.Unanswered[b.Tool]
		// A value written from the schema of an argument marked x-ref: false
		// is the author's word, not a guess.
		written := b.How == ground.FromPattern && c.Tool(b.Tool) != nil && ground.Declined(c.Tool(b.Tool), b.Param)
		guessed := unanswered && !b.Confirmed && (b.How == ground.ByLikeness || b.How == ground.Fresh || b.How == ground.FromPattern && !written)
		if guessed {
			found += ", a guess: no call of its tool was answered ok"
		}
		fmt.Fprintf(w, "  %-48s -> %-36s %s\n", b.Tool+"."+b.Param, ref, found)
		required := false
		if t := c.Tool(b.Tool); t != nil {
			for _, r := range t.Required() {
				required = required || r == b.Param
			}
		}
		if b.How == ground.Unbound || guessed && required {
			unbound = append(unbound, b)
		}
	}
	for _, b := range unbound {
		line := 0
		if t := c.Tool(b.Tool); t != nil {
			line = t.Line
		}
		fmt.Fprintf(w, "unbound: %s:%d: %s.%s: no column of the world made %s answer ok; %s\n",
			filepath.Join(dir, "contract.yaml"), line, b.Tool, b.Param, b.Tool, ground.XRefHint(c, b))
	}
	names := make([]string, 0, len(gr.Unanswered))
	for t := range gr.Unanswered {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		line := 0
		if tl := c.Tool(t); tl != nil {
			line = tl.Line
		}
		fmt.Fprintf(w, "never answered ok: %s:%d: %s (last: %s)\n", filepath.Join(dir, "contract.yaml"), line, t, gr.Unanswered[t])
	}
}

// answeredInGrounding tells a use case planned with refusals only apart
// when grounding's rehearsal answered every tool it lists ok: the world then
// holds rows its act answers on, and only the plan's own cases missed them,
// which the bare warning reads as the opposite.
func answeredInGrounding(uc *contract.UseCase, unanswered map[string]string) string {
	if len(uc.Tools) == 0 {
		return ""
	}
	for _, t := range uc.Tools {
		if _, dead := unanswered[t]; dead {
			return ""
		}
	}
	return "; yet grounding's rehearsal answered every tool of the use case ok, so the world holds rows its act answers on: only the plan's cases, built from its own sample of rows, reached none of them (a `sequences` entry does not steer them)"
}

// deadIdentity are the tools of caller.from no rehearsal of the plan got an
// ok answer from: a handler that refuses every caller, or arguments the
// plan could not ground (a date derived from other rows); either way no
// scenario identifies a caller through them.
func deadIdentity(c *contract.Contract, unanswered map[string]string) []string {
	var out []string
	if c.Caller == nil {
		return nil
	}
	for _, t := range c.Caller.From {
		if _, dead := unanswered[t]; dead {
			out = append(out, t)
		}
	}
	return out
}

// fileExists reports whether path names a file (an unreadable one counts,
// so that loading it says why).
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
