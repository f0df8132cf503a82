// Package cli is the command line of suitegen and its three distributed
// binaries: flags (with SUITEGEN_* environment fallbacks) parsed into the
// config structs of the packages that do the work, and errors mapped to exit
// codes. The mains in cmd/ only call Main.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/provider"
	"github.com/suitegen/suitegen/pkg/queue"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitFail  = 1 // the job ran and did not succeed (refused, short, invalid)
	ExitUsage = 2
	// ExitRetry: the job did not finish, and running it again may succeed
	// (interrupted, a server out of reach); sysexits' EX_TEMPFAIL.
	ExitRetry = 75
)

// UsageError is a bad command line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// RetryError is a job that did not finish and may succeed when run again.
type RetryError struct{ Err error }

func (e *RetryError) Error() string { return e.Err.Error() }
func (e *RetryError) Unwrap() error { return e.Err }

type command struct {
	name, args, summary string
	run                 func(ctx context.Context, env *Env, args []string) error
}

// Env is what a command may touch of the process.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Log            *slog.Logger
	TTY            bool
}

var commands []command

func register(c command) { commands = append(commands, c) }

// Main runs a command line and returns the exit code. With prog "suitegen"
// the first argument names the subcommand; "planner", "writer" and
// "reviewer" are the distributed binaries.
func Main(prog string, args []string) int {
	env := &Env{Stdout: os.Stdout, Getenv: os.Getenv}
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		env.TTY = true
	}
	// Logs and the progress bar share stderr through one Terminal: on a
	// terminal log lines go above the bar, elsewhere each goes out whole.
	term := progress.NewTerminal(os.Stderr, env.TTY)
	env.Stderr = term
	args, log, err := logFlags(args, os.Getenv, term)
	if err != nil {
		fmt.Fprintf(term, "%s: %v\n", prog, err)
		return ExitUsage
	}
	env.Log = log
	slog.SetDefault(log) // what packages log through slog.Default goes the same way
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Dispatch(ctx, env, prog, args)
}

// roles are the distributed binaries, which the suitegen binary also is
// when run under their name.
var roles = []string{"planner", "writer", "reviewer"}

// ProgName is the program a binary called argv0 is: a role when its base
// name is one (a link to suitegen), else suitegen.
func ProgName(argv0 string) string {
	base := filepath.Base(argv0)
	if slices.Contains(roles, base) {
		return base
	}
	return "suitegen"
}

// Dispatch is Main without the process: for tests.
func Dispatch(ctx context.Context, env *Env, prog string, args []string) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || (prog == "suitegen" && args[0] == "version")) {
		fmt.Fprintf(env.Stdout, "%s %s\n", prog, Version())
		return ExitOK
	}
	name := prog
	if prog == "suitegen" {
		if len(args) == 0 {
			usage(env.Stderr)
			return ExitUsage
		}
		if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			usage(env.Stdout)
			return ExitOK
		}
		name, args = args[0], args[1:]
	}
	for _, c := range commands {
		if c.name == name {
			err := c.run(ctx, env, args)
			return exitCode(env, prog, name, err)
		}
	}
	fmt.Fprintf(env.Stderr, "suitegen: unknown command %q\n\n", name)
	usage(env.Stderr)
	return ExitUsage
}

func exitCode(env *Env, prog, name string, err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	// A distributed binary is its command: "planner: ...", not "planner planner: ...".
	who := prog
	if name != prog {
		who = prog + " " + name
	}
	var u *UsageError
	if errors.As(err, &u) {
		fmt.Fprintf(env.Stderr, "%s: %s\n", who, u.Msg)
		return ExitUsage
	}
	fmt.Fprintf(env.Stderr, "%s: %v\n", who, err)
	var retry *RetryError
	if errors.As(err, &retry) {
		return ExitRetry
	}
	return ExitFail
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "suitegen writes large, proved test suites for conversational agents.")
	fmt.Fprintln(w, "\nUsage: suitegen COMMAND [flags]\n\nCommands:")
	cs := append([]command(nil), commands...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-13s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'suitegen COMMAND --help' for a command's flags.")
	fmt.Fprintln(w, "\n"+globalFlagsHelp)
}

const globalFlagsHelp = `Flags of every command and binary:
  --version                      print the version and exit
  --log-format text|json         log line format (env SUITEGEN_LOG_FORMAT; default text)
  --log-level debug|info|warn|error
                                 lowest level logged (env SUITEGEN_LOG_LEVEL; default info;
                                 SUITEGEN_DEBUG=1 is --log-level debug)`

// flags builds a FlagSet whose defaults come from SUITEGEN_* variables.
// An environment value that does not parse is a usage error at parse time,
// like a bad flag value: a typo must not quietly become the default.
type flags struct {
	*flag.FlagSet
	env             *Env
	name, args, sum string
	errs            []error
}

func newFlags(env *Env, name, args, summary string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// parse prints help (to stdout, asked for) and errors (to stderr) itself.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{FlagSet: fs, env: env, name: name, args: args, sum: summary}
}

func (f *flags) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s %s\n\n%s\n\nFlags (each also read from SUITEGEN_<NAME> in the environment):\n", f.name, f.args, f.sum)
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
	fmt.Fprintln(w, "\n"+globalFlagsHelp)
}

func (f *flags) envErr(name, v, want string) {
	f.errs = append(f.errs, fmt.Errorf("%s=%q is not %s", envName(name), v, want))
}

func envName(flagName string) string {
	return "SUITEGEN_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (f *flags) str(name, def, help string) *string {
	if v := f.env.Getenv(envName(name)); v != "" {
		def = v
	}
	return f.String(name, def, help)
}

// secret is str for a value that may carry a credential (a token, a URL
// with a password): read from the environment like any flag, but never
// shown as the default in --help.
func (f *flags) secret(name, def, help string) *string {
	if v := f.env.Getenv(envName(name)); v != "" {
		def = v
	}
	p := f.String(name, "", help)
	*p = def
	return p
}

func (f *flags) num(name string, def int, help string) *int {
	if v := f.env.Getenv(envName(name)); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			def = n
		} else {
			f.envErr(name, v, "an integer")
		}
	}
	return f.Int(name, def, help)
}

func (f *flags) num64(name string, def int64, help string) *int64 {
	if v := f.env.Getenv(envName(name)); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			def = n
		} else {
			f.envErr(name, v, "an integer")
		}
	}
	return f.Int64(name, def, help)
}

func (f *flags) float(name string, def float64, help string) *float64 {
	if v := f.env.Getenv(envName(name)); v != "" {
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			def = x
		}
	}
	return f.Float64(name, def, help)
}

func (f *flags) dur(name string, def time.Duration, help string) *time.Duration {
	if v := f.env.Getenv(envName(name)); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			def = d
		} else {
			f.envErr(name, v, "a duration (e.g. 30s, 5m)")
		}
	}
	return f.Duration(name, def, help)
}

func (f *flags) boolean(name string, def bool, help string) *bool {
	if v := f.env.Getenv(envName(name)); v != "" {
		if b, err := strconv.ParseBool(v); err == nil {
			def = b
		} else {
			f.envErr(name, v, "a boolean (true or false)")
		}
	}
	return f.Bool(name, def, help)
}

// parse parses flags interleaved with positional arguments. -h prints the
// command's help to stdout (flag.ErrHelp: exit 0); a bad flag or
// environment value is a usage error (exit 2).
func (f *flags) parse(args []string) ([]string, error) {
	if len(f.errs) > 0 {
		return nil, &UsageError{errors.Join(f.errs...).Error()}
	}
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.usage(f.env.Stdout)
				return nil, err
			}
			return nil, &UsageError{err.Error() + " (see " + f.name + " -h)"}
		}
		rest := f.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// conn are the connection flags every process shares.
type conn struct {
	nats, database, stateDir, metricsAddr *string
	// Credentials and TLS: file paths, so secrets come from mounted files
	// rather than the command line.
	databaseFile, natsCreds, natsTLSCA, natsTLSCert, natsTLSKey *string
	// Queue tuning every process sharing the queue must agree on.
	ackWait    *time.Duration
	maxDeliver *int
	replicas   *int
	// startup bounds how long the first contact with each server is tried
	// again while the server is out of reach or not ready.
	startup *time.Duration
}

// DefaultStartupTimeout is the distributed roles' --startup-timeout: long
// enough for a database failover or a NATS cluster electing its leaders,
// short enough that a pod that cannot start is restarted by Kubernetes.
const DefaultStartupTimeout = 2 * time.Minute

// conn is the connection flags of a command run by hand: a server out of
// reach fails it at once (--startup-timeout 0).
func (f *flags) conn() conn { return f.connWith(0) }

// roleConn is the connection flags of a distributed role, which waits for
// its servers up to DefaultStartupTimeout.
func (f *flags) roleConn() conn { return f.connWith(DefaultStartupTimeout) }

func (f *flags) connWith(startup time.Duration) conn {
	return conn{
		startup:      f.dur("startup-timeout", startup, "how long to keep trying the database and NATS at start while they are out of reach or not ready (0: one try)"),
		nats:         f.secret("nats", f.env.Getenv("SUITEGEN_NATS_URL"), "NATS server URL (default: start an embedded one)"),
		database:     f.secret("database", f.env.Getenv("SUITEGEN_DATABASE_URL"), "PostgreSQL URL (default: start an embedded one); TLS is the URL's sslmode, sslrootcert, sslcert and sslkey"),
		stateDir:     f.str("state-dir", "", "where embedded servers keep their data (default: the user cache dir)"),
		metricsAddr:  f.str("metrics-addr", "", "serve /metrics, /healthz and /readyz on this address (e.g. :9090)"),
		databaseFile: f.str("database-url-file", "", "read the PostgreSQL URL from this file (e.g. a mounted secret); used when --database is empty"),
		natsCreds:    f.str("nats-creds", "", "NATS user credentials file (JWT and NKey seed)"),
		natsTLSCA:    f.str("nats-tls-ca", "", "PEM CA bundle to verify the NATS server with (turns TLS on)"),
		natsTLSCert:  f.str("nats-tls-cert", "", "PEM client certificate for NATS mutual TLS (with --nats-tls-key)"),
		natsTLSKey:   f.str("nats-tls-key", "", "PEM client key for NATS mutual TLS (with --nats-tls-cert)"),
		ackWait:      f.dur("ack-wait", queue.DefaultAckWait, "how long a slice may go without a writer's heartbeat before it is redelivered (same on every process)"),
		maxDeliver:   f.num("max-deliver", queue.DefaultMaxDeliver, "deliveries of one slice before the queue gives up on it, a backstop above the writers' --max-failures and --max-lost (same on every process)"),
		replicas:     f.num("queue-replicas", queue.DefaultReplicas, "NATS servers holding each slice, 1 to 5 and at most the cluster's size (3 survives losing one); used when the stream is created, never changed on an existing one"),
	}
}

// databaseURL is --database, or else the contents of --database-url-file.
// Errors name the file, never its contents.
func (cn conn) databaseURL() (string, error) {
	if *cn.database != "" || *cn.databaseFile == "" {
		return *cn.database, nil
	}
	b, err := os.ReadFile(*cn.databaseFile)
	if err != nil {
		return "", fmt.Errorf("--database-url-file: %w", err)
	}
	u := strings.TrimSpace(string(b))
	if u == "" {
		return "", fmt.Errorf("--database-url-file %s is empty", *cn.databaseFile)
	}
	return u, nil
}

// queueConfig is the queue configuration for the NATS server at url, with
// the credential and TLS files the flags name.
func (cn conn) queueConfig(url string) queue.Config {
	return queue.Config{URL: url, CredsFile: *cn.natsCreds, TLSCAFile: *cn.natsTLSCA,
		TLSCertFile: *cn.natsTLSCert, TLSKeyFile: *cn.natsTLSKey, AckWait: *cn.ackWait, MaxDeliver: *cn.maxDeliver, Replicas: *cn.replicas,
		StartupTimeout: max(*cn.startup, 0)}
}

// modelFlags are the model flags every writing process shares, with the
// provider variables the official SDKs read.
type modelFlags struct {
	model, baseURL, provider, reasoning, effort, pricesFile, price *string
	apiKey, azureEndpoint, azureKey, apiVersion                    string
	rpm, tpm                                                       *int
	window                                                         *time.Duration
}

// defaultModel is the model a process writes with when --model is not
// given: the same for a planner (which records it on the run) and its
// writers (which write only runs recorded with their model).
func (env *Env) defaultModel() string {
	if env.Getenv("OPENAI_API_KEY") != "" {
		return "gpt-4o-mini"
	}
	return "builtin"
}

func (f *flags) model() modelFlags {
	return modelFlags{
		model:         f.str("model", f.env.defaultModel(), "builtin, or the provider's model (for Azure: the deployment name)"),
		baseURL:       f.str("base-url", firstNonEmpty(f.env.Getenv("OPENAI_BASE_URL"), ""), "OpenAI-compatible endpoint (env OPENAI_BASE_URL; Azure reads AZURE_OPENAI_ENDPOINT)"),
		provider:      f.str("provider", "auto", "auto, openai, azure or openai-compatible (auto: from the URL and AZURE_OPENAI_ENDPOINT; docs/PROVIDERS.md)"),
		reasoning:     f.str("reasoning", "auto", "whether --model is a reasoning model (max_completion_tokens, no temperature): auto (from its name), yes or no"),
		effort:        f.str("reasoning-effort", "", "reasoning_effort sent to reasoning models (e.g. low, medium, high; empty: the provider's default)"),
		pricesFile:    f.str("prices", "", "JSON file of prices by model in dollars per million tokens, over the built-in table (docs/PROVIDERS.md)"),
		price:         f.str("price", "", "the price of --model: prompt=D,cached_prompt=D,completion=D,reasoning=D in dollars per million tokens"),
		apiKey:        f.env.Getenv("OPENAI_API_KEY"),
		azureEndpoint: f.env.Getenv("AZURE_OPENAI_ENDPOINT"),
		azureKey:      f.env.Getenv("AZURE_OPENAI_API_KEY"),
		apiVersion:    f.env.Getenv("OPENAI_API_VERSION"),
		rpm:           f.num("rpm", 0, "provider requests per minute (0: learn from headers)"),
		tpm:           f.num("tpm", 0, "provider tokens per minute, counted as providers count them: prompt + reply allowance (0: learn from headers)"),
		window:        f.dur("quota-window", time.Minute, "the provider's quota window: --rpm and --tpm are admitted so that no window of this length exceeds them"),
	}
}

// settings are the provider settings the flags give; a prices file or price
// that does not read is a usage error naming the flag.
func (mf modelFlags) settings() (provider.Settings, error) {
	s := provider.Settings{Provider: *mf.provider, BaseURL: *mf.baseURL, APIKey: mf.apiKey,
		AzureEndpoint: mf.azureEndpoint, AzureAPIKey: mf.azureKey, APIVersion: mf.apiVersion,
		Reasoning: *mf.reasoning, ReasoningEffort: *mf.effort, RPM: *mf.rpm, TPM: *mf.tpm, Window: *mf.window}
	if *mf.pricesFile != "" {
		fh, err := os.Open(*mf.pricesFile)
		if err != nil {
			return s, &UsageError{"--prices: " + err.Error()}
		}
		defer fh.Close()
		if s.Prices, err = model.ReadPrices(fh); err != nil {
			return s, &UsageError{fmt.Sprintf("--prices %s: %v", *mf.pricesFile, err)}
		}
	}
	if *mf.price != "" {
		p, err := model.ParsePrice(*mf.price)
		if err != nil {
			return s, &UsageError{"--price: " + err.Error()}
		}
		s.Price = &p
	}
	if err := s.Check(*mf.model); err != nil {
		return s, &UsageError{err.Error()}
	}
	return s, nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
