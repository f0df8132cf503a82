package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
)

// Of a tool no rehearsal answered, a value written from the pattern of an
// argument marked x-ref: false is the author's word: neither a guess nor
// unbound. The same value of an argument without it stays a guess.
func TestPrintBindingsDeclinedPattern(t *testing.T) {
	c := &contract.Contract{Tools: []contract.Tool{{Name: "pay", Params: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"last4": map[string]any{"type": "string", "pattern": "^[0-9]{4}$", "x-ref": false},
			"pin":   map[string]any{"type": "string", "pattern": "^[0-9]{4}$"},
		},
		"required": []any{"last4", "pin"},
	}}}}
	gr := ground.Grounding{
		Bindings:   ground.Bindings{{Tool: "pay", Param: "last4", How: ground.FromPattern}, {Tool: "pay", Param: "pin", How: ground.FromPattern}},
		Unanswered: map[string]string{"pay": "Error: closed"},
	}
	var buf bytes.Buffer
	printBindings(&buf, "x", c, gr)
	out := buf.String()
	if strings.Contains(out, "pay.last4: no column") {
		t.Errorf("last4, x-ref: false and written from its pattern, is listed unbound:\n%s", out)
	}
	if !strings.Contains(out, "pay.pin: no column") {
		t.Errorf("pin, written from its pattern as a guess, is not listed unbound:\n%s", out)
	}
}
