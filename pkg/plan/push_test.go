package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/contractgen"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestPlanPushesNumbersPastTheirBounds: every limit branch of the acts'
// handlers is dealt a refusal level, those no seed row's state nor choice
// reaches (a record with no room for another line) by a number pushed past
// its bound in the cases' setup. The generated contract of seed 1 holds
// three limit branches in its acts' handlers: two credit caps a choice
// reaches, one count only a push reaches.
func TestPlanPushesNumbersPastTheirBounds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	truth, err := contractgen.Generate(1, contractgen.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c, e := openContract(t, dir)
	p, err := Derive(ctx, c, probe.Rehearser(e.World), Options{Rules: e.Prover})
	if err != nil {
		t.Fatal(err)
	}
	dealt, pushed := map[string]bool{}, 0
	for _, b := range p.Buckets {
		dealt[b.Spec.Refusal] = true
		if b.Spec.Refusal != "" && len(b.Spec.Prior) > 0 && b.Overlay == "none" {
			pushed++
		}
	}
	acting := map[string]bool{}
	for _, u := range truth.UseCases {
		acting[u.Act] = true
	}
	limits := 0
	for _, tl := range truth.Tools {
		if !acting[tl.Name] {
			continue
		}
		for _, br := range tl.Branches {
			if br.Reason != "limit" {
				continue
			}
			limits++
			if !dealt[br.At] {
				t.Errorf("%s's limit branch %s: no level is dealt for it", tl.Name, br.At)
			}
		}
	}
	if limits < 2 {
		t.Fatalf("seed 1 has %d limit branches in its acts' handlers; the test needs a contract with more", limits)
	}
	if pushed == 0 {
		t.Error("no refusal level carries a push in its cases' setup")
	}
}

// TestPushedValueKeepsToChecks: a push goes far past what a column holds
// but never past what its CHECKs allow, so the setup runs; and a number set
// to its least is set to what a CHECK states.
func TestPushedValueKeepsToChecks(t *testing.T) {
	tb := &contract.Table{Name: "lines", Checks: []contract.Check{
		{Column: "line_no", Op: "between", Values: []string{"1", "99"}},
		{Column: "cap", Op: ">", Values: []string{"0"}},
		{Column: "due", Op: ">=", Values: []string{"0"}},
		{Column: "seats", Op: "<=", Values: []string{"9"}},
	}}
	for _, tc := range []struct {
		col   string
		raise bool
		want  string
	}{
		{"line_no", true, "99"},
		{"line_no", false, "greatest(line_no / 100.0, 1)"},
		{"cap", true, "cap * 100 + 100"},
		{"cap", false, "0 + (cap - 0) / 100.0"},
		{"free", false, "free / 100.0"},
		{"due", false, "greatest(due / 100.0, 0)"},
		{"seats", true, "9"},
		{"seats", false, "seats / 100.0"},
	} {
		if got := pushedValue(tb, contract.Column{Name: tc.col, Type: "integer"}, tc.raise); got != tc.want {
			t.Errorf("%s raised %v: %q, want %q", tc.col, tc.raise, got, tc.want)
		}
	}
	// The least a CHECK allows, where one states it.
	for col, want := range map[string]string{"line_no": "1", "due": "0", "cap": "", "seats": "", "free": ""} {
		if got, ok := leastValue(tb, contract.Column{Name: col, Type: "integer"}); got != want || ok != (want != "") {
			t.Errorf("least %s: %q %v, want %q", col, got, ok, want)
		}
	}
}

// TestPlanLeavesTheLevelsBranchTheOnlyCause: in library-line every loan
// renewed twice is also long overdue, so a case of the renewals level would
// be refused even by a world without the renewals rule. The level's cases
// carry a setting (the loans' due dates moved later) under which the world
// still refuses at the renewals branch and, without it, renews.
func TestPlanLeavesTheLevelsBranchTheOnlyCause(t *testing.T) {
	ctx := context.Background()
	p, mutants := deriveTestdata(t, "library-line")
	const at = "handlers/extend_loan.star:13"
	without, err := mutants.Without(at)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, b := range p.Buckets {
		if b.Spec.Refusal != at {
			continue
		}
		for _, prior := range b.Spec.Prior {
			found = true
			if _, err := without.Rehearse(ctx, prior, nil); err != nil {
				t.Fatalf("the level's setting does not replay: %v", err)
			}
		}
	}
	if !found {
		t.Fatalf("no case of %s carries a setting: another branch refuses every one of them as well", at)
	}
}

// TestPlanAddsTheRowsARefusalCounts: a reservation is refused when the
// card already holds four active ones, which no seed card does, so only
// rows added to the case's card reach that branch. It is also refused when
// the card already holds one for the title; every seed row that does is
// also on the shelf at its pickup branch, which refuses it besides, so the
// level takes the cases a setting of the card's reservations gives
// instead. Either way the cases change the card's reservations and nothing
// else.
func TestPlanAddsTheRowsARefusalCounts(t *testing.T) {
	p, _ := deriveTestdata(t, "library-line")
	for at, want := range map[string]string{
		"handlers/reserve_title.star:14": "INSERT INTO reservations ", // four active reservations
		"handlers/reserve_title.star:17": " reservations ",            // the title already reserved on the card
	} {
		set := priors(p, at)
		for _, st := range set {
			if !strings.Contains(st.SQL, want) || strings.Contains(st.SQL, "WHERE") && !strings.Contains(st.SQL, "WHERE card_no = $1") {
				t.Errorf("a case of %s changes more than the card's reservations: %s", at, st.SQL)
			}
		}
		if len(set) == 0 {
			t.Errorf("no case of %s changes the card's reservations (%q)", at, want)
		}
	}
}

// TestPlanPointsTheNamedRecordAtAnotherReferenceRow: a booking is refused
// when the slot's provider has left the practice, a state of a providers
// row that no seed slot open for booking holds and that a setup may not set
// (providers are reference data, no case's to change). The level's cases
// point the slot they name at a provider who has left instead: the setup
// changes only the record the call names, and the case's own. Without its
// branch such a booking is still refused, for a provider who takes no new
// patients; so some case also makes that provider the patient's own, and
// the branch is the booking's sole cause.
func TestPlanPointsTheNamedRecordAtAnotherReferenceRow(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	p, _ := deriveTestdata(t, "clinic-voice")
	const at = "handlers/book_appointment.star:104" // "%s has left the practice"
	n, own := 0, 0
	for _, b := range p.Buckets {
		if b.Spec.Refusal != at {
			continue
		}
		for k, prior := range b.Spec.Prior {
			slotTo, patientTo := "", ""
			for _, st := range prior {
				n++
				switch {
				case strings.HasPrefix(st.SQL, "UPDATE appointment_slots SET provider_id = $2 "):
					slotTo = fmt.Sprint(st.Args[1])
				case strings.HasPrefix(st.SQL, "UPDATE patients SET primary_provider_id = $2 WHERE id = $1") && fmt.Sprint(st.Args[0]) == k:
					patientTo = fmt.Sprint(st.Args[1])
				case strings.HasPrefix(st.SQL, "UPDATE appointment_slots "):
				default:
					t.Errorf("case %s of %s sets a row that is neither the one the call names nor its own: %s %v", k, at, st.SQL, st.Args)
				}
			}
			if slotTo != "" && slotTo == patientTo {
				own++
			}
		}
	}
	if n == 0 {
		t.Fatalf("no level is dealt for %s with the named slot pointed at a provider who has left", at)
	}
	if own == 0 {
		t.Errorf("no case of %s has the provider who has left as the patient's own", at)
	}
}

// priors are the statements the cases of p's buckets refused at branch at
// carry in their setup.
func priors(p *Plan, at string) []scenario.Statement {
	var out []scenario.Statement
	for _, b := range p.Buckets {
		if b.Spec.Refusal != at {
			continue
		}
		for _, prior := range b.Spec.Prior {
			out = append(out, prior...)
		}
	}
	return out
}

// deriveTestdata plans testdata/contracts/NAME as validate does.
func deriveTestdata(t *testing.T, name string) (*Plan, *probe.MutantWorlds) {
	t.Helper()
	c, e := openContract(t, testdataDir(name))
	return deriveAsRun(t, c, e, 0)
}

// deriveAsRun plans c as validate and a run do, with the rules' checks and
// the world's mutants, through the plan cache make test names: a test that
// reads what an example's plan holds shares the derivation with every other
// test of the same contract. The tests of how Derive works derive afresh.
func deriveAsRun(t *testing.T, c *contract.Contract, e *engine.Engine, asked int) (*Plan, *probe.MutantWorlds) {
	t.Helper()
	mutants := probe.Mutants(e.World, c)
	p, err := Derive(context.Background(), c, probe.Rehearser(e.World), Options{Asked: asked, Rules: e.Prover, Mutants: mutants, Cache: EnvCache(os.Getenv)})
	if err != nil {
		t.Fatal(err)
	}
	return p, mutants
}

// openContract loads the contract in dir, which must have no problem, and
// opens its engine on the test database until the test ends.
func openContract(t *testing.T, dir string) (*contract.Contract, *engine.Engine) {
	t.Helper()
	c, probs, err := contract.Load(dir)
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	e, err := engine.Open(context.Background(), testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return c, e
}

// TestPlanReportsTheCrashesItMeets: library-line's over-payment branch
// formats the amount owed with "%.2f", which Starlark's % does not take, so
// the handler crashes where it means to refuse. The plan says where. The
// reservations it adds are numbered so that the key a handler numbers next
// still fits the key's CHECK: reserve_title never crashes on them.
func TestPlanReportsTheCrashesItMeets(t *testing.T) {
	p, _ := deriveTestdata(t, "library-line")
	found := false
	for _, cr := range p.Crashes {
		if cr.Tool == "reserve_title" {
			t.Errorf("reserve_title crashed on a case the plan made: %+v", cr)
		}
		if cr.Tool == "pay_charge" && strings.HasPrefix(cr.At, "handlers/pay_charge.star:11:") && strings.Contains(cr.Reason, "conversion") && cr.Calls > 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("the over-payment crash is not reported: %+v", p.Crashes)
	}
}

// TestUseCaseNamesAFurtherCheck: on clinic-voice, book_appointment requires
// only an identified patient, while the use case book-for-child ("a parent
// or guardian books ... a child's appointment") names verify_guardian, a
// check that reads a guardian's details and whose record the booking takes
// in its optional guardian_id. Its cases pass that check before the act, on
// patients a guardian is on file for; a booking of the patient's own does
// not. The slots those children's own visits reach are all past, so the
// use case's successes book one of the world's open slots (worldRecord).
// The use case's cancellation and reschedule, which take guardian_id as
// well, are planned behind the same check. A child who calls alone to
// cancel names no guardian, which the world
// refuses: a level of the cancellation leaves guardian_id out. The child's
// booking never does: verify_guardian answers with the id, which a right
// agent passes.
func TestUseCaseNamesAFurtherCheck(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	c := testContract(t, "clinic-voice")
	p, _ := deriveTestdata(t, "clinic-voice")
	guarded := map[string]bool{}
	for _, row := range c.Seed("guardians") {
		guarded[fmt.Sprint(row["patient_id"])] = true
	}
	n, succeed, alone := 0, 0, 0
	acts := map[string]bool{}
	for _, b := range p.Buckets {
		for k, ch := range b.Spec.Choices {
			if ch.Leave == "" {
				continue
			}
			if b.UseCase == "book-for-child" {
				t.Errorf("%s: template %s leaves %s out after the guardian's verification shows it", b.ID, k, ch.Leave)
			}
			if b.UseCase == "cancel-appointment" && ch.Leave == "guardian_id" && b.Spec.Refusal == "handlers/cancel_appointment.star:32" {
				alone++
			}
		}
		switch b.UseCase {
		case "book-for-child":
			n++
			acts[b.Spec.Tool] = true
			if b.Outcome == "succeed" {
				succeed++
			}
			if !slices.Contains(b.Spec.Gated, "verify_guardian") {
				t.Errorf("%s: chain %v without verify_guardian", b.ID, b.Spec.Gated)
			}
			for _, k := range b.Spec.Templates {
				if !guarded[k] {
					t.Errorf("%s: template %s has no guardian on file", b.ID, k)
				}
			}
		case "book-primary-or-dental":
			if slices.Contains(b.Spec.Gated, "verify_guardian") {
				t.Errorf("%s: a patient's own booking passes verify_guardian: %v", b.ID, b.Spec.Gated)
			}
		}
	}
	if n == 0 || succeed == 0 {
		t.Fatalf("book-for-child: %d buckets, %d of them successes", n, succeed)
	}
	// "books, moves or cancels": the check serves each act that takes a
	// guardian_id.
	for _, act := range []string{"book_appointment", "reschedule_appointment", "cancel_appointment"} {
		if !acts[act] {
			t.Errorf("book-for-child: no bucket acts by %s (acts: %v)", act, acts)
		}
	}
	if alone == 0 {
		t.Error("no cancellation leaves guardian_id out to be refused for a minor who calls alone")
	}
}

// TestBucketTemplatesAskAlike: library-line's fifth reservation is refused
// (four active already) on three cases that reserve a title of their own
// and one that succeeded only on a title of the world's. A bucket describes
// one kind of case, and its brief carries whose record it asks about once,
// so the level's buckets keep the three.
func TestBucketTemplatesAskAlike(t *testing.T) {
	p, _ := deriveTestdata(t, "library-line")
	for _, b := range p.Buckets {
		groups := map[Choice][]string{}
		for _, k := range b.Spec.Templates {
			ch := b.Spec.Choices[k]
			g := Choice{Outside: ch.Outside, Swap: ch.Swap, Leave: ch.Leave}
			groups[g] = append(groups[g], k)
		}
		if len(groups) > 1 {
			t.Errorf("bucket %s (%s %s, %s) mixes templates that ask about whose record otherwise: %v", b.ID, b.UseCase, b.Outcome, b.Spec.Refusal, groups)
		}
	}
}

// TestPlanDealsTheRowsAnotherRequestLeft: two refusals no state of a seed
// row reaches on its own. A claim is refused when one is already open for
// the same incident (policy, day and type at once): the level's cases carry
// the claim the act itself once filed, under a key of the case's own. The
// excess's method is refused while an excess payment of the policy is
// pending: the level's cases add such a payment, which names no claim of
// another policy's. Both levels survive the mint check.
func TestPlanDealsTheRowsAnotherRequestLeft(t *testing.T) {
	p, _ := deriveTestdata(t, "insurance-claims")
	for at, want := range map[string]string{
		"handlers/file_claim.star:23":                   "INSERT INTO claims ",
		"handlers/change_excess_payment_method.star:10": "INSERT INTO payments ",
	} {
		set := priors(p, at)
		if len(set) == 0 {
			t.Errorf("no level is dealt for %s with rows in its cases' setup", at)
			continue
		}
		for _, st := range set {
			if !strings.HasPrefix(st.SQL, want) {
				t.Errorf("a case of %s adds more than %q: %s", at, want, st.SQL)
			}
			if want == "INSERT INTO payments " && slices.ContainsFunc(st.Args, func(a any) bool { return strings.HasPrefix(fmt.Sprint(a), "CLM-") }) {
				t.Errorf("a case of %s adds a payment naming a claim the case does not reach: %v", at, st.Args)
			}
		}
	}
}

// TestPlanReachesRowsKeyedBySeveralColumns: testdata/basket's refusals
// are met only through rows of tables keyed by several columns; its plan is
// derived once and read by each case below.
func TestPlanReachesRowsKeyedBySeveralColumns(t *testing.T) {
	c, e := openContract(t, filepath.Join("testdata", "basket"))
	p, _ := deriveAsRun(t, c, e, 0)
	// The lines are keyed by order and product, and a swap is refused when
	// the product asked for is already in the order, which no seed order
	// holds. The level's cases add that line to the case's own order: a
	// row of a table keyed by several columns, its key made of records the
	// case reaches.
	t.Run("adds a line", func(t *testing.T) {
		const at = "handlers/swap_item.star:15" // "product %s is already in order %s"
		set := priors(p, at)
		if len(set) == 0 {
			t.Fatalf("no level is dealt for %s with rows in its cases' setup", at)
		}
		for _, st := range set {
			if !strings.HasPrefix(st.SQL, "INSERT INTO order_lines ") {
				t.Errorf("a case of %s adds more than an order's line: %s", at, st.SQL)
			}
		}
	})
	// A coupon goes on an open order once. No coupon a customer with an
	// open order holds is used, so the refusal of a used coupon is met only
	// by a setting that fills the empty reference of the customer's coupon
	// of the code asked for, a row keyed by customer and code, with the
	// case's order.
	t.Run("fills an empty reference", func(t *testing.T) {
		const at = "handlers/apply_coupon.star:14" // "coupon %s was used on order %s"
		const want = "UPDATE customer_coupons SET used_on_order = $1 WHERE customer_id = $2 AND code = $3"
		found := false
		for _, b := range p.Buckets {
			if b.Spec.Refusal != at {
				continue
			}
			for k, prior := range b.Spec.Prior {
				if len(prior) != 1 || prior[0].SQL != want {
					t.Errorf("a case of %s (%s) sets more than a coupon's order: %v", at, k, prior)
					continue
				}
				found = true
			}
		}
		if !found {
			t.Errorf("no case of %s sets %q", at, want)
		}
	})
	// Store credits are numbered per customer, and every one holds more
	// than the fee a payment takes. The refusal of a credit too low is met
	// only by a setting that lowers the balance of the credit the act
	// names, by the customer and its number.
	t.Run("lowers a number", func(t *testing.T) {
		const at = "handlers/pay_fee.star:12" // "credit %s holds less than the fee"
		set := priors(p, at)
		if len(set) == 0 {
			t.Fatalf("no level is dealt for %s with a setting in its cases' setup", at)
		}
		for _, st := range set {
			if !strings.HasPrefix(st.SQL, "UPDATE credits SET balance = ") || !strings.HasSuffix(st.SQL, " WHERE credit_no = $1 AND customer_id = $2") {
				t.Errorf("a case of %s sets more than the credit's balance: %s", at, st.SQL)
			}
		}
	})
}

// TestNoSettingAgainstTheRecordsOwnName: a record whose key names a parent
// (a section TERM-COURSE-NN) is never set to another parent, neither by
// pointing its reference elsewhere nor by setting the column to another
// value: the section would say one term and be of another. Its other
// settings stay.
func TestNoSettingAgainstTheRecordsOwnName(t *testing.T) {
	c := testContract(t, "registrar-line")
	g := ground.New(c)
	sv := &solver{g: g}
	tb := c.Table("sections")
	row := g.Rows("sections")[0]
	key := ground.Text(row["section_id"])
	if !strings.Contains(key, ground.Text(row["term_code"])) {
		t.Fatalf("section %s does not name its term %v: the test tells nothing", key, row["term_code"])
	}
	if !sv.namedByKey(tb, row, "term_code") || !sv.namedByKey(tb, row, "course_code") {
		t.Errorf("section %s: its term and course are not read as named by its key", key)
	}
	r := reached{table: "sections", column: "section_id", value: row["section_id"], arg: true}
	pushes := append(sv.repoints(tb, r), sv.states(tb, r)...)
	for _, p := range pushes {
		if strings.Contains(p.stmt.SQL, "SET term_code") || strings.Contains(p.stmt.SQL, "SET course_code") {
			t.Errorf("section %s: %s (%v)", key, p.what, p.stmt.Args)
		}
	}
	if sv.namedByKey(tb, row, "capacity") {
		t.Errorf("section %s: its capacity (%v) read as named by its key", key, row["capacity"])
	}
	capacity := false
	for _, p := range pushes {
		capacity = capacity || strings.Contains(p.stmt.SQL, "SET capacity")
	}
	if !capacity && len(sv.bounds(tb, r)) == 0 {
		t.Errorf("section %s: no setting of its capacity left", key)
	}
}
