package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/taubench/taubenchtest"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConvertFixture converts a small domain in the published shape: rows
// keep the published order in their positions (a user's orders as the user
// lists them, payment methods as the profile holds them, options as the
// variant lists them), absent fields stay out of the seed, and a second run
// writes the same bytes.
func TestConvertFixture(t *testing.T) {
	out := t.TempDir()
	counts, err := convert(filepath.Join("testdata", "fixture"), out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"users": 2, "payment_methods": 3, "products": 2, "variants": 3, "variant_options": 5,
		"orders": 3, "order_items": 4, "fulfillments": 2, "payment_history": 4}
	for _, c := range counts {
		if want[c.table] != c.rows {
			t.Errorf("%s: %d rows, want %d", c.table, c.rows, want[c.table])
		}
	}
	seed := func(table string) string { return read(t, filepath.Join(out, "seed", table+".jsonl")) }
	for table, line := range map[string]string{
		"payment_methods": `{"id":"gift_card_0000002","user_id":"zoe_quinn_0001","position":0,"source":"gift_card","balance":40}`,
		"orders":          `{"order_id":"#W0000001","user_id":"zoe_quinn_0001","position":1,"address1":"1 Elm Street","address2":"Suite 2","city":"Austin","country":"USA","state":"TX","zip":"78701","status":"pending"}`,
		"order_items":     `{"order_id":"#W0000001","position":1,"name":"T-Shirt","product_id":"1000000001","item_id":"2000000001","price":50.88}`,
		"variant_options": `{"item_id":"2000000001","position":1,"name":"size","value":"M"}`,
		"variants":        `{"item_id":"2000000002","product_id":"1000000001","position":1,"available":false,"price":49.67}`,
		"fulfillments":    `{"order_id":"#W0000002","position":0,"tracking_id":["123456789012"],"item_ids":["2000000003"]}`,
		"payment_history": `{"order_id":"#W0000002","position":1,"transaction_type":"refund","amount":120.0,"payment_method_id":"credit_card_0000001"}`,
	} {
		if !strings.Contains(seed(table), line+"\n") {
			t.Errorf("%s lacks %s:\n%s", table, line, seed(table))
		}
	}
	if got := read(t, filepath.Join(out, "schema.sql")); got != schema {
		t.Error("schema.sql is not the converter's schema")
	}
	again := t.TempDir()
	if _, err := convert(filepath.Join("testdata", "fixture"), again); err != nil {
		t.Fatal(err)
	}
	for _, table := range tables {
		if seed(table) != read(t, filepath.Join(again, "seed", table+".jsonl")) {
			t.Errorf("%s differs between two runs", table)
		}
	}
}

// TestConvertRefusesSurprises: a field the published shape does not have, or
// data that contradicts itself, stops the conversion with where it is.
func TestConvertRefusesSurprises(t *testing.T) {
	for _, tc := range []struct{ file, from, to, want string }{
		{"users.json", `"email": "al.ng0002@example.com",`, `"email": "al.ng0002@example.com", "dob": "1990-01-01",`, `unknown field "dob"`},
		{"users.json", `"orders": ["#W0000002", "#W0000001"]`, `"orders": ["#W0000002"]`, "order #W0000001 of zoe_quinn_0001 is in no user's list"},
		{"users.json", `"orders": ["#W0000003"]`, `"orders": ["#W0000003", "#W0000009"]`, "users.json lists 4 orders, orders.json holds 3"},
		{"users.json", `"orders": ["#W0000003"]`, `"orders": ["#W0000003", "#W0000001"]`, "is listed by"},
		{"users.json", `"paypal_0000003": {"source": "paypal", "id": "paypal_0000003"}`, `"paypal_0000003": {"source": "paypal", "id": "paypal_9"}`, `has id "paypal_9"`},
		{"orders.json", `"#W0000003": {
        "order_id": "#W0000003"`, `"#W0000003": {
        "order_id": "#W0000004"`, `has id "#W0000004"`},
		{"orders.json", `"payment_method_id": "paypal_0000003"`, `"payment_method_id": "gift_card_0000002"`, "gift_card_0000002 is not one of al_ng_0002's"},
		{"orders.json", `"item_id": "2000000002", "price": 49.67, "options": {"color": "red", "size": "L"}`, `"item_id": "2000000002", "price": 49.67, "options": {"size": "L", "color": "red"}`, "options other than its variant's"},
		{"orders.json", `{"name": "Lamp", "product_id": "1000000002", "item_id": "2000000003"`, `{"name": "Lamp", "product_id": "1000000001", "item_id": "2000000003"`, "not a variant of product 1000000001"},
		{"products.json", `"options": {"power": "battery"}`, `"options": {"power": 3}`, "option value is not a string"},
	} {
		src := t.TempDir()
		copyTree(t, filepath.Join("testdata", "fixture"), src)
		path := filepath.Join(src, "data", tc.file)
		body := read(t, path)
		if !strings.Contains(body, tc.from) {
			t.Fatalf("fixture lacks %s", tc.from)
		}
		os.WriteFile(path, []byte(strings.Replace(body, tc.from, tc.to, 1)), 0o644)
		if _, err := convert(src, t.TempDir()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.to, err, tc.want)
		}
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWorldIsTheConversion: the world beside this converter is exactly what
// it makes of the published data (TAU_BENCH_DIR: a checkout of the benchmark).
func TestWorldIsTheConversion(t *testing.T) {
	root := taubenchtest.Checkout(t)
	out := t.TempDir()
	if _, err := convert(filepath.Join(root, "tau_bench", "envs", "retail"), out); err != nil {
		t.Fatal(err)
	}
	files := []string{"schema.sql"}
	for _, table := range tables {
		files = append(files, filepath.Join("seed", table+".jsonl"))
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join("..", "world", f))
		if err != nil {
			t.Fatal(err)
		}
		if want := []byte(read(t, filepath.Join(out, f))); !bytes.Equal(got, want) {
			t.Errorf("world/%s is not what the converter writes: regenerate it (see README.md)", f)
		}
	}
}
