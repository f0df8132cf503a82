package prove

import "testing"

func TestHolderNegated(t *testing.T) {
	nouns := map[string]bool{"renter": true, "customer": true, "holder": true}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"Ruth Kowalski, an assistant who is not the renter and is not on the account, calls about a charge.", true},
		{"Lena Iyer, the renter's ex-wife, who isn't listed on this account, wants to cancel.", true},
		{"She is not an account holder.", true},
		{"Goran Varga, the renter, calls about his wife's trip.", false},
		{"It is not the renter's car that broke down.", false},
		{"The date of birth is not the one on file.", false},
		{"They do not want the booking cancelled.", false},
		{"No one else is on the account.", false},
		{"Ruth calls on behalf of her boss, Goran Varga.", true},
	} {
		if got := holderNegated(c.text, nouns) != ""; got != c.want {
			t.Errorf("holderNegated(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
