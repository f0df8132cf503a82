package prove

import (
	"errors"
	"testing"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// The kept answers are the search's own, asked once or many times.
func TestVolatileInKeepsTheAnswer(t *testing.T) {
	cases := map[string]string{
		`INSERT INTO orders (id, placed) VALUES ($1, now())`:                "now(",
		`INSERT INTO orders (id, note) VALUES ($1, 'placed now() by hand')`: "",
		`UPDATE orders SET placed = CURRENT_TIMESTAMP WHERE id = $1`:        "CURRENT_TIMESTAMP",
		`INSERT INTO orders (id) VALUES (nextval('orders_id_seq'))`:         "nextval(",
		`DELETE FROM orders WHERE id = $1 -- random() in a comment`:         "",
		`INSERT INTO users (id, name) VALUES ($1, $2)`:                      "",
	}
	for range 3 {
		for sql, want := range cases {
			if got := volatileIn(sql); got != want {
				t.Errorf("volatileIn(%q) = %q, want %q", sql, got, want)
			}
		}
	}
	err := checkSetup([]scenario.Statement{{SQL: `INSERT INTO users (id) VALUES ($1)`}, {SQL: `UPDATE users SET seen = now() WHERE id = $1`}})
	var se *scenario.SetupError
	if !errors.As(err, &se) || se.Index != 1 {
		t.Fatalf("checkSetup: %v, want a SetupError naming statement 1", err)
	}
}
