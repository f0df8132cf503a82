package plan

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestCasesIdentifyEveryWay: retail identifies a customer by email, or by
// name and zip code, either meeting the acts' requirement. The plan
// rehearses the second way on its templates and deals it beside the first,
// so a suite's cases identify their callers both ways, in turn.
func TestCasesIdentifyEveryWay(t *testing.T) {
	c, e := openContract(t, filepath.Join("..", "..", "examples", "retail"))
	p, _ := deriveAsRun(t, c, e, 0)
	both := 0
	for _, b := range p.Buckets {
		if !slices.Contains(b.Spec.Gated, "find_user_id_by_email") {
			continue
		}
		if !slices.Equal(b.Spec.Identify, []string{"find_user_id_by_name_zip"}) {
			continue
		}
		both++
		first, second := b.Spec.IdentifyAs(c, 0), b.Spec.IdentifyAs(c, 1)
		if !slices.Contains(first, "find_user_id_by_email") || !slices.Contains(second, "find_user_id_by_name_zip") || slices.Contains(second, "find_user_id_by_email") {
			t.Errorf("bucket %s: scenarios 0 and 1 identify by %v and %v, want by email, then by name and zip", b.ID, first, second)
		}
		if len(first) != len(b.Spec.Gated) || len(second) != len(b.Spec.Gated) {
			t.Errorf("bucket %s: the chain %v becomes %v and %v", b.ID, b.Spec.Gated, first, second)
		}
	}
	if both == 0 {
		t.Fatal("no bucket identifies its callers both ways")
	}
}
