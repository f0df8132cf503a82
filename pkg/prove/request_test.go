package prove

import (
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestAsksEach: the caller's words ask for an act on several records only
// by a sentence that ties the act, a count of them and each of their names
// together; words that merely count or mention them do not.
func TestAsksEach(t *testing.T) {
	vals := []string{"#W1121", "#W7900"}
	other := func(w string) bool { return w == "#W3333" }
	nouns := map[string]bool{"cancel": true, "pending": true, "order": true, "refund": true, "payment": true}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"Aisha contacts support about orders #W1121 and #W7900 and wants to cancel both pending orders and refund their payments.", true},
		{"She wants to cancel each of #W1121 and #W7900.", true},
		{"She wants to cancel the two orders #W1121 and #W7900, for the same reason.", true},
		{"Hi. Please cancel both #W1121 and #W7900!", true},
		// A count that describes, not asks.
		{"Aisha contacts support about her two orders #W1121 and #W7900 and wants to cancel #W1121.", false},
		{"Both of her orders #W1121 and #W7900 were bought on sale. She wants to cancel #W1121.", false},
		{"She wants to cancel the older of the two orders, #W1121 and #W7900.", false},
		// Words that narrow or withhold the act.
		{"She wants to cancel both? No: only #W1121, not #W7900.", false},
		{"She would cancel both #W1121 and #W7900 but keeps #W7900.", false},
		{"She doesn't want to cancel both #W1121 and #W7900.", false},
		// A count that is not the number of records, one record unnamed, or
		// another record of the table named beside them.
		{"She wants to cancel three orders: #W1121 and #W7900.", false},
		{"She wants to cancel both #W1121 and #W7900 and #W3333.", false},
		{"She wants to cancel both of her pending orders, #W1121 among them.", false},
		// The count counts something else of the records.
		{"She wants to cancel both the gift wraps on #W1121 and #W7900.", false},
		{"She wants to cancel both prices in her head before choosing #W1121 or #W7900.", false},
		// The count follows another verb.
		{"She wants to return both #W1121 and #W7900.", false},
		{"She wants to cancel twice #W1121 and #W7900.", false},
	} {
		if got := asksEach([]string{c.text}, "cancel_pending_order", vals, other, nouns); got != c.want {
			t.Errorf("asksEach(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

// TestSaysDate: a stored date is said in words or in a common numeric form,
// with its own year or none; another year or day is not that date.
func TestSaysDate(t *testing.T) {
	for _, c := range []struct {
		text, v string
		want    bool
	}{
		{"born June 15, 1985", "1985-06-15", true},
		{"my birthday is the 15th of June 1985", "1985-06-15", true},
		{"DOB: Jun. 15th 1985", "1985-06-15", true},
		{"my last trip was on April 6th this year", "2026-04-06", true},
		{"6/15/1985", "1985-06-15", true},
		{"15.06.1985", "1985-06-15", true},
		{"born June 15, 1986", "1985-06-15", false},
		{"born June 16, 1985", "1985-06-15", false},
		{"born in June 1985", "1985-06-15", false},
		{"6/15/1986", "1985-06-15", false},
		{"it costs 15 dollars in June", "1985-06-15", false},
		{"June 15, 1985", "C1077", false},
	} {
		if got := saysDate(c.text, c.v); got != c.want {
			t.Errorf("saysDate(%q, %q) = %v, want %v", c.text, c.v, got, c.want)
		}
	}
}

// TestHandedIn: how a caller says a value: as a whole token, a number as a
// number, a code in groups or in words, without its "#", a date in words.
func TestHandedIn(t *testing.T) {
	for _, c := range []struct {
		text, v string
		want    bool
	}{
		{"my order W5061109 came broken", "#W5061109", true},
		{"my order #W5061109 came broken", "#W5061109", true},
		{"my order W50611090 came broken", "#W5061109", false},
		{"the code is four six five, three six three", "465363", true},
		{"it cost $2.50", "2.5", true},
		{"it cost 2.5", "2", false},
		{"line L1082", "1", false},
		{"born June 15, 1985", "1985-06-15", true},
		{"order 12", "#12", false},
	} {
		if got := handedIn(c.v, c.text); got != c.want {
			t.Errorf("handedIn(%q, %q) = %v, want %v", c.v, c.text, got, c.want)
		}
	}
}

// TestWithholds: a mention of the act's verb in its clause is negated by a
// negation at most five words before it, asked by a word of wanting at most
// three before it, and otherwise only a mention.
func TestWithholds(t *testing.T) {
	for _, c := range []struct {
		s, verb string
		want    int
	}{
		{"They want to cancel order #W1", "cancel", 1},
		{"They want the order cancelled", "cancel", 1},
		{"They do not want to cancel it", "cancel", -1},
		{"They don't want it cancelled", "cancel", -1},
		{"They do not want the appointment confirmed", "confirm", -1},
		{"They want to know what suspending a line would cost, but do NOT want any line suspended today", "suspend", -1},
		{"They do not want a refund, they want the order cancelled", "cancel", 1},
		{"The agent rings them to confirm an appointment", "confirm", 0},
		{"They are not sure about the price and want to cancel", "cancel", 1},
		{"They ask about their order", "cancel", 0},
		{"the code is not the one on file, and they know no other", "file", 0},
		{"They no longer want it cancelled", "cancel", -1},
		{"They want nothing changed", "chang", -1},
		{"They want to change how it is paid", "chang", 1},
		{"They ask how to pay off a charge, but do not want anything changed today", "pay", 0},
		{"They ask what renewing would cost", "renew", 0},
		{"They ask to pay off a charge", "pay", 1},
	} {
		if got := withholds(c.s, c.verb); got != c.want {
			t.Errorf("withholds(%q, %q) = %d, want %d", c.s, c.verb, got, c.want)
		}
	}
}

// TestNoChange: a caller who wants no change at all withholds every act; one
// who keeps one named thing as it is ("but not change your plan") does not
// withhold the act they ask for.
func TestNoChange(t *testing.T) {
	for _, c := range []struct {
		instruction string
		withheld    bool
	}{
		{"They want nothing changed on the claim.", true},
		{"They do not want anything changed on it.", true},
		{"They want no changes made.", true},
		{"You will refuel 2.0 GB but not change your plan.", false},
		{"They do not want anything else changed.", false},
	} {
		pr := &proof{sc: &scenario.Scenario{Instruction: c.instruction}}
		if got := pr.noChange() != ""; got != c.withheld {
			t.Errorf("noChange(%q) withholds = %v, want %v", c.instruction, got, c.withheld)
		}
	}
}
