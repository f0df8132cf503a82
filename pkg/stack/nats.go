package stack

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// NATSConfig configures an embedded NATS server.
type NATSConfig struct {
	// StoreDir holds JetStream file storage. Required.
	StoreDir string
	// Host to listen on; default 127.0.0.1. Anything else is refused:
	// a server reachable from other machines is one given by URL.
	Host string
	// Token every client must present (nats://TOKEN@host:port, as URL gives
	// it). Empty: one is made on the first start and kept in StoreDir
	// (TokenFileName, mode 0600), so a server restarted on the same store
	// takes its clients back. Other users of the machine can reach
	// 127.0.0.1, not the token.
	Token string
	// Port to listen on; 0 picks a free port.
	Port int
	// Logger receives server logs when Verbose is set. Default: slog.Default().
	Logger *slog.Logger
	// Verbose forwards the server's notices, warnings and errors to Logger;
	// otherwise the server is silent.
	Verbose bool
	// MaxMemory and MaxStore cap JetStream resources in bytes; 0 keeps the
	// server's defaults.
	MaxMemory, MaxStore int64
	// ReadyTimeout bounds the wait for the server to accept clients; default 10s.
	ReadyTimeout time.Duration
}

func (c *NATSConfig) validate() error {
	if c.StoreDir == "" {
		return errors.New("stack: NATSConfig.StoreDir is required")
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("stack: NATSConfig.Port %d out of range", c.Port)
	}
	if c.MaxMemory < 0 || c.MaxStore < 0 {
		return errors.New("stack: NATSConfig.MaxMemory and MaxStore must not be negative")
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if !loopbackHost(c.Host) {
		return fmt.Errorf("stack: NATSConfig.Host %q is not a loopback address: the embedded server is for this machine only", c.Host)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.ReadyTimeout <= 0 {
		c.ReadyTimeout = 10 * time.Second
	}
	return nil
}

// TokenFileName is the file in a NATS store dir that keeps the server's
// client token (mode 0600).
const TokenFileName = "token"

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// storeToken is the token kept in dir, made (and the dir, mode 0700) when
// there is none yet.
func storeToken(dir string) (string, error) {
	file := filepath.Join(dir, TokenFileName)
	b, err := os.ReadFile(file)
	if err == nil {
		if tok := strings.TrimSpace(string(b)); tok != "" {
			return tok, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("stack: nats token: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("stack: nats store: %w", err)
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("stack: nats token: %w", err)
	}
	tok := hex.EncodeToString(raw)
	if err := os.WriteFile(file, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("stack: nats token: %w", err)
	}
	return tok, nil
}

// NATS is a running embedded NATS server with JetStream.
type NATS struct {
	srv *server.Server
	url string
}

// StartNATS starts an in-process NATS server with JetStream file storage under
// cfg.StoreDir, on loopback and behind a token, and waits until it accepts
// connections.
func StartNATS(cfg NATSConfig) (*NATS, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	token := cfg.Token
	if token == "" {
		var err error
		if token, err = storeToken(cfg.StoreDir); err != nil {
			return nil, err
		}
	}
	port := cfg.Port
	if port == 0 {
		port = server.RANDOM_PORT
	}
	opts := &server.Options{
		ServerName:         "suitegen",
		Host:               cfg.Host,
		Port:               port,
		JetStream:          true,
		StoreDir:           cfg.StoreDir,
		JetStreamMaxMemory: cfg.MaxMemory,
		JetStreamMaxStore:  cfg.MaxStore,
		NoSigs:             true, // signals belong to the host process
		NoLog:              !cfg.Verbose,
		Authorization:      token,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("stack: configure nats: %w", err)
	}
	if cfg.Verbose {
		srv.SetLoggerV2(natsLogger{cfg.Logger.With("component", "nats")}, false, false, false)
	}
	srv.Start()
	if !srv.ReadyForConnections(cfg.ReadyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("stack: nats not ready within %s (store %s)", cfg.ReadyTimeout, cfg.StoreDir)
	}
	if !srv.JetStreamEnabled() {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("stack: nats started without JetStream (store %s)", cfg.StoreDir)
	}
	u, err := url.Parse(srv.ClientURL())
	if err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("stack: nats client URL: %w", err)
	}
	u.User = url.User(token) // a user without a password is a token to nats.go
	return &NATS{srv: srv, url: u.String()}, nil
}

// URL is the client URL with the token, e.g. nats://TOKEN@127.0.0.1:4222:
// a credential, never to be logged (redact it).
func (n *NATS) URL() string { return n.url }

// Shutdown stops the server and waits until it has fully stopped. It is safe
// to call more than once.
func (n *NATS) Shutdown() {
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
}

// natsLogger adapts slog to the server's printf-style logger.
type natsLogger struct{ l *slog.Logger }

func (g natsLogger) Noticef(f string, v ...any) { g.l.Info(fmt.Sprintf(f, v...)) }
func (g natsLogger) Warnf(f string, v ...any)   { g.l.Warn(fmt.Sprintf(f, v...)) }
func (g natsLogger) Fatalf(f string, v ...any)  { g.l.Error(fmt.Sprintf(f, v...)) }
func (g natsLogger) Errorf(f string, v ...any)  { g.l.Error(fmt.Sprintf(f, v...)) }
func (g natsLogger) Debugf(f string, v ...any)  { g.l.Debug(fmt.Sprintf(f, v...)) }
func (g natsLogger) Tracef(f string, v ...any)  { g.l.Debug(fmt.Sprintf(f, v...)) }
