package builtin

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/plan"
)

func retail(t *testing.T) *contract.Contract {
	t.Helper()
	c, probs, err := contract.Load(filepath.Join("..", "..", "examples", "retail"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	return c
}

// slice builds a brief with one cancel-order bucket over pending orders.
func slice(t *testing.T, c *contract.Contract, outcome string, want int) brief.Brief {
	g := ground.New(c)
	var templates []string
	for _, r := range g.Where("orders", "status", "pending") {
		templates = append(templates, ground.Text(r[g.PK("orders")]))
	}
	if len(templates) == 0 {
		t.Fatal("no pending orders in the retail seed")
	}
	spec := plan.Spec{Tools: []string{"get_order_details", "cancel_pending_order"}, Tool: "cancel_pending_order",
		Gated: []string{"find_user_id_by_email", "get_order_details"}, Handoff: "transfer_to_human_agents",
		Table: "orders", Column: "status", Level: "pending", Templates: templates}
	return brief.Brief{Run: "r", Slice: "r-1", Agent: c.Agent, Contract: c.SHA256, Seed: 3, TurnBudget: 40,
		Buckets: []brief.Bucket{{Bucket: plan.Bucket{ID: "b0001", UseCase: "cancel-order", Angle: "ordinary cancel-order", Outcome: outcome,
			Overlay: "none", Kind: "happy", Want: want, Spec: spec}}}}
}

// converse plays the writer side: answer holds what each tool returns.
func converse(t *testing.T, m *Model, b brief.Brief, answer func(tc model.ToolCall) string, max int) []model.ToolCall {
	t.Helper()
	msgs := []model.Message{{Role: model.RoleSystem, Content: "sys"}, {Role: model.RoleUser, Content: render(t, b)}}
	var calls []model.ToolCall
	for i := 0; i < max; i++ {
		resp, err := m.Complete(context.Background(), model.Request{Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Message.ToolCalls) != 1 {
			t.Fatalf("turn %d: %d tool calls", i, len(resp.Message.ToolCalls))
		}
		tc := resp.Message.ToolCalls[0]
		calls = append(calls, tc)
		msgs = append(msgs, resp.Message)
		if tc.Name == brief.ToolFinish {
			return calls
		}
		msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: answer(tc)})
	}
	t.Fatal("the builtin model never finished")
	return nil
}

func okAnswers(t *testing.T) func(tc model.ToolCall) string {
	return func(tc model.ToolCall) string {
		switch tc.Name {
		case brief.ToolTry:
			var a brief.TryArgs
			if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
				t.Fatal(err)
			}
			var r brief.TryResult
			for _, c := range a.Calls {
				r.Steps = append(r.Steps, brief.TryStep{Tool: c.Tool, OK: true, Result: json.RawMessage(`{"status":"cancelled"}`)})
			}
			b, _ := json.Marshal(r)
			return string(b)
		case brief.ToolSubmit:
			return `{"accepted":true}`
		}
		return `{}`
	}
}

func TestWritesEachScenarioOnce(t *testing.T) {
	c := retail(t)
	m := New(c)
	calls := converse(t, m, slice(t, c, "succeed", 2), okAnswers(t), 20)
	var names []string
	for _, tc := range calls {
		if tc.Name == brief.ToolSubmit {
			var a brief.SubmitArgs
			if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
				t.Fatal(err)
			}
			names = append(names, a.Scenario.Name)
			sc := a.Scenario
			if len(sc.Setup) == 0 || len(sc.Solution) != 3 || sc.Solution[2].Tool != "cancel_pending_order" {
				t.Errorf("%s: setup %d, solution %+v", sc.Name, len(sc.Setup), sc.Solution)
			}
			if len(sc.SubGoals) == 0 || sc.Outputs[0] != "cancelled" {
				t.Errorf("%s: sub-goals %v outputs %v", sc.Name, sc.SubGoals, sc.Outputs)
			}
		}
	}
	want := []string{brief.ToolTry, brief.ToolSubmit, brief.ToolTry, brief.ToolSubmit, brief.ToolFinish}
	if len(calls) != len(want) {
		t.Fatalf("calls %d, want %d", len(calls), len(want))
	}
	for i, tc := range calls {
		if tc.Name != want[i] {
			t.Errorf("call %d is %s, want %s", i, tc.Name, want[i])
		}
	}
	if len(names) != 2 || names[0] == names[1] {
		t.Errorf("names %v", names)
	}
	// Stateless: the same conversation again gives the same moves.
	again := converse(t, New(c), slice(t, c, "succeed", 2), okAnswers(t), 20)
	for i := range calls {
		if calls[i].Arguments != again[i].Arguments {
			t.Fatalf("call %d differs between two identical conversations", i)
		}
	}
}

func TestCorrectsFromRefusals(t *testing.T) {
	c := retail(t)
	m := New(c)
	submits := 0
	var last brief.SubmitArgs
	answer := func(tc model.ToolCall) string {
		if tc.Name != brief.ToolSubmit {
			return okAnswers(t)(tc)
		}
		submits++
		if err := json.Unmarshal([]byte(tc.Arguments), &last); err != nil {
			t.Fatal(err)
		}
		if submits == 1 {
			res := brief.SubmitResult{Refusals: []brief.Refusal{{Gate: "solvable", Code: "check-failed", Message: "x", SubGoal: last.Scenario.SubGoals[0].Name}}}
			b, _ := json.Marshal(res)
			return string(b)
		}
		return `{"accepted":true}`
	}
	converse(t, m, slice(t, c, "succeed", 1), answer, 20)
	if submits != 2 {
		t.Fatalf("%d submissions, want a refusal and a corrected resubmission", submits)
	}
}

func TestRefuseOutcomeHasTempting(t *testing.T) {
	c := retail(t)
	calls := converse(t, New(c), slice(t, c, "refuse", 1), okAnswers(t), 20)
	for _, tc := range calls {
		if tc.Name == brief.ToolSubmit {
			var a brief.SubmitArgs
			_ = json.Unmarshal([]byte(tc.Arguments), &a)
			if len(a.Scenario.Tempting) != 1 || a.Scenario.Tempting[0].Tool != "cancel_pending_order" {
				t.Errorf("tempting %+v", a.Scenario.Tempting)
			}
			found := false
			for _, s := range a.Scenario.SubGoals {
				found = found || s.Name == "not_called"
			}
			if !found {
				t.Errorf("a refuse scenario carries not_called: %v", a.Scenario.SubGoals)
			}
			return
		}
	}
	t.Fatal("nothing submitted")
}

// TestResendsCallsThatNeverRan: a call the writer could not dispatch (its
// arguments garbled, its name lost, as a faulty provider does) is sent again
// unchanged, so the scenario written is the one a clean conversation writes.
func TestResendsCallsThatNeverRan(t *testing.T) {
	c := retail(t)
	clean := converse(t, New(c), slice(t, c, "succeed", 1), okAnswers(t), 20)
	ok := okAnswers(t)
	garbled := 0
	faulty := converse(t, New(c), slice(t, c, "succeed", 1), func(tc model.ToolCall) string {
		// The first answer to each of try_calls and submit_scenario is the
		// writer refusing to dispatch it.
		if garbled < 2 && (tc.Name == brief.ToolTry) == (garbled == 0) {
			garbled++
			if garbled == 1 {
				return brief.Error{Message: "the arguments are not valid JSON", Code: brief.CodeNotJSON}.Answer()
			}
			return brief.Error{Message: `there is no tool "submit_scenari"`, Code: brief.CodeUnknownTool}.Answer()
		}
		return ok(tc)
	}, 20)
	if len(faulty) != len(clean)+2 {
		t.Fatalf("%d calls with two undispatched, %d without; want two more", len(faulty), len(clean))
	}
	if faulty[0].Arguments != faulty[1].Arguments || faulty[0].Name != faulty[1].Name {
		t.Error("the undispatched try_calls was not sent again unchanged")
	}
	last := func(calls []model.ToolCall) string {
		for i := len(calls) - 1; i >= 0; i-- {
			if calls[i].Name == brief.ToolSubmit {
				return calls[i].Arguments
			}
		}
		return ""
	}
	if last(faulty) != last(clean) {
		t.Error("the submitted scenario differs from the clean conversation's")
	}
}

// The memo (parsed brief, composed candidates) must change no decision: at
// every turn of a conversation whose corrections append to and drop from a
// candidate's sub-goals, and where one template record serves two case
// numbers, a model that memoised every earlier turn answers exactly as one
// that composes every candidate afresh, and a second conversation over the same
// brief on the warm model gets the first one's calls.
func TestMemoChangesNothing(t *testing.T) {
	c := retail(t)
	warm := New(c)
	b := slice(t, c, "succeed", 3)
	submits, tries := 0, 0
	answer := func(tc model.ToolCall) string {
		if tc.Name == brief.ToolTry {
			// Every other rehearsal fails, so the next template record is
			// tried and one record serves two case numbers.
			if tries++; tries%2 == 1 {
				return `{"error":"the world is down"}`
			}
		}
		if tc.Name != brief.ToolSubmit {
			return okAnswers(t)(tc)
		}
		submits++
		var a brief.SubmitArgs
		if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
			t.Fatal(err)
		}
		var res brief.SubmitResult
		switch submits % 3 {
		case 1:
			res.Refusals = []brief.Refusal{{Gate: "not-vacuous", Code: "vacuous", Message: "x"}}
		case 2:
			res.Refusals = []brief.Refusal{{Gate: "solvable", Code: "check-failed", Message: "x", SubGoal: a.Scenario.SubGoals[0].Name}}
		default:
			res.Accepted = true
		}
		js, _ := json.Marshal(res)
		return string(js)
	}
	msgs := []model.Message{{Role: model.RoleSystem, Content: "sys"}, {Role: model.RoleUser, Content: render(t, b)}}
	var first []model.ToolCall
	for turn := 0; ; turn++ {
		if turn > 60 {
			t.Fatal("the builtin model never finished")
		}
		got, err := warm.Complete(context.Background(), model.Request{Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		fresh := New(c)
		fresh.noMemo = true
		want, err := fresh.Complete(context.Background(), model.Request{Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Fatalf("turn %d: memoised model answered\n%s\na fresh one\n%s", turn, gj, wj)
		}
		tc := got.Message.ToolCalls[0]
		first = append(first, tc)
		msgs = append(msgs, got.Message)
		if tc.Name == brief.ToolFinish {
			break
		}
		msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: answer(tc)})
	}
	if submits < 6 {
		t.Fatalf("%d submissions: the corrections were not exercised", submits)
	}
	submits, tries = 0, 0
	again := converse(t, warm, b, answer, 60)
	if len(again) != len(first) {
		t.Fatalf("second conversation: %d calls, first %d", len(again), len(first))
	}
	for i := range again {
		if again[i] != first[i] {
			t.Fatalf("call %d differs on the warm model:\n%+v\n%+v", i, again[i], first[i])
		}
	}
}

// TestResendsAlteredRehearsal: a try_calls that reached the writer with other
// arguments than the model sent (a provider naming a record that does not
// exist) is sent again as meant, not taken as the record failing.
func TestResendsAlteredRehearsal(t *testing.T) {
	c := retail(t)
	m := New(c)
	msgs := []model.Message{{Role: model.RoleSystem, Content: "sys"}, {Role: model.RoleUser, Content: render(t, slice(t, c, "succeed", 1))}}
	first, err := m.Complete(context.Background(), model.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	sent := first.Message
	if sent.ToolCalls[0].Name != brief.ToolTry {
		t.Fatalf("first move is %s, want try_calls", sent.ToolCalls[0].Name)
	}
	meant := sent.ToolCalls[0].Arguments
	sent.ToolCalls = []model.ToolCall{{ID: sent.ToolCalls[0].ID, Name: brief.ToolTry, Arguments: strings.Replace(meant, "#W", "#WNOSUCH", 1)}}
	msgs = append(msgs, sent, model.Message{Role: model.RoleTool, ToolCallID: sent.ToolCalls[0].ID,
		Content: `{"steps":[{"tool":"find_user_id_by_email","ok":false,"refused":true,"error":"Error: order not found"}]}`})
	again, err := m.Complete(context.Background(), model.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Message.ToolCalls[0]; got.Name != brief.ToolTry || got.Arguments != meant {
		t.Errorf("after an altered rehearsal the model sent %s %.80s, want the same try_calls again", got.Name, got.Arguments)
	}
}

// TestReplaysCompactedHistory: a writer replaces a kept scenario's turns by
// a digest; the builtin makes the same moves on that conversation as on the
// whole one, including past a case it gave up on inside the compacted turns.
func TestReplaysCompactedHistory(t *testing.T) {
	c := retail(t)
	b := slice(t, c, "succeed", 3)
	// Every submission of the first case is refused (its check fails), so
	// the builtin gives that case up; the others are kept.
	first := ""
	answer := func(tc model.ToolCall) (string, *brief.Submission) {
		if tc.Name != brief.ToolSubmit {
			return okAnswers(t)(tc), nil
		}
		var a brief.SubmitArgs
		if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = a.Scenario.Name
		}
		sub := &brief.Submission{Name: a.Scenario.Name, Bucket: a.Scenario.Bucket, Kept: a.Scenario.Name != first}
		if sub.Kept {
			return `{"accepted":true}`, sub
		}
		res := brief.SubmitResult{Refusals: []brief.Refusal{{Gate: "outcome", Code: "not-refused", Message: "the world let it through"}}}
		js, _ := json.Marshal(res)
		sub.Refused = []string{"outcome/not-refused"}
		return string(js), sub
	}
	play := func(compact bool) (calls []string, digests int) {
		m := New(c)
		msgs := []model.Message{{Role: model.RoleSystem, Content: "sys"}, {Role: model.RoleUser, Content: render(t, b)}}
		mark := len(msgs)
		var subs []brief.Submission
		first = ""
		for i := 0; i < 60; i++ {
			resp, err := m.Complete(context.Background(), model.Request{Messages: msgs})
			if err != nil {
				t.Fatal(err)
			}
			tc := resp.Message.ToolCalls[0]
			calls = append(calls, tc.Name+" "+tc.Arguments)
			if tc.Name == brief.ToolFinish {
				return calls, digests
			}
			out, sub := answer(tc)
			msgs = append(msgs, resp.Message, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: out})
			if sub != nil {
				subs = append(subs, *sub)
			}
			if compact && sub != nil && sub.Kept {
				msgs = append(msgs[:mark], model.Message{Role: model.RoleUser, Content: brief.Digest(subs)})
				mark, subs = len(msgs), nil
				digests++
			}
		}
		t.Fatal("the builtin model never finished")
		return nil, 0
	}
	whole, _ := play(false)
	compacted, digests := play(true)
	if digests < 2 {
		t.Fatalf("%d digests, want one per kept scenario", digests)
	}
	if !slices.Equal(whole, compacted) {
		t.Fatalf("the moves differ on the compacted conversation:\nwhole:\n%s\ncompacted:\n%s", strings.Join(whole, "\n"), strings.Join(compacted, "\n"))
	}
	refused := 0
	for _, call := range whole {
		if strings.HasPrefix(call, brief.ToolSubmit) && strings.Contains(call, first) {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("the first case was never refused")
	}
}

// TestSkipsTemplatesThatComposeNothing: a template that composes no
// candidate (here, keys of no order) costs a case none of its three tries.
// The brief of two cases carries four templates; the first three compose
// nothing, so the first case, which would try only those, must go on to the
// fourth rather than submit nothing (its bucket would then block with no
// gate to say why).
func TestSkipsTemplatesThatComposeNothing(t *testing.T) {
	c := retail(t)
	b := slice(t, c, "succeed", 2)
	spec := &b.Buckets[0].Spec
	spec.Templates = append([]string{"none-1", "none-2", "none-3"}, spec.Templates...)
	submitted := 0
	for _, tc := range converse(t, New(c), b, okAnswers(t), 20) {
		if tc.Name == brief.ToolSubmit {
			submitted++
		}
	}
	if submitted != 2 {
		t.Errorf("%d scenarios submitted, want 2 (one per case)", submitted)
	}
}
