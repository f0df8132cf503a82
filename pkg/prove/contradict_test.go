package prove

import "testing"

// TestWantedAt: a value is wanted where a word of wanting stands before it
// and nothing between sets it against the wish.
func TestWantedAt(t *testing.T) {
	for _, c := range []struct {
		s, v string
		want bool
	}{
		{"They want the assessor to come in the morning", "morning", true},
		{"They would like the afternoon, not the morning", "morning", false},
		{"They want to switch from card to direct debit", "card", false},
		{"They want to switch from card to direct debit", "direct debit", true},
		{"The morning suits them and they want it booked", "morning", false},
		{"Their friend wants the morning", "morning", false},
		{"They do not want the morning", "morning", false},
	} {
		words := sentenceWords(c.s)
		at := wordsAt(words, spokenWords(c.v))
		if got := at >= 0 && wantedAt(words, at); got != c.want {
			t.Errorf("wanted %q in %q = %v, want %v", c.v, c.s, got, c.want)
		}
	}
}

// TestNamedBeside: a number is read as an argument's where a word of the
// argument's name stands beside it.
func TestNamedBeside(t *testing.T) {
	for _, c := range []struct {
		s, arg string
		at     int
		want   bool
	}{
		{"they need the car for 3 days", "days", 5, true},
		{"they need 2 nights", "numNights", 2, true},
		{"they need 3 cars for the days", "days", 2, false},
		{"they want stop date 2026-04-23", "stop_date", 4, true},
		{"they want the countryCode to be ES", "countryCode", 6, true},
		{"they want ES for the trip", "countryCode", 2, false},
	} {
		if got := namedBeside(sentenceWords(c.s), c.at, c.arg); got != c.want {
			t.Errorf("namedBeside(%q, %d, %q) = %v, want %v", c.s, c.at, c.arg, got, c.want)
		}
	}
}

// TestNamesArg: a sentence names an argument by every word of its name of
// three letters or more, or by the name written as one word.
func TestNamesArg(t *testing.T) {
	for _, c := range []struct {
		s, arg string
		want   bool
	}{
		{"They want DNOR for the depot code", "depot_code", true},
		{"They want DNOR for the depots' codes", "depot_code", true},
		{"They want DNOR", "depot_code", false},
		{"They want the depot in Leeds", "depot_code", false},
		{"the countryCode is ES", "countryCode", true},
	} {
		if got := namesArg(sentenceWords(c.s), c.arg); got != c.want {
			t.Errorf("namesArg(%q, %q) = %v, want %v", c.s, c.arg, got, c.want)
		}
	}
}

// TestHoldsDate: a date bound compares dates written as calls send them.
func TestHoldsDate(t *testing.T) {
	for _, c := range []struct {
		op, v, limit string
		want         bool
	}{
		{"before", "2026-03-18", "2026-03-16", false},
		{"before", "2026-03-15", "2026-03-16", true},
		{"by", "2026-03-16", "2026-03-16", true},
		{"after", "2026-03-16", "2026-03-16", false},
		{"on or after", "2026-03-16", "2026-03-16", true},
	} {
		if got := holdsDate(c.op, c.v, c.limit); got != c.want {
			t.Errorf("holdsDate(%q, %q, %q) = %v, want %v", c.op, c.v, c.limit, got, c.want)
		}
	}
}
