package plan

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestPlanDealsEachWayToRefuse: a use case's act refused on different
// branches gets a level per branch — by the record's state (the items of an
// order modified once already), by a choice the case makes (a gift card
// whose balance is short, a variant that is not available), by a rule the
// world does not enforce (a cancellation the policy forbids), by a record
// that is someone else's (another customer's card; another customer's order,
// which a rule forbids even to read), by a record under another parent than
// the case's (a swap to another product's variant) or the case's own (a swap
// to the variant the item already is) — and no two buckets of
// a use case share an angle. A use case whose act answers ok only on rows
// few of the table hold (a rating of a trip completed in the last week and
// not yet rated: 9 of 187 trips) still gets its successes.
func TestPlanDealsEachWayToRefuse(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	for _, tc := range []struct {
		example string
		want    []string          // Spec.Refusal values the plan must deal
		outside map[string]string // of those, dealt on a record of a table from outside the case
		succeed []string          // use cases that must have a success
		// never dealt on a record of that table from outside the case:
		// reaching the branch takes a call a rule forbids before it.
		never map[string]string
	}{
		{"retail", []string{
			"handlers/modify_pending_order_items.star:11", // state: items modified once
			"lib/orders.star:113",                         // choice: a gift card short of the total
			"lib/orders.star:101",                         // choice: a variant not available
			"lib/orders.star:31",                          // another customer's card
			"lib/orders.star:97",                          // another product's variant
			"lib/orders.star:99",                          // the very variant the item is
			RuleRefusal + "one-user-per-conversation",     // another customer's order
		}, map[string]string{
			"lib/orders.star:31":                      "payment_methods",
			"lib/orders.star:97":                      "variants",
			"lib/orders.star:99":                      "variants",
			RuleRefusal + "one-user-per-conversation": "orders",
		}, nil, map[string]string{
			// an item not in another customer's order: the look-up of
			// that order already breaks one-user-per-conversation
			"lib/orders.star:80": "orders",
		}},
		{"airline", []string{RuleRefusal + "cancel-eligibility"}, nil, nil, nil},
		{"rides", []string{
			"handlers/update_rider_email.star:11", // the email the account already has
			"handlers/update_rider_email.star:13", // an email another account holds
			"handlers/refund_fare.star:19",        // more than is left to refund
		}, map[string]string{
			"handlers/update_rider_email.star:11": "riders",
			"handlers/update_rider_email.star:13": "riders",
		}, []string{"rate-trip"}, nil},
		{"telecom", []string{
			"handlers/send_payment_request.star:11", // again: a request already awaits payment
		}, nil, nil, nil},
		{"clinic-reminders", []string{
			"handlers/send_payment_link.star:11", // a balance at the least its CHECK allows: nothing left due
		}, nil, nil, nil},
		{"../testdata/contracts/clinic-voice", []string{
			"handlers/book_appointment.star:125", // a slot of a provider the patient is established with, for a new-patient visit
			"handlers/book_appointment.star:127", // a slot of a provider not taking new patients
		}, map[string]string{
			"handlers/book_appointment.star:125": "appointment_slots",
			"handlers/book_appointment.star:127": "appointment_slots",
		}, nil, nil},
	} {
		t.Run(filepath.Base(tc.example), func(t *testing.T) {
			c, e := openContract(t, filepath.Join("..", "..", "examples", tc.example))
			p, _ := deriveAsRun(t, c, e, 0)
			dealt, succeeds := map[string]bool{}, map[string]bool{}
			angles := map[string]string{}
			outside := map[string]bool{}
			for _, b := range p.Buckets {
				for _, ch := range b.Spec.Choices {
					if ch.Outside != "" {
						outside[b.Spec.Refusal+"\x00"+ch.Outside] = true
					}
				}
				for k, pr := range b.Spec.Prior {
					if !slices.Contains(b.Spec.Templates, k) || len(pr) == 0 {
						t.Errorf("bucket %s carries writes for %s, not one of its templates", b.ID, k)
					}
				}
				if b.Spec.Refusal != "" {
					dealt[b.Spec.Refusal] = true
					if b.Outcome != "refuse" && b.Outcome != "escalate" {
						t.Errorf("bucket %s dealt for refusal %s expects %s", b.ID, b.Spec.Refusal, b.Outcome)
					}
				}
				if b.Outcome == "succeed" {
					succeeds[b.UseCase] = true
				}
				k := b.UseCase + "\x00" + b.Angle
				if other, dup := angles[k]; dup {
					t.Errorf("buckets %s and %s of %s share the angle %q", other, b.ID, b.UseCase, b.Angle)
				}
				angles[k] = b.ID
			}
			for _, w := range tc.want {
				if !dealt[w] {
					var got []string
					for r := range dealt {
						got = append(got, r)
					}
					slices.Sort(got)
					t.Errorf("no bucket dealt for %s; dealt: %v", w, got)
				}
				if tb, ok := tc.outside[w]; ok && !outside[w+"\x00"+tb] {
					t.Errorf("no bucket dealt for %s on a record of %s from outside the case", w, tb)
				}
			}
			for w, tb := range tc.never {
				if outside[w+"\x00"+tb] {
					t.Errorf("a bucket dealt for %s on a record of %s from outside the case", w, tb)
				}
			}
			for _, u := range tc.succeed {
				if !succeeds[u] {
					t.Errorf("use case %s has no success", u)
				}
			}
		})
	}
}

// TestRuleRefusalsNeedARecord: a rule broken on every row the act answered
// is about the conversation, makes no refusal and is returned; one broken
// on some rows makes those refusals.
func TestRuleRefusalsNeedARecord(t *testing.T) {
	ro := rowOutcomes{keys: []string{"a", "b", "c"}, outcome: map[string]string{"a": "succeed", "b": "succeed", "c": "refuse"}, branch: map[string]string{"c": "h.star:3"}}
	if every := ruleRefusals(ro, map[string][]string{"a": {"always", "some"}, "b": {"always"}}); !slices.Equal(every, []string{"always"}) {
		t.Errorf("rules broken on every row the act answered: %v, want [always]", every)
	}
	if ro.outcome["a"] != "refuse" || ro.branch["a"] != RuleRefusal+"some" {
		t.Errorf("row a: %s %s, want a refusal by rule some", ro.outcome["a"], ro.branch["a"])
	}
	if ro.outcome["b"] != "succeed" {
		t.Errorf("row b breaks only a rule every row breaks: %s, want succeed", ro.outcome["b"])
	}
	if ro.branch["c"] != "h.star:3" {
		t.Errorf("a handler's refusal kept its branch: %s", ro.branch["c"])
	}
}

// TestPlanRefusesARuleOnlyAValueBreaks: card-services lets any card's
// daily limit change, and a rule forbids raising it for a customer flagged
// vulnerable. The plan grounds one new limit, below every card's, which
// breaks that rule on no row; asked just above the card's limit, the world
// raises it, and the rule's check fails for the vulnerable callers' cards.
// The rule gets its refusal level, whose cases ask for a raise.
func TestPlanRefusesARuleOnlyAValueBreaks(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	c, e := openContract(t, testdataDir("card-services"))
	p, _ := deriveAsRun(t, c, e, 0)
	g := ground.New(c)
	const way = RuleRefusal + "vulnerable-no-limit-raise"
	found := false
	for _, b := range p.Buckets {
		if b.Spec.Refusal != way {
			continue
		}
		found = true
		if len(b.Spec.Templates) == 0 {
			t.Fatalf("bucket %s has no templates", b.ID)
		}
		for _, k := range b.Spec.Templates {
			ch := b.Spec.Choices[k]
			if ch.Swap != ground.SwapPast || ch.Other%2 != 0 {
				t.Errorf("bucket %s: template %s asks %+v, want a value above the record's (swap %q, even other)", b.ID, k, ch, ground.SwapPast)
				continue
			}
			card := g.Find("cards", "card_id", k)
			acct := g.Find("accounts", "account_id", card["account_id"])
			if cu := g.Find("customers", "customer_id", acct["customer_id"]); cu["vulnerable"] != true {
				t.Errorf("bucket %s: template %s is the card of %v, who is not flagged vulnerable", b.ID, k, acct["customer_id"])
			}
		}
	}
	if !found {
		t.Errorf("no bucket dealt for %s", way)
	}
}

// TestEveryCaseBreaks: pharmacy-line's caregiver check fails whenever no
// caregiver was verified, whoever calls. A patient who identified themself
// breaks nothing that rule is about (prove's aboutOthers), so the plan no
// longer says every patient's own refill breaks it; pharmacist-question,
// whose hand-off the world takes before anyone is identified, still breaks
// identify-patient-first on every case, and the plan says so.
func TestEveryCaseBreaks(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	c, e := openContract(t, testdataDir("pharmacy-line"))
	p, err := Derive(context.Background(), c, probe.Rehearser(e.World), Options{Asked: 1, Rules: e.Prover})
	if err != nil {
		t.Fatal(err)
	}
	said := map[string]bool{}
	for _, g := range p.EveryCaseBreaks {
		said[g.UseCase] = true
		if !strings.Contains(g.Reason, "identify-patient-first") && !strings.Contains(g.Reason, "verify-caregiver") {
			t.Errorf("use case %s: %s", g.UseCase, g.Reason)
		}
	}
	if said["refill"] || said["caregiver-refill"] || !said["pharmacist-question"] {
		t.Fatalf("every case breaks a rule in %v; want pharmacist-question, and neither refill nor caregiver-refill", slices.Sorted(maps.Keys(said)))
	}
}
