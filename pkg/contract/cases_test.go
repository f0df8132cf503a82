package contract

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// edit changes one file of a copy of testdata/good: old -> new, or the whole
// file when old is "" (new "" with old "" deletes it).
type edit struct{ file, old, new string }

func loadEdited(t *testing.T, edits ...edit) (*Contract, Problems) {
	t.Helper()
	dir := copyDir(t, "testdata/good")
	for _, e := range edits {
		p := filepath.Join(dir, filepath.FromSlash(e.file))
		if e.old == "" {
			if e.new == "" {
				if err := os.RemoveAll(p); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(e.new), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), e.old) {
			t.Fatalf("%s does not contain %q", e.file, e.old)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), e.old, e.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, ps, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c, ps
}

const Y = ContractFile

// OB is the last line of the first use case, where outbound fields go.
const OB = "    tools: [cancel_pending_order]\n"

// TestProblemCases: one small mistake each, and exactly the problems it should
// raise ("file:line: code" prefixes, in order).
func TestProblemCases(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edits []edit
		want  []string
	}{
		{"direction string", []edit{{Y, "direction: [inbound, outbound]", "direction: inbound"}}, nil},
		{"outbound only needs purposes", []edit{{Y, "direction: [inbound, outbound]", "direction: outbound"}},
			[]string{"contract.yaml:18: missing-field: outbound use case cancel-order needs a purpose",
				"contract.yaml:21: missing-field: outbound use case order-status needs a purpose"}},
		{"outbound use case", []edit{{Y, OB, OB + "    direction: outbound\n    purpose: orders\n    missed_call: transfer_to_human_agents\n    call_later: get_order_details\n"}}, nil},
		{"outbound purpose is the caller table", []edit{{Y, OB, OB + "    direction: outbound\n    purpose: users\n"}}, nil},
		{"outbound purpose two hops away", []edit{{Y, OB, OB + "    direction: outbound\n    purpose: payments\n"}}, nil},
		{"outbound not allowed", []edit{{Y, "direction: [inbound, outbound]", "direction: inbound"}, {Y, OB, OB + "    direction: outbound\n    purpose: orders\n"}},
			[]string{"contract.yaml:21: direction-not-allowed: use case cancel-order is outbound, but the contract's direction is inbound"}},
		{"inbound not allowed", []edit{{Y, "direction: [inbound, outbound]", "direction: outbound"}, {Y, OB, OB + "    direction: inbound\n"},
			{Y, "    text: Say where an order is\n", "    text: Say where an order is\n    purpose: orders\n"}},
			[]string{"contract.yaml:21: direction-not-allowed: use case cancel-order is inbound, but the contract's direction is outbound"}},
		{"use case direction value", []edit{{Y, OB, OB + "    direction: sideways\n"}},
			[]string{"contract.yaml:21: bad-value: use case direction \"sideways\": want inbound or outbound"}},
		{"outbound fields on an inbound use case", []edit{{Y, OB, OB + "    purpose: orders\n    missed_call: get_order_details\n"}},
			[]string{"contract.yaml:21: bad-value: use case cancel-order: purpose is for outbound use cases",
				"contract.yaml:22: bad-value: use case cancel-order: missed_call is for outbound use cases"}},
		{"outbound purpose and tools unknown", []edit{{Y, OB, OB + "    direction: outbound\n    purpose: order\n    missed_call: log_attempt\n    call_later: call_back\n"}},
			[]string{"contract.yaml:22: unknown-purpose: use case cancel-order: purpose \"order\" is not a table",
				"contract.yaml:23: unknown-tool: use case cancel-order: missed_call names \"log_attempt\", which is not a tool",
				"contract.yaml:24: unknown-tool: use case cancel-order: call_later names \"call_back\", which is not a tool"}},
		{"outbound without a caller", []edit{{Y, "caller:\n  table: users\n  key: user_id\n  from: [find_user_id_by_email]\n", ""}, {Y, OB, OB + "    direction: outbound\n    purpose: orders\n"}},
			[]string{"contract.yaml:18: outbound-no-caller: use case cancel-order is outbound, but the contract names no caller table"}},
		{"outbound purpose owned by no callee", []edit{{Y, OB, OB + "    direction: outbound\n    purpose: notices\n"},
			{"world/schema.sql", "CREATE INDEX payments_order", "CREATE TABLE notices (id text PRIMARY KEY, body text NOT NULL);\nCREATE INDEX payments_order"}},
			[]string{"contract.yaml:22: purpose-no-callee: use case cancel-order: no chain of foreign keys leads from notices to users"}},
		{"direction twice", []edit{{Y, "direction: [inbound, outbound]", "direction: [inbound, inbound]"}},
			[]string{"contract.yaml:4: bad-value: direction \"inbound\" is given twice"}},
		{"direction unknown", []edit{{Y, "direction: [inbound, outbound]", "direction: sideways"}},
			[]string{"contract.yaml:4: bad-value: direction \"sideways\""}},
		{"direction empty", []edit{{Y, "direction: [inbound, outbound]", "direction: []"}},
			[]string{"contract.yaml:4: bad-value: direction is an empty list"}},
		{"duplicate key", []edit{{Y, "modality: chat\n", "modality: chat\nmodality: voice\n"}},
			[]string{"contract.yaml:4: duplicate-key: \"modality\" is given twice (first on line 3)"}},
		{"bad now", []edit{{Y, `now: "2026-03-10T10:00:00-06:00"`, `now: "next tuesday"`}},
			[]string{"contract.yaml:5: bad-value: now \"next tuesday\""}},
		{"unquoted timestamp now", []edit{{Y, `now: "2026-03-10T10:00:00-06:00"`, `now: 2026-03-10T10:00:00-06:00`}}, nil},
		{"agent slug", []edit{{Y, "agent: shop-support", "agent: Shop Support"}},
			[]string{"contract.yaml:1: bad-value: agent \"Shop Support\" must be a slug"}},
		{"agent hash", []edit{{Y, "agent: shop-support", "agent: #shop"}},
			[]string{"contract.yaml:1: unquoted-hash: agent is null"}},
		{"agent number", []edit{{Y, "agent: shop-support", "agent: 42"}},
			[]string{"contract.yaml:1: bad-value: agent: expected a string, got int \"42\""}},
		{"missing one_liner", []edit{{Y, "one_liner: Chat support for an online shop\n", ""}},
			[]string{"contract.yaml:1: missing-field: contract needs \"one_liner\""}},
		{"root not a mapping", []edit{{Y, "", "- a\n- b\n"}},
			[]string{"contract.yaml:1: bad-value: contract: expected a mapping, got a list"}},
		{"empty file", []edit{{Y, "", "# nothing\n"}},
			[]string{"contract.yaml: missing-field: contract.yaml is empty"}},
		{"two documents", []edit{{Y, "  styles: [Formal and polite]\n", "  styles: [Formal and polite]\n---\nx: 1\n"}},
			[]string{"contract.yaml:79: yaml-syntax: more than one YAML document"}},
		{"tab indentation", []edit{{Y, "  table: users\n", "\ttable: users\n"}},
			[]string{"contract.yaml:9: yaml-syntax: found character that cannot start any token"}},
		{"tools not a list", []edit{{Y, "tools:\n  - name: find_user_id_by_email\n", "tools: find_user_id_by_email\nxtools:\n  - name: find_user_id_by_email\n"}, {Y, "  - id: confirm-before-change", "  - id: verify-identity"}},
			// Tool references cannot be checked when the list is unreadable: no noise about them.
			[]string{"contract.yaml:15: duplicate-rule", "contract.yaml:23: bad-value: tools: expected a list", "contract.yaml:24: unknown-field: contract has no field \"xtools\""}},
		{"duplicate use case and sequence", []edit{
			{Y, "  - id: order-status\n", "  - id: cancel-order\n"},
			{Y, "sequences:\n", "sequences:\n  - name: cancel-a-pending-order\n    steps: [{tool: get_order_details, args: {order_id: x}}]\n"}},
			[]string{"contract.yaml:21: duplicate-use-case: use case \"cancel-order\" is declared twice (first on line 18)",
				"contract.yaml:61: duplicate-sequence: sequence \"cancel-a-pending-order\" is declared twice (first on line 59)"}},
		{"step expect", []edit{{Y, "        expect: refused", "        expect: failed"}},
			[]string{"contract.yaml:66: unknown-sequence-expect: step expect \"failed\": want ok or refused"}},
		{"step expect ok", []edit{{Y, "        expect: refused", "        expect: ok"}}, nil},
		{"step args", []edit{{Y, `args: {order_id: "#W1001", reason: ordered by mistake}`, `args: {order_id: 1001, reason: ordered by mistake, note: hi}`}},
			[]string{"contract.yaml:61: bad-step-args: cancel_pending_order has no argument \"note\"",
				"contract.yaml:61: bad-step-args: cancel_pending_order: at '/order_id': got number, want string"}},
		{"step missing argument", []edit{{Y, "          reason: ordered by mistake\n        expect", "        expect"}},
			[]string{"contract.yaml:62: bad-step-args: cancel_pending_order: at '/': missing property 'reason'"}},
		{"step unknown tool", []edit{{Y, "      - tool: cancel_pending_order\n", "      - tool: cancel_order\n"}},
			[]string{"contract.yaml:62: unknown-tool: sequence cancel-a-pending-order calls \"cancel_order\""}},
		{"expect rows", []edit{{Y, "rows: [{status: cancelled}]", "rows: [cancelled]"}},
			[]string{"contract.yaml:69: bad-value: rows: each row is a mapping"}},
		{"params not object", []edit{{Y, "params: {type: object, properties: {summary: {type: string}}, required: [summary]}", "params: {type: array}"}},
			[]string{"contract.yaml:54: bad-params-schema: params of transfer_to_human_agents: must be an object schema",
				"contract.yaml:56: unknown-param: log_only names \"summary\""}},
		{"params ref outside", []edit{{Y, "params: {type: object, properties: {summary: {type: string}}, required: [summary]}", "params: {type: object, properties: {summary: {$ref: 'file:///etc/passwd'}}}"}},
			[]string{"contract.yaml:54: bad-params-schema: params of transfer_to_human_agents: not a valid JSON Schema"}},
		{"params bad keyword value", []edit{{Y, "properties: {summary: {type: string}}", "properties: {summary: {type: strin}}"}},
			[]string{"contract.yaml:54: bad-params-schema: params of transfer_to_human_agents: not a valid JSON Schema"}},
		{"params required undeclared", []edit{{Y, "required: [summary]}", "required: [summary, mood]}"}},
			[]string{"contract.yaml:54: bad-params-schema: params of transfer_to_human_agents: required names \"mood\""}},
		{"params omitted", []edit{{Y, "    params: {type: object, properties: {summary: {type: string}}, required: [summary]}\n", ""}},
			[]string{"contract.yaml:55: unknown-param: log_only names \"summary\""}},
		{"x-ref format", []edit{{Y, "x-ref: orders.id", "x-ref: orders"}},
			[]string{"contract.yaml:46: bad-x-ref: cancel_pending_order.order_id: x-ref must be table.column"}},
		{"x-ref false", []edit{{Y, "x-ref: orders.id", "x-ref: false"}}, nil},
		{"x-ref true", []edit{{Y, "x-ref: orders.id", "x-ref: true"}},
			[]string{"contract.yaml:46: bad-x-ref: cancel_pending_order.order_id: x-ref must be table.column"}},
		{"x-ref hash", []edit{{Y, "order_id: {type: string, x-ref: orders.id}", "order_id:\n          type: string\n          x-ref: #orders.id"}},
			[]string{"contract.yaml:48: unquoted-hash: cancel_pending_order.order_id: x-ref is null"}},
		{"x-ref table", []edit{{Y, "x-ref: orders.id", "x-ref: order.id"}},
			[]string{"contract.yaml:46: bad-x-ref: cancel_pending_order.order_id: x-ref order.id names table \"order\""}},
		{"requires itself", []edit{{Y, "      - [find_user_id_by_email]\n", "      - [find_user_id_by_email, cancel_pending_order]\n"}},
			[]string{"contract.yaml:49: bad-value: tool cancel_pending_order requires itself"}},
		{"requires empty list", []edit{{Y, "      - [find_user_id_by_email]\n", "      - []\n"}},
			[]string{"contract.yaml:49: bad-value: requires entry is an empty list"}},
		{"requires unknown field", []edit{{Y, "{tool: get_order_details, same: [order_id]}", "{tool: get_order_details, same: [order_id], within: 2}"}},
			[]string{"contract.yaml:50: unknown-field: requirement same has no field \"within\""}},
		{"caller key and from", []edit{{Y, "  key: user_id", "  key: id"}, {Y, "from: [find_user_id_by_email]", "from: [find_user]"}},
			[]string{"contract.yaml:10: unknown-caller-key: caller key \"id\" is not a column of users",
				"contract.yaml:11: unknown-caller-tool: caller from names \"find_user\""}},
		{"use case tools", []edit{{Y, "tools: [cancel_pending_order]", "tools: [cancel_order]"}},
			[]string{"contract.yaml:20: unknown-tool: use case cancel-order names tool \"cancel_order\""}},
		{"tool name", []edit{{Y, "- name: transfer_to_human_agents", "- name: transfer to human"}},
			[]string{"contract.yaml:52: bad-value: tool name \"transfer to human\""}},
		{"handler outside", []edit{{Y, "handler: handlers/transfer.star", "handler: ../transfer.star"}},
			[]string{"contract.yaml:55: bad-value: handler \"../transfer.star\" must be a relative path"}},
		{"handler elsewhere", []edit{{Y, "handler: handlers/transfer.star", "handler: tools/transfer.star"},
			{"tools/transfer.star", "", "def handle(args, db):\n    return 'ok'\n"}}, nil},
		{"handle arity", []edit{{"handlers/transfer.star", "def handle(args, db):", "def handle(args):"}},
			[]string{"handlers/transfer.star:1: handler-no-handle: handle must take (args, db)"}},
		{"handle with defaults", []edit{{"handlers/transfer.star", "def handle(args, db):", "def handle(args, db, extra = None):"}}, nil},
		{"bool field", []edit{{Y, "ends_conversation: true", "ends_conversation: yes please"}},
			[]string{"contract.yaml:57: bad-value: ends_conversation: expected true or false"}},
		{"lib syntax", []edit{{"lib/orders.star", "    return order\n", "    return order)\n"}},
			[]string{"lib/orders.star:4: lib-syntax: "}},
		{"load private and missing name", []edit{{"handlers/get_order_details.star", `load("lib/orders.star", "order_doc")`, `load("lib/orders.star", "order_doc", "_x", "nope")`}},
			[]string{`handlers/get_order_details.star:1: unknown-load: load("lib/orders.star", "_x"): names starting with _`,
				`handlers/get_order_details.star:1: unknown-load: load("lib/orders.star", "nope"): lib/orders.star defines no nope`}},
		{"load outside lib", []edit{{"handlers/get_order_details.star", `load("lib/orders.star", "order_doc")`, `load("handlers/transfer.star", "handle")`}},
			[]string{`handlers/get_order_details.star:1: unknown-load: load("handlers/transfer.star"): only lib/<name>.star`}},
		{"rule check", []edit{{Y, "    text: Before any change, restate it and get an explicit yes.\n", "    text: Before any change, restate it and get an explicit yes.\n    check: order_cancelled\n"}}, nil},
		{"rule check judged or unknown", []edit{{Y, "    text: Authenticate the user by email before any lookup or change.\n", "    text: Authenticate the user by email before any lookup or change.\n    check: nope\n"},
			{Y, "    text: Before any change, restate it and get an explicit yes.\n", "    text: Before any change, restate it and get an explicit yes.\n    check: polite_close\n"}},
			[]string{"contract.yaml:15: bad-rule-check: rule verify-identity: check \"nope\" is not a sub-goal",
				"contract.yaml:18: bad-rule-check: rule confirm-before-change: check \"polite_close\" is judged"}},
		{"subgoal literals", []edit{{"subgoals/order_cancelled.star", "judged = False\nparams = {\"order_id\": \"string\", \"reason\": \"string\"}",
			"judged = \"no\"\nparams = [\"order_id\"]"}, {"subgoals/polite_close.star", `what = "The agent closes the conversation politely"`, `what = describe()`}},
			[]string{"subgoals/order_cancelled.star:2: subgoal-syntax: judged must be True or False",
				"subgoals/order_cancelled.star:3: subgoal-bad-params: params must be a dict literal",
				"subgoals/polite_close.star:1: subgoal-syntax: what must be a non-empty string literal"}},
		{"judged subgoal tools", []edit{{"subgoals/polite_close.star", "judged = True", "judged = True\ntools = [\"cancel_pending_order\", \"nope\"]"}},
			[]string{`subgoals/polite_close.star:3: unknown-tool: sub-goal polite_close: tools names "nope"`}},
		{"subgoal tools shape and settled", []edit{{"subgoals/polite_close.star", "judged = True", "judged = True\ntools = \"cancel_pending_order\""},
			{"subgoals/order_cancelled.star", "judged = False", "judged = False\ntools = [\"cancel_pending_order\"]"}},
			[]string{"subgoals/order_cancelled.star:3: subgoal-syntax: tools is for a judged sub-goal",
				"subgoals/polite_close.star:3: subgoal-syntax: tools must be a list literal of tool names"}},
		{"subgoal no what", []edit{{"subgoals/polite_close.star", `what = "The agent closes the conversation politely"`, ""}},
			[]string{"subgoals/polite_close.star: missing-field: sub-goal polite_close has no what"}},
		{"subgoal check arity", []edit{{"subgoals/order_cancelled.star", "def check(world, calls, params):", "def check(world, params):"}},
			[]string{"subgoals/order_cancelled.star:5: subgoal-no-check: check must take (world, calls, params)"}},
		{"subgoal syntax", []edit{{"subgoals/polite_close.star", "judged = True", "judged = = True"}},
			[]string{"subgoals/polite_close.star:2: subgoal-syntax: "}},
		{"seed null and shapes", []edit{{"world/seed/orders.jsonl", "", "{\"id\": \"#W1\", \"user_id\": \"ava_k_1\", \"status\": null, \"total\": 1}\n[1, 2]\n{\"id\": \"#W2\", \"user_id\": \"ava_k_1\", \"total\": 1} {}\n"}},
			[]string{"world/seed/orders.jsonl:1: seed-not-null: column orders.status is NOT NULL but the row gives null",
				"world/seed/orders.jsonl:2: seed-bad-json: a row must be a JSON object",
				"world/seed/orders.jsonl:3: seed-bad-json: more than one JSON value"}},
		{"seed file name", []edit{{"world/seed/users.json", "", "{}\n"}},
			[]string{"world/seed/users.json: seed-unknown-table: seed files are named <table>.jsonl"}},
		{"no schema", []edit{{"world/schema.sql", "", ""}},
			// Without a schema, nothing is checked against tables: one problem, not dozens.
			[]string{"world/schema.sql: missing-file: world/schema.sql is missing"}},
		{"unknown contract field deep", []edit{{Y, "        rows: [{status: cancelled}]\n", "        rows: [{status: cancelled}]\n        ordered: true\n"}},
			[]string{"contract.yaml:70: unknown-field: expectation has no field \"ordered\""}},
		{"personas", []edit{{Y, "  styles: [Formal and polite]", "  styles: Formal and polite\n  moods: [calm]"}},
			[]string{"contract.yaml:78: bad-value: styles: expected a list", "contract.yaml:79: unknown-field: personas has no field \"moods\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := loadEdited(t, tc.edits...)
			ok := len(ps) == len(tc.want)
			for i := 0; ok && i < len(ps); i++ {
				ok = strings.HasPrefix(ps[i].String(), tc.want[i])
			}
			if !ok {
				t.Errorf("got:\n  %s\nwant:\n  %s", strings.ReplaceAll(ps.Error(), "\n", "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}
