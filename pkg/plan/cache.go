package plan

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Cache keeps what Derive learnt of a contract before it sized the plan to
// an ask, for a later Derive of the same contract with the same options in
// another process: deriving rehearses the world thousands of times, and the
// same contract (world, handlers and all, named by its hash) on the same
// code always derives the same. A miss, or a value that does not read,
// derives afresh.
//
// Claim holds key while a miss derives it: a Derive of the same key in any
// process waits for that one's Put and reads it, instead of deriving the
// same plan beside it. It returns when key is free or ctx is done; release
// frees key.
type Cache interface {
	Get(key string) ([]byte, bool)
	Put(key string, value []byte)
	Claim(ctx context.Context, key string) (release func(), err error)
}

// Env names of the cache a process finds in its environment (EnvCache).
const (
	EnvCacheDir   = "SUITEGEN_PLAN_CACHE"
	EnvCacheBuild = "SUITEGEN_PLAN_CACHE_BUILD"
)

// EnvCache is the DiskCache the environment names (EnvCacheDir), keyed by
// the build EnvCacheBuild names, else by the running executable's hash;
// nil when EnvCacheDir is unset.
func EnvCache(getenv func(string) string) Cache {
	dir := getenv(EnvCacheDir)
	if dir == "" {
		return nil
	}
	return &DiskCache{Dir: dir, Build: getenv(EnvCacheBuild)}
}

// DiskCache is a Cache of one file per key in Dir. Build names the code the
// values come from; empty, the running executable's hash does, so that a
// rebuilt binary never reads what another derived. A directory shared by
// several binaries of one source tree (the test binaries of one make test)
// names that tree instead.
type DiskCache struct {
	Dir   string
	Build string

	once  sync.Once
	build string
}

func (d *DiskCache) path(key string) string {
	d.once.Do(func() {
		d.build = d.Build
		if d.build == "" {
			d.build = executableHash()
		}
	})
	if d.build == "" {
		return "" // no way to name the code: keep nothing
	}
	sum := sha256.Sum256([]byte(d.build + "\x00" + key))
	return filepath.Join(d.Dir, hex.EncodeToString(sum[:16])+".json")
}

// Get reads key's value; a file that is missing or unreadable is a miss.
func (d *DiskCache) Get(key string) ([]byte, bool) {
	p := d.path(key)
	if p == "" {
		return nil, false
	}
	b, err := os.ReadFile(p)
	return b, err == nil
}

// claimPoll is how often a Claim looks again at a key another holds.
const claimPoll = 50 * time.Millisecond

// Claim takes an exclusive lock on key's lock file (flock), which the
// kernel frees when the holder's process ends, however it ends: a killed
// deriver never leaves the key held. Without a name for the code, or a
// directory to lock in, nothing is held.
func (d *DiskCache) Claim(ctx context.Context, key string) (func(), error) {
	p := d.path(key)
	if p == "" || os.MkdirAll(d.Dir, 0o755) != nil {
		return func() {}, nil
	}
	f, err := os.OpenFile(strings.TrimSuffix(p, ".json")+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return func() {}, nil
	}
	t := time.NewTicker(claimPoll)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the file frees the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return func() {}, nil // a file system without locks: derive beside the others
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("plan: cache: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// Put writes key's value whole or not at all (a temporary file renamed),
// so that a process killed mid-write leaves no half a plan to read.
func (d *DiskCache) Put(key string, value []byte) {
	p := d.path(key)
	if p == "" || os.MkdirAll(d.Dir, 0o755) != nil {
		return
	}
	f, err := os.CreateTemp(d.Dir, ".put-*")
	if err != nil {
		return
	}
	_, werr := f.Write(value)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), p) != nil {
		os.Remove(f.Name())
	}
}

func executableHash() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// cacheKey names a Derive's options that shape the plan before it is
// sized (the ask and the steer only lay it out). Rules and Mutants are
// named by type.
func cacheKey(sha string, opts Options) string {
	return fmt.Sprintf("plan/1\x00%s\x00probe %d\x00want %d\x00rules %T\x00mutants %T", sha, opts.MaxProbe, opts.MaxWant, opts.Rules, opts.Mutants)
}

func (o Options) cached() bool { return o.Cache != nil && o.Grounding == nil && !o.replay }

// cachedPlan is key's plan before sizing, when the cache holds one that reads.
func cachedPlan(c Cache, key string) (*Plan, bool) {
	b, ok := c.Get(key)
	if !ok {
		return nil, false
	}
	p, ok := unsized(b)
	if ok {
		p.Cached = true
	}
	return p, ok
}

// unsized reads a plan before sizing (Buckets every bucket the use cases
// gave, in order, rules assigned) from its JSON.
func unsized(b []byte) (*Plan, bool) {
	var p Plan
	if json.Unmarshal(b, &p) != nil || p.Cells == nil {
		return nil, false
	}
	return &p, true
}
