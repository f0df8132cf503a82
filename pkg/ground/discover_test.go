package ground

import (
	"context"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

func TestWordsAndLikeness(t *testing.T) {
	for in, want := range map[string]string{
		"patientRef": "patient ref", "patient_ref": "patient ref", "PatientRefs": "patient ref",
		"dateOfBirth": "date of birth", "cardLast4": "card last4", "HTTPStatus": "http status",
	} {
		if got := strings.Join(words(in), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		param, table, col string
		more, less        string // table.column the first must beat
	}{
		{"date_of_birth", "patients", "dob", "", ""},
		{"guardian_dob", "guardians", "date_of_birth", "patients", "dob"},
		{"patient_ref", "patients", "patient_id", "patients", "first_name"},
		{"postcode", "customers", "postal_code", "customers", "town"},
		{"phone_number", "patients", "phone", "patients", "email"},
		{"dateOfBirth", "customers", "birth_date", "customers", "email"},
	} {
		got := likeness(tc.param, tc.table, tc.col)
		if got < 0.6 {
			t.Errorf("likeness(%s, %s.%s) = %.2f, want a strong match", tc.param, tc.table, tc.col, got)
		}
		if tc.more != "" {
			if other := likeness(tc.param, tc.more, tc.less); other >= got {
				t.Errorf("likeness(%s): %s.%s (%.2f) should beat %s.%s (%.2f)", tc.param, tc.table, tc.col, got, tc.more, tc.less, other)
			}
		}
	}
}

func TestFromPattern(t *testing.T) {
	for _, p := range []string{`^[0-9]{4}$`, `^PAT-[0-9]{5}$`, `^[A-Za-z]{2}[0-9]{8}$`, `^\d+$`, `^(sms|email)$`} {
		a, b := fromPattern(p, 0), fromPattern(p, 1)
		if a == "" || !regexpMatch(p, a) || !regexpMatch(p, b) {
			t.Errorf("fromPattern(%s) = %q, %q", p, a, b)
		}
	}
	if a, b := fromPattern(`^[0-9]{4}$`, 0), fromPattern(`^[0-9]{4}$`, 1); a == b {
		t.Errorf("two ordinals gave one value %q", a)
	}
}

func TestSampleCoversEveryLevel(t *testing.T) {
	c := retail(t)
	g := New(c)
	statuses := map[string]bool{}
	for _, r := range g.Sample("orders", 12) {
		statuses[Text(r["status"])] = true
	}
	for _, s := range []string{"pending", "processed", "delivered", "cancelled"} {
		if !statuses[s] {
			t.Errorf("a sample of 12 orders has no %s order: %v", s, statuses)
		}
	}
}

// fakeWorld answers the guardian-line tools in Go, over the seed, as its
// handlers do: each reads its arguments in order and refuses at the first
// that does not fit, so Read says what was checked.
type fakeWorld struct {
	g     *Graph
	calls int
}

func (f *fakeWorld) Rehearse(_ context.Context, setup []scenario.Statement, calls []scenario.Call) ([]Answer, error) {
	var out []Answer
	for _, c := range calls {
		f.calls++
		out = append(out, f.call(c))
	}
	return out, nil
}

func (f *fakeWorld) call(c scenario.Call) Answer {
	var read []string
	arg := func(name string) string { read = append(read, name); return Text(c.Args[name]) }
	no := func() Answer { return Answer{Refused: true, Error: "Error: no", Read: read} }
	ok := func() Answer { return Answer{OK: true, Result: []byte(`{}`), Read: read} }
	g := f.g
	switch c.Tool {
	case "verify_by_name":
		first, last, dob := arg("first_name"), arg("last_name"), arg("date_of_birth")
		for _, p := range g.Rows("patients") {
			if strings.EqualFold(Text(p["first_name"]), first) && strings.EqualFold(Text(p["last_name"]), last) && Text(p["dob"]) == dob {
				return ok()
			}
		}
		return no()
	case "verify_guardian":
		pid, first, last, dob := arg("patient_ref"), arg("guardian_first_name"), arg("guardian_last_name"), arg("guardian_dob")
		for _, pg := range g.Where("patient_guardians", "patient_id", pid) {
			gd := g.Find("guardians", "guardian_id", pg["guardian_id"])
			if Text(gd["first_name"]) == first && Text(gd["last_name"]) == last && Text(gd["date_of_birth"]) == dob {
				if pg["can_consent"] == true {
					return ok()
				}
				return no()
			}
		}
		return no()
	case "book_for_child":
		p := g.Find("patients", "patient_id", arg("patient_ref"))
		if p == nil || p["is_minor"] != true {
			return no()
		}
		consent := false
		for _, pg := range g.Where("patient_guardians", "patient_id", p["patient_id"]) {
			consent = consent || Text(pg["guardian_id"]) == arg("guardian_ref") && pg["can_consent"] == true
		}
		if !consent {
			return no()
		}
		s := g.Find("slots", "slot_id", arg("slot_ref"))
		if s == nil || s["status"] != "open" {
			return no()
		}
		return ok()
	case "add_card":
		arg("patient_ref")
		payer, member := arg("payer"), arg("member_number")
		if !regexpMatch(`^[A-Z]{2}[0-9]{6}$`, member) {
			return Answer{Refused: true, Invalid: true, Error: "Error: invalid arguments"}
		}
		for _, cd := range g.Rows("cards") {
			if Text(cd["payer"]) == payer && Text(cd["member_number"]) == member {
				return no()
			}
		}
		return ok()
	}
	return Answer{Refused: true, Error: "Error: not in this fake"}
}

// TestDiscoverGroundsByBehaviour: arguments named unlike their columns are
// grounded by what the handlers accept, not by their names alone.
func TestDiscoverGroundsByBehaviour(t *testing.T) {
	c := guardianLine(t)
	g := New(c)
	fw := &fakeWorld{g: g}
	gr, err := g.Discover(context.Background(), fw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"verify_by_name.date_of_birth":        "patients.dob",
		"verify_guardian.patient_ref":         "patients.patient_id",
		"verify_guardian.guardian_dob":        "guardians.date_of_birth",
		"verify_guardian.guardian_first_name": "guardians.first_name",
		"book_for_child.guardian_ref":         "guardians.guardian_id",
		"book_for_child.slot_ref":             "slots.slot_id",
		"add_card.member_number":              "cards.member_number",
	}
	for k, ref := range want {
		tool, param, _ := strings.Cut(k, ".")
		b, ok := gr.Bindings.Of(tool, param)
		if !ok || b.Ref() != ref || !b.Confirmed {
			t.Errorf("%s bound %+v, want %s confirmed", k, b, ref)
		}
	}
	// A member number to add is a new value: the seed's are refused.
	if b, _ := gr.Bindings.Of("add_card", "member_number"); b.How != Fresh {
		t.Errorf("add_card.member_number found %s, want fresh", b.How)
	}
	for _, tool := range []string{"verify_by_name", "verify_guardian", "book_for_child", "add_card"} {
		if why, ok := gr.Unanswered[tool]; ok {
			t.Errorf("%s never answered ok: %s", tool, why)
		}
	}
	if fw.calls > 1000 {
		t.Errorf("%d rehearsals: the search should stay small", fw.calls)
	}
}

// TestCaseAboutASharedRecord: a case about a record no caller owns (a slot)
// mints no copy of it, only a caller.
func TestCaseAboutASharedRecord(t *testing.T) {
	c := guardianLine(t)
	g := New(c)
	slot := g.Rows("slots")[0]
	if !g.Shared("slots", slot) {
		t.Fatal("a slot belongs to nobody")
	}
	s, b, err := g.Case("slots", slot, g.Rows("patients")[0], Person{First: "Ana", Last: "Ortiz", Number: 7001, Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Minted["slots"]) != 0 || Text(s.Target["slot_id"]) != Text(slot["slot_id"]) {
		t.Errorf("the slot was minted: %v", s.Minted["slots"])
	}
	if b.Caller == nil || b.Caller["first_name"] != "Ana" || len(s.Minted["patients"]) != 1 {
		t.Errorf("the caller is not a minted copy: %v", b.Caller)
	}
}

// TestDiscoverTakesTheLastDigits: an argument whose pattern no value of a
// column fits whole, but whose last characters do (the last four digits of
// the phone on file), is grounded in that column, filled with the ending,
// and names no record by itself.
func TestDiscoverTakesTheLastDigits(t *testing.T) {
	c := guardianLine(t)
	c.Tools = append(c.Tools, contract.Tool{
		Name: "confirm_phone_digits",
		Params: map[string]any{"type": "object", "required": []any{"last_name", "phone_last4"}, "properties": map[string]any{
			"last_name":   map[string]any{"type": "string"},
			"phone_last4": map[string]any{"type": "string", "pattern": "^[0-9]{4}$"},
		}},
		ParamOrder: []string{"last_name", "phone_last4"},
	})
	g := New(c)
	fw := &lastDigitsWorld{g: g}
	gr, err := g.Discover(context.Background(), fw)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := gr.Bindings.Of("confirm_phone_digits", "phone_last4")
	if b.Ref() != "patients.phone" || !b.Confirmed {
		t.Fatalf("phone_last4 bound %+v, want patients.phone confirmed", b)
	}
	tool := c.Tool("confirm_phone_digits")
	cases := g.Cases(tool, gr.Bindings, 3)
	if len(cases) == 0 {
		t.Fatal("no case for confirm_phone_digits")
	}
	for _, cs := range cases {
		args, ok := g.Fill(tool, cs, gr.Bindings)
		if v := Text(args["phone_last4"]); !ok || !regexpMatch(`^[0-9]{4}$`, v) || fw.call(scenario.Call{Tool: tool.Name, Args: args}).OK != true {
			t.Errorf("a case fills %v (ok %v), want the last four digits of its patient's phone", args, ok)
		}
	}
	if _, _, named := g.RecordParam(gr.Bindings, tool, "phone_last4"); named {
		t.Error("the last four digits of a phone are taken to name a record")
	}
	if v := coerce("(555) 555-0147", "string", paramSchema(tool, "phone_last4")); v != "0147" {
		t.Errorf("the phone (555) 555-0147 is given as %v, want 0147", v)
	}
	if v := coerce("0147", "string", paramSchema(tool, "phone_last4")); v != "0147" {
		t.Errorf("a value that fits whole is given as %v", v)
	}
}

// lastDigitsWorld answers confirm_phone_digits as a desk that asks for a last
// name and the phone's last four digits does; every other tool is refused.
type lastDigitsWorld struct{ g *Graph }

func (f *lastDigitsWorld) Rehearse(_ context.Context, _ []scenario.Statement, calls []scenario.Call) ([]Answer, error) {
	var out []Answer
	for _, c := range calls {
		out = append(out, f.call(c))
	}
	return out, nil
}

func (f *lastDigitsWorld) call(c scenario.Call) Answer {
	read := []string{"last_name", "phone_last4"}
	if c.Tool != "confirm_phone_digits" {
		return Answer{Refused: true, Error: "Error: no", Read: []string{"patient_ref"}}
	}
	last, digits := Text(c.Args["last_name"]), Text(c.Args["phone_last4"])
	if !regexpMatch(`^[0-9]{4}$`, digits) {
		return Answer{Refused: true, Invalid: true, Error: "Error: invalid arguments"}
	}
	for _, p := range f.g.Rows("patients") {
		if strings.EqualFold(Text(p["last_name"]), last) && strings.HasSuffix(Text(p["phone"]), digits) {
			return Answer{OK: true, Result: []byte(`{}`), Read: read}
		}
	}
	return Answer{Refused: true, Error: "Error: no patient matches", Read: read}
}
