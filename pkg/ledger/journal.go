package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/suitegen/suitegen/pkg/scenario"
)

// JournalResult is what Journal did with a scenario.
type JournalResult int

const (
	// Credited: the scenario is new and now counts toward its bucket.
	Credited JournalResult = iota + 1
	// Already: the same scenario was credited before (a redelivered slice);
	// nothing was written and that is a success.
	Already
)

func (r JournalResult) String() string {
	switch r {
	case Credited:
		return "credited"
	case Already:
		return "already"
	}
	return "unknown"
}

// Conflict kinds.
const (
	ConflictName    = "name"    // the name holds different content
	ConflictBranch  = "branch"  // (use_case, branch) is taken
	ConflictContent = "content" // the same content is filed under another name
	ConflictCode    = "code"    // a code is used by another scenario
)

// ConflictError is a suite-gate refusal from the journal: what clashed and the
// scenario already holding it. A conflict writes nothing.
type ConflictError struct {
	Kind  string // ConflictName, ConflictBranch, ConflictContent or ConflictCode
	Other string // the scenario already holding it
	Code  string // the clashing code, for ConflictCode
}

func (e *ConflictError) Error() string {
	if e.Kind == ConflictCode {
		return fmt.Sprintf("ledger: code %q is already used by scenario %q", e.Code, e.Other)
	}
	return fmt.Sprintf("ledger: %s conflict with scenario %q", e.Kind, e.Other)
}

// Canonical is a scenario's canonical JSON (json.Marshal of the struct, so the
// struct fixes field order and maps are key-sorted) and its sha256 in hex.
func Canonical(sc *scenario.Scenario) ([]byte, string, error) {
	b, err := json.Marshal(sc)
	if err != nil {
		return nil, "", fmt.Errorf("ledger: canonical json of %s: %w", sc.Name, err)
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:]), nil
}

// Entry is a scenario as the journal stores it: its canonical body, the
// body's hash, and the hash of what it tests (contentHash).
type Entry struct {
	Body         []byte
	Sum, Content string
}

// Encode is the journal's entry for sc, or an error when sc has no name or
// is over the scenario size limit: the checks and hashes every ledger
// (Store, and the in-memory one its role tests use) applies alike.
func Encode(sc *scenario.Scenario) (Entry, error) {
	if sc == nil || sc.Name == "" {
		return Entry{}, errors.New("ledger: journal: scenario has no name")
	}
	body, sum, err := Canonical(sc)
	if err != nil {
		return Entry{}, err
	}
	if len(body) > scenario.MaxSize {
		return Entry{}, fmt.Errorf("ledger: journal %s: %d bytes is over the %d byte scenario limit", sc.Name, len(body), scenario.MaxSize)
	}
	content, err := contentHash(sc)
	if err != nil {
		return Entry{}, err
	}
	return Entry{Body: body, Sum: sum, Content: content}, nil
}

// contentHash hashes what a scenario tests, not what it is called or who
// proved it: the name and the writer/slice provenance are blanked.
func contentHash(sc *scenario.Scenario) (string, error) {
	c := *sc
	c.Name = ""
	c.Provenance.Writer = ""
	c.Provenance.Slice = ""
	_, h, err := Canonical(&c)
	return h, err
}

// Journal credits one proved scenario, idempotently, in one transaction: the
// scenario row and its codes. It returns Credited for a new scenario, Already
// when the same scenario (same name, same content, possibly proved by another
// writer after a redelivery) is in the journal, or a *ConflictError.
//
// Concurrent journals of one name are safe: Postgres makes the second insert
// wait for the first to commit, so exactly one is credited and the other sees
// Already or a conflict.
func (s *Store) Journal(ctx context.Context, run string, sc *scenario.Scenario, sliceID, writer string, codes []string) (JournalResult, error) {
	e, err := Encode(sc)
	if err != nil {
		return 0, err
	}
	body, sum, content := e.Body, e.Sum, e.Content
	codes = sortedUnique(codes)
	var res JournalResult
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		res = 0
		tag, err := tx.Exec(ctx, `INSERT INTO scenarios (run_id, name, bucket_id, use_case, branch, slice_id, writer, sha256, content_sha256, body)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10::jsonb) ON CONFLICT DO NOTHING`,
			run, sc.Name, sc.Bucket, sc.UseCase, sc.Branch, sliceID, writer, sum, content, string(body))
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			r, err := clash(ctx, tx, run, sc, sum, content)
			if err != nil {
				return err
			}
			res = r
			return nil
		}
		// Sorted codes: two journals never wait on each other's codes in a cycle.
		for _, code := range codes {
			tag, err := tx.Exec(ctx, `INSERT INTO scenario_codes (run_id, code, name) VALUES ($1,$2,$3) ON CONFLICT DO NOTHING`,
				run, code, sc.Name)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				var other string
				if err := tx.QueryRow(ctx, `SELECT name FROM scenario_codes WHERE run_id = $1 AND code = $2`, run, code).Scan(&other); err != nil {
					return fmt.Errorf("code %q: %w", code, err)
				}
				return &ConflictError{Kind: ConflictCode, Other: other, Code: code}
			}
		}
		res = Credited
		return nil
	})
	if err != nil {
		var ce *ConflictError
		if errors.As(err, &ce) {
			return 0, ce
		}
		return 0, fmt.Errorf("ledger: journal %s in run %s: %w", sc.Name, run, err)
	}
	return res, nil
}

// clash explains why a scenario insert did nothing. The insert waited for any
// concurrent writer of the clashing row to commit, so this statement sees it.
func clash(ctx context.Context, tx pgx.Tx, run string, sc *scenario.Scenario, sum, content string) (JournalResult, error) {
	var oldSum string
	var oldContent *string
	err := tx.QueryRow(ctx, `SELECT sha256, content_sha256 FROM scenarios WHERE run_id = $1 AND name = $2`, run, sc.Name).Scan(&oldSum, &oldContent)
	switch {
	case err == nil:
		if oldSum == sum || (oldContent != nil && *oldContent == content) {
			return Already, nil
		}
		return 0, &ConflictError{Kind: ConflictName, Other: sc.Name}
	case !errors.Is(err, pgx.ErrNoRows):
		return 0, err
	}
	// Content before branch: a copy under a new name also repeats the branch.
	var other string
	err = tx.QueryRow(ctx, `SELECT name FROM scenarios WHERE run_id = $1 AND (content_sha256 = $2 OR sha256 = $3) LIMIT 1`, run, content, sum).Scan(&other)
	if err == nil {
		return 0, &ConflictError{Kind: ConflictContent, Other: other}
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return 0, err
	}
	err = tx.QueryRow(ctx, `SELECT name FROM scenarios WHERE run_id = $1 AND use_case = $2 AND branch = $3`, run, sc.UseCase, sc.Branch).Scan(&other)
	if err == nil {
		return 0, &ConflictError{Kind: ConflictBranch, Other: other}
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return 0, err
	}
	// The clashing row vanished (its transaction rolled back after we waited):
	// retry the whole journal.
	return 0, errRetry
}

var errRetry = errors.New("ledger: clashing row disappeared")

func sortedUnique(xs []string) []string {
	out := make([]string, 0, len(xs))
	seen := make(map[string]bool, len(xs))
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// Scenarios returns a run's credited scenarios ordered by (bucket ord, name):
// stable keys, never completion order. Scenarios of unknown buckets come last.
func (s *Store) Scenarios(ctx context.Context, run string) ([]scenario.Scenario, error) {
	return s.ScenariosAfter(ctx, run, "", 0)
}

// ScenariosAfter is the next page of Scenarios: at most n of the run's
// credited scenarios in the same order, from the one after the scenario
// named after ("" from the first). An output stage reads a suite a page at a
// time, so its memory does not grow with the suite. n <= 0 reads to the end.
func (s *Store) ScenariosAfter(ctx context.Context, run, after string, n int) ([]scenario.Scenario, error) {
	var limit *int // NULL: LIMIT ALL
	if n > 0 {
		limit = &n
	}
	// The order's key is (no bucket, bucket ord, name): NULLS LAST as a
	// value a row comparison can take. The name is unique within a run.
	rows, err := s.pool.Query(ctx, `SELECT sc.body FROM scenarios sc
		LEFT JOIN buckets b ON b.run_id = sc.run_id AND b.id = sc.bucket_id
		WHERE sc.run_id = $1 AND ($2 = '' OR (b.ord IS NULL, coalesce(b.ord, 0), sc.name) >
			(SELECT a.ord IS NULL, coalesce(a.ord, 0), s2.name FROM scenarios s2
			 LEFT JOIN buckets a ON a.run_id = s2.run_id AND a.id = s2.bucket_id
			 WHERE s2.run_id = $1 AND s2.name = $2))
		ORDER BY b.ord IS NULL, coalesce(b.ord, 0), sc.name LIMIT $3`, run, after, limit)
	if err != nil {
		return nil, fmt.Errorf("ledger: scenarios of run %s: %w", run, err)
	}
	defer rows.Close()
	var out []scenario.Scenario
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("ledger: scenarios of run %s: %w", run, err)
		}
		// The shared strict decoder: numbers come back as int64 or float64,
		// as the world expects them, without float rounding of large ids.
		sc, err := scenario.Decode(body)
		if err != nil {
			return nil, fmt.Errorf("ledger: scenarios of run %s: %w", run, err)
		}
		out = append(out, *sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ledger: scenarios of run %s: %w", run, err)
	}
	return out, nil
}

// Count is the number of credited scenarios of a run.
func (s *Store) Count(ctx context.Context, run string) (int, error) {
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM scenarios WHERE run_id = $1`, run).Scan(&n); err != nil {
		return 0, fmt.Errorf("ledger: count run %s: %w", run, err)
	}
	return n, nil
}
