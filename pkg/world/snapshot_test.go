package world

import (
	"context"
	"reflect"
	"testing"

	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// DiffSnapshots decodes only the tables that changed and must say exactly
// what Diff of the full states says.
func TestDiffSnapshotsMatchesDiff(t *testing.T) {
	pool := testenv.Postgres(t)
	w := open(t, pool, newContract(t, seeds), script.Options{})
	ctx := context.Background()
	err := w.Copy(ctx, func(cp *Copy) error {
		s0, err := cp.State(ctx)
		if err != nil {
			return err
		}
		n0, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		if d, err := DiffSnapshots(n0, n0); err != nil || !d.Empty() {
			t.Errorf("a snapshot against itself: %+v %v", d, err)
		}
		if _, err := cp.Exec(ctx, "UPDATE orders SET status = 'cancelled' WHERE id = '#W1'"); err != nil {
			return err
		}
		if _, err := cp.Exec(ctx, "INSERT INTO users (user_id, name, since) VALUES ('u9', 'Ez', '2021-01-01')"); err != nil {
			return err
		}
		s1, err := cp.State(ctx)
		if err != nil {
			return err
		}
		n1, err := cp.Snapshot(ctx)
		if err != nil {
			return err
		}
		got, err := DiffSnapshots(n0, n1)
		if err != nil {
			return err
		}
		want := Diff(s0, s1)
		if want.Empty() || !reflect.DeepEqual(got, want) {
			t.Errorf("DiffSnapshots %+v, Diff %+v", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
