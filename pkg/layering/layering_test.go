package layering

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
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
	for _, f := range graphLines(graph) {
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

// graphLines reads graph, a line per package: its path, then its imports.
func graphLines(graph string) [][]string {
	var out [][]string
	for line := range strings.Lines(graph) {
		if f := strings.Fields(line); len(f) > 0 {
			out = append(out, f)
		}
	}
	return out
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

// TestLayers: every package of internal/, proto/, pkg/ and cmd/ is on one
// layer of docs/ARCHITECTURE.md's table and imports nothing above it.
func TestLayers(t *testing.T) {
	doc, err := os.ReadFile("../../docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	layers, errs := readLayers(string(doc))
	for _, e := range errs {
		t.Errorf("docs/ARCHITECTURE.md: %s", e)
	}
	if len(layers) == 0 {
		t.Fatal("docs/ARCHITECTURE.md holds no layer table")
	}
	module := goList(t, "list", "-m")
	graph := goList(t, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	for _, e := range checkLayers(module, graph, layers) {
		t.Error(e)
	}
}

// TestCheckLayersFindsWhatItMust: an import of a higher layer, a package
// the table leaves out and a table that lists one package twice are each
// found; imports of the same or a lower layer, and of other modules, pass.
func TestCheckLayersFindsWhatItMust(t *testing.T) {
	const m = "example.com/m"
	layers, errs := readLayers("intro\n\n| layer | packages | what |\n|---|---|---|\n| 1 | `internal/a`, `pkg/x` | leaves |\n| 2 | `pkg/y`, `pkg/z` | above |\n| 3 | `cmd/m` | mains |\n\nafter\n")
	if len(errs) > 0 || len(layers) != 5 || layers["pkg/y"] != 2 || layers["cmd/m"] != 3 {
		t.Fatalf("read %v %v", layers, errs)
	}
	graph := strings.Join([]string{
		m + "/internal/a fmt",
		m + "/pkg/x " + m + "/pkg/y example.com/other/pkg/z",
		m + "/pkg/y " + m + "/pkg/z " + m + "/internal/a",
		m + "/pkg/z",
		m + "/pkg/new " + m + "/pkg/x",
		m + "/cmd/m " + m + "/pkg/y",
		m + "/scripts/tool " + m + "/cmd/m",
	}, "\n")
	want := []string{
		"pkg/new is on no layer of the table: add it",
		"pkg/x (layer 1) imports pkg/y (layer 2)",
	}
	if got := checkLayers(m, graph, layers); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if _, errs := readLayers("| 1 | `pkg/x` | a |\n| 2 | `pkg/x` | b |\n"); len(errs) != 1 {
		t.Fatalf("a package on two layers: %v", errs)
	}
}

// layerRow is a row of the layer table: its number, then its packages in
// backquotes.
var layerRow = regexp.MustCompile(`^\|\s*([0-9]+)\s*\|([^|]*)\|`)

// readLayers reads the layer of each package the table lists.
func readLayers(doc string) (map[string]int, []string) {
	layers := map[string]int{}
	var errs []string
	for line := range strings.Lines(doc) {
		m := layerRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, f := range strings.Split(m[2], ",") {
			p := strings.Trim(strings.TrimSpace(f), "`")
			if was, ok := layers[p]; ok {
				errs = append(errs, fmt.Sprintf("%s is on layers %d and %d", p, was, n))
			}
			layers[p] = n
		}
	}
	return layers, errs
}

// checkLayers returns, sorted, each package of internal/, proto/, pkg/ and
// cmd/ that the table leaves out, and each import of such a package from a
// lower layer.
func checkLayers(module, graph string, layers map[string]int) []string {
	ruled := func(p string) (string, bool) {
		rel, ok := strings.CutPrefix(p, module+"/")
		if !ok {
			return "", false
		}
		top, _, _ := strings.Cut(rel, "/")
		return rel, slices.Contains([]string{"internal", "proto", "pkg", "cmd"}, top)
	}
	var bad []string
	for _, f := range graphLines(graph) {
		from, ok := ruled(f[0])
		if !ok {
			continue
		}
		at, listed := layers[from]
		if !listed {
			bad = append(bad, from+" is on no layer of the table: add it")
			continue
		}
		for _, imp := range f[1:] {
			to, ok := ruled(imp)
			if ok && layers[to] > at {
				bad = append(bad, fmt.Sprintf("%s (layer %d) imports %s (layer %d)", from, at, to, layers[to]))
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}
