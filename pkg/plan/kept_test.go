package plan

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
)

// A use case whose id names some of its act's arguments asks no change of
// the others that hold what its target has: moving a booking's legs keeps
// its class, changing its class keeps its legs; one whose id names none of
// them keeps nothing.
func TestKeptArgs(t *testing.T) {
	c, err := contract.LoadValid(filepath.Join("..", "ground", "testdata", "rebook"))
	if err != nil {
		t.Fatal(err)
	}
	g := ground.New(c)
	tool := c.Tool("change_booking")
	bs := g.Declared()
	for id, want := range map[string][]string{"change-legs": {"class"}, "change-class": {"legs"}} {
		got := keptArgs(c, c.UseCase(id), tool, "bookings", bs)
		if !slices.Equal(got, want) {
			t.Errorf("keptArgs(%s) = %v, want %v", id, got, want)
		}
		for _, b := range keeping(bs, tool.Name, got).For(tool.Name) {
			if b.Keep != slices.Contains(want, b.Param) {
				t.Errorf("%s: %s kept = %v", id, b.Param, b.Keep)
			}
		}
	}
	if got := keptArgs(c, &contract.UseCase{ID: "rebook-trip", Text: "Rebook a trip"}, tool, "bookings", bs); got != nil {
		t.Errorf("keptArgs of a use case naming no argument = %v, want none", got)
	}
}
