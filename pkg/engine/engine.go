// Package engine puts together what proving a contract's scenarios takes: the
// loaded contract, its compiled Starlark, its world in Postgres and a prover.
// Contracts travel through the ledger by hash, so a stateless writer can build
// the engine of any run it is handed without the contract directory.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// Engine is one contract, ready to prove scenarios.
type Engine struct {
	C      *contract.Contract
	Progs  *script.Programs
	World  *world.World
	Prover *prove.Prover
}

// Open compiles the contract and opens (creating and seeding once) its world.
func Open(ctx context.Context, pool *pgxpool.Pool, c *contract.Contract) (*Engine, error) {
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		return nil, fmt.Errorf("engine: compile %s: %w", c.Agent, err)
	}
	w, err := world.Open(ctx, pool, c, progs, world.Options{})
	if err != nil {
		return nil, fmt.Errorf("engine: world of %s: %w", c.Agent, err)
	}
	return &Engine{C: c, Progs: progs, World: w, Prover: prove.New(c, w, progs)}, nil
}

// LoadDir loads and validates a contract directory; problems make it an error.
func LoadDir(dir string) (*contract.Contract, error) {
	c, probs, err := contract.Load(dir)
	if err != nil {
		return nil, err
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return c, nil
}

// Save stores a contract's files in the ledger under its hash.
func Save(ctx context.Context, pool *pgxpool.Pool, c *contract.Contract) error {
	var known bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM contracts WHERE sha256 = $1)`, c.SHA256).Scan(&known); err != nil {
		return fmt.Errorf("engine: save contract %s: %w", c.Agent, err)
	}
	if known {
		// Already stored (a contract fetched from the ledger has no directory left).
		return nil
	}
	files := map[string]string{}
	err := filepath.WalkDir(c.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(c.Dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		return fmt.Errorf("engine: read %s: %w", c.Dir, err)
	}
	js, err := json.Marshal(files)
	if err != nil {
		return err
	}
	_, err = pool.Exec(ctx, `INSERT INTO contracts (sha256, agent, files) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING`, c.SHA256, c.Agent, js)
	if err != nil {
		return fmt.Errorf("engine: save contract %s: %w", c.Agent, err)
	}
	return nil
}

// ErrUnknownContract is a hash the ledger has no contract for.
var ErrUnknownContract = errors.New("engine: unknown contract")

// Fetch loads a contract from the ledger by hash, into a private temp dir.
func Fetch(ctx context.Context, pool *pgxpool.Pool, sha string) (*contract.Contract, error) {
	var raw []byte
	err := pool.QueryRow(ctx, `SELECT files FROM contracts WHERE sha256 = $1`, sha).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownContract, sha)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: fetch contract: %w", err)
	}
	var files map[string]string
	if err := json.Unmarshal(raw, &files); err != nil {
		return nil, fmt.Errorf("engine: decode contract %s: %w", sha, err)
	}
	dir, err := os.MkdirTemp("", "suitegen-contract-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("engine: contract %s has a file outside its directory: %q", sha, rel)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	c, err := LoadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("engine: contract %s from the ledger: %w", sha, err)
	}
	if c.SHA256 != sha {
		return nil, fmt.Errorf("engine: contract %s hashes to %s after loading", sha, c.SHA256)
	}
	return c, nil
}

// Cache keeps one engine per contract hash for a process.
type Cache struct {
	pool *pgxpool.Pool
	mu   sync.Mutex
	m    map[string]*Engine
}

// NewCache returns an empty cache.
func NewCache(pool *pgxpool.Pool) *Cache { return &Cache{pool: pool, m: map[string]*Engine{}} }

// Put adds an engine opened elsewhere.
func (c *Cache) Put(e *Engine) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[e.C.SHA256] = e
}

// Get returns the engine of a contract hash, building it from the ledger once.
func (c *Cache) Get(ctx context.Context, sha string) (*Engine, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[sha]; ok {
		return e, nil
	}
	ct, err := Fetch(ctx, c.pool, sha)
	if err != nil {
		return nil, err
	}
	e, err := Open(ctx, c.pool, ct)
	if err != nil {
		return nil, err
	}
	c.m[sha] = e
	return e, nil
}

// Pool connects to the database with room for writers: a proof may hold two
// connections at once (its copy and, when a check reads world.before, the
// before copy), so a pool smaller than twice the writers can deadlock.
func Pool(ctx context.Context, url string, writers int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("engine: database URL: %w", err)
	}
	if need := int32(2*writers + 8); cfg.MaxConns < need {
		cfg.MaxConns = need
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("engine: database: %w", err)
	}
	return pool, nil
}
