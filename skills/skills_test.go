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
	names := []string{"ask", "leave", "next", "outside", "prior"}
	for _, n := range names {
		got := Buckets([]string{n})
		if len(got) != 1 || !strings.Contains(got[0], "A bucket whose") {
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
}
