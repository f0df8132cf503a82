package cli

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/providersim"
)

func init() {
	register(command{"provider-sim", "[DIR...] [--database URL] [flags]", "serve an OpenAI-compatible provider that plays the builtin writer under a quota", cmdProviderSim})
}

func cmdProviderSim(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen provider-sim", "[DIR...] [--database URL] [flags]",
		"Serve an OpenAI-compatible API on loopback that answers like a model playing the writer's tools (the builtin policy),\nenforcing its quota as a provider would (429 with headers). GET /stats reports what it served.\nContracts come from the DIRs given, or from the ledger at --database.")
	var cfg providersim.Config
	cfg.Flags(f.FlagSet)
	database := f.secret("database", env.Getenv("SUITEGEN_DATABASE_URL"), "ledger to fetch contracts from, by hash")
	dirs, err := f.parse(args)
	if err != nil {
		return err
	}
	var cs []*contract.Contract
	for _, d := range dirs {
		c, err := contract.LoadValid(d)
		if err != nil {
			return err
		}
		cs = append(cs, c)
	}
	m := builtin.New(cs...)
	if *database != "" {
		pool, err := pgxpool.New(ctx, *database)
		if err != nil {
			return err
		}
		defer pool.Close()
		ledger := ledger.New(pool)
		m.Fetch = func(ctx context.Context, sha string) (*contract.Contract, error) {
			return engine.Load(ctx, ledger, sha)
		}
	}
	cfg.Model = m
	cfg.Logger = env.Log
	s, err := providersim.New(cfg)
	if err != nil {
		return &UsageError{err.Error()}
	}
	addr, err := s.Start(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "provider-sim listening on http://%s/v1 (stats at http://%s/stats)\n", addr, addr)
	return s.Wait()
}
