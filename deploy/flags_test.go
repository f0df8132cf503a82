package deploy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/cli"
)

// help returns what `prog [sub] --help` prints, run through the same
// cli.Dispatch the binaries' mains call, with an empty environment so that
// no SUITEGEN_* variable of the machine leaks into the defaults.
func help(t *testing.T, prog string, sub ...string) string {
	t.Helper()
	var out bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if code := cli.Dispatch(context.Background(), env, prog, append(sub, "--help")); code != cli.ExitOK {
		t.Fatalf("%s %v --help exited %d:\n%s", prog, sub, code, out.String())
	}
	return out.String()
}

var helpFlag = regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)

// TestManifestFlagsExist runs each binary's --help and checks that every
// flag a manifest passes to it is one the binary lists: a renamed or
// invented flag (--contract, --out on the planner) makes the pod exit 2 at
// start, which no amount of YAML validation notices.
func TestManifestFlagsExist(t *testing.T) {
	known := map[string]map[string]bool{}
	// flagsOf lists the flags of bin, or of bin's subcommand sub (suitegen serve).
	flagsOf := func(bin, sub string) map[string]bool {
		if m, ok := known[bin+" "+sub]; ok {
			return m
		}
		var text string
		switch bin {
		case "planner", "writer", "reviewer":
			text = help(t, bin)
		case "suitegen":
			if sub == "" || strings.HasPrefix(sub, "-") {
				t.Fatalf("a manifest runs suitegen without a subcommand (%q)", sub)
			}
			text = help(t, bin, sub)
		default:
			t.Fatalf("a manifest runs %q, which is not one of the distributed binaries", bin)
		}
		m := map[string]bool{}
		for _, f := range helpFlag.FindAllStringSubmatch(text, -1) {
			m[f[1]] = true
		}
		if len(m) == 0 {
			t.Fatalf("%s --help lists no flags:\n%s", bin, text)
		}
		known[bin+" "+sub] = m
		return m
	}
	schemas := loadSchemas(t)
	checked := 0
	for _, dir := range overlays(t) {
		for where, tpl := range podSpecs(deployed(t, dir, schemas)) {
			for _, c := range tpl.Spec.Containers {
				if len(c.Command) == 0 || !strings.HasPrefix(c.Command[0], "/usr/local/bin/") {
					continue
				}
				bin, args := path.Base(c.Command[0]), c.Args
				sub := ""
				if bin == "suitegen" && len(args) > 0 {
					sub, args = args[0], args[1:]
				}
				fl := flagsOf(bin, sub)
				for _, a := range args {
					name, ok := strings.CutPrefix(a, "--")
					if !ok {
						continue
					}
					name, _, _ = strings.Cut(name, "=")
					checked++
					if !fl[name] {
						t.Errorf("%s: %s %s: %s --help does not list -%s", dir, where, c.Name, bin, name)
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked only %d manifest flags; the manifests' commands moved?", checked)
	}
}

// TestManifestFlagsCanFail: the check sees a flag a binary lacks.
func TestManifestFlagsCanFail(t *testing.T) {
	fl := map[string]bool{}
	for _, f := range helpFlag.FindAllStringSubmatch(help(t, "planner"), -1) {
		fl[f[1]] = true
	}
	if !fl["run"] || !fl["progress-addr"] || !fl["metrics-addr"] {
		t.Errorf("planner --help lacks flags it has: %v", fl)
	}
	if fl["contract"] || fl["out"] {
		t.Errorf("planner --help lists a flag it does not have: %v", fl)
	}
}
