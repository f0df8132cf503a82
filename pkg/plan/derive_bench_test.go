package plan

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// countingRehearser counts the copies a rehearser opens.
type countingRehearser struct {
	r    ground.Rehearser
	n    atomic.Int64
	mu   sync.Mutex
	keys map[string]int
}

func (c *countingRehearser) key(kind string, setup []scenario.Statement, calls []scenario.Call) {
	b, _ := json.Marshal([]any{kind, setup, calls})
	c.mu.Lock()
	if c.keys == nil {
		c.keys = map[string]int{}
	}
	c.keys[string(b)]++
	c.mu.Unlock()
}

func (c *countingRehearser) Rehearse(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, error) {
	c.n.Add(1)
	c.key("r", setup, calls)
	return c.r.Rehearse(ctx, setup, calls)
}

func (c *countingRehearser) RehearseEffect(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, bool, error) {
	c.n.Add(1)
	c.key("e", setup, calls)
	if er, ok := c.r.(effectRehearser); ok {
		return er.RehearseEffect(ctx, setup, calls)
	}
	ans, err := c.r.Rehearse(ctx, setup, calls)
	return ans, true, err
}

func exampleContract(tb testing.TB, name string) *contract.Contract {
	tb.Helper()
	c, probs, err := contract.Load(filepath.Join("..", "..", "examples", name))
	if err != nil || len(probs) > 0 {
		tb.Fatalf("load %s: %v %v", name, err, probs)
	}
	return c
}

// forget drops what earlier Derives of c learnt, so the next one rehearses
// everything again.
func forget(c *contract.Contract) {
	learnt.Range(func(k, _ any) bool {
		if s, ok := k.(string); ok && len(s) >= len(c.SHA256) && s[:len(c.SHA256)] == c.SHA256 {
			learnt.Delete(k)
		}
		return true
	})
}

func planHash(tb testing.TB, p *Plan) string {
	tb.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		tb.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// BenchmarkDerive derives the plan of examples/retail and examples/rides
// from scratch (grounding and every solution rehearsed again) on one
// world each, as a planner's first Derive does. It reports rehearsals
// (world copies opened) per Derive.
func BenchmarkDerive(b *testing.B) {
	for _, name := range []string{"retail", "rides"} {
		b.Run(name, func(b *testing.B) {
			c := exampleContract(b, name)
			e, err := engine.Open(context.Background(), testenv.Postgres(b), c)
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			cr := &countingRehearser{r: probe.Rehearser(e.World)}
			var hash string
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				forget(c)
				p, err := Derive(context.Background(), c, cr, Options{Asked: 1000, MaxWant: 40})
				if err != nil {
					b.Fatal(err)
				}
				if hash == "" {
					hash = planHash(b, p)
				} else if h := planHash(b, p); h != hash {
					b.Fatalf("plan changed between derives: %s then %s", hash, h)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cr.n.Load())/float64(b.N), "rehearsals/op")
			b.ReportMetric(float64(len(cr.keys)), "distinct")
			b.Logf("%s plan sha256 %s", name, hash)
		})
	}
}

// TestMemoPlansAlike: the memo and the rows rehearsed several at a time
// change what a plan costs, not what it plans. Each example is derived from
// scratch both ways and the two plans must be byte for byte the same.
func TestMemoPlansAlike(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	for _, name := range []string{"retail", "rides", "telecom", "clinic-reminders"} {
		t.Run(name, func(t *testing.T) {
			c := exampleContract(t, name)
			e, err := engine.Open(context.Background(), testenv.Postgres(t), c)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			for _, opts := range []Options{{Asked: 1000, MaxWant: 40}} {
				fresh := &countingRehearser{r: probe.Rehearser(e.World)}
				forget(c)
				ro := opts
				ro.replay = true
				want, err := Derive(context.Background(), c, fresh, ro)
				if err != nil {
					t.Fatal(err)
				}
				kept := &countingRehearser{r: probe.Rehearser(e.World)}
				forget(c)
				got, err := Derive(context.Background(), c, kept, opts)
				if err != nil {
					t.Fatal(err)
				}
				if w, g := planHash(t, want), planHash(t, got); w != g {
					wj, _ := json.Marshal(want)
					gj, _ := json.Marshal(got)
					t.Fatalf("ask %d: plans differ:\nreplayed %s\nmemo      %s", opts.Asked, wj, gj)
				}
				if kept.n.Load() >= fresh.n.Load() {
					t.Errorf("ask %d: %d rehearsals with the memo, %d without: the memo kept nothing", opts.Asked, kept.n.Load(), fresh.n.Load())
				}
				t.Logf("ask %d: %d rehearsals replayed, %d with the memo", opts.Asked, fresh.n.Load(), kept.n.Load())
			}
		})
	}
}
