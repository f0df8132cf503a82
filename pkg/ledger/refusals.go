package ledger

import (
	"context"
	"fmt"
)

// Refuse records a gate refusal of a scenario a writer submitted.
func (s *Store) Refuse(ctx context.Context, run, slice, bucket, gate, code, message string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO refusals (run_id, slice_id, bucket_id, gate, code, message) VALUES ($1,$2,$3,$4,$5,$6)`,
		run, slice, bucket, gate, code, message)
	if err != nil {
		return fmt.Errorf("ledger: refuse in run %s slice %s: %w", run, slice, err)
	}
	return nil
}

// Refusals counts a run's gate refusals by "gate/code".
func (s *Store) Refusals(ctx context.Context, run string) (map[string]int, error) {
	rows, err := s.pool.Query(ctx, `SELECT gate || '/' || code, count(*) FROM refusals WHERE run_id = $1 GROUP BY gate, code`, run)
	if err != nil {
		return nil, fmt.Errorf("ledger: refusals of run %s: %w", run, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("ledger: refusals of run %s: %w", run, err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: refusals of run %s: %w", run, err)
	}
	return out, nil
}

// Reason is one kind of gate refusal and how often it happened.
type Reason struct {
	Gate    string
	Code    string
	Count   int
	Example string // the smallest message of the kind, so the same ledger gives the same text
}

// TopRefusals lists a run's most frequent refusal reasons, most frequent
// first, ties by gate and code: the lessons a planner hands later rounds.
func (s *Store) TopRefusals(ctx context.Context, run string, limit int) ([]Reason, error) {
	rows, err := s.pool.Query(ctx, `SELECT gate, code, count(*), min(message) FROM refusals WHERE run_id = $1
		GROUP BY gate, code ORDER BY count(*) DESC, gate, code LIMIT $2`, run, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger: refusal reasons of run %s: %w", run, err)
	}
	defer rows.Close()
	var out []Reason
	for rows.Next() {
		var r Reason
		if err := rows.Scan(&r.Gate, &r.Code, &r.Count, &r.Example); err != nil {
			return nil, fmt.Errorf("ledger: refusal reasons of run %s: %w", run, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: refusal reasons of run %s: %w", run, err)
	}
	return out, nil
}

// BucketRefusal is the most frequent refusal of a bucket: its gate and code,
// how often, out of how many refusals in all, and an example message.
type BucketRefusal struct {
	Gate    string `json:"gate"`
	Code    string `json:"code"`
	Count   int    `json:"count"`
	Of      int    `json:"of"`
	Example string `json:"example"`
}

// BucketRefusals returns, per bucket of a run, its most frequent refusal
// (ties broken by gate and code), with the smallest message of that kind as
// its example, so the same ledger always gives the same text.
func (s *Store) BucketRefusals(ctx context.Context, run string) (map[string]BucketRefusal, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT bucket_id, gate, code, n, total, example FROM (
			SELECT bucket_id, gate, code, count(*) AS n,
				sum(count(*)) OVER (PARTITION BY bucket_id) AS total,
				min(message) AS example,
				row_number() OVER (PARTITION BY bucket_id ORDER BY count(*) DESC, gate, code) AS rank
			FROM refusals WHERE run_id = $1 GROUP BY bucket_id, gate, code) t
		WHERE rank = 1`, run)
	if err != nil {
		return nil, fmt.Errorf("ledger: top refusals of run %s: %w", run, err)
	}
	defer rows.Close()
	out := map[string]BucketRefusal{}
	for rows.Next() {
		var b string
		var r BucketRefusal
		var total int64
		if err := rows.Scan(&b, &r.Gate, &r.Code, &r.Count, &total, &r.Example); err != nil {
			return nil, fmt.Errorf("ledger: top refusals of run %s: %w", run, err)
		}
		r.Of = int(total)
		out[b] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: top refusals of run %s: %w", run, err)
	}
	return out, nil
}
