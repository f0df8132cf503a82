package ledger_test

import (
	"context"
	"testing"

	"github.com/suitegen/suitegen/pkg/ledger"
)

// BenchmarkStats is one read of the run figures an exporter scrape or a page poll makes, on
// a ledger holding one large run (10,000 scenarios, 1,000 buckets, 4,000 slices, 30,000
// refusals, 40,000 model calls) beside 49 small ones: the cost is one aggregate per table over
// the runs read, on each table's run index.
func BenchmarkStats(b *testing.B) {
	s, ctx := newStore(b)
	seed(b, ctx, s)
	b.ResetTimer()
	for b.Loop() {
		rs, err := s.Stats(ctx, ledger.StatsQuery{Limit: 50})
		if err != nil {
			b.Fatal(err)
		}
		if len(rs) != 50 {
			b.Fatalf("read %d runs, want 50", len(rs))
		}
	}
}

func seed(b *testing.B, ctx context.Context, s *ledger.Store) {
	b.Helper()
	for _, q := range []string{
		`INSERT INTO runs (id, agent, contract_sha256, world_sha256, asked, seed, model, state)
			SELECT 'run-' || g, 'shop', 'c', 'w', 100, 1, 'm', 'writing' FROM generate_series(1, 49) g`,
		`INSERT INTO runs (id, agent, contract_sha256, world_sha256, asked, seed, model, state) VALUES ('big', 'shop', 'c', 'w', 10000, 1, 'm', 'writing')`,
		`INSERT INTO buckets (run_id, id, ord, theme, cell, use_case, angle, outcome, overlay, kind, want, state)
			SELECT r.id, 'b' || g, g, 't', 'c' || g, 'uc', 'a', 'succeed', 'none', 'happy', 10, 'done'
			FROM runs r, generate_series(1, 1000) g WHERE r.id = 'big' OR g <= 20`,
		`INSERT INTO slices (run_id, id, round, bucket_ids, state, writer)
			SELECT r.id, 's' || g, 1, ARRAY['b1'], CASE WHEN g % 50 = 0 THEN 'dead' ELSE 'done' END, CASE WHEN g % 100 = 0 THEN '' ELSE 'w' END
			FROM runs r, generate_series(1, 4000) g WHERE r.id = 'big' OR g <= 10`,
		`INSERT INTO scenarios (run_id, name, bucket_id, use_case, branch, slice_id, sha256, body, content_sha256)
			SELECT r.id, 'sc-' || g, 'b' || (g % 1000), 'uc', 'br-' || g, 's' || (g % 4000), md5(r.id || g), '{}'::jsonb, md5('c' || r.id || g)
			FROM runs r, generate_series(1, 10000) g WHERE r.id = 'big' OR g <= 50`,
		`INSERT INTO refusals (run_id, slice_id, bucket_id, gate, code, message)
			SELECT r.id, 's1', 'b' || (g % 1000), 'static', CASE WHEN g % 3 = 0 THEN 'placeholder' ELSE 'bad-args' END, 'm'
			FROM runs r, generate_series(1, 30000) g WHERE r.id = 'big' OR g <= 30`,
		`INSERT INTO spend (run_id, slice_id, writer, model, prompt_tokens, completion_tokens)
			SELECT r.id, 's' || (g % 4000), 'w', 'm', 1000, 200 FROM runs r, generate_series(1, 40000) g WHERE r.id = 'big' OR g <= 100`,
		`ANALYZE`,
	} {
		if _, err := s.Pool().Exec(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
}
