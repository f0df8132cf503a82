package ground

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

func load(t testing.TB, dir string) *contract.Contract {
	t.Helper()
	c, probs, err := contract.Load(dir)
	if err != nil || len(probs) > 0 {
		t.Fatalf("load %s: %v %v", dir, err, probs)
	}
	return c
}

func retail(t testing.TB) *contract.Contract {
	return load(t, filepath.Join("..", "..", "examples", "retail"))
}

func guardianLine(t testing.TB) *contract.Contract {
	return load(t, filepath.Join("..", "..", "testdata", "contracts", "guardian-line"))
}

func TestMintCopiesTheRecordAndItsOwner(t *testing.T) {
	c := retail(t)
	g := New(c)
	target := g.Rows("orders")[0]
	s, err := g.Mint("orders", target, Person{First: "Mei", Last: "Tanaka", Number: 7123, Index: 123})
	if err != nil {
		t.Fatal(err)
	}
	pk := g.PK("orders")
	if Text(s.Target[pk]) == Text(target[pk]) {
		t.Fatalf("minted order kept the old key %v", target[pk])
	}
	if s.Caller == nil {
		t.Fatal("no caller minted")
	}
	cl := c.Caller
	if got := Text(s.Target[fkTo(g, "orders", cl.Table)]); got != Text(s.Caller[cl.Key]) {
		t.Errorf("minted order points at %q, not the minted caller %q", got, Text(s.Caller[cl.Key]))
	}
	if s.Caller["first_name"] != "Mei" || s.Caller["last_name"] != "Tanaka" || !strings.Contains(Text(s.Caller["email"]), "mei.tanaka7123@") {
		t.Errorf("caller not renamed: %v", s.Caller)
	}
	// Parents are inserted before children.
	if first := strings.Fields(s.Statements[0].SQL)[2]; first != cl.Table {
		t.Errorf("first insert is into %s, want the caller table %s", first, cl.Table)
	}
	for _, code := range s.Codes {
		for _, tb := range c.Tables {
			if g.PK(tb.Name) != "" && g.Find(tb.Name, g.PK(tb.Name), code) != nil {
				t.Errorf("minted code %s already exists in %s", code, tb.Name)
			}
		}
	}
	// The minted order id keeps the shape its CHECK asks for.
	if id := Text(s.Target[pk]); len(id) != 6 || !strings.HasPrefix(id, "#W") {
		t.Errorf("minted order id %q lost the #W and four digits shape", id)
	}
}

func fkTo(g *Graph, table, parent string) string {
	for _, fk := range g.FKs(table) {
		if fk.RefTable == parent {
			return fk.Column
		}
	}
	return ""
}

// uniqueValues collects, from a mint, every value of every unique column set
// (the primary key included), keyed by table and set.
func uniqueValues(g *Graph, s *Setup, add func(key, value string)) {
	for table, rows := range s.Minted {
		tb := g.C.Table(table)
		sets := tb.Unique
		if len(tb.PrimaryKey) > 0 {
			sets = append([][]string{tb.PrimaryKey}, sets...)
		}
		for _, r := range rows {
			for _, set := range sets {
				var parts []string
				null := false
				for _, col := range set {
					if r[col] == nil {
						null = true
					}
					parts = append(parts, Text(r[col]))
				}
				if !null {
					add(table+"("+strings.Join(set, ",")+")", strings.Join(parts, "\x00"))
				}
			}
		}
	}
}

// TestMintedCodesNeverCollide mints one template for ten thousand scenario
// indices: no two mints, and no mint and the seed, share a value of any
// unique column set. A fixed-width code runs out of room: that is an error,
// never a duplicate.
func TestMintedCodesNeverCollide(t *testing.T) {
	c := guardianLine(t)
	g := New(c)
	target := g.Rows("patients")[2] // a minor, with guardians, cards and an appointment
	strides := map[string]int{}
	for table, n := range g.MintCounts("patients", target) {
		strides[table] = n + 1
	}
	seen := map[string]string{}
	for table := range strides {
		tb := c.Table(table)
		s := &Setup{Minted: map[string]map[string]Row{table: {}}}
		for i, r := range g.Rows(table) {
			s.Minted[table][string(rune(i))] = r
		}
		_ = tb
		uniqueValues(g, s, func(k, v string) { seen[k+"\x00"+v] = "seed" })
	}
	const n = 10_000
	for i := 0; i < n; i++ {
		s, err := g.Mint("patients", target, Person{First: "A", Last: "B", Number: 7000 + i, Index: i, Strides: strides})
		if err != nil {
			t.Fatalf("index %d: %v", i, err)
		}
		who := "index " + Text(i)
		uniqueValues(g, s, func(k, v string) {
			if other, dup := seen[k+"\x00"+v]; dup && other != who {
				t.Fatalf("%s: %s value %q also belongs to %s", who, k, v, other)
			}
			seen[k+"\x00"+v] = who
		})
	}
	// Patient ids are PAT- and five digits (their CHECK says so): a hundred
	// thousand values, fewer than sixty thousand scenarios' strides need.
	big := Person{First: "A", Last: "B", Number: 1, Index: 60_000, Strides: strides}
	if _, err := g.Mint("patients", target, big); err == nil || !strings.Contains(err.Error(), "no fresh value left") {
		t.Fatalf("a code space run dry must be an error, got %v", err)
	}
}

func TestMintRespectsUniqueSetsAndChecks(t *testing.T) {
	c := guardianLine(t)
	g := New(c)
	appt := g.Rows("appointments")[0]
	s, err := g.Mint("appointments", appt, Person{First: "Ana", Last: "Ortiz", Number: 7001, Index: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The booked slot is unique to its appointment (a partial unique
	// index): the copy gets its own slot, whose (provider, starts_at) is
	// unique too, so its time moves by microseconds.
	slots := s.Minted["slots"]
	if len(slots) != 1 {
		t.Fatalf("minted slots: %v", slots)
	}
	var slot Row
	for _, r := range slots {
		slot = r
	}
	if Text(s.Target["slot_id"]) != Text(slot["slot_id"]) || Text(slot["slot_id"]) == Text(appt["slot_id"]) {
		t.Errorf("the copy books slot %v, the minted slot is %v, the template's %v", s.Target["slot_id"], slot["slot_id"], appt["slot_id"])
	}
	orig := g.Find("slots", "slot_id", appt["slot_id"])
	if Text(slot["starts_at"]) == Text(orig["starts_at"]) || !strings.HasPrefix(Text(slot["starts_at"]), Text(orig["starts_at"])[:16]) {
		t.Errorf("slot time %v: want the template's %v moved by microseconds", slot["starts_at"], orig["starts_at"])
	}
	// The caller's unique columns are fresh and keep their CHECK shapes.
	p := s.Caller
	for col, pattern := range map[string]string{"patient_id": `^PAT-[0-9]{5}$`, "mrn": `^MRN[0-9]{7}$`, "phone": `^\([0-9]{3}\) 555-[0-9]{4}$`} {
		if !matches(pattern, Text(p[col])) {
			t.Errorf("minted %s %q does not fit %s", col, p[col], pattern)
		}
		if g.Holds("patients", col, p[col]) {
			t.Errorf("minted %s %q is already in the seed", col, p[col])
		}
	}
	if p["first_name"] != "Ana" || p["email"] != "ana.ortiz7001@example.com" {
		t.Errorf("caller not renamed: %v", p)
	}
	// Guardians are the patient's parents' rows, not copied.
	if len(s.Minted["guardians"]) != 0 {
		t.Errorf("guardians copied: %v", s.Minted["guardians"])
	}
}

func TestCodeSpace(t *testing.T) {
	c := guardianLine(t)
	g := New(c)
	// A fixed prefix stays, digits count on from the largest seed value.
	v, err := g.Fresh("slots", "slot_id", "SLT-0001", 0)
	if err != nil || v != "SLT-0017" {
		t.Errorf("first fresh slot id = %v, %v; want SLT-0017 (the seed ends at SLT-0016)", v, err)
	}
	// Letters count too when the CHECK lets them.
	sh := shapeOf("AB12 CDE", nil)
	if got := sh.text(sh.number("AB12 CDE") + 1); got != "AB12 CDF" {
		t.Errorf("AB12 CDE + 1 = %s", got)
	}
	if got := sh.text(sh.number("AB12 CDZ") + 1); got != "AB12 CEA" {
		t.Errorf("AB12 CDZ + 1 = %s", got)
	}
	// Past the top, the values below the seed's largest that it does not
	// hold, in order; then none.
	sp := &space{shape: shapeOf("9", nil), size: 10, start: 8, seeds: []int64{1, 3, 7}}
	var got []string
	for slot := int64(0); ; slot++ {
		v, err := sp.at(slot)
		if err != nil {
			break
		}
		got = append(got, v)
	}
	if strings.Join(got, " ") != "8 9 0 2 4 5 6" {
		t.Errorf("values dealt: %v", got)
	}
	// The top of a roomier space is left to the world's own numbering (a
	// handler's max+1 must still fit): 85 to 99 are never dealt.
	sp = &space{shape: shapeOf("99", nil), size: 100, start: 40}
	dealt := map[string]bool{}
	for slot := int64(0); ; slot++ {
		v, err := sp.at(slot)
		if err != nil {
			break
		}
		dealt[v] = true
	}
	if len(dealt) != 85 || dealt["85"] || !dealt["84"] || !dealt["00"] || sp.room() != 85 {
		t.Errorf("dealt %d values (85 %v, 84 %v, 00 %v), room %d; want the 85 below 85", len(dealt), dealt["85"], dealt["84"], dealt["00"], sp.room())
	}
	// A timestamp in a unique set moves by microseconds, a date by days.
	if v, _ := g.Fresh("slots", "starts_at", "2026-06-03T09:00:00-07:00", 2); v != "2026-06-03T09:00:00.000003-07:00" {
		t.Errorf("fresh timestamp %v", v)
	}
}

func matches(pattern, s string) bool {
	return shapeOf(s, nil).fits(s) && regexpMatch(pattern, s)
}

// TestOutsiderIsSomeoneElses: a case that asks about a record that is not
// the caller's takes one of another owner, as like the case's own as the
// world has, both planned on seed rows and written on minted copies; of a
// table nobody owns, a row under another parent, and none where the table
// hangs off nothing.
func TestOutsiderIsSomeoneElses(t *testing.T) {
	c := retail(t)
	g := New(c)
	target := g.Rows("orders")[3]
	cl := c.Caller
	for _, tc := range []struct {
		name string
		b    Bound
	}{
		{"seed", g.Bind("orders", target)},
		{"minted", func() Bound {
			_, b, err := g.Case("orders", target, nil, Person{First: "Mei", Last: "Tanaka", Number: 7123, Index: 123})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caller := Text(tc.b.Caller[cl.Key])
			for _, table := range []string{"orders", "payment_methods"} {
				r := g.Outsider(table, tc.b)
				if r == nil {
					t.Fatalf("no outsider of %s", table)
				}
				owner := g.Owner(table, r)
				if owner == nil || Text(owner[cl.Key]) == caller || Text(owner[cl.Key]) == Text(g.Owner("orders", target)[cl.Key]) {
					t.Errorf("outsider of %s %v belongs to %v: the caller %s or the person copied", table, r[g.PK(table)], owner[cl.Key], caller)
				}
			}
			if r := g.Outsider("orders", tc.b); Text(r["status"]) != Text(target["status"]) {
				t.Errorf("outsider order is %v, the case's %v: not the likest", r["status"], target["status"])
			}
			if r := g.Outsider("products", tc.b); r != nil {
				t.Errorf("a product, which hangs off nothing, has an outsider: %v", r)
			}
			// A variant no one owns: its outsider is another product's.
			if own := tc.b.Pick("variants"); own == nil {
				t.Error("the case reaches no variant")
			} else if r := g.Outsider("variants", tc.b); r == nil || Text(r["product_id"]) == Text(own["product_id"]) {
				t.Errorf("outsider variant %v of the case's variant %v: want another product's", r, own)
			} else {
				b := tc.b
				b.Swap = SwapItself
				if r := g.swapped("variants", b); rowKey(g, "variants", r) != rowKey(g, "variants", own) {
					t.Errorf("a swap to itself takes %v, want the case's own %v", r, own)
				}
				b.Swap = SwapHeld
				if r := g.swapped("variants", b); r != nil && (rowKey(g, "variants", r) == rowKey(g, "variants", own) ||
					!slices.ContainsFunc(b.Rows["variants"], func(h Row) bool { return sameRow(h, r) })) {
					t.Errorf("a swap to a held variant takes %v: the case's own or one it does not hold", r)
				}
			}
			if r := g.Outsider(cl.Table, tc.b); r != nil {
				t.Errorf("the caller's own table has an outsider: %v (the caller identifies by it as themselves)", r)
			}
			b := tc.b
			b.Outside = "orders"
			bd := Binding{Tool: "get_order_details", Param: "order_id", Table: "orders", Column: g.PK("orders"), How: ByName, Source: FromCase}
			v, ok := g.Value(c.Tool("get_order_details"), "order_id", bd, b)
			if !ok || Text(v) != Text(g.Outsider("orders", tc.b)[g.PK("orders")]) {
				t.Errorf("order_id outside the case: %v %v", v, ok)
			}
		})
	}
}

// Carry moves statements written on a template's seed records onto the
// case minted from it: the order's and the caller's keys become the
// minted ones, and every other value stays.
func TestCarryOntoTheMintedCase(t *testing.T) {
	c := retail(t)
	g := New(c)
	target := g.Rows("orders")[0]
	s, err := g.Mint("orders", target, Person{First: "Mei", Last: "Tanaka", Number: 7123, Index: 123})
	if err != nil {
		t.Fatal(err)
	}
	pk, cl := g.PK("orders"), c.Caller
	owner := target[fkTo(g, "orders", cl.Table)]
	got := s.Carry(g, []scenario.Statement{{SQL: "UPDATE orders SET status = $1 WHERE order_id = $2 AND user_id = $3", Args: []any{"cancelled", target[pk], owner}}})
	want := []any{"cancelled", s.Target[pk], s.Caller[cl.Key]}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Args, want) {
		t.Fatalf("carried %v, want args %v", got, want)
	}
}

// Rows a plan added to reach a refusal (plan.adds: a copy of a seed row
// under a key no seed row holds) are carried onto every case of their
// level: their keys move by the case's index, so no two scenarios of a run
// hand out one record, while a seed key still becomes the minted one.
func TestCarrySpacesAddedKeys(t *testing.T) {
	c := retail(t)
	g := New(c)
	target := g.Rows("orders")[0]
	owner := target[fkTo(g, "orders", c.Caller.Table)]
	added := scenario.Statement{
		SQL:  "INSERT INTO orders (order_id, user_id, status) VALUES (CAST($1::text AS text), CAST($2::text AS text), CAST(NULL AS numeric(10,2))), (CAST($3::text AS text), CAST($4::text AS text), CAST($5::text AS text))",
		Args: []any{"#W9950000", owner, "#W9950001", owner, "pending"},
	}
	seen := map[string]int{}
	for _, index := range []int{0, 1, 3} {
		s, err := g.Mint("orders", target, Person{First: "Mei", Last: "Tanaka", Number: 7100 + index, Index: index})
		if err != nil {
			t.Fatal(err)
		}
		got := s.Carry(g, []scenario.Statement{added})[0].Args
		if got[1] != s.Caller[c.Caller.Key] || got[3] != s.Caller[c.Caller.Key] || got[4] != "pending" {
			t.Errorf("case %d: carried %v, want the minted caller's rows", index, got)
		}
		for _, k := range []any{got[0], got[2]} {
			if g.Find("orders", "order_id", k) != nil {
				t.Errorf("case %d: added key %v is a seed row's", index, k)
			}
			if j, ok := seen[Text(k)]; ok {
				t.Errorf("cases %d and %d both add order %v", j, index, k)
			}
			seen[Text(k)] = index
		}
		if index == 3 && (got[0] != "#W9950024" || got[2] != "#W9950025") {
			t.Errorf("case 3 added %v and %v, want #W9950024 and #W9950025", got[0], got[2])
		}
	}
	// A seed row's key in the same place is the case's minted record.
	s, err := g.Mint("orders", target, Person{First: "Mei", Last: "Tanaka", Number: 7123, Index: 5})
	if err != nil {
		t.Fatal(err)
	}
	seedKey := scenario.Statement{SQL: added.SQL, Args: []any{target["order_id"], owner, "#W9950001", owner, "pending"}}
	if got := s.Carry(g, []scenario.Statement{seedKey})[0].Args; got[0] != s.Target["order_id"] {
		t.Errorf("a seed key carried as %v, want the minted %v", got[0], s.Target["order_id"])
	}
}
