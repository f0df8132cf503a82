package builtin

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// wholePlans is why the tests that write from whole examples' plans run in
// make test's pass without the race detector (testenv.OutsideRace): the
// race pass writes from small contracts' plans through the same code.
const wholePlans = "whole examples planned; the race pass writes from small plans through the same code"

// TestComposesTwoRequests: on examples/airline and examples/retail, a plan
// of 300 deals 20 of them or more as two requests, and the first case of
// each such bucket on a template both requests were planned on is composed
// as one conversation (the caller refused one
// act, then asking another on the same record) that the prover keeps, the
// instruction asking for both.
func TestComposesTwoRequests(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	for _, ex := range []string{"airline", "retail"} {
		t.Run(ex, func(t *testing.T) {
			ctx := context.Background()
			c, e, pl := planned(t, filepath.Join("..", "..", "examples", ex), 300)
			p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
			dealt, composed, kept := 0, 0, 0
			for _, b := range pl.Buckets {
				if b.Spec.Next == nil || b.Want == 0 {
					continue
				}
				dealt += b.Want
				// The first case on a template the second request was
				// planned on too; the bucket's other cases are one request.
				k := slices.IndexFunc(b.Spec.Templates, func(key string) bool { return slices.Contains(b.Spec.Next.Spec.Templates, key) })
				if k < 0 {
					t.Errorf("%s (%s then %s): no template of the first request is the second's", b.ID, b.UseCase, b.Spec.Next.UseCase)
					continue
				}
				bk := brief.Bucket{Bucket: b}
				sc, ok := p.composeRequests(bk, k, b.Spec.Templates[k])
				if !ok || len(sc.Then) != 1 {
					t.Errorf("%s (%s then %s): composed as %d request(s)", b.ID, b.UseCase, b.Spec.Next.UseCase, 1+len(sc.Then))
					continue
				}
				composed++
				if sc.Then[0].UseCase != b.Spec.Next.UseCase || !strings.Contains(sc.Instruction, thenWords) {
					t.Errorf("%s: second request %s, instruction %q", sc.Name, sc.Then[0].UseCase, sc.Instruction)
				}
				// As the writer does: numbers the world computes (a
				// booking's total) are settled by rehearsing the
				// conversation.
				settled(t, probe.Rehearser(e.World), &sc, func(req int) ground.Bindings {
					if req > 0 {
						return p.binds(b.Spec.Next.Spec)
					}
					return p.binds(b.Spec)
				})
				v, err := e.Prover.Prove(ctx, &sc)
				if err != nil {
					t.Fatal(err)
				}
				if !v.Kept {
					// The writer falls back to request 1 alone on these.
					t.Logf("%s (%s then %s): refused: %v", sc.Name, b.UseCase, b.Spec.Next.UseCase, v.Refusals)
					continue
				}
				kept++
			}
			t.Logf("%s: %d of 300 dealt as two requests; %d buckets composed, %d kept", ex, dealt, composed, kept)
			// Each pairs RequestShare of the ask, counting the cases on a
			// template both requests hold.
			if dealt < 20 {
				t.Errorf("%d of 300 dealt as two requests, want 20 at least", dealt)
			}
			if kept*4 < composed*3 {
				t.Errorf("%d of %d conversations kept, want three in four", kept, composed)
			}
		})
	}
}

// TestOneRequestOnRefusal: a conversation refused for its second request
// or as a whole is written as its first request alone; one refused only
// for its first request keeps both.
func TestOneRequestOnRefusal(t *testing.T) {
	two := func() scenario.Scenario {
		return scenario.Scenario{Instruction: "Ann wants to cancel." + thenWords + "Ann wants to change.",
			Solution: []scenario.Call{{Tool: "find"}}, Then: []scenario.Request{{UseCase: "change"}}}
	}
	sc := two()
	if oneRequest(&sc, []brief.Refusal{{Gate: prove.GateOutcome, Message: "no", Request: 1}}) || len(sc.Then) != 1 {
		t.Fatalf("a refusal of request 1 dropped request 2: %+v", sc)
	}
	for _, r := range []brief.Refusal{{Message: "request 1 (cancel) reads like the first", Request: 2}, {Message: "request 2 undoes request 1"}} {
		sc := two()
		if !oneRequest(&sc, []brief.Refusal{r}) || len(sc.Then) != 0 || sc.Instruction != "Ann wants to cancel." || sc.MaxTurns != 12 {
			t.Errorf("%+v: %+v, want request 1 alone", r, sc)
		}
	}
}

// settled rehearses sc's conversation and settles the numbers its
// refusals want (settleWant), as the writer's try_calls do, up to
// ground.SettleTries times.
func settled(t *testing.T, r ground.Rehearser, sc *scenario.Scenario, binds func(int) ground.Bindings) {
	t.Helper()
	for n := 0; n < ground.SettleTries; n++ {
		ans, err := r.Rehearse(context.Background(), sc.Setup, conversation(*sc))
		if err != nil {
			return // the prover says why
		}
		steps := make([]brief.TryStep, len(ans))
		for i, a := range ans {
			steps[i] = brief.TryStep{OK: a.OK, Refused: a.Refused, Error: a.Error, Want: a.Want}
		}
		if !settleWant(sc, steps, binds) {
			return
		}
	}
}

// settleWant puts a refusal's wanted number in the call it refused,
// whichever request holds it, and only where the argument's binding
// Settles; the scenario it was given keeps its own calls.
func TestSettleWantAcrossRequests(t *testing.T) {
	bs := ground.Bindings{
		{Tool: "book", Param: "payments", How: ground.FromRows},
		{Tool: "book", Param: "pin", How: ground.ByXRef, Table: "cards", Column: "pin", Confirmed: true},
	}
	binds := func(int) ground.Bindings { return bs }
	book := scenario.Call{Tool: "book", Args: map[string]any{"pin": int64(1111), "payments": []any{map[string]any{"amount": int64(58)}}}}
	orig := scenario.Scenario{
		Solution: []scenario.Call{{Tool: "find", Args: map[string]any{"id": "u1"}}},
		Then: []scenario.Request{{UseCase: "book", Solution: []scenario.Call{book},
			SubGoals: []scenario.SubGoalRef{{Name: "booked", Params: maps.Clone(book.Args)}, {Name: "other", Params: map[string]any{"payments": "x"}}}}},
	}
	sc := orig
	refused := []brief.TryStep{{OK: true}, {Refused: true, Want: &ground.Want{Arg: int64(58), Value: int64(122)}}}
	if !settleWant(&sc, refused, binds) {
		t.Fatal("the second request's total was not settled")
	}
	if got := sc.Then[0].Solution[0].Args["payments"].([]any)[0].(map[string]any)["amount"]; got != int64(122) {
		t.Errorf("the booking carries %v, want 122", got)
	}
	if got := sc.Then[0].SubGoals[0].Params["payments"].([]any)[0].(map[string]any)["amount"]; got != int64(122) {
		t.Errorf("the check of the booking asks for %v, want 122", got)
	}
	if got := sc.Then[0].SubGoals[1].Params["payments"]; got != "x" {
		t.Errorf("a check's param that held another value was changed: %v", got)
	}
	if got := orig.Then[0].Solution[0].Args["payments"].([]any)[0].(map[string]any)["amount"]; got != int64(58) {
		t.Errorf("the scenario given was changed: %v", got)
	}
	if got := orig.Then[0].SubGoals[0].Params["payments"].([]any)[0].(map[string]any)["amount"]; got != int64(58) {
		t.Errorf("the scenario given had its check changed: %v", got)
	}
	// A wrong PIN is a refusal cases test: a column grounds it.
	sc = orig
	if settleWant(&sc, []brief.TryStep{{OK: true}, {Refused: true, Want: &ground.Want{Arg: int64(1111), Value: int64(1234)}}}, binds) {
		t.Errorf("a confirmed column's value was settled: %+v", sc.Then[0].Solution[0].Args)
	}
	// A refusal without a wanted number settles nothing.
	if settleWant(&sc, []brief.TryStep{{Refused: true}}, binds) {
		t.Error("a refusal without want was settled")
	}
}
