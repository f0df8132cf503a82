package plan

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

type counting struct {
	r ground.Rehearser
	n int
	d time.Duration
}

func (c *counting) Rehearse(ctx context.Context, s []scenario.Statement, calls []scenario.Call) ([]ground.Answer, error) {
	c.n++
	t0 := time.Now()
	defer func() { c.d += time.Since(t0) }()
	return c.r.Rehearse(ctx, s, calls)
}

func TestProfDerive(t *testing.T) {
	dir := os.Getenv("PROF_DIR")
	if dir == "" {
		t.Skip()
	}
	c, err := engine.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool := testenv.Postgres(t)
	e, err := engine.Open(context.Background(), pool, c)
	if err != nil {
		t.Fatal(err)
	}
	cr := &counting{r: probe.Rehearser(e.World)}
	g := ground.New(c)
	t0 := time.Now()
	gr, err := g.Discover(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("discover: %v, %d rehearsals in %v", time.Since(t0), cr.n, cr.d)
	cr.n, cr.d = 0, 0
	t0 = time.Now()
	p, err := Derive(context.Background(), c, cr, Options{Grounding: &gr})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("derive: %v, %d rehearsals in %v; %d buckets, gaps %v", time.Since(t0), cr.n, cr.d, len(p.Buckets), p.Gaps)
}

func TestProfChain(t *testing.T) {
	dir, tool := os.Getenv("PROF_DIR"), os.Getenv("PROF_TOOL")
	if dir == "" || tool == "" {
		t.Skip()
	}
	c, _ := engine.LoadDir(dir)
	pool := testenv.Postgres(t)
	e, _ := engine.Open(context.Background(), pool, c)
	r := probe.Rehearser(e.World)
	g := ground.New(c)
	gr, _ := g.Discover(context.Background(), r)
	tl := c.Tool(tool)
	sv := &solver{g: g, r: r, bs: gr.Bindings, unanswered: gr.Unanswered, max: 40}
	for _, b := range gr.Bindings.For(Chains(c, tool)[0]...) {
		t.Logf("bind %+v", b)
	}
	for _, b := range gr.Bindings.For(tool) {
		t.Logf("bind %+v", b)
	}
	table := sv.targetTable(tl)
	t.Logf("table %s chains %v", table, Chains(c, tool))
	for i, row := range g.Sample(table, 40)[:8] {
		b := g.SeedCase(table, row, nil)
		b.Ordinal = i
		calls, ok := Chain(g, tl, Chains(c, tool)[0], b, gr.Bindings)
		ans, _ := r.Rehearse(context.Background(), nil, calls)
		t.Logf("row %v ok=%v calls=%v", row[g.PK(table)], ok, calls)
		for _, a := range ans {
			t.Logf("   %v %v %s", a.OK, a.Read, a.Error)
		}
		p := ground.Person{First: "P", Last: "C", Number: 1}
		s, mb, err := g.Case(table, row, nil, p)
		if err != nil {
			t.Logf("mint err %v", err)
			continue
		}
		mb.Ordinal = i
		calls, _ = Chain(g, tl, Chains(c, tool)[0], mb, gr.Bindings)
		ans, err = r.Rehearse(context.Background(), s.Statements, calls)
		t.Logf("  minted calls=%v err=%v", calls, err)
		for _, a := range ans {
			t.Logf("   %v %v %s", a.OK, a.Read, a.Error)
		}
	}
}
