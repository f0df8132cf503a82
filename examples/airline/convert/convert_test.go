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

// TestConvertFixture converts a small domain in the published shape: rows keep
// the published order in their positions (a user's reservations as the user
// lists them, payment methods as the profile holds them), absent fields stay
// out of the seed, and a second run writes the same bytes.
func TestConvertFixture(t *testing.T) {
	out := t.TempDir()
	counts, err := convert(filepath.Join("testdata", "fixture"), out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"users": 2, "payment_methods": 2, "saved_passengers": 1, "airports": 2, "flights": 1,
		"flight_dates": 3, "reservations": 2, "reservation_flights": 2, "reservation_passengers": 3, "payment_history": 3}
	for _, c := range counts {
		if want[c.table] != c.rows {
			t.Errorf("%s: %d rows, want %d", c.table, c.rows, want[c.table])
		}
	}
	seed := func(table string) string { return read(t, filepath.Join(out, "seed", table+".jsonl")) }
	for table, line := range map[string]string{
		"payment_methods": `{"user_id":"zoe_quinn_0001","id":"gift_card_0000002","position":0,"source":"gift_card","amount":40}`,
		"reservations":    `{"reservation_id":"BBBBBB","user_id":"zoe_quinn_0001","position":0,"origin":"BOS","destination":"MIA","flight_type":"one_way","cabin":"business","created_at":"2024-05-11T10:00:00","total_baggages":0,"nonfree_baggages":0,"insurance":"yes","status":"cancelled"}`,
		"flight_dates":    `{"flight_number":"HAT900","date":"2024-05-21","status":"delayed","estimated_departure_time_est":"2024-05-21T23:00:00","estimated_arrival_time_est":"2024-05-22T02:00:00"}`,
		"payment_history": `{"reservation_id":"BBBBBB","position":1,"payment_id":"gift_card_0000002","amount":-800}`,
		"airports":        `{"iata":"MIA","city":"Miami","position":1}`,
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
		{"users.json", `"membership": "silver"`, `"membership": "silver", "tier": 2`, `unknown field "tier"`},
		{"users.json", `"reservations": ["BBBBBB", "AAAAAA"]`, `"reservations": ["BBBBBB"]`, "reservation AAAAAA of zoe_quinn_0001 is in no user's list"},
		{"users.json", `"reservations": ["BBBBBB", "AAAAAA"]`, `"reservations": ["BBBBBB", "AAAAAA", "GHOST1"]`, "users.json lists 3 reservations, reservations.json holds 2"},
		{"users.json", `"reservations": []`, `"reservations": ["AAAAAA"]`, "is listed by"},
		{"reservations.json", `"AAAAAA": {"reservation_id": "AAAAAA"`, `"AAAAAA": {"reservation_id": "CCCCCC"`, `has id "CCCCCC"`},
		{"flights.json", `"2024-05-19": {"status": "landed"`, `"2024-05-22": {"status": "landed"`, "dates are not in order"},
		{"users.json", `"gift_card_0000002": {"source": "gift_card", "amount": 40, "id": "gift_card_0000002"}`, `"gift_card_0000002": {"source": "gift_card", "amount": 40, "id": "gift_card_9"}`, `has id "gift_card_9"`},
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

// TestWorldIsTheConversion: the committed world is exactly what the converter
// makes of the published data (TAU_BENCH_DIR: a checkout of the benchmark).
func TestWorldIsTheConversion(t *testing.T) {
	root := taubenchtest.Checkout(t)
	out := t.TempDir()
	if _, err := convert(filepath.Join(root, "tau_bench", "envs", "airline"), out); err != nil {
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

// FuzzConvert feeds arbitrary users.json files to the converter with the
// fixture's other files: it converts or refuses, never panics, and what it
// converts has one user row per user it read.
func FuzzConvert(f *testing.F) {
	users, err := os.ReadFile(filepath.Join("testdata", "fixture", "data", "users.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(users)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"a": {"payment_methods": {"x": {"id": "x"}}, "reservations": []}}`))
	f.Add([]byte(`[1, 2]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		src := t.TempDir()
		copyTree(t, filepath.Join("testdata", "fixture"), src)
		if err := os.WriteFile(filepath.Join(src, "data", "users.json"), body, 0o644); err != nil {
			t.Fatal(err)
		}
		counts, err := convert(src, t.TempDir())
		if err != nil {
			return
		}
		if counts[0].table != "users" || counts[0].rows < 1 {
			t.Fatalf("converted without the fixture's users: %+v", counts)
		}
	})
}
