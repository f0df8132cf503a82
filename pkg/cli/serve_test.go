package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestServe: `suitegen serve` serves the page and the read-only API over a
// ledger, refuses writes, and stops when its context ends.
func TestServe(t *testing.T) {
	var out testenv.Buffer
	db := testenv.PostgresURL(t)
	env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Log: discard()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Dispatch(ctx, env, "suitegen", []string{"serve", "--addr", "127.0.0.1:0", "--database", db})
	}()
	var base string
	for deadline := time.Now().Add(testenv.Patience); base == ""; {
		if m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`).FindStringSubmatch(out.String()); m != nil {
			base = "http://" + m[1]
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err := http.Get(base + "/api/runs")
	if err != nil {
		t.Fatal(err)
	}
	var runs struct {
		Runs []any `json:"runs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&runs); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/runs: %d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	page, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page.Body.Close()
	if page.StatusCode != http.StatusOK || !strings.Contains(page.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /: %d %s", page.StatusCode, page.Header.Get("Content-Type"))
	}
	post, err := http.Post(base+"/api/runs", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/runs: %d, want 405", post.StatusCode)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("serve exited %d after its context ended, want %d:\n%s", code, ExitOK, out.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}
	if code := Dispatch(context.Background(), env, "suitegen", []string{"serve"}); code != ExitUsage {
		t.Errorf("serve without a database: exit %d, want %d", code, ExitUsage)
	}
}

// TestServeLocked: beyond loopback serve wants a token (exit 2 without one,
// naming the address); with one, every endpoint but /healthz wants it.
func TestServeLocked(t *testing.T) {
	db := testenv.PostgresURL(t)
	for _, addr := range []string{":0", "0.0.0.0:0", "[::]:0", "example.org:0"} {
		var out testenv.Buffer
		env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Log: discard()}
		if code := Dispatch(context.Background(), env, "suitegen", []string{"serve", "--addr", addr, "--database", db}); code != ExitUsage || !strings.Contains(out.String(), addr) {
			t.Errorf("serve --addr %s without a token: exit %d, want %d naming the address:\n%s", addr, code, ExitUsage, out.String())
		}
	}
	var out testenv.Buffer
	env := &Env{Stdout: &out, Stderr: &out, Log: discard(), Getenv: func(k string) string {
		if k == "SUITEGEN_TOKEN" {
			return "tok-123"
		}
		return ""
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Dispatch(ctx, env, "suitegen", []string{"serve", "--addr", ":0", "--database", db}) }()
	defer func() { cancel(); <-done }()
	var port string
	for deadline := time.Now().Add(testenv.Patience); port == ""; time.Sleep(20 * time.Millisecond) {
		if m := regexp.MustCompile(`http://\S*:(\d+)/`).FindStringSubmatch(out.String()); m != nil {
			port = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", out.String())
		}
	}
	if strings.Contains(out.String(), "tok-123") {
		t.Errorf("serve printed its token:\n%s", out.String())
	}
	base := "http://127.0.0.1:" + port
	for path, want := range map[string]int{"/": 401, "/api/runs": 401, "/healthz": 200, "/?token=tok-123": 200} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	req, _ := http.NewRequest("GET", base+"/api/runs", nil)
	req.Header.Set("Authorization", "Bearer tok-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /api/runs with the token: %d", resp.StatusCode)
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:1": true, "[::1]:80": true, "127.9.9.9:1": true,
		":8080": false, "0.0.0.0:80": false, "[::]:80": false, "10.0.0.1:80": false, "example.org:80": false, "nonsense": false} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestServeMetrics: with --metrics-addr serve is the exporter of the ledger's run figures
// (with /healthz, /readyz and its build info); its flags refuse nonsense with exit 2, and a
// taken metrics port fails at start.
func TestServeMetrics(t *testing.T) {
	db := testenv.PostgresURL(t)
	pool, err := engine.Pool(context.Background(), db, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := ledger.New(pool)
	if _, err := store.CreateRun(context.Background(), ledger.Run{ID: "r1", Agent: "shop", Model: "builtin", Asked: 10, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	var out testenv.Buffer
	env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Log: discard()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- Dispatch(ctx, env, "suitegen", []string{"serve", "--addr", "127.0.0.1:0", "--database", db,
			"--metrics-addr", "127.0.0.1:0", "--metrics-cache", "1s"})
	}()
	re := regexp.MustCompile(`run figures for Prometheus on http://(127\.0\.0\.1:\d+)/metrics`)
	var base string
	for deadline := time.Now().Add(testenv.Patience); base == ""; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = "http://" + m[1]
		} else if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve did not start its metrics:\n%s", out.String())
		}
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/metrics")
	for _, want := range []string{"suitegen_ledger_up 1", `suitegen_run_scenarios_asked{run="r1"} 10`, `suitegen_run_scenarios_proved_total{run="r1"} 0`,
		`suitegen_run_scenarios_refused_total{code="placeholder",gate="static",run="r1"} 0`, `suitegen_ready{role="serve"} 1`, `role="serve"`, "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code != 200 || t.Failed() {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(path); code != 200 {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	// The port is taken now: a second serve on it fails at start, naming the flag.
	var out2 testenv.Buffer
	env2 := &Env{Stdout: &out2, Stderr: &out2, Getenv: func(string) string { return "" }, Log: discard()}
	taken := strings.TrimPrefix(base, "http://")
	if code := Dispatch(context.Background(), env2, "suitegen", []string{"serve", "--addr", "127.0.0.1:0", "--database", db, "--metrics-addr", taken}); code != ExitFail || !strings.Contains(out2.String(), "--metrics-addr") {
		t.Errorf("serve on a taken metrics port: exit %d:\n%s", code, out2.String())
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("serve exited %d after its context ended:\n%s", code, out.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}

	for _, args := range [][]string{{"--metrics-max-runs", "0"}, {"--metrics-cache", "0s"}, {"--metrics-retain", "-1h"}, {"--stall-after", "0s"}} {
		var o testenv.Buffer
		e := &Env{Stdout: &o, Stderr: &o, Getenv: func(string) string { return "" }, Log: discard()}
		if code := Dispatch(context.Background(), e, "suitegen", append([]string{"serve", "--database", db}, args...)); code != ExitUsage || !strings.Contains(o.String(), args[0]) {
			t.Errorf("serve %v: exit %d, want %d naming the flag:\n%s", args, code, ExitUsage, o.String())
		}
	}
	var o testenv.Buffer
	e := &Env{Stdout: &o, Stderr: &o, Log: discard(), Getenv: func(k string) string {
		if k == "SUITEGEN_METRICS_RETAIN" {
			return "a day"
		}
		return ""
	}}
	if code := Dispatch(context.Background(), e, "suitegen", []string{"serve", "--database", db}); code != ExitUsage || !strings.Contains(o.String(), "SUITEGEN_METRICS_RETAIN") {
		t.Errorf("SUITEGEN_METRICS_RETAIN=%q: exit %d:\n%s", "a day", code, o.String())
	}
}
