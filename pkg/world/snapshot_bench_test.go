package world

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// BenchmarkSnapshot is one snapshot of a copy of examples/airline (about
// 25,000 rows, 3.7 MB as JSON) after what a proof's copies typically do:
// nothing, add rows (a setup's inserts), change a frozen row. "whole"
// renders every table, as every snapshot did before untouched and
// only-added-to tables were sent as what the copy wrote.
func BenchmarkSnapshot(b *testing.B) {
	w := openAirline(b)
	ctx := context.Background()
	benchSnapshot(b, w, ctx)
}

func openAirline(b testing.TB) *World {
	_, file, _, _ := runtime.Caller(0)
	c, problems, err := contract.Load(filepath.Join(filepath.Dir(file), "..", "..", "examples", "airline"))
	if err != nil || len(problems) > 0 {
		b.Fatalf("load: %v %v", err, problems)
	}
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		b.Fatal(err)
	}
	w, err := Open(context.Background(), testenv.Postgres(b), c, progs, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return w
}

func benchSnapshot(b *testing.B, w *World, ctx context.Context) {
	const add = `INSERT INTO users (user_id, first_name, last_name, address1, address2, city, country, state, zip, email, dob, membership)
VALUES ('zz_bench_1', 'Zed', 'Bench', '1 Way', '', 'Austin', 'USA', 'TX', '78750', 'z@example.com', '1990-01-01', 'gold')`
	const change = `UPDATE reservations SET insurance = 'yes' WHERE reservation_id = '4WQ150'`
	for _, bc := range []struct {
		name  string
		stmts []string
		whole bool
	}{
		{"untouched", nil, false},
		{"added", []string{add}, false},
		{"changed", []string{change}, false},
		{"whole", nil, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var bytes int
			for b.Loop() {
				err := w.Copy(ctx, func(cp *Copy) error {
					for _, s := range bc.stmts {
						if _, err := cp.Exec(ctx, s); err != nil {
							return err
						}
					}
					snap, err := cp.snapshot(ctx, bc.whole)
					for _, t := range snap.tables {
						switch {
						case t.layered && t.touched:
							bytes += len(t.ours)
						case t.touched || bc.whole:
							bytes += len(t.doc)
						}
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "sent-B/op")
		})
	}
}
