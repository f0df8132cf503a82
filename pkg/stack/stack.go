package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Config says what the stack needs; anything given by URL is used as is and
// not started.
type Config struct {
	// StateDir holds nats/ and pg/; default os.UserCacheDir()/suitegen. One
	// process at a time: a second Start on a state dir whose Postgres is
	// running fails with ErrDataDirInUse (Postgres starts first, so NATS's
	// store is never shared either).
	StateDir string
	// NATSURL, when set, is an existing NATS server to use.
	NATSURL string
	// DatabaseURL, when set, is an existing PostgreSQL database to use.
	DatabaseURL string
	// NATSPort and PostgresPort fix the ports of started servers; 0 picks
	// free ones.
	NATSPort, PostgresPort int
	// Logger for lifecycle messages; default slog.Default().
	Logger *slog.Logger
}

func (c *Config) validate() error {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.StateDir == "" && (c.NATSURL == "" || c.DatabaseURL == "") {
		cache, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("stack: Config.StateDir not set and no user cache dir: %w", err)
		}
		c.StateDir = filepath.Join(cache, "suitegen")
	}
	if c.NATSPort < 0 || c.NATSPort > 65535 {
		return fmt.Errorf("stack: Config.NATSPort %d out of range", c.NATSPort)
	}
	if c.PostgresPort < 0 || c.PostgresPort > 65535 {
		return fmt.Errorf("stack: Config.PostgresPort %d out of range", c.PostgresPort)
	}
	return nil
}

// URLFileName is the file in the state dir that holds the embedded
// PostgreSQL's URL, password included (mode 0600), for separate processes:
// --database-url-file, or SUITEGEN_DATABASE_URL="$(cat FILE)".
const URLFileName = "database-url"

// NATSURLFileName is the file in the state dir that holds the embedded NATS
// server's URL, token included (mode 0600), for separate processes:
// SUITEGEN_NATS_URL="$(cat FILE)".
const NATSURLFileName = "nats-url"

// Stack is NATS plus PostgreSQL, started or given.
type Stack struct {
	NATSURL     string
	DatabaseURL string

	// DatabaseURLFile holds DatabaseURL when the stack started PostgreSQL.
	DatabaseURLFile string
	// NATSURLFile holds NATSURL when the stack started NATS.
	NATSURLFile string

	nats *NATS     // nil when given by URL
	pg   *Postgres // nil when given by URL
}

// Start starts whatever cfg does not give by URL. It does not run
// migrations: callers run migrate.Apply against DatabaseURL.
func Start(ctx context.Context, cfg Config) (*Stack, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Stack{NATSURL: cfg.NATSURL, DatabaseURL: cfg.DatabaseURL}
	if s.DatabaseURL == "" {
		pg, err := StartPostgres(ctx, PostgresConfig{
			DataDir: filepath.Join(cfg.StateDir, "pg"),
			URLFile: filepath.Join(cfg.StateDir, URLFileName),
			Port:    cfg.PostgresPort,
			Logger:  cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
		s.pg, s.DatabaseURL = pg, pg.URL()
		s.DatabaseURLFile = filepath.Join(cfg.StateDir, URLFileName)
	}
	if s.NATSURL == "" {
		n, err := StartNATS(NATSConfig{
			StoreDir: filepath.Join(cfg.StateDir, "nats"),
			Port:     cfg.NATSPort,
			Logger:   cfg.Logger,
		})
		if err != nil {
			return nil, errors.Join(err, s.Stop(context.WithoutCancel(ctx)))
		}
		s.nats, s.NATSURL = n, n.URL()
		s.NATSURLFile = filepath.Join(cfg.StateDir, NATSURLFileName)
		if err := os.WriteFile(s.NATSURLFile, []byte(s.NATSURL+"\n"), 0o600); err != nil {
			return nil, errors.Join(fmt.Errorf("stack: %w", err), s.Stop(context.WithoutCancel(ctx)))
		}
	}
	return s, nil
}

// Stop stops what Start started; servers given by URL are left alone.
func (s *Stack) Stop(ctx context.Context) error {
	if s.nats != nil {
		s.nats.Shutdown()
		s.nats = nil
	}
	var err error
	if s.pg != nil {
		err = s.pg.Stop(ctx)
		s.pg = nil
	}
	return err
}

// Serve is "suitegen stack": start the stack, print its URLs as shell
// exports to out, block until ctx is done (the caller cancels it on SIGINT or
// SIGTERM), then stop it. Neither the database's password nor the NATS
// token is printed: the export lines read the URLs from the state dir's
// URLFileName and NATSURLFileName.
func Serve(ctx context.Context, cfg Config, out io.Writer) error {
	s, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	dbLine := "export SUITEGEN_DATABASE_URL=" + shellQuote(s.DatabaseURL)
	shown := s.DatabaseURL
	if s.pg != nil {
		file := s.DatabaseURLFile
		dbLine = `export SUITEGEN_DATABASE_URL="$(cat ` + shellQuote(file) + `)"`
		shown = redact(s.DatabaseURL) + " (password in " + file + ")"
	}
	natsLine := "export SUITEGEN_NATS_URL=" + shellQuote(s.NATSURL)
	natsShown := s.NATSURL
	if s.nats != nil {
		file := s.NATSURLFile
		natsLine = `export SUITEGEN_NATS_URL="$(cat ` + shellQuote(file) + `)"`
		natsShown = redact(s.NATSURL) + " (token in " + file + ")"
	}
	_, werr := fmt.Fprintf(out,
		"# suitegen stack is running; stop it with Ctrl-C\n# NATS:       %s\n# PostgreSQL: %s\n%s\n%s\n",
		natsShown, shown, natsLine, dbLine)
	if werr == nil {
		<-ctx.Done()
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		return errors.Join(werr, err)
	}
	if werr != nil {
		return fmt.Errorf("stack: write urls: %w", werr)
	}
	return nil
}

// redact is a URL without its password, or without its user when that is a
// token (a user without a password, as NATS has it).
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, hasPassword := u.User.Password(); !hasPassword {
		u.User = nil
		return u.String()
	}
	u.User = url.User(u.User.Username())
	return u.String()
}

// shellQuote single-quotes s for POSIX shells.
func shellQuote(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			out = append(out, `'\''`...)
			continue
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
