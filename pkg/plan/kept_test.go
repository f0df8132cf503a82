package plan

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
)

// A use case that searches the world's rows a list of its act's objects may
// be renewed from (departures) changes that list and keeps the act's enums
// of its target's columns: moving a booking's legs keeps its class. One that
// searches none keeps its lists from the world's rows: changing the class
// keeps the legs.
func TestKeptArgs(t *testing.T) {
	c, err := contract.LoadValid(filepath.Join("..", "ground", "testdata", "rebook"))
	if err != nil {
		t.Fatal(err)
	}
	g := ground.New(c)
	tool := c.Tool("change_booking")
	bs := g.Declared()
	for id, want := range map[string][]string{"change-legs": {"class"}, "change-class": {"legs"}} {
		got := keptArgs(g, c.UseCase(id).Tools, tool, "bookings", bs)
		if !slices.Equal(got, want) {
			t.Errorf("keptArgs(%s) = %v, want %v", id, got, want)
		}
		for _, b := range keeping(bs, tool.Name, got).For(tool.Name) {
			if b.Keep != slices.Contains(want, b.Param) {
				t.Errorf("%s: %s kept = %v", id, b.Param, b.Keep)
			}
		}
	}
	if got := keptArgs(g, []string{"find_departures"}, c.Tool("find_departures"), "trains", bs); got != nil {
		t.Errorf("keptArgs of a tool that changes nothing = %v, want none", got)
	}
}
