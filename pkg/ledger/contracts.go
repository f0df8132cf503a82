package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Contracts travel through the ledger: the planner stores the files of the
// contract it read, under the contract's hash, and a stateless writer loads
// them by hash, so no process but the planner needs the directory.

// SaveContract stores a contract's files (path -> content) under its hash.
// A hash already stored is left as it is: the same hash is the same files.
func (s *Store) SaveContract(ctx context.Context, sha, agent string, files map[string][]byte) error {
	text := make(map[string]string, len(files))
	for p, b := range files {
		text[p] = string(b)
	}
	js, err := json.Marshal(text)
	if err != nil {
		return fmt.Errorf("ledger: save contract %s: %w", agent, err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO contracts (sha256, agent, files) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING`,
		sha, agent, js); err != nil {
		return fmt.Errorf("ledger: save contract %s: %w", agent, err)
	}
	return nil
}

// ContractFiles returns the files stored under a contract hash, or
// ErrNotFound.
func (s *Store) ContractFiles(ctx context.Context, sha string) (map[string][]byte, error) {
	var raw []byte
	err := s.pool.QueryRow(ctx, `SELECT files FROM contracts WHERE sha256 = $1`, sha).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("ledger: contract %s: %w", sha, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: contract %s: %w", sha, err)
	}
	var text map[string]string
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, fmt.Errorf("ledger: contract %s: %w", sha, err)
	}
	files := make(map[string][]byte, len(text))
	for p, t := range text {
		files[p] = []byte(t)
	}
	return files, nil
}
