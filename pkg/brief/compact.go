package brief

import (
	"encoding/json"
	"strings"
)

// A writer does not resend the turns that wrote scenarios once they are
// kept (after a turn whose submissions were all kept): they are replaced by
// one user message, a Digest, with a line per submission those turns made.
// The conversation stays as long as the scenarios being worked on, not the
// whole slice, and the prefix before the digest (system prompt, tools,
// brief, earlier digests) is unchanged, so a provider's prompt cache keeps
// it.

// Submission is one line of a Digest: a scenario submitted in the turns it
// replaces, and what the gates said.
type Submission struct {
	Name   string `json:"submitted"`
	Bucket string `json:"bucket"`
	Kept   bool   `json:"kept"`
	// Refused is gate/code of each refusal, for a scenario not kept.
	Refused []string `json:"refused,omitempty"`
	// Remaining is how many the slice still needed after it.
	Remaining int `json:"remaining"`
}

// digestHead opens a Digest; Parse looks for it.
const digestHead = "Submitted (turns compacted):"

// Digest renders submissions as the message that replaces their turns.
func Digest(subs []Submission) string {
	var s strings.Builder
	s.WriteString(digestHead)
	for _, sub := range subs {
		b, err := json.Marshal(sub)
		if err != nil {
			continue
		}
		s.WriteByte('\n')
		s.Write(b)
	}
	return s.String()
}

// ParseDigest reads a message rendered by Digest; ok is false for any other
// message.
func ParseDigest(text string) (subs []Submission, ok bool) {
	rest, found := strings.CutPrefix(text, digestHead)
	if !found {
		return nil, false
	}
	for _, line := range strings.Split(rest, "\n") {
		if line == "" {
			continue
		}
		var sub Submission
		if err := json.Unmarshal([]byte(line), &sub); err != nil {
			return nil, false
		}
		subs = append(subs, sub)
	}
	return subs, true
}
