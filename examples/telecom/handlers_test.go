// Package telecom_test checks the example's handlers against the published
// behaviour of tau2-bench's telecom tools: results as the source's models
// dump them, and its error strings, word for word.
package telecom_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/tau2"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/world"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type step struct {
	tool string
	args map[string]any
	want string // the JSON result, or for a refusal the error the agent sees
	err  bool
}

func TestHandlersAsPublished(t *testing.T) {
	ctx := context.Background()
	c, err := contract.LoadValid(".")
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	john := `{"customer_id":"C1001","full_name":"John Smith","date_of_birth":"1985-06-15","email":"john.smith@example.com",` +
		`"phone_number":"555-123-2002","address":{"street":"123 Main St","city":"Anytown","state":"CA","zip_code":"90210"},` +
		`"account_status":"Active","payment_methods":[{"method_type":"Credit Card","account_number_last_4":"1235","expiration_date":"12/2026"}],` +
		`"line_ids":["L1001","L1002","L1003"],"bill_ids":["B1001","B1002","B1003"],"created_at":"2025-01-15 10:30:00",` +
		`"last_extension_date":null,"goodwill_credit_used_this_year":25.0}`
	// Each group runs on its own copy of the world, in order.
	groups := map[string][]step{
		"lookups": {
			{tool: "get_customer_by_phone", args: map[string]any{"phone_number": "555-123-2002"}, want: john},
			{tool: "get_customer_by_phone", args: map[string]any{"phone_number": "555-123-2003"}, want: john},
			{tool: "get_customer_by_phone", args: map[string]any{"phone_number": "555-000-0000"}, err: true,
				want: "Error: Customer with phone number 555-000-0000 not found"},
			{tool: "get_customer_by_id", args: map[string]any{"customer_id": "C1001"}, want: john},
			{tool: "get_customer_by_id", args: map[string]any{"customer_id": "C9"}, err: true, want: "Error: Customer with ID C9 not found"},
			{tool: "get_customer_by_name", args: map[string]any{"full_name": "JOHN smith", "dob": "1985-06-15"}, want: "[" + john + "]"},
			{tool: "get_customer_by_name", args: map[string]any{"full_name": "John Smith", "dob": "1985-06-16"}, want: "[]"},
			{tool: "get_details_by_id", args: map[string]any{"id": "D1002"}, want: `{"device_id":"D1002","device_type":"phone","model":"Smartphone Pro Max",` +
				`"imei":"234567890123456","is_esim_capable":true,"activated":true,"activation_date":"2025-02-15 11:45:00","last_esim_transfer_date":"2025-01-20 09:30:00"}`},
			{tool: "get_details_by_id", args: map[string]any{"id": "P1003"}, want: `{"plan_id":"P1003","name":"Unlimited Plus","data_limit_gb":999.0,` +
				`"price_per_month":85.0,"data_refueling_price_per_gb":0.1}`},
			{tool: "get_details_by_id", args: map[string]any{"id": "L1009"}, want: `{"line_id":"L1009","phone_number":"555-123-2009","status":"Suspended",` +
				`"plan_id":"P1002","device_id":"D1009","data_used_gb":0.0,"data_refueling_gb":0.0,"roaming_enabled":false,"contract_end_date":"2026-08-15",` +
				`"last_plan_change_date":"2024-08-20","last_sim_replacement_date":"2025-01-15","suspension_start_date":"2025-01-15"}`},
			{tool: "get_details_by_id", args: map[string]any{"id": "B1006"}, want: `{"bill_id":"B1006","customer_id":"C1003","period_start":"2025-02-01",` +
				`"period_end":"2025-02-28","issue_date":"2025-02-05","total_due":70.0,"due_date":"2025-02-19","line_items":[` +
				`{"description":"Premium Plan - Line 555-123-2009","amount":65.0,"date":"2025-02-05","item_type":"Plan Charge"},` +
				`{"description":"Suspension Fee - Line 555-123-2009","amount":5.0,"date":"2025-02-05","item_type":"Fee"}],"status":"Disputed"}`},
			{tool: "get_details_by_id", args: map[string]any{"id": "X1"}, err: true, want: "Error: Unknown ID format or type: X1"},
			{tool: "get_details_by_id", args: map[string]any{"id": "L7"}, err: true, want: "Error: Line with ID L7 not found"},
			{tool: "get_details_by_id", args: map[string]any{"id": "B7"}, err: true, want: "Error: Bill with ID B7 not found"},
			{tool: "get_details_by_id", args: map[string]any{"id": "D7"}, err: true, want: "Error: Device with ID D7 not found"},
			{tool: "get_details_by_id", args: map[string]any{"id": "P7"}, err: true, want: "Error: Plan with ID P7 not found"},
			{tool: "get_bills_for_customer", args: map[string]any{"customer_id": "C1002", "limit": 1}, want: `[{"bill_id":"B1005","customer_id":"C1002",` +
				`"period_start":"2025-02-01","period_end":"2025-02-28","issue_date":"2025-02-05","total_due":425.0,"due_date":"2025-02-26","line_items":[` +
				`{"description":"Unlimited Plus - 5 Lines Family Plan","amount":425.0,"date":"2025-02-05","item_type":"Plan Charge"}],"status":"Overdue"}]`},
			{tool: "get_data_usage", args: map[string]any{"customer_id": "C1001", "line_id": "L1002"},
				want: `{"line_id":"L1002","data_used_gb":8.7,"data_limit_gb":15.0,"data_refueling_gb":0.0,"cycle_end_date":"2025-02-28"}`},
			{tool: "get_data_usage", args: map[string]any{"customer_id": "C1001", "line_id": "L1004"}, err: true,
				want: "Error: Line L1004 not found for customer C1001"},
		},
		"lines": {
			{tool: "suspend_line", args: map[string]any{"customer_id": "C1001", "line_id": "L1003", "reason": "x"}, err: true,
				want: "Error: Line must be active to suspend"},
			{tool: "suspend_line", args: map[string]any{"customer_id": "C1002", "line_id": "L1004", "reason": "travelling"},
				want: `{"message":"Line suspended successfully. $5/month holding fee will apply.","line":{"line_id":"L1004","phone_number":"555-123-2004",` +
					`"status":"Suspended","plan_id":"P1003","device_id":"D1004","data_used_gb":15.3,"data_refueling_gb":0.0,"roaming_enabled":true,` +
					`"contract_end_date":"2027-02-28","last_plan_change_date":"2025-01-10","last_sim_replacement_date":null,"suspension_start_date":"2025-02-25"}}`},
			{tool: "resume_line", args: map[string]any{"customer_id": "C1001", "line_id": "L1001"}, err: true, want: "Error: Line must be suspended to resume"},
			{tool: "resume_line", args: map[string]any{"customer_id": "C1003", "line_id": "L1009"},
				want: `{"message":"Line resumed successfully","line":{"line_id":"L1009","phone_number":"555-123-2009","status":"Active","plan_id":"P1002",` +
					`"device_id":"D1009","data_used_gb":0.0,"data_refueling_gb":0.0,"roaming_enabled":false,"contract_end_date":"2026-08-15",` +
					`"last_plan_change_date":"2024-08-20","last_sim_replacement_date":"2025-01-15","suspension_start_date":null}}`},
			{tool: "enable_roaming", args: map[string]any{"customer_id": "C1001", "line_id": "L1002"}, want: `"Roaming was already enabled"`},
			{tool: "enable_roaming", args: map[string]any{"customer_id": "C1001", "line_id": "L1001"}, want: `"Roaming enabled successfully"`},
			{tool: "disable_roaming", args: map[string]any{"customer_id": "C1001", "line_id": "L1003"}, want: `"Roaming was already disabled"`},
			{tool: "disable_roaming", args: map[string]any{"customer_id": "C1001", "line_id": "L1001"}, want: `"Roaming disabled successfully"`},
			{tool: "transfer_to_human_agents", args: map[string]any{"summary": "locked SIM"}, want: `"Transfer successful"`},
		},
		"billing": {
			{tool: "send_payment_request", args: map[string]any{"customer_id": "C1001", "bill_id": "B1005"}, err: true,
				want: "Error: Bill B1005 not found for customer C1001"},
			{tool: "send_payment_request", args: map[string]any{"customer_id": "C1002", "bill_id": "B1005"},
				want: `"Payment request sent to the customer for bill B1005"`},
			{tool: "send_payment_request", args: map[string]any{"customer_id": "C1002", "bill_id": "B1004"}, err: true,
				want: "Error: A bill is already awaiting payment for this customer"},
			{tool: "refuel_data", args: map[string]any{"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2},
				want: `{"message":"Successfully added 2 GB of data for line L1002 for $4.00","new_data_refueling_gb":2.0,"charge":4.0}`},
			{tool: "refuel_data", args: map[string]any{"customer_id": "C1002", "line_id": "L1005", "gb_amount": 1.5},
				want: `{"message":"Successfully added 1.5 GB of data for line L1005 for $0.15","new_data_refueling_gb":1.5,"charge":0.15000000000000002}`},
			{tool: "refuel_data", args: map[string]any{"customer_id": "C1002", "line_id": "L1005", "gb_amount": -1}, err: true,
				want: "Error: Refuel amount must be positive"},
			{tool: "get_details_by_id", args: map[string]any{"id": "B1003"}, want: `{"bill_id":"B1003","customer_id":"C1001","period_start":"2025-03-01",` +
				`"period_end":"2025-03-31","issue_date":"2025-03-01","total_due":4.0,"due_date":"2025-03-15","line_items":[` +
				`{"description":"Data refueling: 2 GB at $2.0/GB","amount":4.0,"date":"2025-02-25","item_type":"Charge"}],"status":"Draft"}`},
		},
	}
	for name, steps := range groups {
		t.Run(name, func(t *testing.T) {
			err := e.World.Copy(ctx, func(cp *world.Copy) error {
				for i, s := range steps {
					r := cp.Call(ctx, s.tool, s.args)
					got := string(r.Result)
					if s.err {
						got = r.Error
						if !r.Refused {
							t.Errorf("step %d %s: want refused, got ok=%v crash=%v %s", i+1, s.tool, r.OK, r.Crash, r.Result)
							continue
						}
					} else if !r.OK {
						t.Errorf("step %d %s: %s", i+1, s.tool, r.Error)
						continue
					}
					if !s.err && !sameJSON(got, s.want) || s.err && got != s.want {
						t.Errorf("step %d %s:\n got %s\nwant %s", i+1, s.tool, got, s.want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// sameJSON compares two JSON texts as text after compacting, so field order
// and number forms (40.0, not 40) count, as they do for an agent reading them.
func sameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return a == b
}

// TestSourceTasksProve writes the agent's side of τ²-bench's own telecom
// tasks as scenarios on the seed's records and proves them: the contract's
// checks hold after the agent's fix and fail without it.
func TestSourceTasksProve(t *testing.T) {
	ctx := context.Background()
	c, err := contract.LoadValid(".")
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	lookup := func(phone string) scenario.Call {
		return scenario.Call{Tool: "get_customer_by_phone", Args: map[string]any{"phone_number": phone}}
	}
	call := func(tool string, args map[string]any) scenario.Call { return scenario.Call{Tool: tool, Args: args} }
	goal := func(name string, params map[string]any) scenario.SubGoalRef {
		return scenario.SubGoalRef{Name: name, Params: params}
	}
	upd := func(sql string, args ...any) scenario.Statement { return scenario.Statement{SQL: sql, Args: args} }
	cases := []scenario.Scenario{
		{
			// [mobile_data_issue]user_abroad_roaming_disabled_on: the phone's
			// roaming is on, the line's is not.
			Name: "abroad-line-roaming-off", UseCase: "data-roaming", Expects: "succeed", CallerID: "C1001",
			Instruction: "You are abroad in France and mobile data does not work; data roaming is on on your phone.",
			Setup: []scenario.Statement{
				upd("UPDATE user_phones SET is_abroad = true, roaming_enabled = true WHERE line_id = $1", "L1001"),
			},
			Solution: []scenario.Call{lookup("555-123-2001"),
				call("enable_roaming", map[string]any{"customer_id": "C1001", "line_id": "L1001"})},
			SubGoals: []scenario.SubGoalRef{goal("roaming_enabled_on_line", map[string]any{"line_id": "L1001"}),
				goal("mobile_data_works", map[string]any{"line_id": "L1001"}), goal("customer_identified", map[string]any{"customer_id": "C1001"})},
		},
		{
			// [mobile_data_issue]data_usage_exceeded: 15.1 GB used of 15.
			Name: "data-usage-exceeded", UseCase: "data-refueling", Expects: "succeed", CallerID: "C1001",
			Instruction: "Mobile data stopped; you will refuel 2.0 GB but not change your plan.",
			Setup:       []scenario.Statement{upd("UPDATE lines SET data_used_gb = $2 WHERE line_id = $1", "L1002", 15.1)},
			Solution: []scenario.Call{lookup("555-123-2002"),
				call("get_data_usage", map[string]any{"customer_id": "C1001", "line_id": "L1002"}),
				call("refuel_data", map[string]any{"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0})},
			// The wrong move: more than the 2 GB the policy allows, which the
			// world would grant.
			Tempting: []scenario.Call{lookup("555-123-2002"),
				call("get_data_usage", map[string]any{"customer_id": "C1001", "line_id": "L1002"}),
				call("refuel_data", map[string]any{"customer_id": "C1001", "line_id": "L1002", "gb_amount": 5.0})},
			SubGoals: []scenario.SubGoalRef{goal("data_refueled", map[string]any{"line_id": "L1002", "gb_amount": 2.0}),
				goal("mobile_data_works", map[string]any{"line_id": "L1002"}), goal("refuel_within_limit", nil)},
			Rules: []string{"refuel-at-most-2gb"},
		},
		{
			// The payment half of [service_issue]overdue_bill_suspension.
			Name: "overdue-bill", UseCase: "overdue-bill-payment", Expects: "succeed", CallerID: "C1002",
			Instruction: "You have an overdue bill, B1005, and want to pay it.",
			Solution: []scenario.Call{lookup("555-123-1002"),
				call("get_bills_for_customer", map[string]any{"customer_id": "C1002"}),
				call("send_payment_request", map[string]any{"customer_id": "C1002", "bill_id": "B1005"})},
			SubGoals: []scenario.SubGoalRef{goal("payment_request_sent", map[string]any{"bill_id": "B1005"})},
		},
		{
			// The resumption half: the overdue bill is paid, the line comes back.
			Name: "paid-then-resumed", UseCase: "lift-line-suspension", Expects: "succeed", CallerID: "C1003",
			Instruction: "Your line has no service since it was suspended; you have paid your bill.",
			Setup:       []scenario.Statement{upd("UPDATE bills SET status = 'Paid' WHERE bill_id = $1", "B1006")},
			Solution: []scenario.Call{lookup("555-123-2009"),
				call("get_bills_for_customer", map[string]any{"customer_id": "C1003"}),
				call("resume_line", map[string]any{"customer_id": "C1003", "line_id": "L1009"})},
			SubGoals: []scenario.SubGoalRef{goal("line_resumed", map[string]any{"line_id": "L1009"}),
				goal("service_works", map[string]any{"line_id": "L1009"})},
		},
		{
			// [service_issue]contract_end_suspension: paid, but the contract
			// has ended; resuming is the wrong move, escalating the right one.
			Name: "contract-ended", UseCase: "technical-escalation", Expects: "escalate", CallerID: "C1001",
			Instruction: "Your line was suspended and has no service; you have paid everything you owe.",
			Setup: []scenario.Statement{upd("UPDATE lines SET status = 'Suspended', suspension_start_date = $2::date, contract_end_date = $3::date WHERE line_id = $1",
				"L1002", "2025-02-25", "2025-01-31")},
			Solution: []scenario.Call{lookup("555-123-2002"),
				call("get_details_by_id", map[string]any{"id": "L1002"}),
				call("transfer_to_human_agents", map[string]any{"summary": "Line L1002 suspended after its contract ended; the customer has no service."})},
			// The world would resume the line once the bills are checked; the
			// rule's check is what forbids it.
			Tempting: []scenario.Call{call("get_bills_for_customer", map[string]any{"customer_id": "C1001"}),
				call("resume_line", map[string]any{"customer_id": "C1001", "line_id": "L1002"})},
			SubGoals: []scenario.SubGoalRef{goal("transferred_to_human", nil), goal("line_unchanged", map[string]any{"line_id": "L1002"}),
				goal("line_looked_up", map[string]any{"line_id": "L1002"}), goal("no_resume_after_contract_end", nil)},
			Rules: []string{"no-resume-after-contract-end"},
		},
		{
			// [service_issue]lock_sim_card_pin: only technical support can help.
			Name: "sim-locked", UseCase: "technical-escalation", Expects: "escalate", CallerID: "C1001",
			Instruction: "Your phone says the SIM card is locked with a PIN code and you have no service.",
			Setup:       []scenario.Statement{upd("UPDATE user_phones SET sim_card_status = 'locked_pin' WHERE line_id = $1", "L1002")},
			Solution: []scenario.Call{lookup("555-123-2002"),
				call("transfer_to_human_agents", map[string]any{"summary": "SIM locked with a PIN on line L1002."})},
			// The wrong move: resuming a line that is not suspended, which the
			// world refuses (a look-up would be no wrong move at all).
			Tempting: []scenario.Call{call("resume_line", map[string]any{"customer_id": "C1001", "line_id": "L1002"})},
			SubGoals: []scenario.SubGoalRef{goal("transferred_to_human", nil)},
		},
	}
	for i := range cases {
		sc := &cases[i]
		sc.Branch, sc.Kind, sc.Tests, sc.MaxTurns = sc.Name, "happy", "passes when the agent does its part of the fix", 20
		// The caller gives the number they call about, as the source
		// tasks' users know it: an agent can only look up what it is told.
		if first := sc.Solution[0]; first.Tool == "get_customer_by_phone" {
			sc.Instruction += fmt.Sprintf(" Your phone number is %s.", first.Args["phone_number"])
		}
		if sc.Expects != "succeed" {
			sc.Kind = "edge"
		}
		sc.Persona = scenario.Persona{Name: "Caller " + sc.Name, Personality: "Calm", Accent: "Neutral", Style: "Plain", Location: "Austin", Opening: "Hello, I need help with my phone."}
		sc.Provenance = scenario.Provenance{ContractSHA256: c.SHA256, WorldSHA256: c.WorldSHA256, Model: "hand"}
		t.Run(sc.Name, func(t *testing.T) {
			v, err := e.Prover.Prove(ctx, sc)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Kept {
				t.Fatalf("not kept: %v", v.Refusals)
			}
		})
	}

	// As τ²-bench tasks: every case, the locked SIM too. Its wrong move (a
	// resume the world refuses) leaves the state as the right move does, but
	// the hand-over is one of the task's actions, so τ²-bench's evaluation
	// fails an agent that makes the wrong move instead. The setup (user_phones,
	// lines and bills rows) is the initial state.
	out := t.TempDir()
	idx := suite.Index{Run: "hand", Agent: c.Agent, Count: len(cases)}
	for _, sc := range cases {
		idx.Scenarios = append(idx.Scenarios, suite.IndexEntry{Name: sc.Name, UseCase: sc.UseCase, Branch: sc.Branch})
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(out, "scenarios", sc.Name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "scenarios", sc.Name, "scenario.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	sum, err := tau2.Export(ctx, out, tau2.Source{Contract: c, World: e.World, Replayer: e.Prover}, &doc)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Tasks != len(cases) || len(sum.Refused) != 0 {
		t.Fatalf("want every case exported, got %d of %d tasks, refused %+v", sum.Tasks, len(cases), sum.Refused)
	}
	var got struct {
		Tasks []struct {
			ID           string `json:"id"`
			InitialState struct {
				InitializationData struct {
					AgentData map[string]map[string]map[string]any `json:"agent_data"`
				} `json:"initialization_data"`
			} `json:"initial_state"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(doc.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	type scored struct {
		ID       string        `json:"id"`
		Criteria tau2.Criteria `json:"evaluation_criteria"`
	}
	var crit struct{ Tasks []scored }
	if err := json.Unmarshal(doc.Bytes(), &crit); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(crit.Tasks, func(task scored) bool { return task.ID == "sim-locked" })
	if i < 0 {
		t.Fatal("no task for the locked SIM")
	}
	if acts := crit.Tasks[i].Criteria.Actions; len(acts) == 0 || acts[len(acts)-1].Name != "transfer_to_human_agents" || !slices.Contains(crit.Tasks[i].Criteria.RewardBasis, "ACTION") {
		t.Errorf("the locked SIM's task does not score its hand-over: %+v", crit.Tasks[i].Criteria)
	}
	phone := got.Tasks[0].InitialState.InitializationData.AgentData["user_phones"]["L1001"]
	if got.Tasks[0].ID != "abroad-line-roaming-off" || phone["is_abroad"] != true || phone["roaming_enabled"] != true {
		t.Errorf("the abroad case's handset is not its initial state: %s %v", got.Tasks[0].ID, phone)
	}
}
