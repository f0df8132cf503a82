package writer

import (
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/allowance"
	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/model"
)

// TestAllowanceSizedByObservation: each call's reply allowance is the cap
// until replies of its kind were seen, then sized from them (the scripted
// replies are 2 tokens long, so the floor), and a kind not seen yet still
// gets the cap.
func TestAllowanceSizedByObservation(t *testing.T) {
	var replies []any
	for range allowance.Warmup + 2 {
		replies = append(replies, brief.ToolReportBucket)
	}
	replies = append(replies, "no_such_tool")
	h := newHarness(t, replies...)
	h.w.handle(t.Context(), h.delivery("r", 1, false))
	const c, f = DefaultMaxTokens, allowance.Floor
	// Call 1 opens (no answer yet); calls 2..Warmup+1 follow report_bucket
	// answers, as do the next two, now sized; then one follows the
	// answer to a tool that does not exist (not seen yet), and the finish that ends it.
	want := []int{c}
	for range allowance.Warmup {
		want = append(want, c)
	}
	want = append(want, f, f, c)
	h.model.mu.Lock()
	got := slices.Clone(h.model.allowances)
	h.model.mu.Unlock()
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("allowances %v, want %v first", got, want)
	}
}

func TestReplyKind(t *testing.T) {
	for _, c := range []struct {
		msgs []model.Message
		want string
	}{
		{nil, "open"},
		{[]model.Message{{Role: model.RoleSystem}, {Role: model.RoleUser}}, "open"},
		{[]model.Message{{Role: model.RoleAssistant}, {Role: model.RoleTool, Name: brief.ToolTry}}, "after " + brief.ToolTry},
		{[]model.Message{{Role: model.RoleTool, Name: brief.ToolTry}, {Role: model.RoleUser, Content: "digest"}}, "open"},
	} {
		if got := replyKind(c.msgs); got != c.want {
			t.Errorf("%v: %q, want %q", c.msgs, got, c.want)
		}
	}
}

// quotaModel is a scripted model whose provider reports a tokens quota.
type quotaModel struct {
	*scriptedModel
	tpm int
}

func (m quotaModel) TokensPerMinute() int { return m.tpm }

// TestAllowanceKeptToTheQuota: under a tokens quota a request's allowance
// keeps prompt + allowance within 1/quotaShare of the quota per minute, but
// never below oneMove; a quota large against the request leaves the sized
// allowance as it is, and an unknown one (0) too.
func TestAllowanceKeptToTheQuota(t *testing.T) {
	h := newHarness(t)
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: strings.Repeat("word ", 4000)}}}
	prompt := model.EstimatePromptTokens(req)
	for _, c := range []struct {
		tpm, want int
	}{
		{0, DefaultMaxTokens},
		{30_000, oneMove},
		{quotaShare * (prompt + 5000), 5000},
		{quotaShare * (prompt + DefaultMaxTokens + 1), DefaultMaxTokens},
		{10_000_000, DefaultMaxTokens},
	} {
		h.w.cfg.Model = quotaModel{scriptedModel: h.model, tpm: c.tpm}
		if got := h.w.allowance("open", req); got != c.want {
			t.Errorf("quota %d tokens a minute, prompt %d: allowance %d, want %d", c.tpm, prompt, got, c.want)
		}
	}
}
