package plan

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// testdataDir is testdata/contracts/NAME, a contract of this repository's
// tests.
func testdataDir(name string) string {
	return filepath.Join("..", "..", "testdata", "contracts", name)
}

func testContract(t *testing.T, name string) *contract.Contract {
	t.Helper()
	c, probs, err := contract.Load(testdataDir(name))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load %s: %v %v", name, err, probs)
	}
	return c
}

// wholePlans is why the tests that plan whole examples and clinic-voice run
// in make test's pass without the race detector (testenv.OutsideRace):
// the race pass plans guardian-line, library-line and generated contracts
// through the same code.
const wholePlans = "whole contracts planned; the race pass plans small ones through the same code"

func derive(t *testing.T, c *contract.Contract) (*Plan, ground.Rehearser) {
	t.Helper()
	e, err := engine.Open(context.Background(), testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	r := probe.Rehearser(e.World)
	p, err := Derive(context.Background(), c, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p, r
}

// TestDeriveSolvesRequiresChains: booking for a child requires a verified
// guardian, who requires a verified patient (by name + date of birth or by
// phone + date of birth); the plan finds the chain, rehearses it to a
// success, and a case made from it passes on a minted copy, naming the
// guardian who can consent (the child's second guardian on file).
func TestDeriveSolvesRequiresChains(t *testing.T) {
	c := testContract(t, "guardian-line")
	p, r := derive(t, c)
	if len(p.Gaps) > 0 || len(p.RefusalsOnly) > 0 {
		t.Fatalf("gaps %v, refusals only %v", p.Gaps, p.RefusalsOnly)
	}
	var b *Bucket
	for i := range p.Buckets {
		if p.Buckets[i].UseCase == "book-for-child" && p.Buckets[i].Outcome == "succeed" && p.Buckets[i].Overlay == "none" {
			b = &p.Buckets[i]
		}
	}
	if b == nil {
		t.Fatal("no ordinary success bucket for book-for-child")
	}
	sp := b.Spec
	if len(sp.Gated) != 2 || !slices.Contains([]string{"verify_by_name", "verify_by_phone"}, sp.Gated[0]) || sp.Gated[1] != "verify_guardian" {
		t.Fatalf("chain %v, want a patient verification then verify_guardian", sp.Gated)
	}
	if bd, _ := sp.Binds.Of("book_for_child", "guardian_ref"); bd.Ref() != "guardians.guardian_id" {
		t.Errorf("book_for_child.guardian_ref bound %+v", bd)
	}
	g := ground.New(c)
	ok := 0
	for k, key := range sp.Templates {
		target := g.Find(sp.Table, g.PK(sp.Table), key)
		s, cb, err := g.Case(sp.Table, target, nil, ground.Person{First: "Ana", Last: "Ortiz", Number: 7000 + k, Index: k, Strides: sp.Strides})
		if err != nil {
			t.Fatal(err)
		}
		ch := sp.Choices[key]
		cb.Variant, cb.Ordinal = ch.Variant, ch.Ordinal
		calls, filled := Chain(g, c.Tool(sp.Tool), sp.Gated, cb, sp.Binds)
		if !filled {
			t.Fatalf("template %s: the chain cannot be filled", key)
		}
		if calls[1].Args["patient_ref"] != calls[2].Args["patient_ref"] {
			t.Errorf("verify_guardian and the booking name other patients: %v", calls)
		}
		ans, err := r.Rehearse(context.Background(), s.Statements, calls)
		if err != nil {
			t.Fatalf("template %s: %v", key, err)
		}
		all := true
		for _, a := range ans {
			all = all && a.OK
		}
		if all {
			ok++
		} else {
			t.Errorf("template %s on a minted copy: %+v", key, ans)
		}
	}
	if ok == 0 {
		t.Fatal("no template rehearsed")
	}
}

// TestDeriveNamesWhatItCannotPlan: a use case whose argument no column
// holds and one whose record cannot be copied (its key is held to a list
// the seed rows fill) get no bucket, each with its reason; the one that can
// be planned is.
func TestDeriveNamesWhatItCannotPlan(t *testing.T) {
	c := testContract(t, "unplannable")
	p, _ := derive(t, c)
	why := map[string]string{}
	for _, g := range p.Gaps {
		why[g.UseCase] = g.Reason
	}
	if w := why["check-secret"]; !strings.Contains(w, "check_secret.secret could not be grounded") || !strings.Contains(w, "x-ref") {
		t.Errorf("check-secret: %q", w)
	}
	if w := why["rename"]; !strings.Contains(w, "no case of members could be minted") || !strings.Contains(w, "members.member_ref is held to (M-1, M-2, M-3) and rows hold every one") {
		t.Errorf("rename: %q", w)
	}
	if _, gap := why["read-notice"]; gap || len(p.Buckets) == 0 {
		t.Errorf("read-notice should be planned: gaps %v", p.Gaps)
	}
	err := (&Unplanned{Gaps: p.Gaps}).Error()
	if !strings.Contains(err, "check-secret") || !strings.Contains(err, "rename") {
		t.Errorf("the error names every unplanned use case: %s", err)
	}
}

func TestChains(t *testing.T) {
	c := testContract(t, "guardian-line")
	got := Chains(c, "book_for_child")
	want := [][]string{{"verify_by_name", "verify_guardian"}, {"verify_by_phone", "verify_guardian"}}
	if len(got) != 2 || strings.Join(got[0], ",") != strings.Join(want[0], ",") || strings.Join(got[1], ",") != strings.Join(want[1], ",") {
		t.Errorf("chains of book_for_child: %v, want %v", got, want)
	}
	if got := Chains(c, "verify_by_name"); len(got) != 1 || len(got[0]) != 0 {
		t.Errorf("a tool without requires: %v", got)
	}
}

// TestDeriveReusesTemplates: an ask past the distinct rows makes every
// template serve again, the plan holds the ask whole even though a third
// full use would overrun the code shapes, and every scenario of
// every bucket takes a suite-wide index of its own below Most, so the
// reused copies mint codes no other case has. A second use of a template
// mints a case that rehearses as its first did.
func TestDeriveReusesTemplates(t *testing.T) {
	c, e := openContract(t, testdataDir("guardian-line"))
	r := probe.Rehearser(e.World)
	distinct, err := Derive(context.Background(), c, r, Options{Asked: 1})
	if err != nil {
		t.Fatal(err)
	}
	// All the code shapes hold: more than one full use of every template,
	// fewer than three.
	asked := distinct.Most
	if asked <= distinct.Capacity || asked >= 3*distinct.Capacity {
		t.Fatalf("the contract holds %d distinct scenarios of %d rows: not between one and three uses", distinct.Most, distinct.Capacity)
	}
	p, err := Derive(context.Background(), c, r, Options{Asked: asked})
	if err != nil {
		t.Fatal(err)
	}
	if p.Reuse < 2 || p.Total() != asked || p.Capacity < asked || p.Most > 0 && p.Capacity > p.Most {
		t.Fatalf("asked %d of %d distinct: reuse %d, total %d, capacity %d, most %d", asked, distinct.Capacity, p.Reuse, p.Total(), p.Capacity, p.Most)
	}
	seen := map[int]string{}
	first := map[string]*Bucket{}
	reused := 0
	for bi, b := range p.Buckets {
		for k := range b.Want {
			i := b.Spec.Index(k)
			if other, dup := seen[i]; dup {
				t.Fatalf("index %d dealt to %s and %s", i, other, b.ID)
			}
			if p.Most > 0 && i >= p.Most {
				t.Errorf("%s scenario %d takes index %d, past the %d the code shapes hold", b.ID, k, i, p.Most)
			}
			seen[i] = b.ID
		}
		sig := b.UseCase + "|" + b.Outcome + "|" + b.Overlay + "|" + b.Spec.Level
		if b.Outcome != "succeed" || b.Overlay != "none" || b.Want == 0 {
			continue
		}
		if first[sig] == nil {
			first[sig] = &p.Buckets[bi]
			continue
		}
		// A later use of a template: its case and the template's first
		// use's are fresh copies under other indices, both answering as the
		// plan rehearsed the template.
		tool := c.Tool(b.Spec.Tool)
		key := b.Spec.Templates[0]
		g := ground.New(c)
		checked := 0
		for _, u := range []*Bucket{first[sig], &b} {
			k := slices.Index(u.Spec.Templates, key)
			if k >= u.Want {
				continue // the first use's want does not reach it
			}
			checked++
			i := u.Spec.Index(k)
			target := g.Find(b.Spec.Table, g.PK(b.Spec.Table), key)
			var caller ground.Row
			if len(b.Spec.Callers) > 0 {
				caller = g.Find(c.Caller.Table, c.Caller.Key, b.Spec.Callers[k%len(b.Spec.Callers)])
			}
			s, bd, err := g.Case(b.Spec.Table, target, caller, ground.Person{First: "Reuse", Last: "Case", Number: 7000 + i, Index: i, Strides: b.Spec.Strides})
			if err != nil {
				t.Fatalf("%s case %d of %s: %v", u.ID, k, key, err)
			}
			ch := b.Spec.Choices[key]
			bd.Variant, bd.Ordinal = ch.Variant, ch.Ordinal
			calls, ok := Chain(g, tool, append(append([]string{}, b.Spec.Gated...), b.Spec.Lookups...), bd, b.Spec.Binds)
			if !ok {
				t.Fatalf("%s case %d of %s: arguments not filled", u.ID, k, key)
			}
			ans, err := r.Rehearse(context.Background(), s.Statements, calls)
			if err != nil {
				t.Fatalf("%s case %d of %s: %v", u.ID, k, key, err)
			}
			for j, a := range ans {
				if !a.OK {
					t.Errorf("%s case %d of %s: %s answered %s", u.ID, k, key, calls[j].Tool, a.Error)
				}
			}
		}
		if checked == 2 {
			reused++
		}
	}
	if reused == 0 {
		t.Fatal("no ordinary success bucket serves a template twice")
	}
}

// TestDeriveDealsNoSuccessThatChangesNothing: in the telecom example,
// turning roaming off on a line where it is already off answers ok and
// writes nothing; no success is dealt on such a record. Every success
// bucket's first template, minted and played, changes the world.
func TestDeriveDealsNoSuccessThatChangesNothing(t *testing.T) {
	c, e := openContract(t, filepath.Join("..", "..", "examples", "telecom"))
	p, _ := deriveAsRun(t, c, e, 0)
	er, ok := probe.Rehearser(e.World).(effectRehearser)
	if !ok {
		t.Fatal("the probe rehearser does not say what changed")
	}
	g := ground.New(c)
	checked := 0
	for _, b := range p.Buckets {
		tool := c.Tool(b.Spec.Tool)
		if b.Outcome != "succeed" || tool == nil || tool.ChangesState == nil || !*tool.ChangesState || len(b.Spec.Templates) == 0 {
			continue
		}
		sp := b.Spec
		key := sp.Templates[0]
		var caller ground.Row
		if len(sp.Callers) > 0 {
			caller = g.Find(c.Caller.Table, c.Caller.Key, sp.Callers[0])
		}
		s, cb, err := g.Case(sp.Table, g.Find(sp.Table, g.PK(sp.Table), key), caller, ground.Person{First: "Ana", Last: "Ortiz", Number: 7000})
		if err != nil {
			t.Fatal(err)
		}
		ch := sp.Choices[key]
		cb.Variant, cb.Ordinal = ch.Variant, ch.Ordinal
		calls, filled := Chain(g, tool, sp.Gated, cb, sp.Binds)
		if !filled {
			t.Fatalf("%s: the chain cannot be filled", b.ID)
		}
		ans, changed, err := er.RehearseEffect(context.Background(), s.Statements, calls)
		if err != nil {
			t.Fatal(err)
		}
		if last := ans[len(ans)-1]; last.OK && !changed {
			t.Errorf("%s (%s, %s): %s on %s answers ok and changes nothing", b.ID, b.UseCase, b.Angle, tool.Name, key)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no success bucket of a state-changing act")
	}
}

// caregiverRefill are pharmacy-line's bindings of a caregiver's
// verification and a refill, with the refill's caregiver_id bound as
// caregiver says.
func caregiverRefill(caregiver ground.Binding) ground.Bindings {
	caregiver.Tool, caregiver.Param = "request_refill", "caregiver_id"
	return ground.Bindings{
		{Tool: "verify_caregiver", Param: "patient_id", Table: "patients", Column: "patient_id", How: ground.ByXRef, Source: ground.FromCase},
		{Tool: "verify_caregiver", Param: "caregiver_first_name", Table: "caregivers", Column: "first_name", How: ground.ByXRef, Source: ground.FromCase},
		{Tool: "verify_caregiver", Param: "caregiver_last_name", Table: "caregivers", Column: "last_name", How: ground.ByXRef, Source: ground.FromCase},
		{Tool: "verify_caregiver", Param: "caregiver_date_of_birth", Table: "caregivers", Column: "date_of_birth", How: ground.ByXRef, Source: ground.FromCase},
		{Tool: "request_refill", Param: "patient_id", Table: "patients", Column: "patient_id", How: ground.ByXRef, Source: ground.FromCase},
		{Tool: "request_refill", Param: "rx_number", Table: "prescriptions", Column: "rx_number", How: ground.ByXRef, Source: ground.FromCase},
		caregiver,
	}
}

// TestFurtherCheckThroughALinkTable: pharmacy-line's caregiver verification
// takes a caregiver's name and date of birth, and the refill the caregiver's
// id, which ties to the prescription's patient only through the
// authorizations that name both. The rows the check can pass on are the
// prescriptions (or patients) of patients with a caregiver on file, and only
// those.
func TestFurtherCheckThroughALinkTable(t *testing.T) {
	c := testContract(t, "pharmacy-line")
	g := ground.New(c)
	bs := caregiverRefill(ground.Binding{Table: "caregivers", Column: "caregiver_id", How: ground.ByXRef, Source: ground.FromCase})
	sv := &solver{g: g, bs: bs, max: 40}
	act := c.Tool("request_refill")
	if got := sv.further(act, []string{"find_patient_by_name_dob", "verify_caregiver", "list_prescriptions", "request_refill"}); !slices.Equal(got, []string{"verify_caregiver"}) {
		t.Fatalf("further checks %v, want verify_caregiver", got)
	}
	cared := map[string]bool{}
	for _, a := range g.Rows("caregiver_authorizations") {
		cared[ground.Text(a["patient_id"])] = true
	}
	// The act's record is the prescription, or the patient (the caller)
	// when the act names no other.
	for _, table := range []string{"prescriptions", "patients"} {
		rows := sv.checkedRows(act, table, []string{"verify_caregiver"})
		if len(rows) == 0 {
			t.Fatalf("no row of %s the caregiver check can pass on", table)
		}
		for _, r := range rows {
			if !cared[ground.Text(r["patient_id"])] {
				t.Errorf("%s row %v is of patient %v, who has no caregiver on file", table, r, r["patient_id"])
			}
		}
	}
	skipped := 0
	for _, r := range g.Rows("prescriptions") {
		if !cared[ground.Text(r["patient_id"])] {
			skipped++
		}
	}
	if skipped == 0 {
		t.Fatal("every patient of the seed has a caregiver: the test tells nothing")
	}
}

// TestAddedKeysLeaveRoomAbove: keys an added row takes where the seed's ids
// sit near the top of their digits (AUTH-90004 of five) come from the
// values minting leaves at the top, above every minted key, with room
// above them for the key a handler numbers next (max+1 still has five
// digits).
func TestAddedKeysLeaveRoomAbove(t *testing.T) {
	g := ground.New(testContract(t, "pharmacy-line"))
	keys, ok := freshKeys(g, "caregiver_authorizations", "authorization_id", 2)
	if !ok || len(keys) != 2 || keys[0] != "AUTH-99984" || keys[1] != "AUTH-99985" {
		t.Fatalf("added keys %v (%v), want AUTH-99984 and AUTH-99985", keys, ok)
	}
	last, err := g.Fresh("caregiver_authorizations", "authorization_id", "AUTH-00001", g.Room("caregiver_authorizations", "authorization_id", "AUTH-00001")-1)
	if err != nil {
		t.Fatal(err)
	}
	for slot := int64(0); slot < 9979; slot += 997 {
		v, err := g.Fresh("caregiver_authorizations", "authorization_id", "AUTH-00001", slot)
		if err != nil || v.(string) >= "AUTH-99984" {
			t.Errorf("slot %d minted %v (%v), into the added keys' room", slot, v, err)
		}
	}
	if last.(string) >= "AUTH-99984" {
		t.Errorf("the last minted key %v is among the added keys' room", last)
	}
}

// TestFurtherCheckNeedsAKeyTheCaseFills: a check of someone else (a
// caregiver) joins every chain of a use case only when the act takes the
// key it answers with from a record. An act whose argument is grounded to
// a fresh value never passes the checked record, so its cases would verify
// a stranger and then act as the caller themself: no further check.
func TestFurtherCheckNeedsAKeyTheCaseFills(t *testing.T) {
	c := testContract(t, "pharmacy-line")
	g := ground.New(c)
	bs := caregiverRefill(ground.Binding{How: ground.Fresh})
	sv := &solver{g: g, bs: bs, max: 40}
	tools := []string{"find_patient_by_name_dob", "verify_caregiver", "list_prescriptions", "request_refill"}
	if got := sv.further(c.Tool("request_refill"), tools); len(got) != 0 {
		t.Fatalf("further checks %v of an act whose caregiver id is fresh, want none", got)
	}
}

// TestNoLevelAtAnArgumentCheck: a branch decided by the request's own
// values (an e-mailed order with no address) is reached by no state of
// the world, so the plan deals no refusal level at it, while a branch the
// world decides (a hold on the account) keeps its level.
func TestNoLevelAtAnArgumentCheck(t *testing.T) {
	c := testContract(t, "registrar-line")
	sv := &solver{g: ground.New(c)}
	bs, err := script.Branches(c)
	if err != nil {
		t.Fatal(err)
	}
	var arg, world string
	for _, b := range bs {
		switch {
		case b.Class == script.ClassArgument && arg == "":
			arg = b.At()
		case b.Class == script.ClassRule && world == "":
			world = b.At()
		}
	}
	if arg == "" || world == "" {
		t.Fatalf("the contract has no argument check (%q) or no rule branch (%q): the test tells nothing", arg, world)
	}
	spares := map[string]level{arg: {outcome: "refuse", branch: arg}, world: {outcome: "refuse", branch: world}}
	got := sv.withoutArgumentChecks([]level{{outcome: "succeed"}, {outcome: "refuse", branch: arg}, {outcome: "refuse", branch: world}}, spares)
	if len(got) != 2 || got[0].outcome != "succeed" || got[1].branch != world {
		t.Errorf("levels %+v, want the success and %s only", got, world)
	}
	if _, ok := spares[arg]; ok || len(spares) != 1 {
		t.Errorf("spares %v, want %s only", spares, world)
	}
}

// TestAddsFitTheAddedStride: Carry moves the keys of the rows an add puts
// in by the case's index times ground.AddedStride; an add of more rows
// than that would hand one case's rows to the next.
func TestAddsFitTheAddedStride(t *testing.T) {
	for _, n := range addCounts {
		if n > ground.AddedStride {
			t.Errorf("an add puts in %d rows, above ground.AddedStride (%d)", n, ground.AddedStride)
		}
	}
}
