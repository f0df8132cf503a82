package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/ratelimit"
)

// Model says which model a writer drives and how to reach it.
type Model struct {
	// Name is "builtin" or a model name of the OpenAI-compatible provider.
	Name    string
	BaseURL string
	APIKey  string
	// RPM and TPM are the provider's quota (0: learn it from headers);
	// Window is its quota window (see ratelimit.Config.Window).
	RPM, TPM int
	Window   time.Duration
}

// Contracts finds a contract by hash (*engine.Cache): the builtin writer
// reads the contract of any run it is handed.
type Contracts interface {
	Contract(ctx context.Context, sha string) (*contract.Contract, error)
}

// Client returns the model a writer drives: the builtin writer, knowing the
// contracts cs and finding others in contracts, or an OpenAI-compatible
// provider under the cluster-wide rate limiter kept in pool. With mx set,
// the limiter's waits, headroom and quota are recorded there.
func Client(ctx context.Context, m Model, pool *pgxpool.Pool, contracts Contracts, mx *metrics.Metrics, log *slog.Logger, cs ...*contract.Contract) (model.Client, error) {
	if m.Name == builtin.Name {
		b := builtin.New(cs...)
		if contracts != nil {
			b.Fetch = contracts.Contract
		}
		return b, nil
	}
	lim, err := ratelimit.New(ctx, ratelimit.Config{Key: m.BaseURL + "\x00" + m.APIKey, RPM: m.RPM, TPM: m.TPM, Window: m.Window, Pool: pool, Logger: log})
	if err != nil {
		return nil, err
	}
	var ml model.Limiter = lim
	if mx != nil {
		ml = meterLimiter(lim, mx, m.RPM, m.TPM, log)
	}
	return model.NewOpenAI(model.OpenAIConfig{BaseURL: m.BaseURL, APIKey: m.APIKey, Model: m.Name, Limiter: ml, Logger: log})
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
