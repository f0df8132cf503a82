package cli

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestProgressAddrLocked: planner and run serve their progress page under
// serve's rule: beyond loopback only with a token (exit 2 naming the
// address without one), from the environment or a file.
func TestProgressAddrLocked(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("tok-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	commands := map[string][]string{
		"planner": {"planner", dir, "--run", "r1"},
		"run":     {"run", dir},
	}
	for name, cmd := range commands {
		for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "example.org:0"} {
			var out testenv.Buffer
			env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Log: discard()}
			args := append(append([]string{}, cmd...), "--progress-addr", addr)
			if code := Dispatch(context.Background(), env, "suitegen", args); code != ExitUsage ||
				!strings.Contains(out.String(), "--progress-addr "+addr+" listens beyond loopback") {
				t.Errorf("%s --progress-addr %s without a token: exit %d, want %d naming the address:\n%s", name, addr, code, ExitUsage, out.String())
			}
		}
		for what, extra := range map[string][]string{
			"SUITEGEN_TOKEN": nil,
			"--token-file":   {"--token-file", tokenFile},
			"loopback":       nil,
		} {
			var out testenv.Buffer
			env := &Env{Stdout: &out, Stderr: &out, Log: discard(), Getenv: func(k string) string {
				if k == "SUITEGEN_TOKEN" && what == "SUITEGEN_TOKEN" {
					return "tok-123"
				}
				return ""
			}}
			addr := ":0"
			if what == "loopback" {
				addr = "127.0.0.1:0"
			}
			args := append(append(append([]string{}, cmd...), "--progress-addr", addr), extra...)
			// The command fails later (no servers, no contract); what matters
			// is that the address was not the reason.
			Dispatch(context.Background(), env, "suitegen", args)
			if strings.Contains(out.String(), "beyond loopback") {
				t.Errorf("%s with a token from %s: refused the address:\n%s", name, what, out.String())
			}
		}
		var out testenv.Buffer
		env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Log: discard()}
		args := append(append([]string{}, cmd...), "--progress-addr", ":0", "--token-file", empty)
		if code := Dispatch(context.Background(), env, "suitegen", args); code != ExitUsage || !strings.Contains(out.String(), "is empty") {
			t.Errorf("%s with an empty --token-file: exit %d, want %d naming it:\n%s", name, code, ExitUsage, out.String())
		}
	}
}

// TestHelpHidesSecrets: a token or URL taken from the environment is not
// printed as a flag's default in --help.
func TestHelpHidesSecrets(t *testing.T) {
	secrets := map[string]string{
		"SUITEGEN_TOKEN":        "tok-secret-1",
		"SUITEGEN_DATABASE_URL": "postgres://app:pw-secret-2@db/x",
		"SUITEGEN_NATS_URL":     "nats://tok-secret-3@nats:4222",
	}
	for _, cmd := range []string{"serve", "planner", "writer", "reviewer", "run", "provider-sim"} {
		var out testenv.Buffer
		env := &Env{Stdout: &out, Stderr: &out, Log: discard(), Getenv: func(k string) string { return secrets[k] }}
		Dispatch(context.Background(), env, "suitegen", []string{cmd, "--help"})
		if !strings.Contains(out.String(), "Usage:") {
			t.Fatalf("%s --help printed no usage:\n%s", cmd, out.String())
		}
		for k, v := range secrets {
			if strings.Contains(out.String(), v) {
				t.Errorf("%s --help shows %s:\n%s", cmd, k, out.String())
			}
		}
	}
}

// TestProgressPageToken: the page planner serves with a token wants it on
// every endpoint but /healthz, and its log says a token guards it without
// saying the token.
func TestProgressPageToken(t *testing.T) {
	store := ledger.New(testenv.Postgres(t))
	var logs testenv.Buffer
	env := &Env{Log: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := serveProgress(ctx, env, "127.0.0.1:0", "tok-456", store)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	m := regexp.MustCompile(`url=http://(\S+)/`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no page URL logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "tok-456") {
		t.Errorf("the log shows the token:\n%s", logs.String())
	}
	base := "http://" + m[1]
	client := &http.Client{Timeout: time.Minute}
	for path, want := range map[string]int{"/": 401, "/api/runs": 401, "/api/runs?token=wrong": 401, "/healthz": 200, "/?token=tok-456": 200, "/api/runs?token=tok-456": 200} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	req, _ := http.NewRequest("GET", base+"/api/runs", nil)
	req.Header.Set("Authorization", "Bearer tok-456")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /api/runs with the token: %d", resp.StatusCode)
	}
	client.CloseIdleConnections()
}
