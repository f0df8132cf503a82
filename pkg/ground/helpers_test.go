package ground

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
)

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

// exampleContract loads examples/NAME, which must have no problem.
func exampleContract(t *testing.T, name string) *contract.Contract {
	t.Helper()
	c, err := contract.LoadValid(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return c
}
