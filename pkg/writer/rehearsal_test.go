package writer

import (
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// TestSubmitNamingARehearsal: a submission may name only a rehearsal the
// session ran, and only while leaving the setup and solution to it; either
// mistake is answered before anything is proved.
func TestSubmitNamingARehearsal(t *testing.T) {
	ss := &session{rehearsals: []brief.TryArgs{{Calls: []scenario.Call{{Tool: "get_order_details"}}}}}
	for _, tc := range []struct{ args, want string }{
		{`{"scenario":{"name":"a"},"rehearsal":2}`, "no rehearsal 2"},
		{`{"scenario":{"name":"a"},"rehearsal":-1}`, "no rehearsal -1"},
		{`{"scenario":{"name":"a","solution":[{"tool":"get_order_details","args":{}}]},"rehearsal":1}`, "leave both out"},
		{`{"scenario":{"name":"a","setup":[{"sql":"SELECT 1"}]},"rehearsal":1}`, "leave both out"},
	} {
		got := ss.submit(t.Context(), tc.args)
		e, ok := brief.ParseError(got)
		if !ok || e.Code != brief.CodeBadArguments || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s: answered %s, want a bad-arguments error saying %q", tc.args, got, tc.want)
		}
	}
}
