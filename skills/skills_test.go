package skills

import (
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
)

// TestKindsApply: a kind file is appended by modality and by the directions
// of the contract's use cases, and only then.
func TestKindsApply(t *testing.T) {
	voice, _ := File("kinds/voice.md")
	outbound, _ := File("kinds/outbound.md")
	_, voiceBody := frontMatter(voice)
	_, outboundBody := frontMatter(outbound)
	if !strings.Contains(outboundBody, "answered_by") {
		t.Fatal("kinds/outbound.md lost its body")
	}
	for _, tc := range []struct {
		name          string
		c             *contract.Contract
		voice, outbnd bool
	}{
		{"chat inbound", &contract.Contract{Modality: "chat", UseCases: []contract.UseCase{{ID: "a", Direction: contract.Inbound}}}, false, false},
		{"voice inbound", &contract.Contract{Modality: "voice", UseCases: []contract.UseCase{{ID: "a", Direction: contract.Inbound}}}, true, false},
		{"voice, one outbound use case", &contract.Contract{Modality: "voice", Direction: []string{"inbound", "outbound"},
			UseCases: []contract.UseCase{{ID: "a", Direction: contract.Inbound}, {ID: "b", Direction: contract.Outbound, Purpose: "appointments", MissedCall: "log_call_attempt"}}}, true, true},
		// The contract allows outbound calls, but no use case places one.
		{"outbound allowed, none placed", &contract.Contract{Modality: "chat", Direction: []string{"inbound", "outbound"},
			UseCases: []contract.UseCase{{ID: "a", Direction: contract.Inbound}}}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := WriterPrompt(tc.c)
			if got := strings.Contains(p, voiceBody); got != tc.voice {
				t.Errorf("voice kind appended: %v, want %v", got, tc.voice)
			}
			if got := strings.Contains(p, outboundBody); got != tc.outbnd {
				t.Errorf("outbound kind appended: %v, want %v", got, tc.outbnd)
			}
			if got := strings.Contains(p, "outbound: the agent calls the owner of a record of appointments; missed call (voicemail, someone else): log_call_attempt"); got != tc.outbnd {
				t.Errorf("outbound use case described: %v, want %v\n%s", got, tc.outbnd, p)
			}
		})
	}
}

// TestBucketsApply: a buckets/ file is given for its feature only, and the
// system prompt, the same for every slice, carries none of them.
func TestBucketsApply(t *testing.T) {
	names := []string{"outside", "swap-itself", "swap-held", "swap-world", "swap-akin", "swap-taken", "swap-unchanged", "swap-more", "leave", "prior", "ask", "next"}
	for _, n := range names {
		got := Buckets([]string{n})
		if len(got) != 1 || !strings.Contains(got[0], "`") {
			t.Errorf("feature %s: %q", n, got)
		}
		if p := WriterPrompt(&contract.Contract{Modality: "chat"}); strings.Contains(p, got[0]) {
			t.Errorf("the system prompt carries the note on %s", n)
		}
	}
	if got := Buckets(nil); len(got) != 0 {
		t.Errorf("no features, notes %q", got)
	}
	if got := Buckets(names); len(got) != len(names) {
		t.Errorf("%d notes for %d features", len(got), len(names))
	}
	// In the features' order, whatever the files' order.
	if got := Buckets([]string{"next", "outside"}); len(got) != 2 || !strings.Contains(got[0], "`spec.next`") {
		t.Errorf("notes out of the features' order: %q", got)
	}
	if got := Buckets([]string{"swap-past"}); len(got) != 0 {
		t.Errorf("a feature no file explains has notes %q", got)
	}
}

// TestRequirementsNamed: a requirement two tools share is said once, under
// a name each of them cites; one only a single tool has stays on its line.
func TestRequirementsNamed(t *testing.T) {
	id := contract.Requirement{AnyOf: []string{"find_by_email", "find_by_name"}}
	order := contract.Requirement{AnyOf: []string{"get_order"}, Same: []string{"order_id"}}
	user := contract.Requirement{AnyOf: []string{"get_user"}, Same: []string{"user_id"}}
	c := &contract.Contract{Modality: "chat", Tools: []contract.Tool{
		{Name: "find_by_email"}, {Name: "find_by_name"},
		{Name: "get_order", Requires: []contract.Requirement{id}},
		{Name: "get_user", Requires: []contract.Requirement{id}},
		{Name: "cancel", Requires: []contract.Requirement{id, order}},
		{Name: "refund", Requires: []contract.Requirement{id, order}},
		{Name: "move", Requires: []contract.Requirement{id, user}},
	}}
	p := WriterPrompt(c)
	for _, want := range []string{
		"R1: one of [find_by_email find_by_name]\n",
		"R2: one of [get_order] on the same [order_id]\n",
		"- get_order: \n  requires R1\n",
		"- cancel: \n  requires R1, R2\n",
		"- move: \n  requires one of [get_user] on the same [user_id]\n  requires R1\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p)
		}
	}
	if n := strings.Count(p, "find_by_email find_by_name"); n != 1 {
		t.Errorf("the shared requirement is said %d times, want once:\n%s", n, p)
	}
	if p := WriterPrompt(&contract.Contract{Tools: []contract.Tool{{Name: "a"}, {Name: "b", Requires: []contract.Requirement{{AnyOf: []string{"a"}}}}}}); strings.Contains(p, "R1:") ||
		!strings.Contains(p, "- b: \n  requires one of [a]\n") {
		t.Errorf("a requirement of one tool is named:\n%s", p)
	}
}
