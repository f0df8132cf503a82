package builtin

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// TestSubGoalsThatCanHold: the writer offers no check the gates would find
// vacuous on every run: the identity rule's check for a look-up of a
// product (nobody's account data), nor an ask's check that the account is
// left alone when the act it tempts writes an order; it still offers the
// identity check where account data is read, and that the order is left
// alone.
func TestSubGoalsThatCanHold(t *testing.T) {
	c := retail(t)
	g := ground.New(c)
	p := &policy{c: c, g: g}
	user := g.Rows("users")[0]
	uid := ground.Text(user["user_id"])
	var order ground.Row
	for _, r := range g.Where("orders", "status", "pending") {
		if ground.Text(r["user_id"]) == uid {
			order = r
		}
	}
	if order == nil {
		order = g.Where("orders", "status", "pending")[0]
		user = g.Find("users", "user_id", ground.Text(order["user_id"]))
		uid = ground.Text(user["user_id"])
	}
	oid := ground.Text(order["order_id"])
	product := g.Rows("products")[0]
	identify := scenario.Call{Tool: "find_user_id_by_email", Args: map[string]any{"email": user["email"]}}
	bucket := func(uc, outcome, tool, table string) brief.Bucket {
		return brief.Bucket{Bucket: plan.Bucket{ID: "b1", UseCase: uc, Outcome: outcome, Overlay: "none",
			Spec: plan.Spec{Tool: tool, Table: table, Handoff: "transfer_to_human_agents"}}}
	}
	names := func(refs []scenario.SubGoalRef) []string {
		var out []string
		for _, r := range refs {
			out = append(out, r.Name)
		}
		return out
	}

	// A product look-up: no account data, so no identity check.
	pb := g.SeedCase("products", product, user)
	look := scenario.Call{Tool: "get_product_details", Args: map[string]any{"product_id": product["product_id"]}}
	got, _ := p.subGoals(bucket("find-product-info", scenario.OutcomeSucceed, "get_product_details", "products"),
		[]scenario.Call{identify, look}, nil, pb)
	if slices.Contains(names(got), "identified_before_account_data") {
		t.Errorf("product look-up offered %v: the identity check holds on every run", names(got))
	}
	got, _ = p.subGoals(bucket("find-product-info", scenario.OutcomeAsk, "get_product_details", "products"),
		nil, []scenario.Call{look}, pb)
	if slices.Contains(names(got), "identified_before_account_data") {
		t.Errorf("product ask offered %v", names(got))
	}

	// An order look-up reads account data: the identity check is offered.
	ob := g.SeedCase("orders", order, nil)
	details := scenario.Call{Tool: "get_order_details", Args: map[string]any{"order_id": oid}}
	got, _ = p.subGoals(bucket("check-order-status", scenario.OutcomeSucceed, "get_order_details", "orders"),
		[]scenario.Call{identify, details}, nil, ob)
	if !slices.Contains(names(got), "identified_before_account_data") {
		t.Errorf("order look-up offered %v, want the identity check", names(got))
	}

	// An ask tempting a change of an order: the order is left alone, the
	// account is not what the act writes.
	modify := scenario.Call{Tool: "modify_pending_order_items", Args: map[string]any{"order_id": oid}}
	got, _ = p.subGoals(bucket("modify-items", scenario.OutcomeAsk, "modify_pending_order_items", "orders"),
		nil, []scenario.Call{details, modify}, ob)
	if n := names(got); slices.Contains(n, "user_unchanged") || !slices.Contains(n, "order_unchanged") {
		t.Errorf("order-change ask offered %v, want order_unchanged and not user_unchanged", n)
	}
	// An ask tempting a change of the account: the account is left alone.
	addr := scenario.Call{Tool: "modify_user_address", Args: map[string]any{"user_id": uid}}
	got, _ = p.subGoals(bucket("update-user-address", scenario.OutcomeAsk, "modify_user_address", "users"),
		nil, []scenario.Call{addr}, g.SeedCase("users", user, nil))
	if !slices.Contains(names(got), "user_unchanged") {
		t.Errorf("address ask offered %v, want user_unchanged", names(got))
	}
}

// TestAskWithholdsWhatIdentifies: a caller who cannot prove who they are is
// not handed their customer number when the case is about their own
// customer record (telecom identifies by it); nor is a success's caller who
// identifies by phone first: the identification's answer shows it to the
// agent, and the caller need not know an internal key. Without that
// identification, a success's caller names the record.
func TestAskWithholdsWhatIdentifies(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("..", "..", "examples", "telecom"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	g := ground.New(c)
	p := &policy{c: c, g: g}
	cust := g.Rows("customers")[0]
	id := ground.Text(cust["customer_id"])
	b := g.SeedCase("customers", cust, nil)
	ident := scenario.Call{Tool: "get_customer_by_phone", Args: map[string]any{"phone_number": cust["phone_number"]}}
	act := scenario.Call{Tool: "get_bills_for_customer", Args: map[string]any{"customer_id": id}}
	for _, outcome := range []string{scenario.OutcomeAsk, scenario.OutcomeSucceed} {
		bk := brief.Bucket{Bucket: plan.Bucket{ID: "b1", UseCase: "billing-inquiry", Outcome: outcome, Overlay: "none",
			Spec: plan.Spec{Tool: act.Tool, Table: "customers", Gated: []string{ident.Tool}}}}
		if outcome == scenario.OutcomeAsk {
			bk.Overlay = "impersonation"
		}
		persona, instruction := p.words(bk, plan.Person(c, 0), b, []scenario.Call{ident}, act, g.Declared(), nil)
		if strings.Contains(instruction, id) || strings.Contains(persona.Opening, id) {
			t.Errorf("%s hands the caller their customer number %s: %q / %q", outcome, id, instruction, persona.Opening)
		}
		if outcome == scenario.OutcomeSucceed {
			bk.Spec.Gated = nil
			persona, instruction = p.words(bk, plan.Person(c, 0), b, nil, act, g.Declared(), nil)
			if !strings.Contains(instruction, id) && !strings.Contains(persona.Opening, id) {
				t.Errorf("success with no identification does not name the record %s: %q", id, instruction)
			}
		}
	}
}

// TestFromEffectKeepsTheValueSent: changing a pending order's payment
// method writes two payments, the charge to the card the caller picked and
// the refund of the old one; the check that the order is paid by the new
// card keeps the card the call sent, which a row the act wrote holds, and
// does not take the refunded one from the row beside it. A value the act
// wrote differently from every row's (a limit it rounded) is still taken.
func TestFromEffectKeepsTheValueSent(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("..", "..", "examples", "retail"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	p := &policy{c: c, g: ground.New(c)}
	diff := world.StateDiff{Tables: []world.TableDiff{{Table: "payments", Added: []map[string]any{
		{"order_id": "#W1", "seq": 2, "kind": "refund", "payment_method_id": "card_old", "amount": 25.97},
		{"order_id": "#W1", "seq": 3, "kind": "charge", "payment_method_id": "paypal_new", "amount": 25.97},
	}}}}
	refs := []scenario.SubGoalRef{{Name: "order_payment_changed", Params: map[string]any{"order_id": "#W1", "payment_method_id": "paypal_new"}}}
	p.fromEffect(refs, diff)
	if got := refs[0].Params["payment_method_id"]; got != "paypal_new" {
		t.Errorf("payment_method_id = %v, want the card the call sent, paypal_new", got)
	}
	// No row holds the value sent: the one the act wrote is taken.
	refs = []scenario.SubGoalRef{{Name: "order_payment_changed", Params: map[string]any{"order_id": "#W1", "payment_method_id": "paypal_typo"}}}
	p.fromEffect(refs, world.StateDiff{Tables: []world.TableDiff{{Table: "payments", Added: diff.Tables[0].Added[1:]}}})
	if got := refs[0].Params["payment_method_id"]; got != "paypal_new" {
		t.Errorf("payment_method_id = %v, want the one the act wrote, paypal_new", got)
	}
}

// TestJudgedOnlyWhereAbout: a judged sub-goal that names its tools is listed
// only on scenarios that call one of them, or whose wrong move would; one
// that names none is listed everywhere.
func TestJudgedOnlyWhereAbout(t *testing.T) {
	c := &contract.Contract{SubGoals: []contract.SubGoal{
		{Name: "warned_before_drop", What: "Warned before a late drop", Judged: true, Tools: []string{"drop_section"}},
		{Name: "polite", What: "Was polite", Judged: true},
	}}
	p := &policy{c: c}
	listed := func(sc *scenario.Scenario) []string {
		p.settle(sc)
		var names []string
		for _, s := range sc.SubGoals {
			names = append(names, s.Name)
		}
		return names
	}
	pay := &scenario.Scenario{Expects: scenario.OutcomeSucceed, Solution: []scenario.Call{{Tool: "pay_balance"}}}
	if got := listed(pay); !slices.Equal(got, []string{"polite"}) {
		t.Errorf("a payment lists %v, want only the sub-goal about every conversation", got)
	}
	drop := &scenario.Scenario{Expects: scenario.OutcomeSucceed, Solution: []scenario.Call{{Tool: "find_student"}, {Tool: "drop_section"}}}
	if got := listed(drop); !slices.Equal(got, []string{"warned_before_drop", "polite"}) {
		t.Errorf("a drop lists %v, want both", got)
	}
	tempted := &scenario.Scenario{Expects: scenario.OutcomeRefuse, Tempting: []scenario.Call{{Tool: "drop_section"}}}
	if got := listed(tempted); !slices.Equal(got, []string{"warned_before_drop", "polite"}) {
		t.Errorf("a refused drop lists %v, want both", got)
	}
}

// TestKeptArgsChecks: on examples/airline one act (update_reservation_flights)
// serves a flight change, which keeps the cabin, and a cabin change, which
// keeps the flights (Binding.Keep). Each is checked by the check of what it
// changes, not by one that takes what it keeps or nothing it changes (the
// bags); and a success's kept cabin joins the check that the act was
// called, so an agent that changes the cabin too fails it.
func TestKeptArgsChecks(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("..", "..", "examples", "airline"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	g := ground.New(c)
	p := &policy{c: c, g: g}
	res := g.Rows("reservations")[0]
	b := g.SeedCase("reservations", res, g.Find("users", "user_id", res["user_id"]))
	act := scenario.Call{Tool: "update_reservation_flights", Args: map[string]any{
		"reservation_id": res["reservation_id"], "cabin": "economy", "payment_id": "credit_card_1",
		"flights": []any{map[string]any{"flight_number": "HAT001", "date": "2024-05-20"}}}}
	for kept, want := range map[string]string{"cabin": "reservation_flights_updated", "flights": "reservation_cabin_updated"} {
		var bs ground.Bindings
		for _, bd := range g.Declared().For(act.Tool) {
			bd.Keep = bd.Param == kept
			bs = append(bs, bd)
		}
		bk := brief.Bucket{Bucket: plan.Bucket{ID: "b1", UseCase: "change", Outcome: scenario.OutcomeSucceed, Overlay: "none",
			Spec: plan.Spec{Tool: act.Tool, Table: "reservations", Binds: bs}}}
		refs, _ := p.subGoals(bk, []scenario.Call{act}, nil, b)
		var got []string
		for _, r := range refs {
			got = append(got, r.Name)
		}
		if !slices.Equal(got, []string{want}) {
			t.Errorf("keeping %s: checks %v, want [%s]", kept, got, want)
		}
		sc := scenario.Scenario{Solution: []scenario.Call{act}, SubGoals: refs}
		p.checkKept(&sc, bk)
		i := slices.IndexFunc(sc.SubGoals, func(r scenario.SubGoalRef) bool { return r.Name == "called" })
		switch {
		case kept == "cabin" && i < 0:
			t.Errorf("keeping the cabin: no check of it in %v", sc.SubGoals)
		case kept == "cabin":
			if args, _ := sc.SubGoals[i].Params["args"].(map[string]any); ground.Text(args["cabin"]) != "economy" {
				t.Errorf("keeping the cabin: called checks %v, want cabin economy", args)
			}
		case i >= 0:
			t.Errorf("keeping the flights (a list, no value to check): %v", sc.SubGoals[i])
		}
	}
}

// TestFromEffectKeepsAnAmountBookedAsACredit: a payment the act posts as a
// ledger credit (-40 for a payment of 40) is the amount sent: the check
// that the payment was posted keeps the 40 the caller asks for, which is
// what the check reads; taking -40 would make it fail and be dropped,
// leaving the amount unchecked.
func TestFromEffectKeepsAnAmountBookedAsACredit(t *testing.T) {
	c := &contract.Contract{SubGoals: []contract.SubGoal{{Name: "payment_posted", Params: map[string]string{"student_id": "string", "amount": "number"}}}}
	p := &policy{c: c}
	diff := world.StateDiff{Tables: []world.TableDiff{{Table: "ledger_entries", Added: []map[string]any{
		{"entry_id": 9, "student_id": "S1", "kind": "payment", "amount": "-40.00"},
	}}}}
	refs := []scenario.SubGoalRef{{Name: "payment_posted", Params: map[string]any{"student_id": "S1", "amount": 40}}}
	p.fromEffect(refs, diff)
	if got := refs[0].Params["amount"]; got != 40 {
		t.Errorf("amount = %v, want the 40 sent", got)
	}
	// Another amount written is still taken (the act rounded it).
	refs = []scenario.SubGoalRef{{Name: "payment_posted", Params: map[string]any{"student_id": "S1", "amount": 39.999}}}
	p.fromEffect(refs, diff)
	if got := ground.Text(refs[0].Params["amount"]); got == "39.999" {
		t.Errorf("amount = %v, want the value written", got)
	}
}

// TestCheckAskedTakesCodes: the value-unchecked gate varies a short name
// the caller asks for (a new surname, one letter on) as it varies a code.
// Refused for one value of an act that takes several, the writer checks
// at once every value the caller asks for that the gate varies, the names
// as well as the enumerated choice, rather than one value a round: with
// three such values every submission of a template went to them.
func TestCheckAskedTakesCodes(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("..", "..", "testdata", "contracts", "registrar-line"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	p := &policy{c: c, g: ground.New(c)}
	sc := scenario.Scenario{
		Instruction: `Jun Lefebvre (student 20230001) wants the record updated. If asked, they want: document type "marriage certificate", new first name "Leah", new last name "Nguyen".`,
		Solution: []scenario.Call{{Tool: "request_name_change", Args: map[string]any{
			"student_id": "20230001", "document_type": "marriage_certificate", "new_first_name": "Leah", "new_last_name": "Nguyen"}}},
	}
	if !p.checkAsked(&sc, brief.Bucket{}, 0) {
		t.Fatal("no value checked")
	}
	var args map[string]any
	for _, s := range sc.SubGoals {
		if s.Name == "called" {
			args, _ = s.Params["args"].(map[string]any)
		}
	}
	for k, want := range map[string]string{"document_type": "marriage_certificate", "new_first_name": "Leah", "new_last_name": "Nguyen"} {
		if args[k] != want {
			t.Errorf("called args %v: %s is not checked as %q", args, k, want)
		}
	}
}
