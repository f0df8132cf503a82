package prove

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCodesDocumented: every refusal code the gates (and the writer's suite
// gate) can give is in docs/scenario.md, and the docs list no code the code
// does not give.
func TestCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "scenario.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| [a-z-]+ \\| `([a-z-]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	used := map[string]bool{}
	literal := regexp.MustCompile(`Refusal\{\{?(?:Gate: )?(?:prove\.)?Gate[A-Za-z]+, (?:Code: )?"([a-z-]+)"`)
	called := regexp.MustCompile(`bad\("([a-z-]+)"`)
	for _, glob := range []string{"*.go", "../writer/*.go"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, re := range []*regexp.Regexp{literal, called} {
				for _, m := range re.FindAllStringSubmatch(string(b), -1) {
					used[m[1]] = true
				}
			}
		}
	}
	delete(used, "duplicate-") // the writer prefixes the ledger's conflict kinds:
	for _, k := range []string{"name", "branch", "content", "code"} {
		used["duplicate-"+k] = true
	}
	if len(used) < 20 {
		t.Fatalf("found only %d codes in the source: the pattern is stale", len(used))
	}
	for c := range used {
		if !documented[c] {
			t.Errorf("code %q is not in docs/scenario.md", c)
		}
	}
	for c := range documented {
		if !used[c] {
			t.Errorf("docs/scenario.md lists %q, which nothing refuses with", c)
		}
	}
}
