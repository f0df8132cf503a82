package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/model"
)

// ProbeTimeout bounds the whole start-up probe.
const ProbeTimeout = 20 * time.Second

// Probe checks, without spending tokens, that the provider answers and
// accepts the key and the model, so a writer refuses to start rather than
// fail every slice:
//
//   - OpenAI: GET /models/{model} (key and model).
//   - Azure: GET /openai/models?api-version= (key, endpoint and version),
//     then a chat completion with no messages to the deployment: a
//     deployment that exists refuses it with 400, one that does not answers 404.
//   - OpenAI-compatible: GET /models (reachable, key); a 404 there is a
//     server without the listing and passes.
//
// The error is a *model.ConfigError naming the fix.
func (c *Client) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	base := strings.TrimRight(c.cfg.BaseURL, "/")
	switch c.cfg.Profile {
	case ProfileOpenAI:
		return c.probeGet(ctx, base+"/models/"+url.PathEscape(c.cfg.Model), false)
	case ProfileAzure:
		q := "?api-version=" + url.QueryEscape(c.cfg.APIVersion)
		if err := c.probeGet(ctx, base+"/openai/models"+q, false); err != nil {
			return err
		}
		return c.probeDeployment(ctx, base+"/openai/deployments/"+url.PathEscape(c.cfg.Model)+"/chat/completions"+q)
	default:
		return c.probeGet(ctx, base+"/models", true)
	}
}

func (c *Client) authorize(req *http.Request) {
	if c.cfg.APIKey == "" {
		return
	}
	if c.cfg.Profile == ProfileAzure {
		req.Header.Set("api-key", c.cfg.APIKey)
	} else {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
}

func (c *Client) probeGet(ctx context.Context, u string, notFoundOK bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return &model.ConfigError{Kind: model.KindUnreachable, Message: c.redact(err.Error()), Fix: "check the provider URL"}
	}
	c.authorize(req)
	return c.probeDo(req, notFoundOK, false)
}

func (c *Client) probeDeployment(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(`{"messages":[]}`))
	if err != nil {
		return &model.ConfigError{Kind: model.KindUnreachable, Message: c.redact(err.Error()), Fix: "check AZURE_OPENAI_ENDPOINT"}
	}
	req.Header.Set("Content-Type", "application/json")
	c.authorize(req)
	return c.probeDo(req, false, true)
}

func (c *Client) probeDo(req *http.Request, notFoundOK, badRequestOK bool) error {
	resp, err := c.http.Do(req)
	if err != nil {
		return &model.ConfigError{Kind: model.KindUnreachable, Message: c.redact(err.Error()),
			Fix: fmt.Sprintf("no provider answers at %s: check the URL (--base-url, OPENAI_BASE_URL or AZURE_OPENAI_ENDPOINT) and that the server is up", c.cfg.BaseURL)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode < 300:
		c.setAuth(nil)
		return nil
	case resp.StatusCode == http.StatusNotFound && notFoundOK:
		return nil
	case resp.StatusCode == http.StatusBadRequest && badRequestOK:
		return nil
	}
	err = c.classify(resp.StatusCode, resp.Header, errors.New(probeMessage(body)))
	if _, ok := model.IsFatal(err); ok {
		return err
	}
	// A 429 or 5xx at start-up is the provider being busy, not a refusal of
	// the configuration: the writer may start.
	if model.IsRetryable(err) {
		c.cfg.Logger.Warn("openai: the provider is busy at start-up; starting anyway", "status", resp.StatusCode)
		return nil
	}
	return &model.ConfigError{Kind: model.KindUnreachable, Status: resp.StatusCode, Message: c.redact(probeMessage(body)),
		Fix: fmt.Sprintf("the server at %s does not answer as an OpenAI-compatible provider: check the URL and --provider", c.cfg.BaseURL)}
}

// probeMessage is the error body's message, or the body itself, clipped.
func probeMessage(body []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
