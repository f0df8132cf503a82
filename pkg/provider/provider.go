// Package provider turns a writer's model settings (flags and the standard
// provider environment variables) into the model.Client of an
// OpenAI-compatible provider in its profile (openai, azure,
// openai-compatible) under the cluster-wide quota, priced, and checked
// before the writer starts. The builtin writer needs no provider: its name
// passes Check, and the wiring of a role builds it (pkg/builtin).
// docs/PROVIDERS.md has the settings per profile.
package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/model/openai"
	"github.com/suitegen/suitegen/pkg/ratelimit"
)

// Builtin is the model name of the deterministic builtin writer.
const Builtin = "builtin"

// ErrBuiltin is Open's answer for Builtin: the builtin writer is no
// provider, and is built where a role is wired.
var ErrBuiltin = errors.New("provider: the builtin writer is not a provider model")

// Settings are what a writing process knows of its provider, besides the
// model's name.
type Settings struct {
	// Provider is auto (detect from the URL and environment), openai, azure
	// or openai-compatible.
	Provider string
	// BaseURL is --base-url or OPENAI_BASE_URL.
	BaseURL string
	// APIKey is OPENAI_API_KEY.
	APIKey string
	// AzureEndpoint, AzureAPIKey and APIVersion are AZURE_OPENAI_ENDPOINT,
	// AZURE_OPENAI_API_KEY and OPENAI_API_VERSION, as the official SDKs read
	// them; with the Azure profile the model names the deployment.
	AzureEndpoint, AzureAPIKey, APIVersion string
	// Reasoning is auto, yes or no (see openai.Reasoning); ReasoningEffort is
	// passed to reasoning models when set.
	Reasoning, ReasoningEffort string
	// RPM and TPM are the provider's quota per minute (0: learn it from the
	// provider's headers); Window is its quota window (default one minute).
	RPM, TPM int
	Window   time.Duration
	// Prices override or extend the default price table (model.DefaultPrices);
	// Price, when set, is the price of the run's model whatever the table says.
	Prices model.Prices
	Price  *model.Price
}

// endpoint is the resolved profile, URL and key.
type endpoint struct {
	profile openai.Profile
	baseURL string
	apiKey  string
}

// resolve picks the profile: the flag, else Azure when AZURE_OPENAI_ENDPOINT
// is set and no base URL is, else what the base URL is (openai.Detect).
func (s Settings) resolve() (endpoint, error) {
	p, err := openai.ParseProfile(s.Provider)
	if err != nil {
		return endpoint{}, fmt.Errorf("--provider: %w", err)
	}
	if p == "" {
		if s.BaseURL == "" && s.AzureEndpoint != "" {
			p = openai.ProfileAzure
		} else {
			p = openai.Detect(s.BaseURL)
		}
	}
	e := endpoint{profile: p, baseURL: s.BaseURL, apiKey: s.APIKey}
	if p == openai.ProfileAzure {
		if e.baseURL == "" {
			e.baseURL = s.AzureEndpoint
		}
		if s.AzureAPIKey != "" {
			e.apiKey = s.AzureAPIKey
		}
	}
	return e, nil
}

// Check validates the settings for model name without touching the
// network; its errors name the flag or variable to set.
func (s Settings) Check(name string) error {
	if name == "" {
		return errors.New("--model is empty")
	}
	if s.RPM < 0 || s.TPM < 0 {
		return fmt.Errorf("--rpm %d and --tpm %d must not be negative", s.RPM, s.TPM)
	}
	if s.Window < 0 {
		return fmt.Errorf("--quota-window %s is negative", s.Window)
	}
	if name == Builtin {
		return nil
	}
	e, err := s.resolve()
	if err != nil {
		return err
	}
	if _, err := openai.ParseReasoning(s.Reasoning); err != nil {
		return fmt.Errorf("--reasoning: %w", err)
	}
	switch e.profile {
	case openai.ProfileOpenAI:
		if e.apiKey == "" {
			return fmt.Errorf("--model %s (OpenAI) needs OPENAI_API_KEY; for a local OpenAI-compatible server set --base-url", name)
		}
	case openai.ProfileAzure:
		switch {
		case e.baseURL == "":
			return fmt.Errorf("--model %s (Azure deployment) needs AZURE_OPENAI_ENDPOINT", name)
		case e.apiKey == "":
			return fmt.Errorf("--model %s (Azure deployment) needs AZURE_OPENAI_API_KEY", name)
		case s.APIVersion == "":
			return fmt.Errorf("--model %s (Azure deployment) needs OPENAI_API_VERSION (e.g. 2024-10-21; 2024-12-01-preview or later for reasoning models)", name)
		}
	}
	if e.baseURL != "" && !strings.HasPrefix(e.baseURL, "http://") && !strings.HasPrefix(e.baseURL, "https://") {
		return fmt.Errorf("the provider URL %q is not an http(s) URL", e.baseURL)
	}
	return nil
}

// PriceOf is model name's price: Settings.Price, else the table (defaults
// with Settings.Prices over them).
func (s Settings) PriceOf(name string) (model.Price, bool) {
	if s.Price != nil {
		return *s.Price, true
	}
	return model.DefaultPrices().Merge(s.Prices).Lookup(name)
}

// Profile is the profile the settings resolve to for a provider model
// ("" for builtin or settings that do not resolve).
func (s Settings) Profile(name string) openai.Profile {
	if name == Builtin {
		return ""
	}
	e, err := s.resolve()
	if err != nil {
		return ""
	}
	return e.profile
}

// Open returns the provider model a writer drives. It creates (or joins)
// the shared quota of this provider account and model, records the quota
// into mx when set, and asks the provider (no tokens spent) whether it
// answers and accepts the key and model: a *model.ConfigError says what to
// fix, and the writer must not start. Builtin is ErrBuiltin.
func Open(ctx context.Context, name string, s Settings, pool *pgxpool.Pool, mx *metrics.Metrics, log *slog.Logger) (model.Client, error) {
	if name == Builtin {
		return nil, ErrBuiltin
	}
	if err := s.Check(name); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	e, _ := s.resolve()
	reasoning, _ := openai.ParseReasoning(s.Reasoning)
	cfg := openai.Config{Profile: e.profile, BaseURL: e.baseURL, APIKey: e.apiKey, APIVersion: s.APIVersion, Model: name,
		Reasoning: reasoning, ReasoningEffort: s.ReasoningEffort, Logger: log}
	if p, ok := s.PriceOf(name); ok {
		cfg.Price = &p
	}
	// The check first, so a refused configuration leaves nothing behind.
	probe, err := openai.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := probe.Probe(ctx); err != nil {
		return nil, fmt.Errorf("provider check for --model %s (%s at %s): %w", name, e.profile, probe.BaseURL(), err)
	}
	// Providers keep a quota per account (key) and model, or per Azure deployment.
	lim, err := ratelimit.New(ctx, ratelimit.Config{Key: string(e.profile) + "\x00" + e.baseURL + "\x00" + e.apiKey + "\x00" + name,
		RPM: s.RPM, TPM: s.TPM, Window: s.Window, Pool: pool, Logger: log})
	if err != nil {
		return nil, err
	}
	cfg.Limiter, cfg.TPM = lim, s.TPM
	if mx != nil {
		cfg.Limiter = meter(lim, s.RPM, s.TPM, mx, log)
	}
	c, err := openai.New(cfg)
	if err != nil {
		return nil, err
	}
	log.Info("model provider", "model", name, "profile", e.profile, "reasoning", c.Reasoning(), "priced", cfg.Price != nil,
		"rpm", s.RPM, "tpm", s.TPM)
	return c, nil
}
