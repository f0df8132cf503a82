package contractgen_test

import (
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contractgen"
)

// Misses lists kinds by count then name, keeps three examples of each, and
// counts every miss.
func TestMisses(t *testing.T) {
	var m contractgen.Misses
	if got := m.String(); got != "misses by reason, most common first:\n" {
		t.Errorf("empty misses: %q", got)
	}
	for i := range 5 {
		m.Addf("binding wrong", "seed %d", i)
	}
	m.Add("acting tool wrong", "seed 9")
	m.Add("a plan fails", "seed 8")
	if m.Count("binding wrong") != 5 || m.Count("acting tool wrong") != 1 || m.Count("none") != 0 || m.Total() != 7 {
		t.Errorf("counts %d %d %d, total %d", m.Count("binding wrong"), m.Count("acting tool wrong"), m.Count("none"), m.Total())
	}
	want := `misses by reason, most common first:
      5  binding wrong
           e.g. seed 0
           e.g. seed 1
           e.g. seed 2
      1  a plan fails
           e.g. seed 8
      1  acting tool wrong
           e.g. seed 9
`
	if got := m.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestGist(t *testing.T) {
	long := "no row of the target answered ok when the act was rehearsed on it"
	if got := contractgen.Gist(long); got != "no row of the target answered ok when" {
		t.Errorf("Gist(%q) = %q", long, got)
	}
	if got := contractgen.Gist("  short  reason "); got != "short reason" {
		t.Errorf("Gist = %q", got)
	}
	if strings.Contains(contractgen.Gist(""), " ") {
		t.Error("Gist of nothing has words")
	}
}
