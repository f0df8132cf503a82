package e2e

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/provider"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestBudgetCap: a run with --budget-tokens against provider-sim stops at the
// cap, overshooting it by no more than the calls in flight when it was
// crossed (one per writer, far inside one slice's reservation), and the
// ledger's meter equals what the provider says it served, token for token.
func TestBudgetCap(t *testing.T) {
	t.Parallel()
	dir := examples(t, "retail")
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sim, err := providersim.New(providersim.Config{Model: builtin.New(c), Latency: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stopSim := context.WithCancel(ctx)
	addr, err := sim.Start(sctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { stopSim(); _ = sim.Wait() }()

	const writers, capTokens = 3, 200_000
	db := testenv.PostgresURL(t)
	res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: 200, Writers: writers, Out: t.TempDir(), Seed: 7,
		Model: "sim-writer", Provider: provider.Settings{BaseURL: "http://" + addr + "/v1", APIKey: "sim-key"}, BudgetTokens: capTokens,
		NATSURL: testenv.NATS(t), DatabaseURL: db, Rounds: 1})
	var short *planner.ShortError
	if !errors.As(err, &short) || !short.Budget {
		t.Fatalf("run ended with %v, want a short run stopped by the budget", err)
	}
	if len(res) != 1 || res[0].Proved >= 200 {
		t.Fatalf("results %+v", res)
	}
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	pr, co, err := ledger.New(pool).Spent(ctx, res[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	var biggest int64
	if err := pool.QueryRow(ctx, `SELECT max(prompt_tokens + completion_tokens) FROM spend WHERE run_id = $1`, res[0].RunID).Scan(&biggest); err != nil {
		t.Fatal(err)
	}
	spent, served := pr+co, sim.Stats().Tokens
	t.Logf("cap %d, spent %d (over by %d; largest call %d), provider served %d, proved %d", capTokens, spent, spent-capTokens, biggest, served, res[0].Proved)
	if spent != served {
		t.Errorf("the meter says %d tokens, the provider served %d", spent, served)
	}
	if spent < capTokens {
		t.Errorf("stopped at %d, below the cap %d, although 200 scenarios were asked", spent, capTokens)
	}
	if over := spent - capTokens; over > writers*biggest {
		t.Errorf("overshot the cap by %d, more than one call per writer (%d × %d)", over, writers, biggest)
	}
}

// TestBudgetUSD: the same in dollars. A run with --budget-usd at a given
// price stops at the cap, overshooting it by no more than the calls in flight
// when it was crossed, and the report's cost is the price of what the
// provider served.
func TestBudgetUSD(t *testing.T) {
	t.Parallel()
	dir := examples(t, "retail")
	sim, proxy := simBehind(t, dir, providersim.Config{Latency: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	price := model.Price{Prompt: 2, CachedPrompt: 0.5, Completion: 8}
	const writers, capUSD = 3, 0.5
	db := testenv.PostgresURL(t)
	res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: 200, Writers: writers, Out: t.TempDir(), Seed: 7,
		Model: "sim-writer", Provider: provider.Settings{BaseURL: proxy.url + "/v1", Price: &price}, BudgetUSD: capUSD,
		NATSURL: testenv.NATS(t), DatabaseURL: db, Rounds: 1})
	var short *planner.ShortError
	if !errors.As(err, &short) || !short.Budget {
		t.Fatalf("run ended with %v, want a short run stopped by the budget", err)
	}
	pool, err := pgxpool.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	m, err := ledger.New(pool).Meter(ctx, res[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	var biggest float64
	if err := pool.QueryRow(ctx, `SELECT max(cost_usd) FROM spend WHERE run_id = $1`, res[0].RunID).Scan(&biggest); err != nil {
		t.Fatal(err)
	}
	st := sim.Stats()
	served := price.Cost(model.Usage{PromptTokens: int(st.PromptTokens), CompletionTokens: int(st.CompletionTokens), CachedPromptTokens: int(st.CachedPromptTokens)})
	t.Logf("cap $%.2f, spent $%.4f (over by $%.4f; largest call $%.4f), provider served $%.4f (%d calls through the proxy), proved %d",
		capUSD, m.CostUSD, m.CostUSD-capUSD, biggest, served, proxy.totals().Admitted, res[0].Proved)
	if math.Abs(m.CostUSD-served) > 1e-9 || math.Abs(res[0].Report.Spend.CostUSD-served) > 1e-9 {
		t.Errorf("the meter says $%v and the report $%v, the provider served $%v", m.CostUSD, res[0].Report.Spend.CostUSD, served)
	}
	if m.CostUSD < capUSD {
		t.Errorf("stopped at $%v, below the cap $%v, although 200 scenarios were asked", m.CostUSD, capUSD)
	}
	if over := m.CostUSD - capUSD; over > writers*biggest {
		t.Errorf("overshot the cap by $%v, more than one call per writer (%d × $%v)", over, writers, biggest)
	}
}
