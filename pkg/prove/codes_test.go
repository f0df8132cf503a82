package prove_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/suitegen/suitegen/pkg/prove"
)

// TestCodesDocumented: docs/scenario.md's table of gates and codes is
// exactly prove.Codes, in the same order (gate order).
func TestCodesDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "scenario.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []prove.GateCode
	for _, m := range regexp.MustCompile("(?m)^\\| ([a-z-]+) \\| `([a-z-]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, prove.GateCode{Gate: prove.Gate(m[1]), Code: prove.Code(m[2])})
	}
	known := map[prove.GateCode]bool{}
	for _, gc := range prove.Codes {
		known[gc] = true
	}
	listed := map[prove.GateCode]bool{}
	for _, gc := range documented {
		if !known[gc] {
			t.Errorf("docs/scenario.md lists %s/%s, which no gate refuses with", gc.Gate, gc.Code)
		}
		listed[gc] = true
	}
	for _, gc := range prove.Codes {
		if !listed[gc] {
			t.Errorf("%s/%s is not in docs/scenario.md", gc.Gate, gc.Code)
		}
	}
	if len(documented) == len(prove.Codes) {
		for i := range documented {
			if documented[i] != prove.Codes[i] {
				t.Errorf("docs/scenario.md row %d is %s/%s; prove.Codes has %s/%s there", i+1, documented[i].Gate, documented[i].Code, prove.Codes[i].Gate, prove.Codes[i].Code)
				break
			}
		}
	}
	gateAt := map[prove.Gate]int{}
	for i, g := range prove.Gates {
		gateAt[g] = i
	}
	for i := 1; i < len(prove.Codes); i++ {
		if gateAt[prove.Codes[i].Gate] < gateAt[prove.Codes[i-1].Gate] {
			t.Errorf("prove.Codes is not in gate order at %s/%s", prove.Codes[i].Gate, prove.Codes[i].Code)
		}
	}
}
