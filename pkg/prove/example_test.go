package prove_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/world"
)

// Prove one scenario file against a contract's world. The database is one
// suitegen has set up (migrate.Setup, then migrate.Apply), reached as the
// application role; the world is built there once and every proof runs on
// throwaway copies of it. TestExampleProver_Prove runs this example on a
// test database.
func ExampleProver_Prove() {
	ctx := context.Background()
	c, problems, err := contract.Load("../../examples/retail")
	if err != nil {
		log.Fatal(err)
	}
	if len(problems) > 0 {
		log.Fatal(problems)
	}
	progs, err := script.Compile(c, script.Options{})
	if err != nil {
		log.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, os.Getenv("SUITEGEN_DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	w, err := world.Open(ctx, pool, c, progs, world.Options{})
	if err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile("testdata/retail/cancel-order.json")
	if err != nil {
		log.Fatal(err)
	}
	sc, err := scenario.Decode(b)
	if err != nil {
		log.Fatal(err)
	}
	v, err := prove.New(c, w, progs).Prove(ctx, sc)
	if err != nil {
		log.Fatal(err) // the database failed: not a verdict on the scenario
	}
	if !v.Kept {
		for _, r := range v.Refusals {
			fmt.Println("refused:", r)
		}
		return
	}
	fmt.Println("kept:", sc.Name)
	for _, r := range v.Runs {
		fmt.Printf("  %s/%s: %d calls\n", r.Gate, r.Counterfactual, len(r.Calls))
	}
}

// TestExampleProver_Prove runs ExampleProver_Prove, which needs a database
// and so has no Output to be checked by go test.
func TestExampleProver_Prove(t *testing.T) {
	t.Setenv("SUITEGEN_DATABASE_URL", testenv.PostgresURL(t))
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	func() {
		defer func() { os.Stdout = stdout }()
		ExampleProver_Prove()
	}()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", out)
	if !strings.HasPrefix(string(out), "kept: cancel-order-succeed-none-7000\n") || !strings.Contains(string(out), "not-vacuous/nothing: 0 calls") {
		t.Errorf("example printed:\n%s", out)
	}
}
