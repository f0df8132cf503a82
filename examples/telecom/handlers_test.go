// Package telecom_test checks the example's handlers against the published
// behaviour of tau2-bench's telecom tools: results as the source's models
// dump them, and its error strings, word for word.
package telecom_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/suitegen/suitegen/pkg/engine"
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
	c, err := engine.LoadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
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
				want: `{"message":"Successfully added 2.0 GB of data for line L1002 for $4.00","new_data_refueling_gb":2.0,"charge":4.0}`},
			{tool: "refuel_data", args: map[string]any{"customer_id": "C1002", "line_id": "L1005", "gb_amount": 1.5},
				want: `{"message":"Successfully added 1.5 GB of data for line L1005 for $0.15","new_data_refueling_gb":1.5,"charge":0.15000000000000002}`},
			{tool: "refuel_data", args: map[string]any{"customer_id": "C1002", "line_id": "L1005", "gb_amount": -1}, err: true,
				want: "Error: Refuel amount must be positive"},
			{tool: "get_details_by_id", args: map[string]any{"id": "B1003"}, want: `{"bill_id":"B1003","customer_id":"C1001","period_start":"2025-03-01",` +
				`"period_end":"2025-03-31","issue_date":"2025-03-01","total_due":4.0,"due_date":"2025-03-15","line_items":[` +
				`{"description":"Data refueling: 2.0 GB at $2.0/GB","amount":4.0,"date":"2025-02-25","item_type":"Charge"}],"status":"Draft"}`},
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
