package contract

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestToolHelpers(t *testing.T) {
	c, ps, err := Load("testdata/good")
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	cancel := c.Tool("cancel_pending_order")
	// YAML order is reason, order_id: not sorted, not map order.
	if got := cancel.ParamNames(); !reflect.DeepEqual(got, []string{"reason", "order_id"}) {
		t.Errorf("ParamNames %v", got)
	}
	if got := cancel.Required(); !reflect.DeepEqual(got, []string{"order_id", "reason"}) {
		t.Errorf("Required %v", got)
	}
	if got := cancel.Enum("reason"); !reflect.DeepEqual(got, []any{"no longer needed", "ordered by mistake"}) {
		t.Errorf("Enum %v", got)
	}
	if cancel.Enum("order_id") != nil || cancel.Enum("nope") != nil {
		t.Error("Enum of a param without enum")
	}
	tr := c.Tool("transfer_to_human_agents")
	if !tr.LogOnlyParam("summary") || cancel.LogOnlyParam("reason") {
		t.Error("LogOnlyParam")
	}
	// A tool built in code has no declared order: sorted names.
	built := Tool{Params: map[string]any{"properties": map[string]any{"b": map[string]any{}, "a": map[string]any{}}}}
	if got := built.ParamNames(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("built ParamNames %v", got)
	}
}

func TestRefOf(t *testing.T) {
	param := func(schema map[string]any) map[string]any { return schema }
	c := &Contract{
		Tables: []Table{
			{Name: "users", PrimaryKey: []string{"user_id"}, Columns: []Column{{Name: "user_id"}, {Name: "email"}}},
			{Name: "orders", PrimaryKey: []string{"id"}, Columns: []Column{{Name: "id"}, {Name: "user_id", References: "users.user_id"}}},
			{Name: "categories", PrimaryKey: []string{"id"}, Columns: []Column{{Name: "id"}}},
			{Name: "accounts", PrimaryKey: []string{"id"}, Columns: []Column{{Name: "id"}}},
			{Name: "tickets", PrimaryKey: []string{"id"}, Columns: []Column{{Name: "id"}, {Name: "owner_ref", References: "accounts.id"}}},
			{Name: "members", PrimaryKey: []string{"id"}, Columns: []Column{{Name: "id"}, {Name: "member_number"}}},
			{Name: "logins", PrimaryKey: []string{"email"}, Columns: []Column{{Name: "email"}}},
			{Name: "promos", PrimaryKey: []string{"code"}, Columns: []Column{{Name: "code"}}},
			{Name: "promo", PrimaryKey: []string{"promo"}, Columns: []Column{{Name: "promo"}}},
		},
		Tools: []Tool{{Name: "t", Params: map[string]any{"type": "object", "properties": map[string]any{
			"order_id":      param(map[string]any{"type": "string"}),
			"user_id":       param(map[string]any{"type": "string"}),
			"category_id":   param(map[string]any{"type": "integer"}),
			"owner_ref":     param(map[string]any{"type": "integer"}),
			"member_number": param(map[string]any{"type": "string"}),
			"email":         param(map[string]any{"type": "string"}),
			"target":        param(map[string]any{"type": "string", "x-ref": "users.email"}),
			"id":            param(map[string]any{"type": "string"}),
			"code":          param(map[string]any{"type": "string"}),
			"promo":         param(map[string]any{"type": "string"}),
			"free_user_id":  param(map[string]any{"type": "string", "x-ref": false}),
			"order_ids":     param(map[string]any{"type": "array", "items": map[string]any{"type": "string"}}),
			"userId":        param(map[string]any{"type": "string"}),
			"memberNumber":  param(map[string]any{"type": "string"}),
			"targets":       param(map[string]any{"type": "array", "items": map[string]any{"type": "string", "x-ref": "users.email"}}),
		}}}},
	}
	for _, tc := range []struct {
		param, table, column string
		ok                   bool
	}{
		{"target", "users", "email", true},        // x-ref wins
		{"user_id", "users", "user_id", true},     // a primary key of that name
		{"order_id", "orders", "id", true},        // <noun>_id -> <nouns>.id
		{"category_id", "categories", "id", true}, // y -> ies
		{"owner_ref", "accounts", "id", true},     // a foreign-key column of that name
		{"member_number", "", "", false},          // free text, though a column has that name
		{"email", "", "", false},                  // free text
		{"id", "", "", false},                     // too vague to name a table
		{"nope", "", "", false},                   // not a parameter
		{"order_ids", "orders", "id", true},       // an array names records of its items
		{"targets", "users", "email", true},       // the items' x-ref
		{"userId", "users", "user_id", true},      // camelCase read as snake_case
		{"memberNumber", "", "", false},           // still free text
	} {
		table, column, ok := c.RefOf("t", tc.param)
		if table != tc.table || column != tc.column || ok != tc.ok {
			t.Errorf("RefOf(%s) = %s, %s, %v; want %s, %s, %v", tc.param, table, column, ok, tc.table, tc.column, tc.ok)
		}
	}
	if _, _, ok := c.RefOf("no-such-tool", "order_id"); ok {
		t.Error("RefOf of an unknown tool")
	}
}

func TestProblems(t *testing.T) {
	ps := Problems{
		{File: "world/schema.sql", Line: 3, Code: "schema-sql", Message: "x"},
		{File: "contract.yaml", Line: 10, Code: "unknown-field", Message: "b"},
		{File: "contract.yaml", Line: 2, Code: "bad-value", Message: "a"},
		{File: "contract.yaml", Code: "no-tools", Message: "none"},
	}
	ps.Sort()
	want := "contract.yaml: no-tools: none\ncontract.yaml:2: bad-value: a\ncontract.yaml:10: unknown-field: b\nworld/schema.sql:3: schema-sql: x"
	if ps.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", ps.Error(), want)
	}
	if !ps.Has("bad-value") || ps.Has("nope") {
		t.Error("Has")
	}
	var none Problems
	if none.Err() != nil || ps.Err() == nil {
		t.Error("Err")
	}
}

// TestCodesComplete: every Code constant is listed in Codes (which the docs
// test and the fuzz target rely on), and Codes holds nothing else.
func TestCodesComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "problem.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					consts[s] = true
				}
			}
		}
	}
	listed := map[string]bool{}
	for _, c := range Codes {
		if listed[c] {
			t.Errorf("%s listed twice", c)
		}
		listed[c] = true
		if !consts[c] {
			t.Errorf("%s in Codes but not a constant", c)
		}
	}
	for c := range consts {
		if !listed[c] {
			t.Errorf("constant %s missing from Codes", c)
		}
	}
}

// TestOutboundUseCase: an outbound use case keeps what it names, the others
// take the contract's default direction, and its purpose leads to the callee.
func TestOutboundUseCase(t *testing.T) {
	c, ps := loadEdited(t, edit{Y, OB, OB + "    direction: outbound\n    purpose: payments\n    missed_call: transfer_to_human_agents\n    call_later: get_order_details\n"})
	if ps != nil {
		t.Fatal(ps)
	}
	u := c.UseCase("cancel-order")
	if !u.Outbound() || u.Purpose != "payments" || u.MissedCall != "transfer_to_human_agents" || u.CallLater != "get_order_details" {
		t.Errorf("cancel-order: %+v", u)
	}
	if o := c.UseCase("order-status"); o.Direction != Inbound || o.Outbound() {
		t.Errorf("order-status takes the contract's default, inbound: %+v", o)
	}
	want := []Hop{{"payments", "order_id", "orders", "id"}, {"orders", "user_id", "users", "user_id"}}
	if got := c.CalleePath("payments"); !reflect.DeepEqual(got, want) {
		t.Errorf("CalleePath(payments) = %+v, want %+v", got, want)
	}
	if got := c.CalleePath("users"); got == nil || len(got) != 0 {
		t.Errorf("CalleePath(users) = %#v, want an empty path", got)
	}
	if got := c.CalleePath("nope"); got != nil {
		t.Errorf("CalleePath(nope) = %+v", got)
	}
	// An outbound-only contract: use cases default to outbound.
	c, _ = loadEdited(t, edit{Y, "direction: [inbound, outbound]", "direction: outbound"})
	if !c.UseCase("order-status").Outbound() {
		t.Error("order-status of an outbound-only contract is not outbound")
	}
}

// TestHandOffTextIsLogOnly: free text of a hand-off (a tool that ends the
// conversation and requires nothing) is the agent's account of the call,
// log_only or not; its choices and records are not, nor is the free text
// of a tool that ends the call after an identification it requires.
func TestHandOffTextIsLogOnly(t *testing.T) {
	for _, tc := range []struct {
		contract, tool, param string
		want                  bool
	}{
		{"utility-line", "transfer_to_agent", "summary", true},
		{"utility-line", "transfer_to_agent", "department", false},
		{"utility-line", "transfer_to_agent", "account_number", false},
		{"pharmacy-line", "transfer_to_pharmacist", "summary", true},
		{"pharmacy-line", "report_adverse_reaction", "symptoms", false},
		{"utility-line", "report_outage", "details", false},
	} {
		c, err := LoadValid("../../testdata/contracts/" + tc.contract)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Tool(tc.tool).LogOnlyParam(tc.param); got != tc.want {
			t.Errorf("%s: %s.%s log-only %v, want %v", tc.contract, tc.tool, tc.param, got, tc.want)
		}
	}
}

// TestNameWords: an identifier's words as a person says them, whatever
// its case, and the snake_case RefOf reads a camelCase argument in.
func TestNameWords(t *testing.T) {
	for in, want := range map[string]string{
		"dateOfBirth": "date of birth", "date_of_birth": "date of birth", "DateOfBirth": "date of birth",
		"chargeId": "charge id", "URLPath": "url path",
	} {
		if got := strings.Join(NameWords(in), " "); got != want {
			t.Errorf("NameWords(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"chargeId": "charge_id", "charge_id": "charge_id", "postcodeOutward": "postcode_outward"} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}
