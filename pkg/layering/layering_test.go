package layering

import (
	"bufio"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// known are the imports of pkg/ from internal/ that predate the rule, as
// "internal/… -> pkg/…". The list may only shrink: an entry no longer
// imported fails the test until it is removed here.
var known []string

// TestInternalImportsNoPkg: no package under internal/ imports a package
// under pkg/ (in what it links: its tests may), but for the known ones.
func TestInternalImportsNoPkg(t *testing.T) {
	module := goList(t, "list", "-m")
	graph := goList(t, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	added, gone := check(module, graph, known)
	for _, e := range added {
		t.Errorf("%s: internal/ packages are leaves; move what it needs below internal/, or the package to pkg/", e)
	}
	for _, e := range gone {
		t.Errorf("%s is no longer imported: remove it from the known list", e)
	}
}

// TestCheckFindsWhatItMust: the check itself flags a new import of pkg/
// from internal/ and a known entry no longer true, and nothing else.
func TestCheckFindsWhatItMust(t *testing.T) {
	const m = "example.com/m"
	graph := strings.Join([]string{
		m + "/internal/a " + m + "/pkg/x " + m + "/internal/b fmt",
		m + "/internal/b " + m + "/pkg/y",
		m + "/internal/c strings",
		m + "/pkg/x " + m + "/internal/c",
		m + "/cmd/m " + m + "/pkg/x " + m + "/internal/a",
		m + "/internal/pkgish " + m + "/pkgs/z",
	}, "\n")
	added, gone := check(m, graph, []string{"internal/a -> pkg/x", "internal/c -> pkg/x"})
	if !slices.Equal(added, []string{"internal/b -> pkg/y"}) || !slices.Equal(gone, []string{"internal/c -> pkg/x"}) {
		t.Fatalf("added %q, gone %q", added, gone)
	}
	if added, gone := check(m, graph, []string{"internal/a -> pkg/x", "internal/b -> pkg/y"}); len(added)+len(gone) > 0 {
		t.Fatalf("a graph that keeps the rule: added %q, gone %q", added, gone)
	}
}

// check reads graph (a line per package: its path, then its imports) and
// returns the imports of pkg/ from internal/ not in known, and the entries
// of known no longer imported, each sorted.
func check(module, graph string, known []string) (added, gone []string) {
	rel := func(p string) (string, bool) {
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	under := func(p, dir string) bool { return strings.HasPrefix(p, dir+"/") || p == dir }
	seen := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(graph))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		from, ok := rel(f[0])
		if !ok || !under(from, "internal") {
			continue
		}
		for _, imp := range f[1:] {
			if to, ok := rel(imp); ok && under(to, "pkg") {
				seen[from+" -> "+to] = true
			}
		}
	}
	for e := range seen {
		if !slices.Contains(known, e) {
			added = append(added, e)
		}
	}
	for _, e := range known {
		if !seen[e] {
			gone = append(gone, e)
		}
	}
	slices.Sort(added)
	slices.Sort(gone)
	return added, gone
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
