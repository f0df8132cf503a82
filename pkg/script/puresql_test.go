package script

import "testing"

// A query is arithmetic only when nothing in it can reach a row, the
// clock or the session.
func TestPureSQL(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		pure bool
	}{
		{"SELECT to_char(make_date($1, $2, 1) + ($3 - 1), 'YYYY-MM-DD') AS d", true},
		{"select ($1::date > $2::date + 120) as far", true},
		{"SELECT coalesce(nullif(trim($1), ''), 'none') AS v, $2::numeric(10,2) AS n", true},
		{"SELECT CASE WHEN $1 > 0 THEN 'a' ELSE 'b' END AS c", true},
		{"SELECT 1 AS x FROM orders", false},
		{"SELECT (SELECT max(id) FROM orders) AS m", false},
		{"SELECT $1::date < current_date AS past", false},
		{"SELECT now() AS t", false},
		{"SELECT 'today'::date AS d", false},
		{"SELECT ' Now '::timestamp AS d", false},
		{"SELECT balance_of($1) AS b", false},
		{"SELECT public.upper($1) AS u", false},
		{`SELECT "upper"($1) AS u`, false},
		{"SELECT nextval('ids') AS n", false},
		{"SELECT current_user AS u", false},
		{"SELECT 'orders'::regclass AS r", false},
		{"SELECT 1 AS a; DELETE FROM orders", false},
		{"WITH x AS (SELECT 1) SELECT * FROM x", false},
		{"UPDATE orders SET status = 'x'", false},
		{"SELECT 'unterminated", false},
		{"", false},
	} {
		if got := pureSQL(tc.sql); got != tc.pure {
			t.Errorf("pureSQL(%q) = %v, want %v", tc.sql, got, tc.pure)
		}
	}
}
