package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestSecretsNeverLeak runs `suitegen run` with an API key against
// provider-sim (which fails some calls, so error paths run too) and a
// database URL carrying a password, and checks that neither secret appears in
// its stdout and stderr, its /metrics, its progress API, or any file it wrote.
// It also makes the planner fail to reach a NATS server and a PostgreSQL
// server whose URLs carry passwords, and checks their errors. And the
// progress API refuses every method that could change something.
func TestSecretsNeverLeak(t *testing.T) {
	testenv.OutsideRace(t, inBinaries)
	t.Parallel()
	dir := examples(t, "rides")
	apiKey := "sk-test-SECRET-" + secRandomHex(t, 12)
	// The application role's URL on the test server carries its password.
	dbURL := testenv.PostgresURL(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	role := u.User.Username()
	password, _ := u.User.Password()
	if len(password) < 24 {
		t.Fatalf("the database URL carries no password worth looking for: %q", password)
	}
	secrets := []string{apiKey, password, apiKey[len(apiKey)-12:], password[len(password)-12:]}

	sim := startF(t, nil, "suitegen", "provider-sim", dir, "--addr", "127.0.0.1:0", "--seed", "3",
		"--fault-500", "0.05", "--fault-429", "0.05", "--fault-malformed", "0.02")
	simBase := waitFor(t, sim, simListening, 30*time.Second)

	metricsAddr, progressAddr := secFreeAddr(t), secFreeAddr(t)
	out := t.TempDir()
	// The database URL comes from a file, as a mounted secret would.
	dbFile := filepath.Join(t.TempDir(), "database-url")
	if err := os.WriteFile(dbFile, []byte(dbURL+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_API_KEY=" + apiKey, "OPENAI_BASE_URL=" + simBase + "/v1", "SUITEGEN_DEBUG=1",
		"SUITEGEN_DATABASE_URL_FILE=" + dbFile}
	p := startF(t, env, "suitegen", "run", dir, "--scenarios", "12", "--writers", "2", "--out", out,
		"--model", "sim-builtin", "--nats", testenv.NATS(t), "--metrics-addr", metricsAddr,
		"--progress-addr", progressAddr, "--run", "secrets-1")

	// Scrape /metrics and the progress API while it runs; keep everything.
	var scraped bytes.Buffer
	readOnlyChecked := false
	for !p.exited() {
		for _, u := range []string{"http://" + metricsAddr + "/metrics", "http://" + progressAddr + "/api/runs",
			"http://" + progressAddr + "/api/runs/secrets-1", "http://" + progressAddr + "/"} {
			if body, err := secGet(u); err == nil {
				scraped.WriteString(body)
			}
		}
		if !readOnlyChecked {
			readOnlyChecked = checkReadOnly(t, "http://"+progressAddr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := p.await(time.Second); err != nil {
		t.Fatalf("suitegen run: %v\n%s", err, p.output())
	}
	if !readOnlyChecked {
		t.Error("the progress API never answered while the run was up")
	}
	if !strings.Contains(scraped.String(), "suitegen_") {
		t.Error("never scraped /metrics while the run was up")
	}

	// Failures whose URLs carry passwords: the errors must not quote them.
	natsWithPassword := "nats://suitegen:" + password + "@127.0.0.1:1"
	// --startup-timeout 0: fail at the first try instead of waiting for the servers.
	fail1 := startF(t, []string{"SUITEGEN_DATABASE_URL=" + dbURL}, "planner", dir, "--run", "x", "--nats", natsWithPassword, "--startup-timeout", "0")
	pgWithPassword := "postgres://" + role + ":" + password + "@127.0.0.1:1/suitegen?sslmode=disable&connect_timeout=2"
	fail2 := startF(t, nil, "planner", dir, "--run", "x", "--nats", testenv.NATS(t), "--database", pgWithPassword, "--startup-timeout", "0")
	for _, f := range []*fproc{fail1, fail2} {
		if err := f.await(time.Minute); err == nil {
			t.Errorf("%v succeeded against an unreachable server", f.cmd.Args)
		}
	}

	// The worlds' own passwords, kept in the ledger, must not leak either.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, `SELECT copy_password FROM suitegen_worlds`)
	if err != nil {
		t.Fatal(err)
	}
	worldPasswords, err := pgx.CollectRows(rows, pgx.RowTo[string])
	_ = conn.Close(ctx)
	if err != nil || len(worldPasswords) == 0 {
		t.Fatalf("world passwords: %v %v", worldPasswords, err)
	}
	secrets = append(secrets, worldPasswords...)

	where := map[string]string{
		"suitegen run output":                        p.output(),
		"/metrics and progress API":                  scraped.String(),
		"planner error (NATS URL with password)":     fail1.output(),
		"planner error (database URL with password)": fail2.output(),
	}
	if !strings.Contains(fail1.output(), "xxxxx") {
		t.Errorf("the NATS failure does not show the redacted URL:\n%s", fail1.output())
	}
	_ = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		where[path] = string(b)
		return nil
	})
	if len(where) < 8 {
		t.Fatalf("only %d places to look: the run wrote almost nothing", len(where))
	}
	for place, text := range where {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("a secret (%s…) appears in %s", s[:6], place)
			}
		}
	}
}

// checkReadOnly sends every changing method to the progress API and wants
// 405 for each; false when the server is not up yet.
func checkReadOnly(t *testing.T, base string) bool {
	t.Helper()
	if _, err := secGet(base + "/api/runs"); err != nil {
		return false
	}
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		for _, path := range []string{"/", "/api/runs", "/api/runs/secrets-1"} {
			req, _ := http.NewRequest(method, base+path, strings.NewReader(`{"state":"done"}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("%s %s: %v", method, path, err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s answered %s, want 405: the progress API must be read-only", method, path, resp.Status)
			}
		}
	}
	return true
}

func secGet(u string) (string, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return string(b), err
}

func secFreeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func secRandomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
