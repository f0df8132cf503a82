package ledgertest_test

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyTestsImportIt: ledgertest is for tests; no package links it.
func TestOnlyTestsImportIt(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the check needs the go command: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), gobin, "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = "../../.."
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if strings.HasSuffix(imp, "/pkg/ledger/ledgertest") {
				t.Errorf("%s imports %s: it is for tests only", f[0], imp)
			}
		}
	}
}
