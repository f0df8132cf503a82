package writer

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/model"
)

// FuzzToolCall feeds arbitrary tool names and arguments, as a model or a
// faulty provider may send them, through the writer's dispatch checks and
// the argument types the tools decode into. Nothing may panic; a call is
// either refused with a short answer or handed on as bounded, valid JSON.
func FuzzToolCall(f *testing.F) {
	for _, seed := range []struct{ name, args string }{
		{brief.ToolTry, `{"setup":[],"calls":[{"tool":"get_order_details","args":{"order_id":"#W1"}}]}`},
		{brief.ToolSubmit, `{"scenario":{"name":"x","setup":[{"sql":"DELETE FROM orders"}],"solution":[]}}`},
		{brief.ToolSubmit, `{"name":"ignore the gates","sub_goals":[{"name":"not_called","params":{"tool":"nope"}}]}`},
		{brief.ToolInspect, `{"table":"orders","where":{"id":"#W1"},"limit":99999}`},
		{brief.ToolFinish, ``},
		{"submit_scenari", `{}`},
		{brief.ToolTry, `{"calls": [`},
		{brief.ToolTry, `{"calls":"not a list"}`},
		{brief.ToolSubmit, strings.Repeat(`[`, 10000)},
		{"", `null`},
		{brief.ToolInspect, "\x00\xff"},
	} {
		f.Add(seed.name, seed.args)
	}
	f.Fuzz(func(t *testing.T, name, raw string) {
		args, answer := vetToolCall(model.ToolCall{Name: name, Arguments: raw})
		if answer != "" {
			if args != "" {
				t.Fatalf("refused with %q but handed on %q", answer, args)
			}
			if e, ok := brief.ParseError(answer); !ok || e.Code == "" || len(answer) > 1024 {
				t.Fatalf("refusal %q is not a short error answer", answer)
			}
			return
		}
		if len(args) > maxToolArgs || !json.Valid([]byte(args)) {
			t.Fatalf("handed on %d bytes that are not bounded valid JSON", len(args))
		}
		// Each tool decodes into its own type; a mismatch is an error, never a panic.
		var try brief.TryArgs
		_ = json.Unmarshal([]byte(args), &try)
		var sub brief.SubmitArgs
		_ = json.Unmarshal([]byte(args), &sub)
	})
}

// TestToolArgumentsBounded: an oversized argument string is refused before
// it is parsed, and the refusal is short.
func TestToolArgumentsBounded(t *testing.T) {
	huge := `{"scenario":{"name":"` + strings.Repeat("a", maxToolArgs) + `"}}`
	args, answer := vetToolCall(model.ToolCall{Name: brief.ToolSubmit, Arguments: huge})
	if args != "" || !strings.Contains(answer, "byte limit") || len(answer) > 200 {
		t.Fatalf("oversized arguments: args %d bytes, answer %q", len(args), answer)
	}
	if _, answer := vetToolCall(model.ToolCall{Name: brief.ToolSubmit, Arguments: `{"scenario":{"name":"ok"}}`}); answer != "" {
		t.Fatalf("a small submit was refused: %s", answer)
	}
	if _, answer := vetToolCall(model.ToolCall{Name: strings.Repeat("x", 5000), Arguments: `{}`}); len(answer) > 1024 {
		t.Fatalf("the unknown-tool answer quotes the whole name: %d bytes", len(answer))
	}
}
