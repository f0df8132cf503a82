package ground

import (
	"path/filepath"
	"testing"
)

// TestDayAsksWhatTheCallerNames: under SwapDay a day the clock grounds is
// asked DayOffsets[Other] days from the world's clock, or the day before
// or after a date of the case's own record, in the argument's own layout;
// a day a record holds (a date of birth that identifies) and any other
// argument stay as filled.
func TestDayAsksWhatTheCallerNames(t *testing.T) {
	c := load(t, filepath.Join("..", "..", "testdata", "contracts", "insurance-claims"))
	g := New(c)
	today := c.Clock()
	policy := g.Rows("policies")[0]
	b := Bound{Table: "policies", Target: policy, Rows: map[string][]Row{"policies": {policy}}, Outside: "policies", Swap: SwapDay}
	clock := Binding{Tool: "request_courtesy_car", Param: "start_date", How: FromClock, Picks: []any{today.AddDate(0, 0, 7).Format("2006-01-02")}}
	for i, off := range DayOffsets {
		b.Other = i
		got := g.asked(clock, clock.Picks[0], "string", nil, b)
		if want := today.AddDate(0, 0, off).Format("2006-01-02"); got != want {
			t.Errorf("offset %d: asked %v, want %v", off, got, want)
		}
		if !b.States(clock, got) {
			t.Errorf("offset %d: the day asked is not stated", off)
		}
	}
	start := -1
	for i, col := range c.Table("policies").Columns {
		if col.Name == "start_date" {
			start = i
		}
	}
	if start < 0 {
		t.Fatal("policies has no start_date")
	}
	day, _ := dayOf(Text(policy["start_date"]))
	b.Other = len(DayOffsets) + 2*start // the day before the policy's start
	pattern := Binding{Tool: "file_claim", Param: "incident_date", How: FromPattern}
	got := g.asked(pattern, "2026-01-01", "string", nil, b)
	if s, _ := got.(string); s >= day || s == "2026-01-01" {
		t.Errorf("the day before the policy's start %s: asked %v", day, got)
	}
	held := Binding{Tool: "identify_by_policy", Param: "date_of_birth", Table: "customers", Column: "date_of_birth", How: ByName}
	if b.Stated(held) || g.asked(held, "1980-05-05", "string", nil, b) != "1980-05-05" {
		t.Error("a day a record holds is asked another way")
	}
	other := Binding{Tool: "file_claim", Param: "policy_number", Table: "policies", Column: "policy_number", How: ByXRef}
	if b.States(other, policy["policy_number"]) {
		t.Error("a record's key is stated as a day")
	}
}
