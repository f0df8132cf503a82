package builtin

import (
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestWrongDetail: of the calls that identify a caller, a secret the world
// compares is given wrong: a short string of digits, or longer digits
// grounded to a plain column, by its last digit (9 wraps to 0); a date by a
// day. What names a record (a key, a unique column) and other text are
// never changed, since a code the caller is handed must be one the world
// holds; nor are long digits nothing grounds.
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
		{map[string]any{"dob": "1990-01-02", "code": "12a4"}, "dob", "1990-01-03"},
		{map[string]any{"date_of_birth": "1990-01-28", "patient_id": "P-10001"}, "date_of_birth", "1990-01-27"},
		{map[string]any{"code": "451469", "phone": "+18728899213"}, "code", "451460"},
		{map[string]any{"accountNumber": "451469", "name": "Ann"}, "", ""},
		{map[string]any{"cardNumber": "2100303502", "code": "12a4"}, "", ""},
		{map[string]any{"patient_id": "2021-01-01"}, "", ""},
	} {
		missing := []scenario.Call{{Tool: "identify", Args: tc.args}}
		// code and date_of_birth are plain columns; cardNumber and
		// patient_id name records; accountNumber is grounded to nothing.
		keyed := func(tool, arg string) (bound, key bool) {
			switch arg {
			case "code", "date_of_birth":
				return true, false
			case "cardNumber", "patient_id":
				return true, true
			}
			return false, false
		}
		tried, ok := wrongDetail(missing, keyed)
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
		// The scenario declares what the caller gets wrong, against what
		// the world holds, so the grounding gate lets a long code pass.
		m := misremembered(tried, missing)
		if len(m) != 1 || m[0].Said != tc.want || m[0].Actual != tc.args[tc.arg] {
			t.Errorf("%v: misremembered %+v, want said %q actual %v", tc.args, m, tc.want, tc.args[tc.arg])
		}
	}
}
