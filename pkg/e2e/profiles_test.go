package e2e

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/provider"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// simBehind starts a provider-sim playing the builtin writer for dir, with a
// counting proxy in front of it; it returns the simulator and the proxy.
func simBehind(t *testing.T, dir string, cfg providersim.Config) (*providersim.Server, *countingProxy) {
	t.Helper()
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = builtin.New(c)
	if cfg.Latency == 0 {
		cfg.Latency = 5 * time.Millisecond
	}
	sim, err := providersim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := sim.Start(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := sim.Wait(); err != nil {
			t.Error(err)
		}
	})
	return sim, newCountingProxy(t, "http://"+addr)
}

// profileRun is one run through one provider profile.
type profileRun struct {
	sim   providersim.Config
	model string
	// settings builds the provider settings from the proxy's URL.
	settings func(proxy string) provider.Settings
	// wire checks every chat completion request and answer as sent.
	wire func(t *testing.T, s shape)
	// probe is a request the start-up check must have made.
	probe string
}

// A 50-scenario run completes through provider-sim in each profile; every
// request has the shape the real provider takes (the simulator refuses the
// others as the provider does, and the proxy checks them independently); the
// report's spend is the price of the tokens as the simulator counted them.
func TestProfilesFullRun(t *testing.T) {
	t.Parallel()
	price := model.Price{Prompt: 1.10, CachedPrompt: 0.275, Completion: 4.40, Reasoning: 4.40}
	cases := map[string]profileRun{
		"openai-reasoning": {
			sim:   providersim.Config{APIKey: "sk-sim", Models: []string{"o4-mini"}},
			model: "o4-mini",
			settings: func(proxy string) provider.Settings {
				return provider.Settings{Provider: "openai", BaseURL: proxy + "/v1", APIKey: "sk-sim", Price: &price}
			},
			probe: "GET /v1/models/o4-mini",
			wire: func(t *testing.T, s shape) {
				if s.Path != "/v1/chat/completions" || !s.Bearer || s.APIKey {
					t.Fatalf("openai request %+v", s)
				}
				if !s.has("max_completion_tokens") || s.has("max_tokens") || s.has("temperature") || s.has("top_p") || s.has("tool_choice") {
					t.Fatalf("a reasoning model was sent %v", s.Params)
				}
			},
		},
		"azure": {
			sim:   providersim.Config{APIKey: "az-sim", Deployments: map[string]string{"suitegen-prod": "gpt-4.1-mini"}, APIVersions: []string{"2024-10-21"}},
			model: "suitegen-prod",
			settings: func(proxy string) provider.Settings {
				// As the official SDKs are configured: the three variables.
				return provider.Settings{AzureEndpoint: proxy, AzureAPIKey: "az-sim", APIVersion: "2024-10-21", Price: &price}
			},
			probe: "GET /openai/models",
			wire: func(t *testing.T, s shape) {
				if s.Path != "/openai/deployments/suitegen-prod/chat/completions" || s.Query != "api-version=2024-10-21" || !s.APIKey || s.Bearer {
					t.Fatalf("azure request %+v", s)
				}
				if !s.has("max_tokens") || s.has("tool_choice") {
					t.Fatalf("azure body %v", s.Params)
				}
			},
		},
		"openai-compatible": {
			sim:   providersim.Config{ToolCallsInContent: "hermes"},
			model: "qwen2.5-7b-instruct",
			settings: func(proxy string) provider.Settings {
				return provider.Settings{BaseURL: proxy + "/v1", Price: &price}
			},
			probe: "GET /v1/models",
			wire: func(t *testing.T, s shape) {
				if s.Path != "/v1/chat/completions" || s.Bearer || s.APIKey {
					t.Fatalf("compatible request %+v", s)
				}
				if !s.has("max_tokens") || s.has("tool_choice") {
					t.Fatalf("compatible body %v", s.Params)
				}
				if s.AnswerToolCalls || !s.AnswerToolTag {
					t.Fatalf("the server did not answer in text: %+v", s)
				}
			},
		},
	}
	for _, name := range []string{"openai-reasoning", "azure", "openai-compatible"} {
		pc := cases[name]
		t.Run(name, func(t *testing.T) {
			dir := examples(t, "retail")
			sim, proxy := simBehind(t, dir, pc.sim)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const n = 50
			res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: n, Writers: 3, Out: t.TempDir(), Seed: 7,
				Model: pc.model, Provider: pc.settings(proxy.url), NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t), Rounds: 1})
			if err != nil {
				t.Fatalf("run: %v\nsim: %+v", err, sim.Stats())
			}
			if res[0].Proved != n {
				t.Fatalf("proved %d of %d", res[0].Proved, n)
			}
			chats := proxy.chatShapes()
			if len(chats) == 0 {
				t.Fatal("no chat completion went through the proxy")
			}
			probes := 0
			for _, s := range chats {
				if len(s.Params) == 1 && s.has("messages") {
					probes++ // the start-up check's empty request to the deployment, refused with 400
					continue
				}
				if s.Status != 200 {
					t.Fatalf("a request was refused: %+v", s)
				}
				pc.wire(t, s)
			}
			probed := false
			for _, s := range proxy.allShapes() {
				probed = probed || s.Method+" "+s.Path == pc.probe
			}
			if !probed {
				t.Fatalf("no start-up probe %q", pc.probe)
			}
			st := sim.Stats()
			if tot := proxy.totals(); tot.RateLimited != 0 || st.Errors != int64(probes) || tot.Failed != probes || tot.Billed != st.Tokens {
				t.Fatalf("proxy %v, simulator %+v", tot, st)
			}
			// Spend in the report is price × what the simulator counted.
			want := price.Cost(model.Usage{PromptTokens: int(st.PromptTokens), CompletionTokens: int(st.CompletionTokens),
				CachedPromptTokens: int(st.CachedPromptTokens), ReasoningTokens: int(st.ReasoningTokens)})
			sp := res[0].Report.Spend
			if !sp.Priced || math.Abs(sp.CostUSD-want) > 1e-9*max(1, want) || sp.PromptTokens != st.PromptTokens ||
				sp.CompletionTokens != st.CompletionTokens || sp.CachedPromptTokens != st.CachedPromptTokens || sp.ReasoningTokens != st.ReasoningTokens {
				t.Fatalf("report spend %+v, want $%.6f for the simulator's %+v", sp, want, st)
			}
			if name == "openai-reasoning" && st.ReasoningTokens == 0 {
				t.Fatal("a reasoning model billed no reasoning tokens")
			}
			if st.CachedPromptTokens == 0 {
				t.Fatal("resent conversations were never cached")
			}
			t.Logf("%s: %d calls, %d prompt (%d cached), %d completion (%d reasoning) tokens, $%.4f, $%.5f per kept scenario",
				name, st.Admitted, st.PromptTokens, st.CachedPromptTokens, st.CompletionTokens, st.ReasoningTokens, sp.CostUSD, sp.CostPerKeptUSD)
		})
	}
}

// A bad key or an unsupported parameter ends the run at once with one clear
// error naming the fix: nothing is retried per slice and no slice is
// dead-lettered.
func TestProviderRefusalsEndTheRun(t *testing.T) {
	t.Parallel()
	dir := examples(t, "retail")
	t.Run("bad key", func(t *testing.T) {
		sim, proxy := simBehind(t, dir, providersim.Config{APIKey: "sk-right"})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: 50, Writers: 3, Out: t.TempDir(), Seed: 7,
			Model: "gpt-4o-mini", Provider: provider.Settings{Provider: "openai", BaseURL: proxy.url + "/v1", APIKey: "sk-wrong"},
			NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t)})
		ce, ok := model.IsFatal(err)
		if !ok || ce.Kind != model.KindAuth || !strings.Contains(err.Error(), "OPENAI_API_KEY") || strings.Contains(err.Error(), "sk-wrong") {
			t.Fatalf("run ended with %v, want the refused key named with its fix", err)
		}
		if n := len(proxy.chatShapes()); n != 0 || sim.Stats().Unauthorized != 1 {
			t.Fatalf("%d chat completions sent, %d refusals, after the start-up check refused the key", n, sim.Stats().Unauthorized)
		}
	})
	t.Run("unsupported parameter", func(t *testing.T) {
		// A reasoning model whose name does not say so, run with
		// --reasoning no: the client sends max_tokens, the provider
		// refuses it (--reasoning auto switches instead:
		// TestReasoningAutoAdaptsEndToEnd).
		sim, proxy := simBehind(t, dir, providersim.Config{ReasoningModels: []string{"team-bot"}})
		db := testenv.PostgresURL(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		const writers = 3
		res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: 50, Writers: writers, Out: t.TempDir(), Seed: 7,
			Model: "team-bot", Provider: provider.Settings{Provider: "openai", BaseURL: proxy.url + "/v1", APIKey: "k", Reasoning: "no"},
			NATSURL: testenv.NATS(t), DatabaseURL: db})
		ce, ok := model.IsFatal(err)
		if !ok || ce.Kind != model.KindUnsupportedParameter || ce.Param != "max_tokens" || !strings.Contains(ce.Fix, "--reasoning yes") {
			t.Fatalf("run ended with %v, want the unsupported parameter named with its fix", err)
		}
		// Each writer asked once, was refused, and stopped.
		if n := len(proxy.chatShapes()); n == 0 || n > writers || sim.Stats().Unsupported != int64(n) {
			t.Fatalf("%d chat completions (%d refused as unsupported), want at most one per writer", n, sim.Stats().Unsupported)
		}
		pool, perr := pgxpool.New(context.Background(), db)
		if perr != nil {
			t.Fatal(perr)
		}
		defer pool.Close()
		var dead int
		if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM slices WHERE run_id = $1 AND state = 'dead'`, res[0].RunID).Scan(&dead); err != nil {
			t.Fatal(err)
		}
		var state string
		if err := pool.QueryRow(context.Background(), `SELECT state FROM runs WHERE id = $1`, res[0].RunID).Scan(&state); err != nil {
			t.Fatal(err)
		}
		if dead != 0 || state != "failed" {
			t.Fatalf("%d slices dead-lettered, run %s", dead, state)
		}
	})
}

// TestReasoningAutoAdaptsEndToEnd: under --reasoning auto, a reasoning
// model whose name does not say so refuses the first max_tokens; the client
// switches to max_completion_tokens, asks again, and the run completes.
func TestReasoningAutoAdaptsEndToEnd(t *testing.T) {
	t.Parallel()
	dir := examples(t, "retail")
	sim, proxy := simBehind(t, dir, providersim.Config{ReasoningModels: []string{"team-bot"}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const asked = 6
	res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: asked, Writers: 2, Out: t.TempDir(), Seed: 7,
		Model: "team-bot", Provider: provider.Settings{Provider: "openai", BaseURL: proxy.url + "/v1", APIKey: "k"},
		NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t)})
	if err != nil || res[0].Proved != asked {
		t.Fatalf("run: %v (proved %v)", err, res)
	}
	chats := proxy.chatShapes()
	refused := sim.Stats().Unsupported
	if refused == 0 || refused > 2 {
		t.Fatalf("%d requests refused as unsupported, want one or two (one per client before it switched)", refused)
	}
	// The two writers' requests interleave: the refused ones are those
	// with max_tokens, whichever arrived when; every other one is shaped
	// for a reasoning model and answered.
	var old int64
	for i, sh := range chats {
		switch {
		case sh.has("max_tokens"):
			old++
			if sh.Status != 400 {
				t.Errorf("request %d with max_tokens: %+v, want it refused", i, sh)
			}
		case !sh.has("max_completion_tokens") || sh.Status != 200:
			t.Errorf("request %d after the switch: %+v", i, sh)
		}
	}
	if old != refused {
		t.Errorf("%d requests with max_tokens, the provider refused %d", old, refused)
	}
}

// A writer process without what its model needs does not start.
func TestWriterRefusesToStart(t *testing.T) {
	natsURL := testenv.NATS(t)
	env := []string{"SUITEGEN_NATS_URL=" + natsURL, "SUITEGEN_DATABASE_URL=" + testenv.PostgresURL(t)}
	// Provider variables of the test's own environment must not leak in.
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"} {
		env = append(env, k+"=")
	}
	for name, tc := range map[string]struct {
		args []string
		env  []string
		code int
		say  string
	}{
		"no key":                {args: []string{"--model", "gpt-4o-mini"}, code: 2, say: "OPENAI_API_KEY"},
		"azure without version": {args: []string{"--model", "prod"}, env: []string{"AZURE_OPENAI_ENDPOINT=https://x.openai.azure.com", "AZURE_OPENAI_API_KEY=k"}, code: 2, say: "OPENAI_API_VERSION"},
	} {
		p := start(t, append(append([]string(nil), env...), tc.env...), "writer", tc.args...)
		err := p.wait(t, time.Minute)
		var exit interface{ ExitCode() int }
		if !errors.As(err, &exit) || exit.ExitCode() != tc.code || !strings.Contains(p.output(), tc.say) {
			t.Errorf("%s: exited %v, want %d naming %s:\n%s", name, err, tc.code, tc.say, p.output())
		}
	}
	// A key the provider refuses: the start-up check fails the writer.
	_, proxy := simBehind(t, examples(t, "retail"), providersim.Config{APIKey: "sk-right"})
	p := start(t, append(env, "OPENAI_API_KEY=sk-wrong"), "writer", "--model", "gpt-4o-mini", "--provider", "openai", "--base-url", proxy.url+"/v1")
	err := p.wait(t, time.Minute)
	var exit interface{ ExitCode() int }
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(p.output(), "auth") || strings.Contains(p.output(), "sk-wrong") {
		t.Errorf("refused key: exited %v:\n%s", err, p.output())
	}
	if n := len(proxy.chatShapes()); n != 0 {
		t.Errorf("%d chat completions from a writer whose key was refused", n)
	}
}
