package prove

import "testing"

func TestWordNumbers(t *testing.T) {
	for _, c := range []struct {
		text string
		v    string
		want bool
	}{
		{`If asked, they want: extra code "BOOSTER", quantity three.`, "3", true},
		{"They need twenty-five minutes.", "25", true},
		{"They need twenty five minutes.", "25", true},
		{"They need twenty five minutes.", "20", false},
		{"about twenty, five of them late", "20", true},
		{"a dozen eggs", "12", true},
		{"the one on file", "1", false},
		{"card last4 3098", "4", false},
		{"their 2 nephews", "2", true},
		{"someone with three", "3", true},
		{"threefold", "3", false},
	} {
		if got := saysNumber(c.text, c.v); got != c.want {
			t.Errorf("saysNumber(%q, %s) = %v, want %v", c.text, c.v, got, c.want)
		}
	}
}
