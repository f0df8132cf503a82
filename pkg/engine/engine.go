// Package engine puts together what proving a contract's scenarios takes: the
// loaded contract, its compiled Starlark, its world in Postgres and a prover.
// Contracts travel through the ledger by hash, so a stateless writer can build
// the engine of any run it is handed without the contract directory.
package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// Engine is one contract, ready to prove scenarios. Close it when done: its
// world keeps sessions on the database.
type Engine struct {
	C      *contract.Contract
	Progs  *script.Programs
	World  *world.World
	Prover *prove.Prover

	closeOnce sync.Once
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

// Close releases what Open opened: the world's sessions (copies still
// running keep theirs until they end). The pool stays the caller's. It is
// safe to call more than once; a closed engine must not be used.
func (e *Engine) Close() {
	e.closeOnce.Do(func() {
		if e.World != nil {
			e.World.Close()
		}
	})
}

// Skipped is a sub-goal a run added that a prover was built without, and why.
type Skipped struct {
	Name string
	Err  error
}

// WithSubGoals returns the engine's prover extended with sub-goals a run
// added, each compiled over the contract's programs (and those added before
// it). One that shadows the contract's catalogue or a built-in, or does not
// compile, is left out and listed in skipped: a scenario naming it is then
// refused as unknown. The engine's own prover is unchanged.
func (e *Engine) WithSubGoals(sgs []contract.SubGoal) (p *prove.Prover, skipped []Skipped, err error) {
	progs := e.Progs
	var added []contract.SubGoal
	for _, sg := range sgs {
		if e.C.SubGoal(sg.Name) != nil || prove.IsBuiltin(sg.Name) {
			skipped = append(skipped, Skipped{sg.Name, errors.New("shadows a sub-goal of the catalogue")})
			continue
		}
		np, err := progs.WithSubGoals(e.C.Sources, []contract.SubGoal{sg})
		if err != nil {
			skipped = append(skipped, Skipped{sg.Name, err})
			continue
		}
		progs = np
		added = append(added, sg)
	}
	p, err = e.Prover.WithSubGoals(added, progs)
	if err != nil {
		return nil, skipped, fmt.Errorf("engine: run sub-goals of %s: %w", e.C.Agent, err)
	}
	return p, skipped, nil
}

// Contracts is where a Cache finds a contract's files by hash: the ledger.
type Contracts interface {
	ContractFiles(ctx context.Context, sha string) (map[string][]byte, error)
}

// Load reads a contract from the files stored under its hash, checking that
// they are that contract.
func Load(ctx context.Context, from Contracts, sha string) (*contract.Contract, error) {
	files, err := from.ContractFiles(ctx, sha)
	if err != nil {
		return nil, fmt.Errorf("engine: contract %s: %w", sha, err)
	}
	fsys, err := newMemFS(files)
	if err != nil {
		return nil, fmt.Errorf("engine: contract %s: %w", sha, err)
	}
	c, probs, err := contract.LoadFS(fsys)
	if err != nil {
		return nil, fmt.Errorf("engine: contract %s: %w", sha, err)
	}
	if len(probs) > 0 {
		return nil, fmt.Errorf("engine: contract %s from the ledger: %w", sha, probs)
	}
	if c.SHA256 != sha {
		return nil, fmt.Errorf("engine: contract %s hashes to %s after loading", sha, c.SHA256)
	}
	return c, nil
}

// ErrClosed is what a closed Cache answers.
var ErrClosed = errors.New("engine: cache closed")

// Cache keeps one engine per contract hash for a process. It owns its
// engines, those given by Put too: Close closes them all.
type Cache struct {
	pool      *pgxpool.Pool
	contracts Contracts
	mu        sync.Mutex
	m         map[string]*Engine
	closed    bool
}

// NewCache returns an empty cache whose engines open their worlds on pool
// and find contracts they were not given in contracts.
func NewCache(pool *pgxpool.Pool, contracts Contracts) *Cache {
	return &Cache{pool: pool, contracts: contracts, m: map[string]*Engine{}}
}

// Put adds an engine opened elsewhere; the cache closes it with the others.
// Put on a closed cache closes e at once.
func (c *Cache) Put(e *Engine) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		e.Close()
		return
	}
	if old, ok := c.m[e.C.SHA256]; ok && old != e {
		old.Close()
	}
	c.m[e.C.SHA256] = e
}

// Close closes every engine of the cache; Get then answers ErrClosed. It is
// safe to call more than once.
func (c *Cache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for sha, e := range c.m {
		e.Close()
		delete(c.m, sha)
	}
}

// Get returns the engine of a contract hash, building it from the ledger once.
func (c *Cache) Get(ctx context.Context, sha string) (*Engine, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if e, ok := c.m[sha]; ok {
		return e, nil
	}
	ct, err := Load(ctx, c.contracts, sha)
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

// Contract returns the contract of a hash, as Get finds it.
func (c *Cache) Contract(ctx context.Context, sha string) (*contract.Contract, error) {
	e, err := c.Get(ctx, sha)
	if err != nil {
		return nil, err
	}
	return e.C, nil
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
