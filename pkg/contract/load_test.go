package contract

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*/expected.txt from what Load reports (review the diff!)")

func TestLoadGood(t *testing.T) {
	c, ps, err := Load("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 0 {
		t.Fatalf("want no problems, got:\n%s", ps)
	}
	if c.Agent != "shop-support" || c.Modality != "chat" || !reflect.DeepEqual(c.Direction, []string{"inbound", "outbound"}) {
		t.Errorf("header: agent %q modality %q direction %v", c.Agent, c.Modality, c.Direction)
	}
	if c.Caller == nil || c.Caller.Table != "users" || c.Caller.Key != "user_id" || !reflect.DeepEqual(c.Caller.From, []string{"find_user_id_by_email"}) {
		t.Errorf("caller: %+v", c.Caller)
	}
	if len(c.Rules) != 2 || c.Rules[1].ID != "confirm-before-change" || c.Rules[1].Line != 15 {
		t.Errorf("rules: %+v", c.Rules)
	}
	if uc := c.UseCase("cancel-order"); uc == nil || !reflect.DeepEqual(uc.Tools, []string{"cancel_pending_order"}) || uc.Line != 18 {
		t.Errorf("use case: %+v", uc)
	}

	// Tables, in schema order, with keys.
	var names []string
	for _, tab := range c.Tables {
		names = append(names, tab.Name)
	}
	if !reflect.DeepEqual(names, []string{"users", "orders", "payments"}) {
		t.Fatalf("tables %v", names)
	}
	orders := c.Table("orders")
	if !reflect.DeepEqual(orders.PrimaryKey, []string{"id"}) || orders.Line != 10 {
		t.Errorf("orders pk %v line %d", orders.PrimaryKey, orders.Line)
	}
	wantCols := []Column{
		{Name: "id", Type: "text", NotNull: true},
		{Name: "user_id", Type: "text", NotNull: true, References: "users.user_id"},
		{Name: "status", Type: "text", NotNull: true, Default: "'pending'"},
		{Name: "cancel_reason", Type: "text"},
		{Name: "total", Type: "numeric(10,2)", NotNull: true},
		{Name: "placed_at", Type: "timestamp with time zone", Default: "now()"},
		{Name: "note", Type: "text", Default: "'it''s; fine'"},
	}
	if !reflect.DeepEqual(orders.Columns, wantCols) {
		t.Errorf("orders columns\n got %+v\nwant %+v", orders.Columns, wantCols)
	}
	pay := c.Table("payments")
	if col := pay.Column("order_id"); col == nil || col.References != "orders.id" {
		t.Errorf("payments.order_id: %+v", col)
	}
	if col := pay.Column("id"); col == nil || col.Default != "identity" || !col.NotNull {
		t.Errorf("payments.id: %+v", col)
	}
	if col := pay.Column("amount"); col == nil || col.Type != "double precision" {
		t.Errorf("payments.amount: %+v", col)
	}

	// Seeds, in schema order, with numbers typed and lines kept.
	var seedOrder []string
	for _, s := range c.Seeds {
		seedOrder = append(seedOrder, s.Table)
	}
	if !reflect.DeepEqual(seedOrder, []string{"users", "orders", "payments"}) {
		t.Errorf("seed order %v", seedOrder)
	}
	users := c.Seeds[0]
	if !reflect.DeepEqual(users.Lines, []int{1, 3}) || users.File != "world/seed/users.jsonl" || users.Rows[1]["zip"] != nil {
		t.Errorf("users seed %+v", users)
	}
	if o := c.Seed("orders"); o[0]["total"] != 12.5 || o[1]["total"] != int64(40) {
		t.Errorf("order totals %#v %#v", o[0]["total"], o[1]["total"])
	}
	if p := c.Seed("payments"); !reflect.DeepEqual(p[0]["meta"], map[string]any{"card": "visa", "n": int64(3)}) {
		t.Errorf("payment meta %#v", p[0]["meta"])
	}

	// Tools: requires normalised, handler defaults, order kept.
	cancel := c.Tool("cancel_pending_order")
	wantReq := []Requirement{{AnyOf: []string{"find_user_id_by_email"}, Line: 49}, {AnyOf: []string{"get_order_details"}, Same: []string{"order_id"}, Line: 50}}
	if !reflect.DeepEqual(cancel.Requires, wantReq) {
		t.Errorf("requires %+v", cancel.Requires)
	}
	if got := c.Tool("get_order_details").Requires; !reflect.DeepEqual(got, []Requirement{{AnyOf: []string{"find_user_id_by_email"}, Line: 39}}) {
		t.Errorf("bare-name requires %+v", got)
	}
	if cancel.Handler != "handlers/cancel_pending_order.star" || c.Tool("transfer_to_human_agents").Handler != "handlers/transfer.star" {
		t.Errorf("handlers %q %q", cancel.Handler, c.Tool("transfer_to_human_agents").Handler)
	}
	if cancel.ChangesState == nil || !*cancel.ChangesState || c.Tool("get_order_details").ChangesState != nil {
		t.Errorf("changes_state")
	}
	if tr := c.Tool("transfer_to_human_agents"); !tr.EndsConversation || !reflect.DeepEqual(tr.LogOnly, []string{"summary"}) {
		t.Errorf("transfer %+v", tr)
	}
	if !reflect.DeepEqual(c.Gated(), []string{"get_order_details", "cancel_pending_order"}) {
		t.Errorf("gated %v", c.Gated())
	}

	// Sequences.
	if len(c.Sequences) != 1 {
		t.Fatalf("sequences %+v", c.Sequences)
	}
	seq := c.Sequences[0]
	if len(seq.Steps) != 2 || seq.Steps[0].Expect != "" || seq.Steps[1].Expect != "refused" || seq.Steps[1].Args["order_id"] != "#W1001" {
		t.Errorf("steps %+v", seq.Steps)
	}
	if len(seq.Expect) != 2 || !seq.Expect[1].Unordered || seq.Expect[1].Rows[0]["amount"] != 12.5 || seq.Expect[0].Rows[0]["status"] != "cancelled" {
		t.Errorf("expect %+v", seq.Expect)
	}

	// Starlark.
	for _, p := range []string{"handlers/transfer.star", "handlers/cancel_pending_order.star", "lib/orders.star", "subgoals/polite_close.star"} {
		if c.Sources[p] == "" {
			t.Errorf("source %s not read", p)
		}
	}
	sg := c.SubGoal("order_cancelled")
	if sg == nil || sg.Judged || sg.What != "The order named in params is cancelled, with the reason the caller gave" ||
		!reflect.DeepEqual(sg.Params, map[string]string{"order_id": "string", "reason": "string"}) || sg.File != "subgoals/order_cancelled.star" {
		t.Errorf("sub-goal %+v", sg)
	}
	if pc := c.SubGoal("polite_close"); pc == nil || !pc.Judged || len(pc.Params) != 0 {
		t.Errorf("judged sub-goal %+v", pc)
	}
	if c.Personas.Accents[1] != "Scottish" || c.Now != "2026-03-10T10:00:00-06:00" {
		t.Errorf("personas/now %+v %q", c.Personas, c.Now)
	}
	if len(c.SHA256) != 64 || len(c.WorldSHA256) != 64 || c.SHA256 == c.WorldSHA256 {
		t.Errorf("hashes %q %q", c.SHA256, c.WorldSHA256)
	}
}

// TestHashes: the contract hash moves with any part; the world hash only with schema and seed.
func TestHashes(t *testing.T) {
	base, _, err := Load("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file       string
		worldMoves bool
	}{
		{"contract.yaml", false},
		{"handlers/transfer.star", false},
		{"lib/orders.star", false},
		{"subgoals/polite_close.star", false},
		{"world/schema.sql", true},
		{"world/seed/orders.jsonl", true},
	} {
		dir := copyDir(t, "testdata/good")
		appendFile(t, filepath.Join(dir, tc.file), "\n")
		c, _, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if c.SHA256 == base.SHA256 {
			t.Errorf("%s: contract hash did not change", tc.file)
		}
		if (c.WorldSHA256 != base.WorldSHA256) != tc.worldMoves {
			t.Errorf("%s: world hash changed=%v, want %v", tc.file, c.WorldSHA256 != base.WorldSHA256, tc.worldMoves)
		}
	}
	// A file that is no part of the contract moves neither.
	dir := copyDir(t, "testdata/good")
	appendFile(t, filepath.Join(dir, "README.md"), "hello\n")
	c, _, _ := Load(dir)
	if c.SHA256 != base.SHA256 || c.WorldSHA256 != base.WorldSHA256 {
		t.Error("README.md changed the hashes")
	}
}

func TestLoadBad(t *testing.T) {
	dirs, err := filepath.Glob("testdata/bad/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 12 {
		t.Fatalf("only %d bad variants", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, ps, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.String())
			}
			file := filepath.Join(dir, "expected.txt")
			if *update {
				if err := os.WriteFile(file, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			if len(want) == 0 || want[0] == "" {
				t.Fatal("expected.txt is empty: a bad variant must have problems")
			}
			ok := len(got) == len(want)
			for i := 0; ok && i < len(want); i++ {
				ok = strings.HasPrefix(got[i], want[i])
			}
			if !ok {
				t.Errorf("problems differ\n got:\n  %s\nwant (prefixes):\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

func TestLoadMissingDir(t *testing.T) {
	if _, _, err := Load(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("want an error for a missing directory")
	}
	f := filepath.Join(t.TempDir(), "file")
	appendFile(t, f, "x")
	if _, _, err := Load(f); err == nil {
		t.Fatal("want an error for a file")
	}
	// An empty directory is a contract with problems, not an error.
	_, ps, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !ps.Has(CodeMissingFile) || ps.Err() == nil {
		t.Fatalf("empty dir: %v", ps)
	}
}

func copyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func appendFile(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkLoad(b *testing.B) {
	dirs := []string{"testdata/good"}
	if _, err := os.Stat("../../examples/retail/contract.yaml"); err == nil {
		dirs = append(dirs, "../../examples/retail")
	}
	for _, dir := range dirs {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			for b.Loop() {
				if _, _, err := Load(dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestLoadValid: a sound contract loads; a contract with problems is an
// error carrying every one of them (Problems), and so is a missing directory.
func TestLoadValid(t *testing.T) {
	c, err := LoadValid("testdata/good")
	if err != nil || c == nil || c.Agent != "shop-support" || c.Dir != "testdata/good" {
		t.Fatalf("good: %v, %v", c, err)
	}
	_, want, err := Load("testdata/bad/many")
	if err != nil || len(want) == 0 {
		t.Fatalf("testdata/bad/many: %v, %d problems", err, len(want))
	}
	c, err = LoadValid("testdata/bad/many")
	var ps Problems
	if c != nil || !errors.As(err, &ps) || !reflect.DeepEqual(ps, want) {
		t.Fatalf("bad: %v, %v; want the %d problems Load reports", c, err, len(want))
	}
	if c, err := LoadValid(filepath.Join(t.TempDir(), "absent")); c != nil || err == nil || errors.As(err, &ps) {
		t.Fatalf("a missing directory: %v, %v", c, err)
	}
}
