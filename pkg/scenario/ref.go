package scenario

import (
	"regexp"
	"strconv"
)

// stepRef is a reference to an earlier step's result as Call describes it:
// "$2.user_id" names field user_id of the result of step 2.
var stepRef = regexp.MustCompile(`^\$(\d+)(\..+)$`)

// RenumberRefs returns a copy of args with every step reference in it, at
// any depth of lists and objects, pointing at the step's new number: a
// reference "$N.path" becomes "$M.path" where M, ok = step(N). References
// step declines (ok false), and strings that are not references, are kept
// as written. Callers use it when calls move: some are dropped, or the calls
// are played after others. The result is never nil.
func RenumberRefs(args map[string]any, step func(n int) (int, bool)) map[string]any {
	out, _ := renumber(args, step).(map[string]any)
	return out
}

func renumber(v any, step func(int) (int, bool)) any {
	switch x := v.(type) {
	case string:
		if m := stepRef.FindStringSubmatch(x); m != nil {
			if k, err := strconv.Atoi(m[1]); err == nil {
				if to, ok := step(k); ok {
					return "$" + strconv.Itoa(to) + m[2]
				}
			}
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = renumber(e, step)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = renumber(e, step)
		}
		return out
	}
	return v
}
