package model

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestCountTokens(t *testing.T) {
	for s, want := range map[string]int{
		"":                      0,
		"hello":                 2,
		"a b c":                 3,
		`{"order_id":"A1001"}`:  13,
		"internationalisation!": 6,
	} {
		if got := CountTokens(s); got != want {
			t.Errorf("CountTokens(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	base := Request{Messages: []Message{{Role: RoleUser, Content: strings.Repeat("abcd ", 100)}}, MaxTokens: 50}
	n := EstimateTokens(base)
	if want := 3 + 3 + 1 + 100 + 50; n != want {
		t.Fatalf("100 words + 50 max output estimated at %d, want %d", n, want)
	}
	more := base
	more.Tools = []ToolSpec{{Name: "t", Description: strings.Repeat("x ", 400)}}
	if EstimateTokens(more) < n+400 {
		t.Fatal("tools are not counted")
	}
	unset := base
	unset.MaxTokens = 0
	if EstimateTokens(unset) != n-50+DefaultOutputTokens {
		t.Fatal("an unset MaxTokens does not reserve the default output")
	}
	if CompletionTokens(Message{}) != 1 {
		t.Fatal("an empty reply costs nothing")
	}
}

func TestPriceCost(t *testing.T) {
	p := Price{Prompt: 2, CachedPrompt: 0.5, Completion: 8, Reasoning: 10}
	u := Usage{PromptTokens: 1_000_000, CachedPromptTokens: 400_000, CompletionTokens: 300_000, ReasoningTokens: 100_000}
	// 600k×2 + 400k×0.5 + 200k×8 + 100k×10, per million.
	if got, want := p.Cost(u), 1.2+0.2+1.6+1.0; math.Abs(got-want) > 1e-9 {
		t.Fatalf("cost %v, want %v", got, want)
	}
	// Nonsense counts (cached above prompt) never price below zero or above the whole prompt.
	if got := p.Cost(Usage{PromptTokens: 10, CachedPromptTokens: 50}); math.Abs(got-10*0.5/1e6) > 1e-12 {
		t.Fatalf("cost %v", got)
	}
}

func TestPricesLookup(t *testing.T) {
	ps := DefaultPrices()
	for name, want := range map[string]string{
		"gpt-4o": "gpt-4o", "gpt-4o-2024-08-06": "gpt-4o", "gpt-4o-mini": "gpt-4o-mini",
		"gpt-4o-mini-2024-07-18": "gpt-4o-mini", "o4-mini-2025-04-16": "o4-mini", "gpt-5-mini-2025-08-07": "gpt-5-mini",
	} {
		got, ok := ps.Lookup(name)
		if !ok || got != ps[want] {
			t.Errorf("Lookup(%q) = %+v %v, want %s's price", name, got, ok, want)
		}
	}
	for _, name := range []string{"gpt-5.1", "my-deployment", "llama3", "gpt-4oo"} {
		if _, ok := ps.Lookup(name); ok {
			t.Errorf("Lookup(%q) priced a model the table does not name", name)
		}
	}
	m := ps.Merge(Prices{"gpt-4o": {Prompt: 1}, "mine": {Prompt: 3}})
	if m["gpt-4o"].Prompt != 1 || m["mine"].Prompt != 3 || ps["gpt-4o"].Prompt != 2.5 {
		t.Fatal("merge")
	}
}

func TestReadPrices(t *testing.T) {
	ps, err := ReadPrices(strings.NewReader(`{"sim-writer": {"prompt": 1, "completion": 4, "cached_prompt": 0.25}, "other": {"prompt": 2, "completion": 3, "reasoning": 9}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ps["sim-writer"] != (Price{Prompt: 1, CachedPrompt: 0.25, Completion: 4, Reasoning: 4}) || ps["other"] != (Price{Prompt: 2, CachedPrompt: 2, Completion: 3, Reasoning: 9}) {
		t.Fatalf("prices %+v", ps)
	}
	for in, want := range map[string]string{
		`{"m": {"prompt": 1}}`:                          "required",
		`{"m": {"prompt": 1, "completion": -1}}`:        "completion",
		`{"m": {"prompt": 1, "completion": 1, "x": 1}}`: "unknown field",
		`{"": {"prompt": 1, "completion": 1}}`:          "no model name",
		`[1]`:                                           "cannot unmarshal",
		`{} {}`:                                         "trailing",
	} {
		if _, err := ReadPrices(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", in, err, want)
		}
	}
}

func TestParsePrice(t *testing.T) {
	p, err := ParsePrice("prompt=0.15, cached=0.075,completion=0.6")
	if err != nil || p != (Price{Prompt: 0.15, CachedPrompt: 0.075, Completion: 0.6, Reasoning: 0.6}) {
		t.Fatalf("%+v %v", p, err)
	}
	for _, bad := range []string{"", "prompt=1", "prompt=x,completion=1", "prompt=1,completion=1,input=2", "prompt", "prompt=NaN,completion=1"} {
		if _, err := ParsePrice(bad); err == nil {
			t.Errorf("ParsePrice(%q) accepted", bad)
		}
	}
}

func FuzzReadPrices(f *testing.F) {
	f.Add(`{"m": {"prompt": 1, "completion": 2}}`)
	f.Add(`{"m": {"prompt": 1e308, "completion": 1e308, "reasoning": -0}}`)
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := ReadPrices(strings.NewReader(in))
		if err != nil {
			return
		}
		for name, p := range ps {
			if name == "" || p.Prompt < 0 || p.CachedPrompt < 0 || p.Completion < 0 || p.Reasoning < 0 {
				t.Fatalf("accepted %q: %+v", name, p)
			}
			if c := p.Cost(Usage{PromptTokens: 10, CompletionTokens: 10}); c < 0 || math.IsNaN(c) {
				t.Fatalf("cost %v", c)
			}
		}
	})
}

func TestErrorClasses(t *testing.T) {
	fatal := fmt.Errorf("writer: %w", &ConfigError{Kind: KindAuth, Status: 401, Message: "bad key", Fix: "set OPENAI_API_KEY"})
	if ce, ok := IsFatal(fatal); !ok || ce.Kind != KindAuth || IsRetryable(fatal) {
		t.Fatalf("fatal %v", fatal)
	}
	if !strings.Contains(fatal.Error(), "fix: set OPENAI_API_KEY") {
		t.Fatalf("text %q", fatal)
	}
	rl := &RateLimitError{RetryAfter: 3 * time.Second}
	if !IsRetryable(rl) || RetryDelay(rl, time.Second) != 3*time.Second {
		t.Fatal("429")
	}
	s5 := &HTTPError{Status: 502}
	if !IsRetryable(s5) || RetryDelay(s5, time.Second) != time.Second {
		t.Fatal("502 without retry-after")
	}
	if IsRetryable(&HTTPError{Status: 400}) || IsRetryable(errors.New("x")) || IsRetryable(nil) {
		t.Fatal("non-retryable classified retryable")
	}
	if (Usage{PromptTokens: 1, CompletionTokens: 2, CachedPromptTokens: 1}).Add(Usage{PromptTokens: 3, ReasoningTokens: 1}) != (Usage{PromptTokens: 4, CompletionTokens: 2, CachedPromptTokens: 1, ReasoningTokens: 1}) {
		t.Fatal("usage add")
	}
}
