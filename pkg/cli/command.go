package cli

import (
	"context"

	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/wire"
)

// Command is a command a main adds to this package's own. cmd/suitegen adds
// `run` (pkg/runcmd), so the distributed binaries, which share this
// package, do not link the single-process orchestrator.
type Command struct {
	Name, Args, Summary string
	Run                 func(ctx context.Context, env *Env, args []string) error
}

// Add registers c beside this package's commands; a main calls it before
// Main.
func Add(c Command) { register(command{c.Name, c.Args, c.Summary, c.Run}) }

// Flags is an added command's flag set: each flag is also read from
// SUITEGEN_<NAME>, and the connection and model flags are those every
// process shares.
type Flags struct{ f *flags }

// NewFlags returns the flag set of command name; args and summary are its
// usage line and description.
func NewFlags(env *Env, name, args, summary string) *Flags {
	return &Flags{newFlags(env, name, args, summary)}
}

// String defines a string flag.
func (f *Flags) String(name, def, help string) *string { return f.f.str(name, def, help) }

// Int defines an int flag.
func (f *Flags) Int(name string, def int, help string) *int { return f.f.num(name, def, help) }

// Int64 defines an int64 flag.
func (f *Flags) Int64(name string, def int64, help string) *int64 { return f.f.num64(name, def, help) }

// Float64 defines a float64 flag.
func (f *Flags) Float64(name string, def float64, help string) *float64 {
	return f.f.float(name, def, help)
}

// Bool defines a bool flag.
func (f *Flags) Bool(name string, def bool, help string) *bool { return f.f.boolean(name, def, help) }

// Parse parses flags interleaved with positional arguments and returns the
// positional ones; a bad command line is a *UsageError.
func (f *Flags) Parse(args []string) ([]string, error) { return f.f.parse(args) }

// Progress defines --progress-addr and the flags that guard the page it
// serves (--token, --token-file), as the planner has them.
func (f *Flags) Progress() Progress { return Progress{f.f.progress()} }

// Conn defines the connection flags every process shares.
func (f *Flags) Conn() Conn { return Conn{f.f.conn()} }

// Model defines the model flags every writing process shares.
func (f *Flags) Model() ModelFlags { return ModelFlags{f.f.model()} }

// Conn are the connection flags, read after Parse.
type Conn struct{ c conn }

// NATS is --nats ("" starts an embedded server).
func (c Conn) NATS() string { return *c.c.nats }

// StateDir is --state-dir.
func (c Conn) StateDir() string { return *c.c.stateDir }

// MetricsAddr is --metrics-addr.
func (c Conn) MetricsAddr() string { return *c.c.metricsAddr }

// DatabaseURL is --database, or the contents of --database-url-file.
func (c Conn) DatabaseURL() (string, error) { return c.c.databaseURL() }

// Queue is the queue configuration the flags give, without a URL.
func (c Conn) Queue() queue.Config { return c.c.queueConfig("") }

// Progress are the progress page's flags, read after Parse.
type Progress struct{ p progressFlags }

// Addr is --progress-addr ("": no page).
func (p Progress) Addr() string { return *p.p.addr }

// Token is the token the page requires ("" for none): --token, else the
// first line of --token-file. An address beyond loopback without one, or a
// token file that cannot be read, is a *UsageError.
func (p Progress) Token() (string, error) { return p.p.token() }

// ModelFlags are the model flags, read after Parse.
type ModelFlags struct{ m modelFlags }

// Model is the model the flags name, with its provider settings; settings
// that cannot work are a *UsageError naming what to set.
func (m ModelFlags) Model() (wire.Model, error) { return m.m.wire() }

// wire is the model the flags name.
func (m modelFlags) wire() (wire.Model, error) {
	ps, err := m.settings()
	if err != nil {
		return wire.Model{}, err
	}
	return wire.Model{Name: *m.model, Provider: ps}, nil
}
