package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func convertTo(t *testing.T, src string) string {
	t.Helper()
	out := t.TempDir()
	if err := run(src, out, io.Discard); err != nil {
		t.Fatal(err)
	}
	return out
}

func seed(t *testing.T, out, table string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "world", "seed", table+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestConvert(t *testing.T) {
	out := convertTo(t, "testdata")
	schema, err := os.ReadFile(filepath.Join(out, "world", "schema.sql"))
	if err != nil || string(schema) != string(schemaSQL) {
		t.Fatalf("schema.sql not written as embedded: %v", err)
	}
	want := map[string][]string{
		"plans": {`{"plan_id": "P1", "name": "Small", "data_limit_gb": 2.0, "price_per_month": 10.0, "data_refueling_price_per_gb": 4.5}`},
		// Lines name the customer that lists them; source order is kept.
		"lines": {
			`{"line_id": "L2", "customer_id": "C1", "phone_number": "555-010-0002", "status": "Suspended", "plan_id": "P1", "device_id": null, "data_used_gb": 1.5, "data_refueling_gb": 0.0, "roaming_enabled": false, "contract_end_date": null, "last_plan_change_date": null, "last_sim_replacement_date": null, "suspension_start_date": "2025-02-01"}`,
			`{"line_id": "L1", "customer_id": "C1", "phone_number": "555-010-0001", "status": "Active", "plan_id": "P1", "device_id": "D1", "data_used_gb": 2.0, "data_refueling_gb": 0.5, "roaming_enabled": true, "contract_end_date": "2026-01-31", "last_plan_change_date": null, "last_sim_replacement_date": null, "suspension_start_date": null}`,
		},
		// The source's defaults fill what a customer leaves out.
		"customers": {
			`{"customer_id": "C1", "full_name": "Ana Ruiz", "date_of_birth": "1980-01-01", "email": "ana@mail.test", "phone_number": "555-010-0001", "street": "1 Elm St", "city": "Reno", "state": "NV", "zip_code": "89501", "account_status": "Active", "created_at": "2024-05-06T07:08:09", "last_extension_date": null, "goodwill_credit_used_this_year": 0.0}`,
			`{"customer_id": "C2", "full_name": "Bo Chen", "date_of_birth": "1991-12-31", "email": "bo@mail.test", "phone_number": "555-010-0099", "street": "2 Oak St", "city": "Reno", "state": "NV", "zip_code": "89502", "account_status": "Pending Verification", "created_at": "2025-01-01T00:00:00", "last_extension_date": null, "goodwill_credit_used_this_year": 0.0}`,
		},
		"payment_methods": {
			`{"customer_id": "C1", "position": 1, "method_type": "PayPal", "account_number_last_4": "4321", "expiration_date": "01/2030"}`,
			`{"customer_id": "C1", "position": 2, "method_type": "Debit Card", "account_number_last_4": "8765", "expiration_date": "02/2031"}`,
		},
		"bill_line_items": {
			`{"bill_id": "B1", "position": 1, "description": "Small - Line 555-010-0001", "amount": 10.0, "date": "2025-01-05", "item_type": "Plan Charge"}`,
			`{"bill_id": "B1", "position": 2, "description": "Overage", "amount": 2.25, "date": "2025-01-05", "item_type": "Overage"}`,
		},
		// Every line gets the handset of user_db.toml.
		"user_phone_apps": {
			`{"line_id": "L2", "app_name": "messaging", "sms": true, "storage": false, "phone": true, "network": false}`,
			`{"line_id": "L1", "app_name": "messaging", "sms": true, "storage": false, "phone": true, "network": false}`,
		},
	}
	for table, lines := range want {
		got := seed(t, out, table)
		if strings.Join(got, "\n") != strings.Join(lines, "\n") {
			t.Errorf("%s:\n got %s\nwant %s", table, strings.Join(got, "\n     "), strings.Join(lines, "\n     "))
		}
	}
	if got := seed(t, out, "user_phones"); len(got) != 2 || !strings.Contains(got[0], `"battery_level": 55`) || !strings.Contains(got[0], `"mmsc_url": "http://mms.example.test/mms"`) {
		t.Errorf("user_phones: %v", got)
	}
}

// A key the converter does not know, or a record it cannot place, stops it
// rather than being dropped.
func TestConvertRefuses(t *testing.T) {
	for name, edit := range map[string]func(string) string{
		"unknown key": func(s string) string {
			return strings.Replace(s, `name = "Small"`, "name = \"Small\"\nfree_minutes = 100", 1)
		},
		"line of no one": func(s string) string { return strings.Replace(s, `line_ids = ["L1", "L2"]`, `line_ids = ["L1"]`, 1) },
		"missing line": func(s string) string {
			return strings.Replace(s, `line_ids = ["L1", "L2"]`, `line_ids = ["L1", "L2", "L9"]`, 1)
		},
		"bill of another": func(s string) string { return strings.Replace(s, `bill_ids = []`, `bill_ids = ["B1"]`, 1) },
		"not a number":    func(s string) string { return strings.Replace(s, `total_due = 12.25`, `total_due = nan`, 1) },
	} {
		t.Run(name, func(t *testing.T) {
			src := t.TempDir()
			b, err := os.ReadFile(filepath.Join("testdata", "db.toml"))
			if err != nil {
				t.Fatal(err)
			}
			edited := edit(string(b))
			if edited == string(b) {
				t.Fatal("the edit changed nothing")
			}
			u, err := os.ReadFile(filepath.Join("testdata", "user_db.toml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, "db.toml"), []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, "user_db.toml"), u, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := run(src, t.TempDir(), io.Discard); err == nil {
				t.Fatal("converted anyway")
			}
		})
	}
}

// What user_db.toml leaves out stands at the source's defaults.
func TestHandsetDefaults(t *testing.T) {
	src := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "db.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "db.toml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "user_db.toml"), []byte("[device]\nairplane_mode = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := convertTo(t, src)
	phones := seed(t, out, "user_phones")
	for _, want := range []string{`"airplane_mode": true`, `"battery_level": 80`, `"sim_card_status": "active"`,
		`"network_mode_preference": "4g_5g_preferred"`, `"mmsc_url": "http://mms.carrier.com/mms/wapenc"`} {
		if !strings.Contains(phones[0], want) {
			t.Errorf("user_phones %s lacks %s", phones[0], want)
		}
	}
	if apps := seed(t, out, "user_phone_apps"); len(apps) != 4 {
		t.Errorf("want browser and messaging on both lines, got %v", apps)
	}
}

// FuzzConvert feeds the converter any db.toml: it converts or says why not,
// and what it converts has a line only for a customer it knows.
func FuzzConvert(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "db.toml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte("[[lines]]\nline_id = \"L1\"\n"))
	f.Add([]byte("[[customers]]\nline_ids = [\"L1\", \"L1\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var db agentDB
		if decode(data, &db) != nil {
			return
		}
		tables, err := convert(db, userDB{Device: defaultHandset()})
		if err != nil {
			return
		}
		customers := map[string]bool{}
		for _, r := range tables[2].rows {
			customers[r[0].value.(string)] = true
		}
		for _, r := range tables[4].rows {
			if !customers[r[1].value.(string)] {
				t.Fatalf("line %v names customer %v, which was not converted", r[0].value, r[1].value)
			}
		}
		for _, tb := range tables {
			for _, r := range tb.rows {
				if _, err := r.marshal(); err != nil {
					t.Fatalf("%s: %v", tb.name, err)
				}
			}
		}
	})
}
