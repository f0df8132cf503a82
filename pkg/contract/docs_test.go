package contract

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestDocs keeps docs/contract.md complete: every problem code in its table,
// no code in the table that Load cannot report, every field mentioned, and
// every YAML example valid YAML.
func TestDocs(t *testing.T) {
	data, err := os.ReadFile("../../docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	known := map[string]bool{}
	for _, c := range Codes {
		known[c] = true
		if !strings.Contains(doc, "| `"+c+"` |") {
			t.Errorf("code %s is not in the docs' table", c)
		}
	}
	_, table, _ := strings.Cut(doc, "## Problem codes")
	table, _, _ = strings.Cut(table, "\n## ")
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\|").FindAllStringSubmatch(table, -1) {
		if !known[m[1]] {
			t.Errorf("docs table lists %q, which Load never reports", m[1])
		}
	}
	for kind, fields := range knownFields {
		for _, f := range fields {
			if !strings.Contains(doc, "`"+f+"`") {
				t.Errorf("field %s.%s is not documented", kind, f)
			}
		}
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(doc, -1)
	if len(blocks) < 5 {
		t.Fatalf("only %d yaml examples", len(blocks))
	}
	for _, b := range blocks {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(b[1]), &n); err != nil {
			t.Errorf("example does not parse: %v\n%s", err, b[1])
		}
	}
}
