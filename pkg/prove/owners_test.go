package prove

import (
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
)

// A row whose table names callers in two columns (a parcel's sender and
// recipient) is the scenario's caller's when the caller is either, so a
// setup may add a parcel with its events for a recipient who calls; a
// caller who is neither still finds it someone else's.
func TestOwnerOfTwoOwners(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("..", "ground", "testdata", "two-owners"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	p := &Prover{c: c, g: ground.New(c)}
	added := map[string][]map[string]any{}
	parcel := map[string]any{"parcel_id": "P9", "sender_id": "C1", "recipient_id": "C7", "town": "York"}
	for _, tc := range []struct{ prefer, want string }{{"C7", "C7"}, {"C1", "C1"}, {"C3", "C1"}, {"", "C1"}} {
		got, owned := p.ownerOf("parcels", parcel, added, tc.prefer)
		if !owned || got != tc.want {
			t.Errorf("ownerOf(parcel of C1 to C7, caller %q) = %q %v, want %q", tc.prefer, got, owned, tc.want)
		}
	}
}
