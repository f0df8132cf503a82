package layering

import (
	"bufio"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestInternalIsLeaves: no package under internal/ imports a package of
// this module (in what it links: its tests may).
func TestInternalIsLeaves(t *testing.T) {
	module := goList(t, "list", "-m")
	graph := goList(t, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	for _, e := range check(module, graph) {
		t.Errorf("%s: internal/ packages are leaves; move what it needs below internal/, or the package to pkg/", e)
	}
}

// TestRolesLinkNoQueueDriver: the roles take the queue through interfaces of
// their own and pkg/queue's slice; the NATS client is linked only by the
// wiring that connects to it (pkg/queue/jetstream).
func TestRolesLinkNoQueueDriver(t *testing.T) {
	for _, role := range []string{"./pkg/planner", "./pkg/writer", "./pkg/reviewer", "./pkg/queue"} {
		for dep := range strings.FieldsSeq(goList(t, "list", "-deps", role)) {
			if strings.HasPrefix(dep, "github.com/nats-io/") || strings.HasSuffix(dep, "/pkg/queue/jetstream") {
				t.Errorf("%s links %s", role, dep)
			}
		}
	}
}

// TestCheckFindsWhatItMust: the check flags every import of this module from
// internal/ (of pkg/, of another internal/ package, of the module's root)
// and nothing else: not imports of internal/ from elsewhere, nor packages of
// another module whose path shares the module's as a prefix.
func TestCheckFindsWhatItMust(t *testing.T) {
	const m = "example.com/m"
	graph := strings.Join([]string{
		m + "/internal/a " + m + "/pkg/x " + m + "/internal/b fmt",
		m + "/internal/b " + m + "/pkg/y/z",
		m + "/internal/c strings example.com/mod/pkg/x example.com/m2",
		m + "/internal/d " + m,
		m + "/internalish " + m + "/pkg/x",
		m + "/pkg/x " + m + "/internal/c",
		m + "/cmd/m " + m + "/pkg/x " + m + "/internal/a",
		"example.com/mod/internal/e " + "example.com/mod/pkg/x",
	}, "\n")
	want := []string{"internal/a -> internal/b", "internal/a -> pkg/x", "internal/b -> pkg/y/z", "internal/d -> ."}
	if got := check(m, graph); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	leaves := strings.Join([]string{
		m + "/internal/c strings example.com/mod/pkg/x",
		m + "/pkg/x " + m + "/internal/c",
		m + "/cmd/m " + m + "/pkg/x",
	}, "\n")
	if got := check(m, leaves); len(got) > 0 {
		t.Fatalf("a graph that keeps the rule: %q", got)
	}
}

// check reads graph (a line per package: its path, then its imports) and
// returns each import of a package of module from a package under
// internal/, as "internal/… -> …" relative to the module ("." for its
// root), sorted.
func check(module, graph string) []string {
	rel := func(p string) (string, bool) {
		if p == module {
			return ".", true
		}
		return strings.CutPrefix(p, module+"/")
	}
	var bad []string
	sc := bufio.NewScanner(strings.NewReader(graph))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		from, ok := rel(f[0])
		if !ok || from != "internal" && !strings.HasPrefix(from, "internal/") {
			continue
		}
		for _, imp := range f[1:] {
			if to, ok := rel(imp); ok {
				bad = append(bad, from+" -> "+to)
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

// goList runs the go command at the module's root and returns its output.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the layering check needs the go command: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), gobin, args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return strings.TrimSpace(string(out))
}
