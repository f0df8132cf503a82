package refresh

import (
	"bytes"
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
)

// fakeProver refuses the scenarios whose Tests is "old-rule"; a scenario's
// one code is its caller's name.
type fakeProver struct{}

func (fakeProver) Prove(_ context.Context, sc *scenario.Scenario) (prove.Verdict, error) {
	if sc.Tests == "old-rule" {
		return prove.Verdict{Refusals: []prove.Refusal{{Gate: prove.GateSolvable, Code: "step-refused", Message: "refused now"}}}, nil
	}
	return prove.Verdict{Kept: true, Codes: []string{"caller:" + sc.Persona.Name}}, nil
}

func sc(name, uc, branch, bucket, tests, caller string) scenario.Scenario {
	return scenario.Scenario{Name: name, UseCase: uc, Branch: branch, Bucket: bucket, Kind: "happy", Expects: "succeed",
		Tests: tests, Persona: scenario.Persona{Name: caller}, Solution: []scenario.Call{}, SubGoals: []scenario.SubGoalRef{}}
}

// writeSuite writes scs as a suite of agent "a" under a temporary dir.
func writeSuite(t *testing.T, scs ...scenario.Scenario) *suite.Written {
	t.Helper()
	dir := t.TempDir()
	idx := suite.Index{Run: "r", Agent: "a"}
	for i := range scs {
		if err := suite.WriteScenario(dir, &scs[i]); err != nil {
			t.Fatal(err)
		}
		idx.Scenarios = append(idx.Scenarios, suite.IndexEntry{Name: scs[i].Name, UseCase: scs[i].UseCase, Branch: scs[i].Branch, Bucket: scs[i].Bucket})
	}
	if err := suite.WriteIndex(dir, idx); err != nil {
		t.Fatal(err)
	}
	w, err := suite.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestUpdateKeepsNamesAndBranches: a stale scenario is replaced by the run's
// scenario of its own branch even when another stale scenario of the same
// bucket would take it as a fallback first; one of a use case the contract
// lost is not kept; every other file stays byte-identical.
func TestUpdateKeepsNamesAndBranches(t *testing.T) {
	ctx := context.Background()
	w := writeSuite(t,
		sc("a-1", "u", "ang, case 1", "b0000", "ok", "ann"),
		sc("a-2", "u", "ang, case 2", "b0000", "old-rule", "bob"),
		sc("a-3", "u", "ang, case 3", "b0000", "old-rule", "cat"),
		sc("gone-1", "gone", "other, case 1", "b0001", "old-rule", "dan"),
	)
	before, _ := os.ReadFile(suite.File(w.Dir, "a-1"))
	c := &contract.Contract{Agent: "a", SHA256: "new", UseCases: []contract.UseCase{{ID: "u"}}}
	rep, err := Check(ctx, fakeProver{}, w, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.StaleNames(); len(got) != 3 || !rep.Changed || rep.Recorded != suite.ContractUnknown {
		t.Fatalf("stale %v, changed %v, recorded %q", got, rep.Changed, rep.Recorded)
	}
	u := NewUpdate(w, c, rep)
	pl := &plan.Plan{Buckets: []plan.Bucket{
		{ID: "b0000", UseCase: "u", Angle: "ang", Want: 3, Outcome: "succeed", Kind: "happy"},
		{ID: "b0001", UseCase: "v", Angle: "v", Want: 2},
	}}
	if err := u.Narrow(pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Buckets) != 1 || pl.Buckets[0].ID != "b0000" {
		t.Fatalf("narrowed to %+v", pl.Buckets)
	}
	// The run wrote the bucket again: case 1 repeats a-1's caller (a code
	// clash), case 2 and 3 are new; a-2 must not take case 3 as a fallback.
	fresh := []scenario.Scenario{
		sc("x-1", "u", "ang, case 1", "b0000", "new", "ann"),
		sc("x-3", "u", "ang, case 3", "b0000", "new", "eve"),
		sc("x-2", "u", "ang, case 2", "b0000", "new", "fay"),
	}
	out, err := u.Finish(ctx, fakeProver{}, "run-2", fresh)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Replaced) != 2 || out.Replaced[0].OldBranch != "" || out.Replaced[1].OldBranch != "" {
		t.Fatalf("replaced %+v", out.Replaced)
	}
	if len(out.NotKept) != 1 || out.NotKept[0].Name != "gone-1" {
		t.Fatalf("not kept %+v", out.NotKept)
	}
	after, _ := os.ReadFile(suite.File(w.Dir, "a-1"))
	if !bytes.Equal(before, after) {
		t.Error("a-1 changed")
	}
	w2, err := suite.Read(w.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if w2.Index.ContractSHA256 != "new" || len(w2.Scenarios) != 3 || w2.Scenarios[1].Persona.Name != "fay" || w2.Scenarios[2].Persona.Name != "eve" {
		t.Fatalf("suite after: %+v", w2.Index)
	}
	if _, err := os.Stat(suite.File(w.Dir, "gone-1")); !errors.Is(err, os.ErrNotExist) {
		t.Error("gone-1's file is still there")
	}
}

// TestExtendFillsGapsWithNewBranches: the bucket of the use case the suite
// holds least is dealt first, as another use with its own angle and indices
// past the plan's; a stale suite is refused.
func TestExtendFillsGapsWithNewBranches(t *testing.T) {
	ctx := context.Background()
	w := writeSuite(t,
		sc("a-1", "u", "ang, case 1", "b0000", "ok", "ann"),
		sc("a-2", "u", "ang, case 2", "b0000", "ok", "bob"),
		sc("v-1", "v", "vee, case 1", "b0001", "ok", "cat"),
	)
	c := &contract.Contract{Agent: "a", SHA256: "h"}
	rep, err := Check(ctx, fakeProver{}, w, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, err := NewExtend(w, c, rep, 1)
	if err != nil {
		t.Fatal(err)
	}
	pl := &plan.Plan{Buckets: []plan.Bucket{
		{ID: "b0000", UseCase: "u", Angle: "ang", Want: 3, Spec: plan.Spec{Base: 0, Sized: 3, Capacity: 3}},
		{ID: "b0001", UseCase: "v", Angle: "vee", Want: 3, Spec: plan.Spec{Base: 3, Sized: 3, Capacity: 3}},
	}}
	if err := x.Narrow(pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Buckets) != 1 || pl.Buckets[0].UseCase != "v" || pl.Buckets[0].Angle != "vee (use 2)" || pl.Buckets[0].Want != 2 || pl.Buckets[0].Spec.Base != 6 {
		t.Fatalf("narrowed to %+v", pl.Buckets)
	}
	fresh := []scenario.Scenario{
		sc("v-9", "v", "vee (use 2), case 1", "b0001", "ok", "cat"), // repeats v-1's caller
		sc("v-10", "v", "vee (use 2), case 2", "b0001", "ok", "dan"),
	}
	out, err := x.Finish(ctx, fakeProver{}, "run-2", fresh)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Added) != 1 || out.Added[0].Name != "v-10" || len(out.PassedOver) != 1 {
		t.Fatalf("added %+v, passed over %+v", out.Added, out.PassedOver)
	}
	stale := writeSuite(t, sc("a-1", "u", "ang, case 1", "b0000", "old-rule", "ann"))
	rep, err = Check(ctx, fakeProver{}, stale, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewExtend(stale, c, rep, 1); !errors.Is(err, ErrStaleSuite) {
		t.Errorf("extending a stale suite: %v", err)
	}
	if _, err := Check(ctx, fakeProver{}, w, &contract.Contract{Agent: "b"}, Options{}); !errors.Is(err, ErrForeign) {
		t.Errorf("checking another agent's suite: %v", err)
	}
}

func TestAngleOf(t *testing.T) {
	for in, want := range map[string]string{
		"ordinary cancel-order (status pending), case 12": "ordinary cancel-order (status pending)",
		"free words":        "free words",
		", case 1":          ", case 1",
		"a, case b, c":      "a, case b, c",
		"x, case 1, case 2": "x, case 1",
	} {
		if got := angleOf(in); got != want {
			t.Errorf("angleOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReviseAsks: an ask names one word of the vocabulary; harder takes the
// least step up in the scenario's use case, and with none is refused when
// the plan is narrowed, before anything is written.
func TestReviseAsks(t *testing.T) {
	for text, want := range map[string]Ask{"harder": AskHarder, "Make them HARDER.": AskHarder, "a fresh one": AskFresh, "another answerer": AskAnswerer, "on a noisier line": AskNoisier} {
		for _, model := range []bool{false, true} {
			if got, err := ParseAsk(text, model); err != nil || got != want {
				t.Errorf("ParseAsk(%q, model %v) = %q, %v", text, model, got, err)
			}
		}
	}
	for _, text := range []string{"", "funnier", "harder and fresh", "hard"} {
		if _, err := ParseAsk(text, false); !errors.Is(err, ErrAsk) {
			t.Errorf("ParseAsk(%q): %v, want an ask refused", text, err)
		}
	}
	// A model takes an ask in other words as another case like each; it
	// still needs words, and one ask.
	if got, err := ParseAsk("a caller on a bad line", true); err != nil || got != AskFresh {
		t.Errorf("an ask in other words, for a model: %q, %v", got, err)
	}
	for _, text := range []string{" ", "harder and fresh"} {
		if _, err := ParseAsk(text, true); !errors.Is(err, ErrAsk) {
			t.Errorf("ParseAsk(%q) for a model: %v, want an ask refused", text, err)
		}
	}
	ctx := context.Background()
	w := writeSuite(t, sc("a-1", "u", "ang, case 1", "b0000", "ok", "ann"), sc("b-1", "v", "vee, case 1", "b0002", "ok", "bob"))
	c := &contract.Contract{Agent: "a", SHA256: "h", UseCases: []contract.UseCase{{ID: "u"}, {ID: "v"}}}
	rep, err := Check(ctx, fakeProver{}, w, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	buckets := func() *plan.Plan {
		return &plan.Plan{Buckets: []plan.Bucket{
			{ID: "b0000", UseCase: "u", Angle: "ang", Want: 2, Outcome: "succeed", Overlay: "none", Kind: "happy"},
			{ID: "b0001", UseCase: "u", Angle: "refused", Want: 1, Outcome: "refuse", Overlay: "none", Kind: "edge"},
			{ID: "b0003", UseCase: "u", Angle: "pressed", Want: 1, Outcome: "succeed", Overlay: "pressure", Kind: "adversarial"},
			{ID: "b0002", UseCase: "v", Angle: "vee", Want: 2, Outcome: "succeed", Overlay: "none", Kind: "happy"},
		}}
	}
	u, err := NewRevision(w, c, rep, []string{"a-1"}, AskHarder, "harder")
	if err != nil {
		t.Fatal(err)
	}
	pl := buckets()
	if err := u.Narrow(pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Buckets) != 1 || pl.Buckets[0].ID != "b0003" {
		t.Fatalf("harder than a plain success: %+v, want the pressure overlay (the least step up)", pl.Buckets)
	}
	if pl.Buckets[0].Spec.Ask != "harder" {
		t.Errorf("the revision's bucket carries the ask %q, want the user's words", pl.Buckets[0].Spec.Ask)
	}
	u, err = NewRevision(w, c, rep, []string{"b-1"}, AskHarder, "harder")
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Narrow(buckets()); !errors.Is(err, ErrAsk) {
		t.Errorf("harder with no harder bucket: %v", err)
	}
	if _, err := NewRevision(w, c, rep, []string{"b-1"}, AskAnswerer, "another answerer"); !errors.Is(err, ErrAsk) {
		t.Errorf("another answerer for an inbound scenario: %v, want the ask refused", err)
	}
	if _, err := Select(w, nil, map[string]string{"colour": "red"}); err == nil {
		t.Error("an unknown --where key was taken")
	}
	if got, err := Select(w, nil, map[string]string{"use_case": "v"}); err != nil || len(got) != 1 || got[0] != "b-1" {
		t.Errorf("Select use_case=v: %v %v", got, err)
	}
}

// TestReviseAnswerer: another answerer takes, of a call the agent places,
// the bucket of its use case whose call the next answerer after the
// scenario's takes, a plain case first; the scenario's own answerer and
// other use cases are never taken.
func TestReviseAnswerer(t *testing.T) {
	ctx := context.Background()
	call := func(name string, by scenario.Answer) scenario.Scenario {
		s := sc(name, "remind", "ang, case 1", "b0000", "ok", "ann")
		s.Outbound = &scenario.Outbound{Purpose: "appointments", Record: map[string]any{"id": "A-1"}, AnsweredBy: by}
		return s
	}
	w := writeSuite(t, call("r-1", scenario.RightPerson), call("v-1", scenario.Voicemail), call("c-1", scenario.CallLater))
	c := &contract.Contract{Agent: "a", SHA256: "h", UseCases: []contract.UseCase{{ID: "remind"}, {ID: "other"}}}
	rep, err := Check(ctx, fakeProver{}, w, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	buckets := func() *plan.Plan {
		b := func(id, uc, overlay string, by scenario.Answer) plan.Bucket {
			return plan.Bucket{ID: id, UseCase: uc, Angle: id, Want: 1, Outcome: "succeed", Overlay: overlay, Kind: "happy", Spec: plan.Spec{Answer: by}}
		}
		return &plan.Plan{Buckets: []plan.Bucket{
			b("b0000", "remind", "none", scenario.RightPerson),
			b("b0001", "remind", "pressure", scenario.WrongPerson),
			b("b0002", "remind", "none", scenario.WrongPerson),
			b("b0003", "remind", "none", scenario.Voicemail),
			b("b0004", "other", "none", scenario.CallLater),
		}}
	}
	for name, want := range map[string]string{"r-1": "b0002", "v-1": "b0000", "c-1": "b0000"} {
		u, err := NewRevision(w, c, rep, []string{name}, AskAnswerer, "answerer")
		if err != nil {
			t.Fatal(err)
		}
		pl := buckets()
		if err := u.Narrow(pl); err != nil {
			t.Fatal(err)
		}
		if len(pl.Buckets) != 1 || pl.Buckets[0].ID != want {
			t.Errorf("another answerer for %s: %+v, want %s", name, pl.Buckets, want)
		}
	}
}

// TestReviseNoisier: a noisier line is a voice agent's: its bucket is
// another case like the scenario's, marked noisy for the writer; a chat
// agent's scenario is refused before anything runs.
func TestReviseNoisier(t *testing.T) {
	ctx := context.Background()
	w := writeSuite(t, sc("a-1", "u", "ang, case 1", "b0000", "ok", "ann"))
	for _, modality := range []string{"chat", "voice"} {
		c := &contract.Contract{Agent: "a", SHA256: "h", Modality: modality, UseCases: []contract.UseCase{{ID: "u"}}}
		rep, err := Check(ctx, fakeProver{}, w, c, Options{})
		if err != nil {
			t.Fatal(err)
		}
		u, err := NewRevision(w, c, rep, []string{"a-1"}, AskNoisier, "a noisier line")
		if modality == "chat" {
			if !errors.Is(err, ErrAsk) {
				t.Errorf("a noisier line for a chat agent: %v, want the ask refused", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		pl := &plan.Plan{Buckets: []plan.Bucket{
			{ID: "b0000", UseCase: "u", Angle: "ang", Want: 2, Outcome: "succeed", Overlay: "none", Kind: "happy"},
			{ID: "b0001", UseCase: "u", Angle: "refused", Want: 1, Outcome: "refuse", Overlay: "none", Kind: "edge"},
		}}
		if err := u.Narrow(pl); err != nil {
			t.Fatal(err)
		}
		if len(pl.Buckets) != 1 || pl.Buckets[0].ID != "b0000" || !pl.Buckets[0].Spec.Noisy {
			t.Errorf("a noisier line: %+v, want the scenario's own bucket, noisy", pl.Buckets)
		}
	}
}

// TestRunsOverASuiteDealPastItsIndices: the suite's run topped up past its
// plan (index.json's NextIndex 50, the plan derived again ending at 6), so
// a revision and an extension deal their cases from 50 on, never at
// indices the suite's top-ups minted codes with, and raise NextIndex past
// what they dealt.
func TestRunsOverASuiteDealPastItsIndices(t *testing.T) {
	ctx := context.Background()
	w := writeSuite(t, sc("a-1", "u", "ang, case 1", "b0000", "ok", "ann"), sc("a-2", "u", "ang, case 2", "b0000", "ok", "amy"))
	w.Index.NextIndex = 50
	c := &contract.Contract{Agent: "a", SHA256: "h", UseCases: []contract.UseCase{{ID: "u"}}}
	rep, err := Check(ctx, fakeProver{}, w, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	buckets := func() *plan.Plan {
		return &plan.Plan{Buckets: []plan.Bucket{
			{ID: "b0000", UseCase: "u", Angle: "ang", Want: 2, Outcome: "succeed", Overlay: "none", Kind: "happy",
				Spec: plan.Spec{Base: 0, Sized: 2, Capacity: 4}},
			{ID: "b0001", UseCase: "u", Angle: "pressed", Want: 2, Outcome: "succeed", Overlay: "pressure", Kind: "adversarial",
				Spec: plan.Spec{Base: 4, Sized: 2, Capacity: 2}},
		}}
	}
	u, err := NewRevision(w, c, rep, []string{"a-1"}, AskHarder, "harder")
	if err != nil {
		t.Fatal(err)
	}
	pl := buckets()
	if err := u.Narrow(pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Buckets) != 1 || pl.Buckets[0].Spec.Index(0) < 50 {
		t.Fatalf("revision deals %+v, want one bucket from index 50 on", pl.Buckets)
	}
	end := pl.Buckets[0].Spec.End(pl.Buckets[0].Want)
	fresh := sc("u-pressed-1", "u", "pressed, case 3", "b0001", "ok", "zed")
	if _, err := u.Finish(ctx, fakeProver{}, "r2", []scenario.Scenario{fresh}); err != nil {
		t.Fatal(err)
	}
	after, err := suite.Read(w.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if after.Index.NextIndex != end {
		t.Errorf("NextIndex after the revision = %d, want %d", after.Index.NextIndex, end)
	}

	x, err := NewExtend(after, c, Report{Checked: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	pl = buckets()
	if err := x.Narrow(pl); err != nil {
		t.Fatal(err)
	}
	for _, b := range pl.Buckets {
		if b.Spec.Index(0) < end {
			t.Errorf("extension bucket %s deals from %d, inside the suite's indices (< %d)", b.ID, b.Spec.Index(0), end)
		}
	}
}

// TestUpdateRewritesATopUpsCase: the suite's case 2 of a bucket the plan
// sizes at 1 came from its run's top-up (index 50 on); only it is stale.
// The update wants the bucket up to case 2, dealt past the suite's indices
// (not at the plan's, which case 1 holds), and case 2 replaces it under its
// name rather than case 1, which repeats the suite.
func TestUpdateRewritesATopUpsCase(t *testing.T) {
	ctx := context.Background()
	w := writeSuite(t,
		sc("a-1", "u", "ang, case 1", "b0000", "ok", "ann"),
		sc("a-2", "u", "ang, case 2", "b0000", "old-rule", "bob"),
	)
	w.Index.NextIndex = 51
	c := &contract.Contract{Agent: "a", SHA256: "new", UseCases: []contract.UseCase{{ID: "u"}}}
	rep, err := Check(ctx, fakeProver{}, w, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := NewUpdate(w, c, rep)
	pl := &plan.Plan{Buckets: []plan.Bucket{
		{ID: "b0000", UseCase: "u", Angle: "ang", Want: 1, Outcome: "succeed", Kind: "happy", Spec: plan.Spec{Base: 0, Sized: 1, Capacity: 3}},
		{ID: "b0001", UseCase: "u", Angle: "other", Want: 1, Outcome: "succeed", Kind: "happy", Spec: plan.Spec{Base: 1, Sized: 1, Capacity: 1}},
	}}
	if err := u.Narrow(pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Buckets) != 1 || pl.Buckets[0].Want != 2 {
		t.Fatalf("narrowed to %+v, want b0000 up to case 2", pl.Buckets)
	}
	if sp := pl.Buckets[0].Spec; sp.Index(0) != 0 || sp.Index(1) < 51 {
		t.Fatalf("case 1 at %d, case 2 at %d: want the plan's 0, and past the suite's 51", sp.Index(0), sp.Index(1))
	}
	out, err := u.Finish(ctx, fakeProver{}, "run-2", []scenario.Scenario{
		sc("x-1", "u", "ang, case 1", "b0000", "new", "ann"),
		sc("x-2", "u", "ang, case 2", "b0000", "new", "fay"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Replaced) != 1 || out.Replaced[0].Name != "a-2" || out.Replaced[0].Branch != "ang, case 2" || len(out.NotKept) != 0 {
		t.Fatalf("replaced %+v, not kept %+v", out.Replaced, out.NotKept)
	}
	after, err := suite.Read(w.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if after.Index.NextIndex <= 51 {
		t.Errorf("NextIndex after the update = %d, want past 51", after.Index.NextIndex)
	}
}

// TestExtendPastThePlansGaps: the suite fills every bucket of the plan but
// one, whose single gap never proves; adding 2 takes another use of the
// filled buckets too (least-held use case first), each under its own ID and
// angle, at indices past the suite's.
func TestExtendPastThePlansGaps(t *testing.T) {
	w := writeSuite(t,
		sc("a-1", "u", "ang, case 1", "b0000", "ok", "ann"),
		sc("a-2", "u", "ang, case 2", "b0000", "ok", "amy"),
		sc("v-1", "v", "vee, case 1", "b0001", "ok", "cat"),
	)
	w.Index.NextIndex = 20
	c := &contract.Contract{Agent: "a", SHA256: "h"}
	x, err := NewExtend(w, c, Report{Checked: 3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	pl := &plan.Plan{Buckets: []plan.Bucket{
		{ID: "b0000", UseCase: "u", Angle: "ang", Want: 2, Ord: 0, Spec: plan.Spec{Base: 0, Sized: 2, Capacity: 2}},
		{ID: "b0001", UseCase: "v", Angle: "vee", Want: 1, Ord: 1, Spec: plan.Spec{Base: 2, Sized: 1, Capacity: 1}},
		{ID: "b0002", UseCase: "v", Angle: "blocked", Want: 1, Ord: 2, Spec: plan.Spec{Base: 3, Sized: 1, Capacity: 1}},
	}}
	if err := x.Narrow(pl); err != nil {
		t.Fatal(err)
	}
	var got []string
	room := 0
	for _, b := range pl.Buckets {
		got = append(got, b.ID+" "+b.Angle)
		room += b.Want
		if b.Spec.Index(0) < 20 {
			t.Errorf("%s deals from %d, inside the suite's indices", b.ID, b.Spec.Index(0))
		}
	}
	want := []string{"b0002 blocked (use 2)", "b0001 vee (use 2)", "b0000 ang (use 2)"}
	if room < 4 || !slices.Equal(got, want) {
		t.Fatalf("narrowed to %v (room %d), want %v with room for twice the addition", got, room, want)
	}
}
