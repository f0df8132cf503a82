package stack

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// stateDir returns a state dir whose pg/ already holds a cluster.
func stateDir(t *testing.T) string {
	t.Helper()
	return filepath.Dir(clusterDir(t))
}

func checkStack(t *testing.T, s *Stack) {
	t.Helper()
	var one int
	query(t, s.DatabaseURL, `SELECT 1`, &one)
	nc, _ := jsConnect(t, s.NATSURL)
	nc.Close()
}

func TestTwoStacksSideBySide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, err := Start(ctx, Config{StateDir: stateDir(t), Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop(ctx)
	b, err := Start(ctx, Config{StateDir: stateDir(t), Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Stop(ctx)
	if a.NATSURL == b.NATSURL || a.DatabaseURL == b.DatabaseURL {
		t.Fatalf("stacks share servers: %+v %+v", a, b)
	}
	checkStack(t, a)
	checkStack(t, b)
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	checkStack(t, b) // stopping one leaves the other alone
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestStackUsesGivenURLs(t *testing.T) {
	s, err := Start(context.Background(), Config{NATSURL: "nats://example:4222", DatabaseURL: "postgres://x@example/db"})
	if err != nil {
		t.Fatal(err)
	}
	if s.NATSURL != "nats://example:4222" || s.DatabaseURL != "postgres://x@example/db" || s.nats != nil || s.pg != nil {
		t.Fatalf("Start with URLs started something: %+v", s)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestServePrintsExportsAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, Config{StateDir: stateDir(t), Logger: discard}, &out) }()

	exports := map[string]string{}
	deadline := time.Now().Add(15 * time.Minute) // long: a busy machine is slow, not hung
	for len(exports) < 2 {
		select {
		case err := <-done:
			t.Fatalf("Serve returned early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no exports printed; output so far:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
		for _, line := range strings.Split(out.String(), "\n") {
			if k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "="); ok && strings.HasPrefix(line, "export ") {
				if strings.HasPrefix(v, "'") {
					v = strings.Trim(v, "'")
				}
				exports[k] = v
			}
		}
	}
	// The database line reads the URL from a file only its owner may read:
	// the password is never printed.
	m := regexp.MustCompile(`^"\$\(cat '([^']+)'\)"$`).FindStringSubmatch(exports["SUITEGEN_DATABASE_URL"])
	if m == nil {
		t.Fatalf("SUITEGEN_DATABASE_URL export %q does not read a file", exports["SUITEGEN_DATABASE_URL"])
	}
	b, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(m[1]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v, want mode 0600", m[1], fi, err)
	}
	// So does the NATS line: the token is never printed either.
	mn := regexp.MustCompile(`^"\$\(cat '([^']+)'\)"$`).FindStringSubmatch(exports["SUITEGEN_NATS_URL"])
	if mn == nil {
		t.Fatalf("SUITEGEN_NATS_URL export %q does not read a file", exports["SUITEGEN_NATS_URL"])
	}
	nb, err := os.ReadFile(mn[1])
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(mn[1]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v, want mode 0600", mn[1], fi, err)
	}
	nu, err := url.Parse(strings.TrimSpace(string(nb)))
	if err != nil || nu.User == nil || len(nu.User.Username()) < 32 || strings.Contains(out.String(), nu.User.Username()) {
		t.Fatalf("the NATS URL's token is missing, short, or printed (%v):\n%s", err, out.String())
	}
	s := &Stack{NATSURL: strings.TrimSpace(string(nb)), DatabaseURL: strings.TrimSpace(string(b))}
	u, err := url.Parse(s.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	if pw, ok := u.User.Password(); !ok || len(pw) < 32 || strings.Contains(out.String(), pw) {
		t.Fatalf("the URL's password is missing, short, or printed:\n%s", out.String())
	}
	checkStack(t, s)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	short, c2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer c2()
	if conn, err := pgx.Connect(short, s.DatabaseURL); err == nil {
		conn.Close(short)
		t.Fatal("database still accepting connections after Serve returned")
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222": `'nats://127.0.0.1:4222'`,
		"it's":                  `'it'\''s'`,
		"":                      `''`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
