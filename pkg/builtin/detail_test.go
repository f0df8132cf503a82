package builtin

import (
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestWrongDetail: of the calls that identify a caller, a short string of
// digits is given wrong by its last digit (9 wraps to 0); longer codes and
// other text are never changed, since a code the caller is handed must be
// one the world holds.
func TestWrongDetail(t *testing.T) {
	for _, tc := range []struct {
		args map[string]any
		arg  string
		want string
	}{
		{map[string]any{"cardNumber": "2100303502", "pin": "4111"}, "pin", "4112"},
		{map[string]any{"cardNumber": "2100303502", "pin": "4119"}, "pin", "4110"},
		{map[string]any{"last_four": "0009", "name": "Ann"}, "last_four", "0000"},
		{map[string]any{"cardNumber": "2100303502", "name": "Ann"}, "", ""},
		{map[string]any{"dob": "1990-01-02", "code": "12a4"}, "", ""},
	} {
		missing := []scenario.Call{{Tool: "identify", Args: tc.args}}
		tried, ok := wrongDetail(missing)
		if tc.arg == "" {
			if ok {
				t.Errorf("%v: changed to %v; no detail is short digits", tc.args, tried.Args)
			}
			continue
		}
		if !ok || tried.Args[tc.arg] != tc.want || tc.args[tc.arg] == tc.want {
			t.Errorf("%v: got %v (%v), want %s %q", tc.args, tried.Args, ok, tc.arg, tc.want)
		}
		for n, v := range tc.args {
			if n != tc.arg && tried.Args[n] != v {
				t.Errorf("%v: %s changed too: %v", tc.args, n, tried.Args[n])
			}
		}
		said := givesWrong(tried, missing)
		if !strings.Contains(said, `"`+tc.want+`"`) || !strings.Contains(said, "the "+strings.ReplaceAll(tc.arg, "_", " ")+" is not the one on file") {
			t.Errorf("%v: the caller says %q", tc.args, said)
		}
	}
}
