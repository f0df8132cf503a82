package prove

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

func TestCodeLike(t *testing.T) {
	s := "Call about order #W1042 (tracking 1Z999AA10123456784) for $300.50, 100% refund, in 2023, 1,250.00 total, " +
		"at 10:30 or 7pm, the 21st, 5-7 days, a 30-day window, 1500 points, item 6086499569, mail ava@shop.test, " +
		"policy NW-2025-004512, claim CLM/26/00107."
	got := strings.Join(codeLike(s), " ")
	want := "#W1042 1Z999AA10123456784 6086499569 ava@shop.test NW-2025-004512 CLM/26/00107"
	if got != want {
		t.Errorf("codeLike:\n got %s\nwant %s", got, want)
	}
}

// prover is a Prover over a seed alone: what the static and grounding
// functions read.
func prover(seed ...string) *Prover {
	p := &Prover{c: &contract.Contract{WorldSHA256: strings.Join(seed, "|"), SHA256: "c"}, seed: map[string]bool{}}
	for _, s := range seed {
		p.seed[s] = true
	}
	return p
}

func TestPlaceholdersTheWorldHolds(t *testing.T) {
	sc := &scenario.Scenario{Instruction: "Her email is rosa.quispe3@example.com; her phone (503) 555-0142."}
	// A world whose own addresses are at example.com and whose phones are
	// 555-01xx numbers: those are its conventions, not invented data.
	p := prover("rosa.quispe3@example.com", "(503) 555-0142")
	known := p.knownTokens(sc)
	for _, re := range placeholders {
		for _, m := range re.FindAllStringIndex(sc.Instruction, -1) {
			if !worldHolds(sc.Instruction, m, known) {
				t.Errorf("%q is the world's, not a placeholder", sc.Instruction[m[0]:m[1]])
			}
		}
	}
	// A world without them: the same words are invented.
	q := prover("ava@shop.test")
	known, conv := q.knownTokens(sc), q.seedConventions()
	invented := 0
	for i, re := range placeholders {
		for _, m := range re.FindAllStringIndex(sc.Instruction, -1) {
			if !conv[i] && !worldHolds(sc.Instruction, m, known) {
				invented++
			}
		}
	}
	if invented != 2 {
		t.Errorf("%d placeholders found in a world that holds none of them, want 2", invented)
	}
	// Setup rows are the world's too.
	sc.Setup = []scenario.Statement{{SQL: "INSERT INTO p (email) VALUES ($1)", Args: []any{"rosa.quispe3@example.com"}}}
	known = q.knownTokens(sc)
	if m := placeholders[5].FindStringIndex(sc.Instruction); !worldHolds(sc.Instruction, m, known) {
		t.Error("a value of the scenario's setup counts as the world's")
	}
}

func result(v any) world.CallResult {
	b, _ := json.Marshal(v)
	return world.CallResult{OK: true, Result: b}
}

func TestGroundingComputedAndMisremembered(t *testing.T) {
	p := prover("#W1042")
	results := []world.CallResult{
		result(map[string]any{"user_id": "u1"}),
		result(map[string]any{"order_id": "#W1042", "payments": []any{map[string]any{"amount": 20.5}, map[string]any{"amount": 37}}, "total": 80}),
	}
	sc := &scenario.Scenario{
		Instruction: "They think their order is #W1024.",
		Computed: []scenario.Computed{
			{Value: "$57.50", Op: "sum", Of: []string{"$2.payments.*.amount"}},
			{Value: "22.5", Op: "difference", Of: []string{"$2.total", "$2.payments.*.amount"}},
			{Value: "2", Op: "count", Of: []string{"$2.payments.*.amount"}},
		},
		Misremembered: []scenario.Misremembered{{Said: "#W1024", Actual: "#W1042"}},
	}
	if rs := p.grounding(sc, results); len(rs) > 0 {
		t.Fatalf("refused: %v", rs)
	}
	// A wrong sum, an unknown op, a reference to nothing, and a fact the
	// caller gets wrong whose truth is not the world's are each refused.
	sc.Computed = []scenario.Computed{
		{Value: "60", Op: "sum", Of: []string{"$2.payments.*.amount"}},
		{Value: "1", Op: "median", Of: []string{"1"}},
		{Value: "1", Op: "sum", Of: []string{"$3.total"}},
	}
	sc.Misremembered = []scenario.Misremembered{{Said: "#W1024", Actual: "#W9999"}}
	rs := p.grounding(sc, results)
	var msgs []string
	for _, r := range rs {
		msgs = append(msgs, string(r.Code)+": "+r.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"the sum of [$2.payments.*.amount] is 57.5", `op "median"`, `"$3.total" names no step`, `the world does not hold "#W9999"`} {
		if !strings.Contains(all, want) {
			t.Errorf("refusals lack %q:\n%s", want, all)
		}
	}
	// Without the declaration, a misremembered code is ungrounded.
	sc.Computed, sc.Misremembered = nil, nil
	if rs := p.grounding(sc, results); len(rs) != 1 || rs[0].Code != "ungrounded" || !strings.Contains(rs[0].Message, "#W1024") {
		t.Errorf("an undeclared wrong code: %v", rs)
	}
}

// A word of the contract's own names (an argument address_line1, a column
// card_last4) is vocabulary, not a code handed to the caller; a code-shaped
// word that is no name and that nothing holds still is.
func TestGroundingContractNamesAreVocabulary(t *testing.T) {
	p := prover("C100")
	p.c.SHA256 = "names-test"
	p.c.Tools = []contract.Tool{{Name: "pay", Params: map[string]any{"type": "object", "properties": map[string]any{
		"address_line1": map[string]any{"type": "string"}, "card_last4": map[string]any{"type": "string"}}}}}
	p.c.Tables = []contract.Table{{Name: "parcels", Columns: []contract.Column{{Name: "delivery_line2"}}}}
	sc := &scenario.Scenario{Instruction: `They want: address line1 "12 High Street", card last4 "4821", delivery line2 "Flat 3", voucher "VX4821".`}
	if rs := p.grounding(sc, nil); len(rs) != 1 || !strings.Contains(rs[0].Message, `"VX4821"`) {
		t.Errorf("grounding = %v, want only the voucher \"VX4821\" ungrounded", rs)
	}
}

func TestCodeNext(t *testing.T) {
	postcode := map[string]any{"pattern": "^[A-Za-z]{1,2}[0-9][A-Za-z0-9]? ?[0-9][A-Za-z]{2}$"}
	for _, c := range []struct {
		in     string
		schema map[string]any
		want   string
	}{
		{"TH", nil, "TI"},
		{"12B", nil, "12C"},
		{"NR28 5FQ", postcode, "NR28 5FR"},
		{"07996 016155", nil, "07996 016156"},
		{"555-0199", nil, "555-0190"},
		{"198 Albert Street", nil, ""}, // words a right agent may write otherwise
		{"Milton Keynes", nil, ""},
		{"AB12 9ZZ", postcode, "AB12 9ZA"},
		{"NR28 5FQ", map[string]any{"pattern": "^[A-Z]{2}[0-9]{2} [0-9][A-Q]{2}$"}, ""}, // the pattern refuses the other
	} {
		if got := codeNext(c.in, c.schema); got != c.want {
			t.Errorf("codeNext(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestGroundingAQuantityAsked: a refusal's caller asks for more than the
// world gives (16000 points, twice the balance), which the tempting act
// sends as a number: a quantity the caller names is theirs to ask for, not
// a code the world must hold. A code the tempting act sends as text still
// must be held, as must a number it never sends.
func TestGroundingAQuantityAsked(t *testing.T) {
	p := prover("AC-1")
	sc := &scenario.Scenario{
		Instruction: `They want to redeem points "16000" on stay HX000123.`,
		Tempting:    []scenario.Call{{Tool: "redeem_points", Args: map[string]any{"account_id": "AC-1", "confirmation": "HX000123", "points": float64(16000)}}},
	}
	rs := p.grounding(sc, nil)
	if len(rs) != 1 || !strings.Contains(rs[0].Message, "HX000123") {
		t.Errorf("refusals %v; want only the code HX000123 ungrounded", rs)
	}
	sc.Tempting[0].Args["points"] = float64(15000)
	if rs := p.grounding(sc, nil); len(rs) != 2 {
		t.Errorf("a number the tempting act does not send: refusals %v, want 16000 and HX000123 ungrounded", rs)
	}
}

// TestGroundingADeclinedValueStated: a refusal's caller states a value for
// an argument marked `x-ref: false` (a bank account number with a
// pattern), which the tempting act sends: the author's word that it names
// no record, so it is the caller's to state, not a code the world must
// hold. The same text sent for an argument with no such mark still must be
// held.
func TestGroundingADeclinedValueStated(t *testing.T) {
	p := prover("AC-7")
	p.c.Tools = []contract.Tool{{Name: "set_up_debit", Params: map[string]any{"type": "object", "properties": map[string]any{
		"account_no":          map[string]any{"type": "string"},
		"bank_account_number": map[string]any{"type": "string", "pattern": "^[0-9]{8}$", "x-ref": false},
		"sort_code":           map[string]any{"type": "string", "pattern": "^[0-9]{6}$"},
	}}}}
	sc := &scenario.Scenario{
		Instruction: `They want to pay by direct debit from bank account "47036925", sort code "112233".`,
		Tempting: []scenario.Call{{Tool: "set_up_debit", Args: map[string]any{"account_no": "AC-7",
			"bank_account_number": "47036925", "sort_code": "112233"}}},
	}
	rs := p.grounding(sc, nil)
	if len(rs) != 1 || !strings.Contains(rs[0].Message, "112233") {
		t.Errorf("refusals %v; want only the sort code, whose argument has no x-ref: false, ungrounded", rs)
	}
}
