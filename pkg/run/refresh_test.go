package run

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestUpdateCountsTheReproof: a run over a written suite (here --update)
// serves what re-proving the suite found, fresh and stale, under its run
// while it writes the stale scenarios again.
func TestUpdateCountsTheReproof(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, nc := testenv.PostgresURL(t), testenv.NATS(t)
	out := t.TempDir()
	if _, err := Run(t.Context(), Config{Dirs: []string{"../../examples/retail"}, Asked: 3, Writers: 1, Out: out, Seed: 3,
		DatabaseURL: db, NATSURL: nc, Logger: quiet}); err != nil {
		t.Fatalf("writing the suite: %v", err)
	}
	w, err := suite.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	// One scenario the contract no longer proves: its solution calls a tool
	// the contract does not have.
	stale := w.Scenarios[0]
	path := filepath.Join(out, "scenarios", stale.Name, "scenario.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tool := `"` + stale.Solution[0].Tool + `"`
	if !strings.Contains(string(b), tool) {
		t.Fatalf("%s does not name its first tool %s", path, tool)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), tool, `"no_such_tool"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m := &waitingModel{called: make(chan struct{}, 1), stop: make(chan struct{})}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Config{Dirs: []string{"../../examples/retail"}, Asked: 1, Writers: 1, Update: out, RunID: "update",
			Client: m, DatabaseURL: db, NATSURL: nc, MetricsAddr: addr, Logger: quiet})
		done <- err
	}()
	select {
	case <-m.called: // re-proved, planned, and a writer is at work on the stale one
	case err := <-done:
		t.Fatalf("the update ended before writing: %v", err)
	}
	body := scrape(t, "http://"+addr+"/metrics")
	for _, want := range []string{
		`suitegen_scenarios_reproved_total{result="fresh",role="planner",run="update"} ` + strconv.Itoa(len(w.Scenarios)-1),
		`suitegen_scenarios_reproved_total{result="stale",role="planner",run="update"} 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("no %s in /metrics:\n%s", want, body)
		}
	}
	close(m.stop)
	cancel()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		t.Error("the update did not stop within 3 minutes of its context ending")
	}
}
