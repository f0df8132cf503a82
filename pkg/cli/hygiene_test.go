package cli

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
)

// run1 dispatches with separate stdout and stderr and a fixed environment.
func run1(t *testing.T, envv map[string]string, prog string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	env := &Env{Stdout: &o, Stderr: &e, Log: discard(), Getenv: func(k string) string { return envv[k] }}
	code = Dispatch(context.Background(), env, prog, args)
	return code, o.String(), e.String()
}

// TestEnvValuesThatDoNotParse: a SUITEGEN_* value that does not parse is a
// usage error naming the variable and the value, never the default.
func TestEnvValuesThatDoNotParse(t *testing.T) {
	for _, c := range []struct {
		prog string
		args []string
		env  map[string]string
		want string
	}{
		{"suitegen", []string{"run", "x"}, map[string]string{"SUITEGEN_SCENARIOS": "abc"}, `SUITEGEN_SCENARIOS="abc"`},
		{"suitegen", []string{"run", "x"}, map[string]string{"SUITEGEN_WRITERS": "4x"}, `SUITEGEN_WRITERS="4x"`},
		{"suitegen", []string{"run", "x"}, map[string]string{"SUITEGEN_SEED": "1.5"}, `SUITEGEN_SEED="1.5"`},
		{"suitegen", []string{"run", "x"}, map[string]string{"SUITEGEN_BY_USE_CASE": "maybe"}, `SUITEGEN_BY_USE_CASE="maybe"`},
		{"suitegen", []string{"run", "x"}, map[string]string{"SUITEGEN_RPM": "sixty"}, `SUITEGEN_RPM="sixty"`},
		{"writer", nil, map[string]string{"SUITEGEN_ACK_WAIT": "30"}, `SUITEGEN_ACK_WAIT="30"`},
		{"planner", []string{"x", "--run", "r"}, map[string]string{"SUITEGEN_MAX_DELIVER": "lots"}, `SUITEGEN_MAX_DELIVER="lots"`},
	} {
		code, _, stderr := run1(t, c.env, c.prog, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %v with %v: exit %d, want %d naming %s:\n%s", c.prog, c.args, c.env, code, ExitUsage, c.want, stderr)
		}
	}
}

// TestBadFlagValues: flag values that do not parse or make no sense are
// usage errors naming the flag, on stderr.
func TestBadFlagValues(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--writers", "0", "x"},
		{"run", "--writers", "-1", "x"},
		{"run", "--concurrency", "0", "x"},
		{"run", "--scenarios", "abc", "x"},
		{"run", "--ack-wait", "30", "x"},
		{"export", "out", "--format", "xml"},
		{"export", "out", "--format", "tau2-bench"},
	} {
		code, stdout, stderr := run1(t, nil, "suitegen", args...)
		flagName := args[1]
		if args[0] == "export" {
			flagName = "--format"
		}
		if code != ExitUsage || !strings.Contains(stderr, strings.TrimLeft(flagName, "-")) || stdout != "" {
			t.Errorf("%v: exit %d, want %d with the flag named on stderr\nstdout: %s\nstderr: %s", args, code, ExitUsage, stdout, stderr)
		}
	}
}

// TestHelpGoesToStdout: help asked for is printed on stdout with exit 0;
// a usage error goes to stderr with exit 2.
func TestHelpGoesToStdout(t *testing.T) {
	for _, c := range []struct {
		prog string
		args []string
		want string
	}{
		{"suitegen", []string{"-h"}, "Commands:"},
		{"suitegen", []string{"help"}, "Commands:"},
		{"suitegen", []string{"run", "-h"}, "-writers int"},
		{"suitegen", []string{"export", "--help"}, "--format"},
		{"suitegen", []string{"serve", "-h"}, "--token-file"},
		{"planner", []string{"-h"}, "-scenarios int"},
		{"writer", []string{"-h"}, "--log-level"},
	} {
		code, stdout, stderr := run1(t, nil, c.prog, c.args...)
		if code != ExitOK || !strings.Contains(stdout, c.want) || stderr != "" {
			t.Errorf("%s %v: exit %d, want 0 with help on stdout\nstdout: %s\nstderr: %s", c.prog, c.args, code, stdout, stderr)
		}
	}
	code, stdout, stderr := run1(t, nil, "suitegen")
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "Commands:") {
		t.Errorf("no command: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	code, stdout, stderr = run1(t, nil, "suitegen", "run", "--no-such-flag")
	if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "no-such-flag") {
		t.Errorf("unknown flag: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

func TestVersion(t *testing.T) {
	for _, prog := range []string{"suitegen", "planner", "writer", "reviewer"} {
		code, stdout, _ := run1(t, nil, prog, "--version")
		if code != ExitOK || !strings.HasPrefix(stdout, prog+" ") || strings.TrimSpace(strings.TrimPrefix(stdout, prog)) == "" {
			t.Errorf("%s --version: exit %d %q", prog, code, stdout)
		}
	}
	if code, stdout, _ := run1(t, nil, "suitegen", "version"); code != ExitOK || !strings.Contains(stdout, Version()) {
		t.Errorf("suitegen version: %d %q", code, stdout)
	}
}

func TestLogFlags(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	var buf bytes.Buffer
	rest, log, err := logFlags([]string{"run", "--log-format", "json", "x", "--log-level=debug", "--", "--log-level", "zzz"}, env(nil), &buf)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rest, " ") != "run x -- --log-level zzz" {
		t.Errorf("rest: %q", rest)
	}
	log.Debug("hello", "k", 1)
	if !strings.HasPrefix(buf.String(), "{") || !strings.Contains(buf.String(), `"msg":"hello"`) {
		t.Errorf("json debug line: %q", buf.String())
	}
	buf.Reset()
	_, log, _ = logFlags(nil, env(map[string]string{"SUITEGEN_DEBUG": "1"}), &buf)
	log.Debug("dbg")
	if !strings.Contains(buf.String(), "msg=dbg") {
		t.Errorf("SUITEGEN_DEBUG=1 is debug, text: %q", buf.String())
	}
	buf.Reset()
	_, log, _ = logFlags([]string{"-log-level", "warn"}, env(map[string]string{"SUITEGEN_LOG_LEVEL": "debug"}), &buf)
	log.Info("quiet")
	if buf.Len() != 0 {
		t.Errorf("the flag wins over the environment: %q", buf.String())
	}
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--log-format", "xml"}, nil, `--log-format "xml"`},
		{[]string{"--log-level", "loud"}, nil, `--log-level "loud"`},
		{nil, map[string]string{"SUITEGEN_LOG_LEVEL": "loud"}, `SUITEGEN_LOG_LEVEL "loud"`},
		{nil, map[string]string{"SUITEGEN_LOG_FORMAT": "yaml"}, `SUITEGEN_LOG_FORMAT "yaml"`},
		{[]string{"--log-level"}, nil, "log-level"},
	} {
		if _, _, err := logFlags(c.args, env(c.env), &buf); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: %v, want an error naming %s", c.args, c.env, err, c.want)
		}
	}
}

// TestTakenPort: a metrics or progress address already in use stops the
// process at start with the flag named, rather than a log line later.
func TestTakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := serveMetrics(t.Context(), &Env{Log: discard()}, ln.Addr().String(), "", "writer", nil); err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("metrics on a taken port: %v", err)
	}
	if _, err := serveProgress(t.Context(), &Env{Log: discard()}, ln.Addr().String(), "", nil); err == nil || !strings.Contains(err.Error(), "--progress-addr") {
		t.Errorf("progress on a taken port: %v", err)
	}
}

// TestProgName: the one binary of the image runs the role its link names.
func TestProgName(t *testing.T) {
	for argv0, want := range map[string]string{"/usr/local/bin/planner": "planner", "writer": "writer", "./reviewer": "reviewer",
		"/usr/local/bin/suitegen": "suitegen", "suitegen": "suitegen", "/tmp/go-build/exe/main": "suitegen"} {
		if got := ProgName(argv0); got != want {
			t.Errorf("ProgName(%q) = %q, want %q", argv0, got, want)
		}
	}
}
