package reviewer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// shop is a small contract: two use cases, two rules, a gated tool.
func shop() *contract.Contract {
	return &contract.Contract{Agent: "shop",
		UseCases: []contract.UseCase{{ID: "cancel-order"}, {ID: "track-order"}},
		Rules:    []contract.Rule{{ID: "verify-first", Check: "verified_first"}, {ID: "no-refund-after-30-days", Check: "no_late_refund"}},
		Tools: []contract.Tool{{Name: "find_user"}, {Name: "get_order"},
			{Name: "cancel_order", Requires: []contract.Requirement{{AnyOf: []string{"find_user"}}}}},
	}
}

// sc is a scenario of use case uc, of kind and outcome, by caller (name,
// personality, accent), calling tools.
func sc(name, uc, kind, expects, caller, personality, accent string, tools ...string) scenario.Scenario {
	s := scenario.Scenario{Name: name, UseCase: uc, Kind: kind, Expects: expects,
		Persona: scenario.Persona{Name: caller, Personality: personality, Accent: accent}}
	for _, t := range tools {
		s.Solution = append(s.Solution, scenario.Call{Tool: t})
	}
	return s
}

// varied is a suite with nothing wrong: every use case off its ordinary
// path, every outcome, every rule and gated tool, ten distinct callers.
func varied() ([]scenario.Scenario, []ledger.Bucket) {
	outcomes := []string{"succeed", "refuse", "ask", "escalate"}
	pers := []string{"calm", "angry", "anxious", "curt", "chatty"}
	accents := []string{"irish", "texan", "scottish", "nigerian", "indian"}
	var scs []scenario.Scenario
	for i := range 10 {
		uc, kind := "cancel-order", "happy"
		if i%2 == 1 {
			uc, kind = "track-order", "edge"
		}
		if i == 2 {
			kind = "edge"
		}
		s := sc(fmt.Sprintf("s%d", i), uc, kind, outcomes[(i/2)%4], fmt.Sprintf("Caller %d", i), pers[i%5], accents[i%5], "get_order")
		if i == 0 {
			s.Tempting = []scenario.Call{{Tool: "cancel_order"}}
		}
		if i == 0 || i == 2 { // each tests its bucket's rule: it lists the rule's check
			s.Bucket = fmt.Sprintf("b%d", i/2)
			s.SubGoals = []scenario.SubGoalRef{{Name: shop().Rules[i/2].Check}}
		}
		scs = append(scs, s)
	}
	bs := []ledger.Bucket{
		{Bucket: plan.Bucket{ID: "b0", Want: 2, Spec: plan.Spec{Rules: []string{"verify-first"}}}, State: ledger.BucketDone, Done: 2},
		{Bucket: plan.Bucket{ID: "b1", Want: 2, Spec: plan.Spec{Rules: []string{"no-refund-after-30-days"}}}, State: ledger.BucketDone, Done: 2},
	}
	return scs, bs
}

func kinds(r Review) []Kind {
	var ks []Kind
	for _, f := range r.Findings {
		ks = append(ks, f.Kind)
	}
	return ks
}

// TestAssessFindsNothingInAGoodSuite is the baseline every finding is
// measured from.
func TestAssessFindsNothingInAGoodSuite(t *testing.T) {
	scs, bs := varied()
	if r := Assess(shop(), scs, bs); len(r.Findings) != 0 || len(r.Gaps) != 0 {
		t.Fatalf("findings in a good suite: %+v", r)
	}
}

// TestAssessFindings: each kind of finding, from one change to the good
// suite, with what it names.
func TestAssessFindings(t *testing.T) {
	for _, c := range []struct {
		kind    Kind
		subject string
		change  func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket)
	}{
		{UseCaseMissing, "track-order", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			return slices.DeleteFunc(scs, func(s scenario.Scenario) bool { return s.UseCase == "track-order" }), bs
		}},
		{OrdinaryPathOnly, "cancel-order", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			for i := range scs {
				if scs[i].UseCase == "cancel-order" {
					scs[i].Kind = "happy"
				}
			}
			return scs, bs
		}},
		{OutcomeMissing, "escalate", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			for i := range scs {
				if scs[i].Expects == "escalate" {
					scs[i].Expects = "refuse"
				}
			}
			return scs, bs
		}},
		{RuleUntested, "no-refund-after-30-days", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			// Its bucket's scenario still names it, but lists no check of
			// it: report.json lists it untested, so must the review.
			scs[2].SubGoals = nil
			return scs, bs
		}},
		{GatedToolUntested, "cancel_order", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			scs[0].Tempting = nil
			return scs, bs
		}},
		{CallerNames, "", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			scs[3].Persona.Name = scs[2].Persona.Name
			scs[5].Persona.Name = scs[4].Persona.Name
			return scs, bs
		}},
		{PersonalitySkew, "angry", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			scs[0].Persona.Personality, scs[2].Persona.Personality = "angry", "angry"
			return scs, bs
		}},
		{Accents, "", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			for i := range scs {
				scs[i].Persona.Accent = []string{"irish", "texan", "scottish"}[i%3]
			}
			return scs, bs
		}},
		{SuccessMissing, "cancel-order", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			// Its successes were dealt and blocked; it stays covered by
			// other outcomes, so only this finding says so.
			for i := range scs {
				if scs[i].UseCase == "cancel-order" && scs[i].Expects == scenario.OutcomeSucceed {
					scs[i].Expects = scenario.OutcomeAsk
				}
			}
			blocked := ledger.Bucket{Bucket: plan.Bucket{ID: "b2", UseCase: "cancel-order", Outcome: scenario.OutcomeSucceed, Want: 3},
				State: ledger.BucketBlocked, Notes: "solvable/rule-broken: the solution breaks rule verify-first"}
			return scs, append(bs, blocked)
		}},
		{SameTest, "s9", func(scs []scenario.Scenario, bs []ledger.Bucket) ([]scenario.Scenario, []ledger.Bucket) {
			dup := scs[1]
			dup.Name = "s9"
			dup.Persona.Personality, dup.Persona.Accent = scs[9].Persona.Personality, scs[9].Persona.Accent
			scs[9] = dup
			return scs, bs
		}},
	} {
		t.Run(string(c.kind), func(t *testing.T) {
			scs, bs := c.change(varied())
			r := Assess(shop(), scs, bs)
			if len(r.Findings) != 1 || r.Findings[0].Kind != c.kind || r.Findings[0].Subject != c.subject || r.Findings[0].Detail == "" {
				t.Fatalf("findings %+v, want one %s of %q", r.Findings, c.kind, c.subject)
			}
		})
	}
}

// TestAssessSmallSuitesAndOrder: persona skew and accents are not judged
// below eight scenarios; findings come sorted by kind; an empty suite is
// missing everything and judged on no caller.
func TestAssessSmallSuitesAndOrder(t *testing.T) {
	scs, bs := varied()
	small := scs[:4]
	for i := range small {
		small[i].Persona.Personality, small[i].Persona.Accent = "calm", "irish"
	}
	for _, k := range kinds(Assess(shop(), small, bs)) {
		if k == PersonalitySkew || k == Accents {
			t.Errorf("a 4-scenario suite was judged on %s", k)
		}
	}
	empty := Assess(shop(), nil, nil)
	want := []Kind{OutcomeMissing, OutcomeMissing, OutcomeMissing, OutcomeMissing, GatedToolUntested,
		RuleUntested, RuleUntested, UseCaseMissing, UseCaseMissing}
	slices.Sort(want)
	if got := kinds(empty); !slices.Equal(got, want) {
		t.Errorf("an empty suite: %v, want %v", got, want)
	}
	if !slices.IsSortedFunc(empty.Findings, func(a, b Finding) int { return compare(a.Kind, b.Kind) }) {
		t.Errorf("findings not sorted by kind: %v", kinds(empty))
	}
}

func compare(a, b Kind) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestAssessGaps: buckets short of their want are gaps unless blocked.
func TestAssessGaps(t *testing.T) {
	scs, bs := varied()
	bs = append(bs,
		ledger.Bucket{Bucket: plan.Bucket{ID: "b2", Want: 3}, State: ledger.BucketOpen, Done: 1},
		ledger.Bucket{Bucket: plan.Bucket{ID: "b3", Want: 3}, State: ledger.BucketBlocked, Done: 1},
		ledger.Bucket{Bucket: plan.Bucket{ID: "b4", Want: 0}, State: ledger.BucketOpen},
	)
	if r := Assess(shop(), scs, bs); !slices.Equal(r.Gaps, []string{"b2"}) {
		t.Fatalf("gaps %v, want [b2]", r.Gaps)
	}
}

// fakeDealer counts gap rounds as a ledger would.
type fakeDealer struct {
	had, settled int
	deal         []int // slices each Gap deals, in turn
	err          error
}

func (d *fakeDealer) GapRounds(context.Context) (int, error) { return d.had, nil }
func (d *fakeDealer) Settle(context.Context) error           { d.settled++; return nil }
func (d *fakeDealer) Gap(context.Context) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	n := 0
	if len(d.deal) > 0 {
		n, d.deal = d.deal[0], d.deal[1:]
	}
	if n > 0 {
		d.had++
	}
	return n, nil
}

// TestFill: gap rounds up to the bound, counted from the ledger, so a
// reviewer started again deals no more than one started once; a round that
// deals nothing ends the filling; an unfinished round is settled first.
func TestFill(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		name        string
		had, rounds int
		deal        []int
		dealt, left int
	}{
		{"fresh", 0, 2, []int{3, 2, 9}, 5, 1},
		{"stops when nothing is open", 0, 3, []int{3, 0, 9}, 3, 1},
		{"started again after one round", 1, 2, []int{4, 9}, 4, 1},
		{"started again after all its rounds", 2, 2, []int{9}, 0, 1},
		{"no rounds", 0, 0, []int{9}, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := &fakeDealer{had: c.had, deal: c.deal}
			n, err := Fill(t.Context(), d, c.rounds, log)
			if err != nil || n != c.dealt || len(d.deal) != c.left || d.settled != 1 {
				t.Fatalf("dealt %d (%v), %d rounds left unused, settled %d; want %d, %d, 1", n, err, len(d.deal), d.settled, c.dealt, c.left)
			}
		})
	}
	boom := errors.New("queue down")
	if _, err := Fill(t.Context(), &fakeDealer{err: boom}, 1, log); !errors.Is(err, boom) {
		t.Fatalf("a failing round: %v", err)
	}
	if _, err := Fill(t.Context(), nil, 1, log); err == nil {
		t.Fatal("filling without a dealer")
	}
}

// TestSuccessMissingWhetherDealtOrNot: a covered use case with no kept
// success is a finding whatever became of its success buckets (none dealt,
// all blocked, some still short), each saying which; a kept success, or no
// scenario of the use case at all (use-case-missing), is none.
func TestSuccessMissingWhetherDealtOrNot(t *testing.T) {
	blocked := ledger.Bucket{Bucket: plan.Bucket{ID: "b2", UseCase: "track-order", Outcome: scenario.OutcomeSucceed, Want: 1},
		State: ledger.BucketBlocked, Notes: "solvable/rule-broken"}
	open := blocked
	open.ID, open.State = "b3", ledger.BucketOpen
	for _, c := range []struct {
		name   string
		bs     []ledger.Bucket
		detail string // what the finding's detail says of the buckets; "" no finding
	}{
		{"none dealt", nil, "dealt it no success"},
		{"all blocked", []ledger.Bucket{blocked}, "1 success bucket(s) were blocked (solvable/rule-broken)"},
		{"one short", []ledger.Bucket{blocked, open}, "1 success bucket(s) kept none and are not blocked, 1 blocked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			scs, bs := varied()
			for i := range scs {
				if scs[i].UseCase == "track-order" && scs[i].Expects == scenario.OutcomeSucceed {
					scs[i].Expects = scenario.OutcomeAsk
				}
			}
			var got []Finding
			for _, f := range Assess(shop(), scs, append(bs, c.bs...)).Findings {
				if f.Kind == SuccessMissing {
					got = append(got, f)
				}
			}
			if len(got) != 1 || got[0].Subject != "track-order" || !strings.Contains(got[0].Detail, c.detail) {
				t.Fatalf("success-missing findings %+v, want one of track-order saying %q", got, c.detail)
			}
			kept, _ := varied()
			if slices.Contains(kinds(Assess(shop(), kept, append(bs, c.bs...))), SuccessMissing) {
				t.Fatal("success-missing although a success of every use case is kept")
			}
			none := slices.DeleteFunc(scs, func(s scenario.Scenario) bool { return s.UseCase == "track-order" })
			if slices.Contains(kinds(Assess(shop(), none, append(bs, c.bs...))), SuccessMissing) {
				t.Fatal("success-missing for a use case no scenario covers (use-case-missing says it)")
			}
		})
	}
}
