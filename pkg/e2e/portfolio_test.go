package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// crashingCopy copies examples/retail under a new agent name with every
// tool handler crashing once the world holds a caller a writer minted for a
// scenario (their email addresses carry the scenario's number, 7000 and up;
// the seed's never do, nor the callers the planner mints to check a case).
// The planner's rehearsals work, so the contract plans and is dealt; then
// every writer's rehearsal crashes, paying for model calls on the way.
// Two of its use cases are enough to fail: the copy's plan is its own (its
// handlers differ from retail's), and the race detector makes deriving all
// twelve the test's slowest part.
func crashingCopy(t *testing.T) string {
	t.Helper()
	src := examples(t, "retail")
	dst := filepath.Join(t.TempDir(), "broken")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch {
		case rel == "contract.yaml":
			b = bytes.Replace(b, []byte("agent: shop-support"), []byte("agent: broken-shop"), 1)
			b = otherUseCases.ReplaceAll(b, nil)
		case strings.HasPrefix(rel, "handlers"+string(filepath.Separator)) && strings.HasSuffix(rel, ".star"):
			b = bytes.Replace(b, []byte("def handle("), []byte("def working_handle("), 1)
			b = append(b, crashingHandle...)
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// otherUseCases are retail's use cases but cancel-order and
// check-order-status, each an id line, its text and its tools.
var otherUseCases = regexp.MustCompile(`(?m)^  - id: (?:return-items|exchange-items|modify-items|modify-address|modify-payment|find-product-info|update-user-address|check-payment-methods|refund-status|human-handoff)\n    text: .*\n    tools: .*\n`)

const crashingHandle = `
def handle(args, db):
    if db.one("SELECT user_id FROM users WHERE email ~ '[a-z]7[0-9]{3}@' LIMIT 1") != None:
        fail("handler bug: division by zero in the pricing code")
    return working_handle(args, db)
`

// TestPortfolioFailureIsolation: in a portfolio run one contract whose
// handlers all crash fails; the other suites are complete and identical to
// their solo runs' suites, the failure is in failures.json with its type and
// reason, and whatever the failed contract spent is in the meter.
func TestPortfolioFailureIsolation(t *testing.T) {
	t.Parallel()
	// A small contract beside the two retail ones: the race detector makes
	// deriving a large one's plan its slowest part.
	retail, other, broken := examples(t, "retail"), examples(t, "clinic-reminders"), crashingCopy(t)
	const n = 12
	out := t.TempDir()
	db := testenv.PostgresURL(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := run.Run(ctx, run.Config{Dirs: []string{retail, broken, other}, Asked: n, Writers: 3, Concurrency: 3,
		Out: out, Seed: 7, NATSURL: testenv.NATS(t), DatabaseURL: db, Rounds: 1})
	if err == nil {
		t.Fatal("a portfolio with a broken contract reported success")
	}
	if len(res) != 3 {
		t.Fatalf("%d results for 3 contracts", len(res))
	}
	for _, r := range []run.Result{res[0], res[2]} {
		if r.Err != nil || r.Proved != n {
			t.Errorf("%s: proved %d of %d, err %v: a sibling's failure reached it", r.Agent, r.Proved, n, r.Err)
		}
		if got := len(tree(t, filepath.Join(r.Out, "scenarios"))); got != n {
			t.Errorf("%s: %d scenario files, want %d", r.Agent, got, n)
		}
	}
	if res[1].Err == nil || res[1].Agent != "broken-shop" {
		t.Fatalf("the broken contract's result: %+v", res[1])
	}
	b, err := os.ReadFile(filepath.Join(out, "failures.json"))
	if err != nil {
		t.Fatalf("failures.json: %v", err)
	}
	var f struct{ Failures []run.Failure }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Failures) != 1 {
		t.Fatalf("failures.json lists %d failures, want 1:\n%s", len(f.Failures), b)
	}
	got := f.Failures[0]
	t.Logf("failure: %+v", got)
	if got.Agent != "broken-shop" || got.RunID != res[1].RunID || got.Type == "" || got.Reason == "" {
		t.Errorf("failure entry %+v lacks who, type or reason", got)
	}
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	pr, co, err := ledger.New(pool).Spent(ctx, res[1].RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got.SpentTokens != pr+co {
		t.Errorf("failures.json says %d tokens spent, the meter %d", got.SpentTokens, pr+co)
	}
	var short *planner.ShortError
	if !errors.As(res[1].Err, &short) || got.Type != "short" {
		t.Errorf("the broken contract ended with %v (type %s), want a short run after writing", res[1].Err, got.Type)
	}
	if pr+co == 0 {
		t.Errorf("the broken contract's writers made model calls but the meter has none of its spend")
	}
}

// TestPortfolioDeterministic: with the builtin model a portfolio's saved
// suites are byte-identical whether its contracts run one at a time or all
// at once, and from one run to the next.
func TestPortfolioDeterministic(t *testing.T) {
	testenv.OutsideRace(t, wholeSuites)
	t.Parallel()
	dirs := []string{examples(t, "retail"), examples(t, "rides")}
	const n = 16
	suites := func(concurrency int) map[string][]byte {
		out := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res, err := run.Run(ctx, run.Config{Dirs: dirs, Asked: n, Writers: 3, Concurrency: concurrency,
			Out: out, Seed: 7, NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t), Rounds: 1})
		if err != nil {
			t.Fatalf("--concurrency %d: %v", concurrency, err)
		}
		all := map[string][]byte{}
		for _, r := range res {
			files := tree(t, filepath.Join(r.Out, "scenarios"))
			if len(files) != n {
				t.Fatalf("--concurrency %d: %s wrote %d scenarios, want %d", concurrency, r.Agent, len(files), n)
			}
			for name, b := range files {
				all[filepath.Join(r.Agent, name)] = b
			}
		}
		return all
	}
	one, three, again := suites(1), suites(3), suites(3)
	for name, b := range one {
		if !bytes.Equal(b, three[name]) {
			t.Errorf("%s differs between --concurrency 1 and 3", name)
		}
		if !bytes.Equal(three[name], again[name]) {
			t.Errorf("%s differs between two runs at --concurrency 3", name)
		}
	}
	if len(one) != len(three) || len(three) != len(again) {
		t.Errorf("file counts %d, %d, %d", len(one), len(three), len(again))
	}
}
