package builtin

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/model"
)

// playAll plays the writer side answering every call of every reply, with
// replies allowed allowance tokens, and compacting as the writer does (after
// a turn of submissions all kept). It returns the calls in the order made and
// the replies' sizes.
func playAll(t *testing.T, m *Model, b brief.Brief, allowance int, answer func(tc model.ToolCall) (string, *brief.Submission)) (calls []model.ToolCall, replies []int) {
	t.Helper()
	msgs := []model.Message{{Role: model.RoleSystem, Content: "sys"}, {Role: model.RoleUser, Content: render(t, b)}}
	mark := len(msgs)
	var subs []brief.Submission
	for range 80 {
		resp, err := m.Complete(context.Background(), model.Request{Messages: msgs, MaxTokens: allowance})
		if err != nil {
			t.Fatal(err)
		}
		msg := resp.Message
		replies = append(replies, len(msg.ToolCalls))
		if len(msg.ToolCalls) > 1 && model.CompletionTokens(msg) > allowance {
			t.Fatalf("a reply of %d calls is %d tokens, over its allowance %d", len(msg.ToolCalls), model.CompletionTokens(msg), allowance)
		}
		msgs = append(msgs, msg)
		allKept := true
		for _, tc := range msg.ToolCalls {
			calls = append(calls, tc)
			if tc.Name == brief.ToolFinish {
				return calls, replies
			}
			out, sub := answer(tc)
			msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: out})
			allKept = allKept && sub != nil && sub.Kept
			if sub != nil {
				subs = append(subs, *sub)
			}
		}
		if allKept {
			msgs = append(msgs[:mark], model.Message{Role: model.RoleUser, Content: brief.Digest(subs)})
			mark, subs = len(msgs), nil
		}
	}
	t.Fatal("the builtin model never finished")
	return nil, nil
}

// TestWritesCasesSideBySide: with an allowance that holds several
// rehearsals, a reply carries a round of the slice's cases (their
// rehearsals, then their submissions), within the allowance; the scenarios
// submitted are the ones written one at a time, and a refused one is
// corrected as it would be alone.
func TestWritesCasesSideBySide(t *testing.T) {
	c := retail(t)
	b := slice(t, c, "succeed", 4)
	refusedOnce := map[string]bool{}
	answer := func(tc model.ToolCall) (string, *brief.Submission) {
		if tc.Name != brief.ToolSubmit {
			return okAnswers(t)(tc), nil
		}
		var a brief.SubmitArgs
		if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
			t.Fatal(err)
		}
		sub := &brief.Submission{Name: a.Scenario.Name, Bucket: a.Scenario.Bucket, Kept: true}
		// The second case's first submission is refused.
		if a.Scenario.Name == caseName(b.Buckets[0], 1) && !refusedOnce[a.Scenario.Name] {
			refusedOnce[a.Scenario.Name] = true
			sub.Kept, sub.Refused = false, []string{"outcome/not-refused"}
			js, _ := json.Marshal(brief.SubmitResult{Refusals: []brief.Refusal{{Gate: "outcome", Code: "not-refused", Message: "the world let it through"}}})
			return string(js), sub
		}
		return `{"accepted":true}`, sub
	}
	submitted := func(calls []model.ToolCall) []string {
		var out []string
		for _, tc := range calls {
			if tc.Name == brief.ToolSubmit {
				out = append(out, tc.Arguments)
			}
		}
		return out
	}
	one, oneReplies := playAll(t, New(c), b, 1024, answer)
	for i, n := range oneReplies {
		if n != 1 {
			t.Fatalf("allowance 1024: reply %d has %d calls, want one", i, n)
		}
	}
	clear(refusedOnce)
	side, sideReplies := playAll(t, New(c), b, 32000, answer)
	// A correction comes a round later side by side, so the order differs
	// there; the submissions are the same.
	if a, b := submitted(one), submitted(side); !slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))) {
		t.Fatalf("side by side, other submissions:\n%d one at a time, %d side by side", len(submitted(one)), len(submitted(side)))
	}
	if len(submitted(side)) != 5 {
		t.Fatalf("%d submissions, want four and a corrected one", len(submitted(side)))
	}
	if len(sideReplies) >= len(oneReplies) || sideReplies[0] != 4 {
		t.Fatalf("replies side by side %v, one at a time %v", sideReplies, oneReplies)
	}
	// Stateless: the same conversation again gives the same moves.
	clear(refusedOnce)
	again, _ := playAll(t, New(c), b, 32000, answer)
	for i := range side {
		if side[i].Arguments != again[i].Arguments {
			t.Fatalf("call %d differs between two identical conversations", i)
		}
	}
}

// render is brief.Render for tests: a brief that cannot be written fails
// the test.
func render(t testing.TB, b brief.Brief) string {
	t.Helper()
	text, err := brief.Render(b)
	if err != nil {
		t.Fatal(err)
	}
	return text
}
