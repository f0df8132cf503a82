package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/provider"
)

// Model says which model a writer drives and how to reach it.
type Model struct {
	// Name is "builtin" or the provider's model (for Azure, the deployment).
	Name string
	// Provider is the provider's profile, endpoint, key, quota and prices
	// (docs/PROVIDERS.md).
	Provider provider.Settings
}

// Contracts finds a contract by hash (*engine.Cache): the builtin writer
// reads the contract of any run it is handed.
type Contracts interface {
	Contract(ctx context.Context, sha string) (*contract.Contract, error)
}

// Client returns the model a writer drives: the builtin writer, knowing the
// contracts cs and finding others in contracts, or a provider in its profile
// under the cluster-wide limiter kept in pool (provider.Open). With mx set,
// the limiter's waits and quota are recorded there. A provider that refuses
// the key or the model, or does not answer, is a *model.ConfigError here:
// the writer must not start.
func Client(ctx context.Context, m Model, pool *pgxpool.Pool, contracts Contracts, mx *metrics.Metrics, log *slog.Logger, cs ...*contract.Contract) (model.Client, error) {
	if m.Name == builtin.Name {
		b := builtin.New(cs...)
		if contracts != nil {
			b.Fetch = contracts.Contract
		}
		return b, nil
	}
	return provider.Open(ctx, m.Name, m.Provider, pool, mx, log)
}

// ReadPlanFile reads a --plan file: a JSON list of {use_case, angle, count, why}.
func ReadPlanFile(path string) ([]plan.Steer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--plan: %w", err)
	}
	var s []plan.Steer
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("--plan %s: %w", path, err)
	}
	for i, e := range s {
		if e.UseCase == "" || e.Count <= 0 {
			return nil, fmt.Errorf("--plan %s: entry %d needs use_case and a positive count", path, i+1)
		}
	}
	return s, nil
}
