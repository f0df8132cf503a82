package plan

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// deaf is a world that answers nothing: a Derive that reads its plan from
// the cache never asks it.
type deaf struct{}

var errDeaf = errors.New("deaf world")

func (deaf) Rehearse(context.Context, []scenario.Statement, []scenario.Call) ([]ground.Answer, error) {
	return nil, errDeaf
}

func (deaf) RehearseEffect(context.Context, []scenario.Statement, []scenario.Call) ([]ground.Answer, bool, error) {
	return nil, false, errDeaf
}

// TestCacheKeepsThePlan: a plan read from the cache is the plan derived,
// sized to another ask without rehearsing anything; another build, other
// options or a file that does not read derive afresh.
func TestCacheKeepsThePlan(t *testing.T) {
	c, e := openContract(t, testdataDir("guardian-line"))
	dir := t.TempDir()
	cache := &DiskCache{Dir: dir, Build: "one"}
	forget(c)
	if _, err := Derive(context.Background(), c, probe.Rehearser(e.World), Options{Asked: 20, Cache: cache}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("the cache holds %d files after one Derive, want 1", len(files))
	}
	forget(c)
	want, err := Derive(context.Background(), c, probe.Rehearser(e.World), Options{Asked: 35})
	if err != nil {
		t.Fatal(err)
	}
	forget(c)
	got, err := Derive(context.Background(), c, deaf{}, Options{Asked: 35, Cache: cache})
	if err != nil {
		t.Fatalf("a cached plan rehearsed: %v", err)
	}
	if !got.Cached || want.Cached {
		t.Errorf("Cached: %v read back, %v derived", got.Cached, want.Cached)
	}
	if w, g := planHash(t, want), planHash(t, got); w != g {
		t.Fatalf("the plan read from the cache (%s) is not the plan derived (%s)", g, w)
	}
	for name, opts := range map[string]Options{
		"another build":   {Asked: 35, Cache: &DiskCache{Dir: dir, Build: "two"}},
		"another want":    {Asked: 35, MaxWant: 3, Cache: cache},
		"given grounding": {Asked: 35, Cache: cache, Grounding: &ground.Grounding{}},
	} {
		forget(c)
		if _, err := Derive(context.Background(), c, deaf{}, opts); !errors.Is(err, errDeaf) {
			t.Errorf("%s: Derive answered %v without rehearsing, want it to derive (and meet the deaf world)", name, err)
		}
	}
	if err := os.WriteFile(files[0], []byte(`{"cells": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	forget(c)
	if _, err := Derive(context.Background(), c, deaf{}, Options{Asked: 35, Cache: cache}); !errors.Is(err, errDeaf) {
		t.Errorf("a cache file that does not read answered %v, want a fresh derivation", err)
	}
}

// watched is a cache that says which key a Derive claims.
type watched struct {
	*DiskCache
	claimed chan string
}

func (w watched) Claim(ctx context.Context, key string) (func(), error) {
	w.claimed <- key
	return w.DiskCache.Claim(ctx, key)
}

// TestCacheMissWaitsForTheDerivationUnderWay: a Derive that misses while
// another holds the key (deriving it, in this process or another) waits for
// that one's plan and reads it, rehearsing nothing; a claim whose context
// ends while it waits gives up with the context's error.
func TestCacheMissWaitsForTheDerivationUnderWay(t *testing.T) {
	c, e := openContract(t, testdataDir("guardian-line"))
	first := t.TempDir()
	forget(c)
	if _, err := Derive(context.Background(), c, probe.Rehearser(e.World), Options{Asked: 35, Cache: &DiskCache{Dir: first, Build: "one"}}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(first, "*.json"))
	if len(files) != 1 {
		t.Fatalf("the cache holds %d files after one Derive, want 1", len(files))
	}
	value, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}

	holder := &DiskCache{Dir: t.TempDir(), Build: "one"}
	opts := Options{Asked: 35}
	opts.defaults()
	key := cacheKey(c.SHA256, opts)
	release, err := holder.Claim(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := holder.Claim(gone, key); !errors.Is(err, context.Canceled) {
		t.Errorf("a claim of a held key with its context done answered %v, want context.Canceled", err)
	}

	w := watched{DiskCache: &DiskCache{Dir: holder.Dir, Build: "one"}, claimed: make(chan string, 1)}
	type derived struct {
		p   *Plan
		err error
	}
	done := make(chan derived, 1)
	forget(c)
	go func() {
		p, err := Derive(context.Background(), c, deaf{}, Options{Asked: 35, Cache: w})
		done <- derived{p, err}
	}()
	if got := <-w.claimed; got != key {
		t.Fatalf("Derive claimed %q, want %q", got, key)
	}
	holder.Put(key, value)
	release()
	d := <-done
	if d.err != nil {
		t.Fatalf("a Derive that waited for another's plan rehearsed: %v", d.err)
	}
	if !d.p.Cached {
		t.Error("a Derive that waited for another's plan did not read it")
	}
}

// TestCommandsSeeTheTestsPlanCache: a command a test runs through
// testenv.Getenv derives through the plan cache the test process was given
// (make test names one for all its test binaries), not through none.
func TestCommandsSeeTheTestsPlanCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvCacheDir, dir)
	t.Setenv(EnvCacheBuild, "this test")
	d, ok := EnvCache(testenv.Getenv(t)).(*DiskCache)
	if !ok || d.Dir != dir || d.Build != "this test" {
		t.Fatalf("a command's plan cache through testenv.Getenv: %#v, want %s built by %q", d, dir, "this test")
	}
}
