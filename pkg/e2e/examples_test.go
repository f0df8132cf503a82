package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/engine"
)

// TestEveryExampleAtSmallSize runs every example contract (and the test
// contract written in a style unlike them) at a size make test affords:
// the suite holds what was asked, with every use case in it.
func TestEveryExampleAtSmallSize(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*", "contract.yaml"))
	dirs = append(dirs, filepath.Join("..", "..", "testdata", "contracts", "guardian-line", "contract.yaml"))
	if len(dirs) < 3 {
		t.Fatalf("%d contracts found", len(dirs))
	}
	for _, f := range dirs {
		dir, err := filepath.Abs(filepath.Dir(f))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c, err := engine.LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			n := 2 * len(c.UseCases)
			out, res := runSuite(t, dir, n, 2)
			scs := loadSuite(t, out)
			if len(scs) != n || res.Proved != n {
				t.Fatalf("asked %d, wrote %d", n, len(scs))
			}
			have := map[string]bool{}
			for _, sc := range scs {
				have[sc.UseCase] = true
			}
			for _, u := range c.UseCases {
				if !have[u.ID] {
					t.Errorf("use case %s has no scenario", u.ID)
				}
			}
			if _, err := os.Stat(filepath.Join(out, "report.json")); err != nil {
				t.Error(err)
			}
		})
	}
}
