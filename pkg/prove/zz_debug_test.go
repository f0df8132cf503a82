package prove_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/engine"
)

type printer struct{}

func (printer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	fmt.Println("Q", trunc(d.SQL))
	return ctx
}
func (printer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (printer) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var parts []string
	for _, q := range d.Batch.QueuedQueries {
		parts = append(parts, trunc(q.SQL))
	}
	fmt.Printf("B %p %s\n", c, strings.Join(parts, " | "))
	return ctx
}
func (printer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (printer) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func trunc(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 70 {
		return s[:70]
	}
	return s
}

func BenchmarkDebug(b *testing.B) {
	url, scs := retailSuite(b, 4)
	dir, _ := filepath.Abs(filepath.Join("..", "..", "examples", "retail"))
	c, _ := engine.LoadDir(dir)
	cfg, _ := pgxpool.ParseConfig(url)
	cfg.ConnConfig.Tracer = printer{}
	cfg.MaxConns = 1
	pool, _ := pgxpool.NewWithConfig(context.Background(), cfg)
	defer pool.Close()
	ctx := context.Background()
	e, _ := engine.Open(ctx, pool, c)
	for i := range 2 {
		fmt.Println("=== pass", i)
		for _, sc := range scs[:2] {
			fmt.Println("--- ", sc.Name, sc.Expects, len(sc.Solution), len(sc.Tempting), len(sc.SubGoals))
			e.Prover.Prove(ctx, sc)
		}
	}
	for b.Loop() {
	}
}
