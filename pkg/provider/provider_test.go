package provider

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/model/openai"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func TestCheckNamesWhatIsMissing(t *testing.T) {
	for _, tc := range []struct {
		model string
		s     Settings
		want  string // "" for no error
	}{
		{"builtin", Settings{}, ""},
		{"gpt-4o-mini", Settings{}, "OPENAI_API_KEY"},
		{"gpt-4o-mini", Settings{APIKey: "k"}, ""},
		{"llama3", Settings{BaseURL: "http://localhost:11434/v1"}, ""},
		{"prod", Settings{AzureEndpoint: "https://r.openai.azure.com"}, "AZURE_OPENAI_API_KEY"},
		{"prod", Settings{AzureEndpoint: "https://r.openai.azure.com", AzureAPIKey: "k"}, "OPENAI_API_VERSION"},
		{"prod", Settings{AzureEndpoint: "https://r.openai.azure.com", AzureAPIKey: "k", APIVersion: "2024-10-21"}, ""},
		{"prod", Settings{Provider: "azure", AzureAPIKey: "k", APIVersion: "v"}, "AZURE_OPENAI_ENDPOINT"},
		{"m", Settings{Provider: "bedrock", APIKey: "k"}, "--provider"},
		{"m", Settings{APIKey: "k", Reasoning: "maybe"}, "--reasoning"},
		{"m", Settings{APIKey: "k", RPM: -1}, "--rpm"},
		{"m", Settings{BaseURL: "ftp://x"}, "http(s)"},
		{"", Settings{}, "--model"},
	} {
		err := tc.s.Check(tc.model)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %+v: %v, want %q", tc.model, tc.s, err, tc.want)
		}
	}
}

func TestProfileResolution(t *testing.T) {
	for _, tc := range []struct {
		s    Settings
		want openai.Profile
	}{
		{Settings{APIKey: "k"}, openai.ProfileOpenAI},
		{Settings{AzureEndpoint: "https://r.openai.azure.com", AzureAPIKey: "k", APIVersion: "v"}, openai.ProfileAzure},
		{Settings{BaseURL: "https://r.openai.azure.com"}, openai.ProfileAzure},
		{Settings{BaseURL: "http://vllm:8000/v1", AzureEndpoint: "https://r.openai.azure.com"}, openai.ProfileCompatible},
		{Settings{Provider: "openai", BaseURL: "http://127.0.0.1:9/v1"}, openai.ProfileOpenAI},
	} {
		if got := tc.s.Profile("m"); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.s, got, tc.want)
		}
	}
	e, _ := Settings{AzureEndpoint: "https://r", AzureAPIKey: "az", APIKey: "oa", APIVersion: "v"}.resolve()
	if e.apiKey != "az" || e.baseURL != "https://r" {
		t.Fatalf("azure takes its own key and endpoint: %+v", e)
	}
}

func TestPriceOf(t *testing.T) {
	if p, ok := (Settings{}).PriceOf("gpt-4o-mini-2024-07-18"); !ok || p.Prompt != 0.15 {
		t.Fatalf("default table: %+v %v", p, ok)
	}
	if _, ok := (Settings{}).PriceOf("my-deployment"); ok {
		t.Fatal("a deployment name is priced by default")
	}
	s := Settings{Prices: model.Prices{"my-deployment": {Prompt: 2, Completion: 8}}}
	if p, ok := s.PriceOf("my-deployment"); !ok || p.Completion != 8 {
		t.Fatalf("prices file: %+v %v", p, ok)
	}
	s.Price = &model.Price{Prompt: 9}
	if p, _ := s.PriceOf("gpt-4o"); p.Prompt != 9 {
		t.Fatalf("--price does not win: %+v", p)
	}
}

func TestOpenChecksTheProvider(t *testing.T) {
	pool := testenv.Postgres(t)
	ctx := context.Background()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	_, err := Open(ctx, "llama3", Settings{BaseURL: "http://" + dead + "/v1"}, pool, nil, nil)
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindUnreachable {
		t.Fatalf("nobody listening: %v", err)
	}

	sim, err := providersim.New(providersim.Config{Model: echo{}, APIKey: "sk-right-key"})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	addr, err := sim.Start(sctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer func() { cancel(); _ = sim.Wait() }()
	_, err = Open(ctx, "gpt-4o-mini", Settings{Provider: "openai", BaseURL: "http://" + addr + "/v1", APIKey: "sk-wrong-key"}, pool, nil, nil)
	if ce, ok := model.IsFatal(err); !ok || ce.Kind != model.KindAuth || strings.Contains(err.Error(), "sk-wrong-key") {
		t.Fatalf("wrong key: %v", err)
	}
	price := model.Price{Prompt: 1, Completion: 2}
	c, err := Open(ctx, "gpt-4o-mini", Settings{Provider: "openai", BaseURL: "http://" + addr + "/v1", APIKey: "sk-right-key", TPM: 60_000, Price: &price}, pool, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(ctx, model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 10})
	if err != nil || !resp.Priced || resp.CostUSD != price.Cost(resp.Usage) {
		t.Fatalf("%+v %v", resp, err)
	}
	// One quota per provider account and model.
	if _, err := Open(ctx, "gpt-4o", Settings{Provider: "openai", BaseURL: "http://" + addr + "/v1", APIKey: "sk-right-key"}, pool, nil, nil); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ratelimit_windows`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("%d quota rows (%v), want one per model", rows, err)
	}
	// The builtin writer is built where a role is wired, never here.
	if c, err := Open(ctx, Builtin, Settings{}, pool, nil, nil); c != nil || !errors.Is(err, ErrBuiltin) {
		t.Fatalf("builtin: %v %v", c, err)
	}
}

type echo struct{}

func (echo) Name() string { return "echo" }
func (echo) Complete(context.Context, model.Request) (model.Response, error) {
	return model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "ok"}}, nil
}
