package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/reviewer"
)

// TestRolesNeedSharedServers: a distributed role started without --nats or
// --database is a usage error naming the flag, not a process that quietly
// runs on private servers of its own and never sees the run.
func TestRolesNeedSharedServers(t *testing.T) {
	for _, c := range []struct {
		prog string
		args []string
		env  map[string]string
		want string
	}{
		{"writer", nil, nil, "--nats"},
		{"writer", nil, map[string]string{"SUITEGEN_NATS_URL": "nats://127.0.0.1:1"}, "--database"},
		{"planner", []string{"x", "--run", "r"}, map[string]string{"SUITEGEN_DATABASE_URL": "postgres://x"}, "--nats"},
		{"reviewer", []string{"--run", "r"}, map[string]string{"SUITEGEN_NATS_URL": "nats://127.0.0.1:1"}, "--database"},
	} {
		var out bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &out, Getenv: func(k string) string { return c.env[k] }, Log: discard()}
		code := Dispatch(context.Background(), env, c.prog, c.args)
		if code != ExitUsage || !strings.Contains(out.String(), c.want) {
			t.Errorf("%s %v with %v: exit %d, want %d naming %s:\n%s", c.prog, c.args, c.env, code, ExitUsage, c.want, out.String())
		}
	}
}

// TestJobExitCodes: a run that failed or cannot run exits 1 (a Job retry
// changes nothing); anything else exits 75 (a retry may succeed).
func TestJobExitCodes(t *testing.T) {
	final := []error{
		&planner.ShortError{Agent: "a", Proved: 1, Asked: 50},
		&reviewer.FailedError{Run: "r", Reason: "short"},
		fmt.Errorf("prepare: %w", planner.ErrPlanRefused),
		fmt.Errorf("run r: %w", ledger.ErrNotFound),
		fmt.Errorf("%w (run r)", reviewer.ErrCancelled),
		&ledger.TransitionError{Of: "run", From: "done", To: "writing"},
	}
	retry := []error{
		context.Canceled,
		errors.New("dial tcp 127.0.0.1:4222: connection refused"),
		&reviewer.NotReadyError{Run: "r", State: ledger.RunWriting},
	}
	for _, err := range final {
		if got := exitCode(&Env{Stderr: &bytes.Buffer{}}, "planner", "planner", jobError(err)); got != ExitFail {
			t.Errorf("%v: exit %d, want %d", err, got, ExitFail)
		}
	}
	for _, err := range retry {
		if got := exitCode(&Env{Stderr: &bytes.Buffer{}}, "planner", "planner", jobError(err)); got != ExitRetry {
			t.Errorf("%v: exit %d, want %d", err, got, ExitRetry)
		}
	}
	if jobError(nil) != nil {
		t.Error("success is an error")
	}
}

// TestErrorsPrefixedOnce: a distributed binary is its command, so its errors
// read "planner: ...", not "planner planner: ..."; export's read
// "suitegen export: suite: ...", not "... export: suite: export: ...".
func TestErrorsPrefixedOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		prog string
		args []string
		want string
	}{
		{"planner", []string{"--bogus"}, "planner: flag provided but not defined: -bogus"},
		{"reviewer", []string{"--run", "r"}, "reviewer: --nats"},
		{"writer", []string{"--bogus"}, "writer: flag provided but not defined: -bogus"},
		{"suitegen", []string{"export", missing}, "suitegen export: suite: open " + filepath.Join(missing, "index.json")},
	} {
		var out bytes.Buffer
		env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Log: discard()}
		if code := Dispatch(context.Background(), env, c.prog, c.args); code == ExitOK || !strings.HasPrefix(out.String(), c.want) {
			t.Errorf("%s %v: exit %d, want a line starting %q:\n%s", c.prog, c.args, code, c.want, out.String())
		}
	}
}
