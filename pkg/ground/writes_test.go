package ground

import (
	"context"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// bookWorld answers every call ok, writing what writes says.
type bookWorld struct{ writes []scenario.Statement }

func (w bookWorld) Rehearse(_ context.Context, _ []scenario.Statement, calls []scenario.Call) ([]Answer, error) {
	out := make([]Answer, len(calls))
	for i := range out {
		out[i] = Answer{OK: true, Wrote: true}
	}
	return out, nil
}

func (w bookWorld) RehearseWrites(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]Answer, []scenario.Statement, error) {
	ans, err := w.Rehearse(ctx, setup, calls)
	return ans, w.writes, err
}

// onlyRehearses cannot tell what a call wrote.
type onlyRehearses struct{ w bookWorld }

func (o onlyRehearses) Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]Answer, error) {
	return o.w.Rehearse(ctx, setup, calls)
}

// A new value of a table's key is one to write only where the act writes
// that table: a booking that copies its origin into the reservation names
// an airport; one a rehearser cannot tell about keeps the value.
func TestWritesTable(t *testing.T) {
	booking := bookWorld{writes: []scenario.Statement{
		{SQL: "INSERT INTO reservations (reservation_id, origin) VALUES ($1, $2)", Args: []any{"HATHAT", "SFQ"}},
		{SQL: "UPDATE payment_methods SET amount = $1 WHERE id = $2", Args: []any{10, "g1"}},
	}}
	s := &search{r: booking, t: &contract.Tool{Name: "book"}, used: map[string]any{"origin": "SFQ"}, wrote: true}
	for table, want := range map[string]bool{"airports": false, "reservations": true, "payment_methods": true} {
		if got, err := s.writesTable(context.Background(), table); err != nil || got != want {
			t.Errorf("writesTable(%s) = %v, %v; want %v", table, got, err, want)
		}
	}
	for _, r := range []Rehearser{onlyRehearses{booking}, bookWorld{}} {
		s.r = r
		if got, err := s.writesTable(context.Background(), "airports"); err != nil || !got {
			t.Errorf("%T: writesTable = %v, %v; want true (nothing to tell by)", r, got, err)
		}
	}
	for sql, want := range map[string]string{
		"INSERT INTO t (a) VALUES ($1)": "t", "update u SET a = $1": "u", "DELETE FROM v WHERE a = $1": "v", "SELECT 1": "",
	} {
		if got := WrittenTable(sql); got != want {
			t.Errorf("WrittenTable(%q) = %q, want %q", sql, got, want)
		}
	}
}
