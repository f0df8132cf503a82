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
	// Unicode escapes decode before names are compared.
	{`SELECT U&"set\005fconfig"('role', session_user, true)`, true, false},
	{`select u&"set!005fconfig" UESCAPE '!' ('role', 'x', true)`, true, false},
	{`SELECT U&"set!005fconfig" /* c */ uescape /* d */ '!' ('role', 'x', true)`, true, false},
	{`SELECT U&"\+000073et_config"('a', 'b', true)`, true, false},
	{`SELECT U&"d\0061t\+000061" FROM t`, true, true},
	{`SELECT U&"\zz" FROM t`, true, false},
	{`SELECT U&'\0041' AS a, U&'it''s' AS b`, true, true},
	{`SELECT U&"set_config" UESCAPE '!'`, true, false},
	{`SELECT menu&"x" FROM t`, true, true},
	// Quoted names, and the functions that reach files and other sessions.
	{`SELECT "pg_read_file"('/etc/hostname')`, true, false},
	{`SELECT pg_catalog."pg_terminate_backend"(1)`, true, false},
	{"SELECT pg_ls_dir('.')", true, false},
	{"SELECT lo_import('/etc/hostname')", true, false},
	{"SELECT lo_export(1, '/tmp/x')", true, false},
	{"SELECT pg_reload_conf()", true, false},
	{"SELECT pg_cancel_backend(1)", true, false},
	// Only a one-letter E prefix makes an escape string: after date the
	// backslash is a plain byte and the string ends at the second quote.
	{`SELECT date'x\'; RESET ROLE --'`, true, false},
	{`SELECT date'x\' AS d`, true, true},
	{`SELECT e'x\'; RESET ROLE --'`, true, true},
	{"SELECT $pg_read_file('x')", true, false},
	{`SELECT ""`, true, false},
	{"SELECT 1 + " + strings.Repeat("1 + ", maxStatement/4) + "1", true, false},
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
