package world

import (
	"errors"
	"strings"
	"testing"
)

var guardCases = []struct {
	sql      string
	readOnly bool
	ok       bool
}{
	{"SELECT 1", true, true},
	{"  with x as (select 1) select * from x;  ", true, true},
	{"VALUES (1)", true, true},
	{"TABLE orders", true, true},
	{"UPDATE orders SET status = 'x'", true, false},
	{"UPDATE orders SET status = 'x'", false, true},
	{"insert into t values ('a;b')", false, true},
	{"DELETE FROM t -- trailing; comment", false, true},
	{"/* lead */ SELECT 1", true, true},
	{"/* nested /* c */ */ SELECT 1", true, true},
	{"SELECT $$ a; RESET ROLE $$", true, true},
	{"SELECT $tag$ set_config $tag$", true, true},
	{"SELECT E'it\\'s; set_config'", true, true},
	{"SELECT 'x' AS \"set_config\"", true, false}, // a quoted identifier is still a name
	{"SELECT 1; SELECT 2", true, false},
	{"SELECT 1;;", true, false},
	{"RESET ROLE", false, false},
	{"SET ROLE postgres", false, false},
	{"select set_config('role', 'none', true)", true, false},
	{"SELECT pg_catalog.SET_CONFIG('x', 'y', true)", true, false},
	{"SELECT pg_advisory_lock(1)", true, false},
	{"SELECT pg_try_advisory_lock(1)", true, false},
	{"COPY t TO STDOUT", false, false},
	{"DO $$ BEGIN END $$", false, false},
	{"CALL p()", false, false},
	{"", true, false},
	{"   -- only a comment", true, false},
	{"SELECT 'unterminated", true, false},
	{"SELECT /* unterminated", true, false},
	{"(SELECT 1)", true, false},
}

func TestCheckSQL(t *testing.T) {
	for _, c := range guardCases {
		err := checkSQL(c.sql, c.readOnly)
		if (err == nil) != c.ok {
			t.Errorf("checkSQL(%q, readOnly=%v) = %v, want ok=%v", c.sql, c.readOnly, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrStatement) {
			t.Errorf("%q: error does not wrap ErrStatement: %v", c.sql, err)
		}
	}
}

func FuzzCheckSQL(f *testing.F) {
	for _, c := range guardCases {
		f.Add(c.sql, c.readOnly)
	}
	f.Fuzz(func(t *testing.T, sql string, readOnly bool) {
		if checkSQL(sql, readOnly) != nil {
			return
		}
		// Whatever is accepted has every quote and comment closed, so a
		// second statement after it can never hide.
		if checkSQL(sql+"\n; RESET ROLE", readOnly) == nil {
			t.Fatalf("accepted %q followed by a second statement", sql)
		}
		if checkSQL(sql+"\n; select set_config('role','none',true)", readOnly) == nil {
			t.Fatalf("accepted %q followed by set_config", sql)
		}
		if strings.TrimSpace(sql) == "" {
			t.Fatalf("empty statement accepted: %q", sql)
		}
	})
}
