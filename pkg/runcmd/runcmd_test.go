package runcmd

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/cli"
)

func dispatch(args ...string) (int, string) {
	var out bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return cli.Dispatch(context.Background(), env, "suitegen", args), out.String()
}

func TestRunUsage(t *testing.T) {
	cli.Add(Command())
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--scenarios", "0", "x"}, "--scenarios"},
		{[]string{"run", "--writers", "-1", "x"}, "--writers"},
		{[]string{"run", "--rounds", "-1", "x"}, "--rounds"},
		{[]string{"run"}, "contract directory"},
	} {
		if code, out := dispatch(c.args...); code != cli.ExitUsage || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d, want %d naming %s:\n%s", c.args, code, cli.ExitUsage, c.want, out)
		}
	}
	if code, out := dispatch("help"); code != cli.ExitOK || !strings.Contains(out, "run ") {
		t.Errorf("suitegen help does not list run: exit %d\n%s", code, out)
	}
}

// TestErrorsPrefixedOnce: an error is printed after "suitegen CMD: " once,
// not again by the orchestrator ("suitegen run: run: ..."), and still names
// what is wrong. Each fails before any server starts.
func TestErrorsPrefixedOnce(t *testing.T) {
	cli.Add(Command())
	cli.Add(Revise())
	retail := filepath.Join("..", "..", "examples", "retail")
	empty := t.TempDir()
	missing := filepath.Join(empty, "missing")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", missing}, "suitegen run: " + missing + ": contract: "},
		{[]string{"run", retail, "--writers", "100"}, "suitegen run: --writers must be between 1 and 64, got 100"},
		{[]string{"run", retail, "--update", empty}, "suitegen run: " + empty + " is not a suite"},
		{[]string{"revise", empty, "--contract", retail, "--only", "a", "--ask", "harder"}, "suitegen revise: " + empty + " is not a suite"},
	} {
		code, out := dispatch(c.args...)
		if code == cli.ExitOK || !strings.HasPrefix(out, c.want) {
			t.Errorf("%v: exit %d, want a line starting %q:\n%s", c.args, code, c.want, out)
		}
	}
}
