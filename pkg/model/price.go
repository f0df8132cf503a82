package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Price is what a model's tokens cost, in US dollars per million tokens, by
// the kinds providers bill apart: prompt tokens served from the provider's
// prompt cache are discounted, and reasoning tokens (part of the completion)
// may be priced apart from the visible reply.
type Price struct {
	Prompt       float64 `json:"prompt"`
	CachedPrompt float64 `json:"cached_prompt"`
	Completion   float64 `json:"completion"`
	Reasoning    float64 `json:"reasoning"`
}

// Cost is what u costs at p, in dollars. Cached tokens are taken out of the
// prompt and reasoning tokens out of the completion, since providers report
// them inside those counts.
func (p Price) Cost(u Usage) float64 {
	cached := min(max(u.CachedPromptTokens, 0), max(u.PromptTokens, 0))
	reasoning := min(max(u.ReasoningTokens, 0), max(u.CompletionTokens, 0))
	return (float64(max(u.PromptTokens, 0)-cached)*p.Prompt + float64(cached)*p.CachedPrompt +
		float64(max(u.CompletionTokens, 0)-reasoning)*p.Completion + float64(reasoning)*p.Reasoning) / 1e6
}

func (p Price) validate(where string) error {
	names := []string{"prompt", "cached_prompt", "completion", "reasoning"}
	for i, v := range []float64{p.Prompt, p.CachedPrompt, p.Completion, p.Reasoning} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: %s %v is not a price (dollars per million tokens)", where, names[i], v)
		}
	}
	return nil
}

// Prices is a price table by model name. A name also prices its dated and
// suffixed variants ("gpt-4o-mini" prices "gpt-4o-mini-2024-07-18"); the
// longest matching name wins.
type Prices map[string]Price

// DefaultPrices is OpenAI's published standard-tier list price of the models
// it names, in dollars per million tokens, as of this release. Prices change:
// override them with a prices file or a price flag (docs/PROVIDERS.md). Azure
// deployments and open-weight servers are named by their operator and are
// never priced by default.
func DefaultPrices() Prices {
	return Prices{
		"gpt-5":        {Prompt: 1.25, CachedPrompt: 0.125, Completion: 10, Reasoning: 10},
		"gpt-5-mini":   {Prompt: 0.25, CachedPrompt: 0.025, Completion: 2, Reasoning: 2},
		"gpt-5-nano":   {Prompt: 0.05, CachedPrompt: 0.005, Completion: 0.40, Reasoning: 0.40},
		"gpt-4.1":      {Prompt: 2, CachedPrompt: 0.50, Completion: 8, Reasoning: 8},
		"gpt-4.1-mini": {Prompt: 0.40, CachedPrompt: 0.10, Completion: 1.60, Reasoning: 1.60},
		"gpt-4.1-nano": {Prompt: 0.10, CachedPrompt: 0.025, Completion: 0.40, Reasoning: 0.40},
		"gpt-4o":       {Prompt: 2.50, CachedPrompt: 1.25, Completion: 10, Reasoning: 10},
		"gpt-4o-mini":  {Prompt: 0.15, CachedPrompt: 0.075, Completion: 0.60, Reasoning: 0.60},
		"o1":           {Prompt: 15, CachedPrompt: 7.50, Completion: 60, Reasoning: 60},
		"o3":           {Prompt: 2, CachedPrompt: 0.50, Completion: 8, Reasoning: 8},
		"o3-mini":      {Prompt: 1.10, CachedPrompt: 0.55, Completion: 4.40, Reasoning: 4.40},
		"o4-mini":      {Prompt: 1.10, CachedPrompt: 0.275, Completion: 4.40, Reasoning: 4.40},
	}
}

// Lookup finds model's price: its own entry, else the longest entry it
// extends with "-" (a dated or suffixed variant).
func (ps Prices) Lookup(model string) (Price, bool) {
	if p, ok := ps[model]; ok {
		return p, true
	}
	best := ""
	for name := range ps {
		if len(name) > len(best) && strings.HasPrefix(model, name+"-") {
			best = name
		}
	}
	if best == "" {
		return Price{}, false
	}
	return ps[best], true
}

// Merge returns ps with every entry of over replacing or adding to it.
func (ps Prices) Merge(over Prices) Prices {
	out := make(Prices, len(ps)+len(over))
	for k, v := range ps {
		out[k] = v
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}

// Names lists the priced model names, sorted.
func (ps Prices) Names() []string {
	out := make([]string, 0, len(ps))
	for k := range ps {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// priceFields is a Price as written in a file: a cached or reasoning price
// left out costs what the prompt or completion does.
type priceFields struct {
	Prompt       *float64 `json:"prompt"`
	CachedPrompt *float64 `json:"cached_prompt"`
	Completion   *float64 `json:"completion"`
	Reasoning    *float64 `json:"reasoning"`
}

func (f priceFields) price(where string) (Price, error) {
	if f.Prompt == nil || f.Completion == nil {
		return Price{}, fmt.Errorf("%s: prompt and completion prices are required", where)
	}
	p := Price{Prompt: *f.Prompt, CachedPrompt: *f.Prompt, Completion: *f.Completion, Reasoning: *f.Completion}
	if f.CachedPrompt != nil {
		p.CachedPrompt = *f.CachedPrompt
	}
	if f.Reasoning != nil {
		p.Reasoning = *f.Reasoning
	}
	return p, p.validate(where)
}

// ReadPrices decodes a prices file: a JSON object from model name to
// {"prompt", "cached_prompt", "completion", "reasoning"} in dollars per
// million tokens. Unknown fields are errors; cached_prompt defaults to
// prompt and reasoning to completion.
func ReadPrices(r io.Reader) (Prices, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("model: prices: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var raw map[string]priceFields
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("model: prices: %w", err)
	}
	if dec.More() {
		return nil, errors.New("model: prices: trailing data after the JSON object")
	}
	out := Prices{}
	for name, f := range raw {
		if strings.TrimSpace(name) == "" {
			return nil, errors.New("model: prices: an entry has no model name")
		}
		p, err := f.price("model: prices: " + name)
		if err != nil {
			return nil, err
		}
		out[name] = p
	}
	return out, nil
}

// ParsePrice reads a price given on the command line:
// "prompt=0.15,cached_prompt=0.075,completion=0.6,reasoning=0.6" in dollars
// per million tokens ("cached" is short for cached_prompt). As in a file,
// cached_prompt defaults to prompt and reasoning to completion.
func ParsePrice(s string) (Price, error) {
	var f priceFields
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return Price{}, fmt.Errorf("model: price %q: want kind=dollars per million tokens", part)
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return Price{}, fmt.Errorf("model: price %q: %v", part, err)
		}
		switch strings.TrimSpace(k) {
		case "prompt":
			f.Prompt = &x
		case "cached", "cached_prompt":
			f.CachedPrompt = &x
		case "completion":
			f.Completion = &x
		case "reasoning":
			f.Reasoning = &x
		default:
			return Price{}, fmt.Errorf("model: price %q: unknown kind %q (prompt, cached_prompt, completion, reasoning)", part, k)
		}
	}
	return f.price("model: price " + strconv.Quote(s))
}
