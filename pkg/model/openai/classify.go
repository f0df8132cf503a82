package openai

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/sashabaranov/go-openai"

	"github.com/suitegen/suitegen/pkg/model"
)

// apiError is what a provider's error body said.
type apiError struct {
	message, code, param, kind string
}

func readAPIError(err error) apiError {
	var api *sdk.APIError
	if errors.As(err, &api) {
		a := apiError{message: api.Message, kind: api.Type}
		if api.Code != nil {
			a.code = fmt.Sprint(api.Code)
		}
		if api.Param != nil {
			a.param = *api.Param
		}
		if api.InnerError != nil && a.code == "" {
			a.code = api.InnerError.Code
		}
		return a
	}
	var req *sdk.RequestError
	if errors.As(err, &req) {
		body := strings.TrimSpace(string(req.Body))
		if len(body) > 300 {
			body = body[:300] + "…"
		}
		return apiError{message: body}
	}
	return apiError{message: err.Error()}
}

// classify turns a failing answer into the error the caller branches on:
// configuration refusals (*model.ConfigError) end the run, 429s and 5xx are
// retried after the wait the provider asked for.
func (c *Client) classify(status int, h http.Header, err error) error {
	a := readAPIError(err)
	msg := c.redact(a.message)
	switch {
	case status == http.StatusTooManyRequests:
		if a.code == "insufficient_quota" || a.kind == "insufficient_quota" {
			return &model.ConfigError{Kind: model.KindBilling, Status: status, Message: msg,
				Fix: "the account behind this key has no quota or credit left: add credit or raise the project's spend limit"}
		}
		return &model.RateLimitError{RetryAfter: retryAfter(h, time.Now(), c.cfg.DefaultRetryAfter), Limits: parseLimits(h), Message: msg}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		ce := &model.ConfigError{Kind: model.KindAuth, Status: status, Message: msg, Fix: c.authFix()}
		c.setAuth(ce)
		return ce
	case status == http.StatusNotFound:
		return &model.ConfigError{Kind: model.KindUnknownModel, Status: status, Message: msg, Fix: c.unknownModelFix()}
	case status == http.StatusBadRequest && unsupported(a):
		param := a.param
		if param == "" {
			param = namedParam(a.message)
		}
		return c.unsupported(status, param, msg)
	case status >= 500:
		return &model.HTTPError{Status: status, Message: msg, RetryAfter: serverRetryAfter(h, time.Now())}
	}
	return &model.HTTPError{Status: status, Message: msg}
}

// unsupported reports a 400 that refuses a parameter or value of the
// request's shape rather than its content (a context that is too long is
// the conversation's problem, not the configuration's).
func unsupported(a apiError) bool {
	switch a.code {
	case "unsupported_parameter", "unsupported_value", "OperationNotSupported":
		return true
	}
	m := strings.ToLower(a.message)
	return strings.Contains(m, "unsupported parameter") || strings.Contains(m, "unsupported value") ||
		strings.Contains(m, "does not support") && (a.param != "" || strings.Contains(m, "temperature") || strings.Contains(m, "max_tokens"))
}

// Request parameters a provider's 400 may refuse for a model.
const (
	paramMaxTokens           = "max_tokens"
	paramMaxCompletionTokens = "max_completion_tokens"
	paramTemperature         = "temperature"
	paramTopP                = "top_p"
)

// namedParam is the request parameter a refusal without a param field names
// first in its message ("'max_tokens' is not supported ... use
// 'max_completion_tokens'" refuses max_tokens), or "" when it names none.
func namedParam(message string) string {
	m := strings.ToLower(message)
	best, at := "", len(m)
	for _, p := range []string{paramMaxTokens, paramMaxCompletionTokens, paramTemperature, paramTopP} {
		if i := strings.Index(m, p); i >= 0 && i < at {
			best, at = p, i
		}
	}
	return best
}

// unsupported builds the refusal of a request shape, naming the setting that
// produces the shape the model accepts.
func (c *Client) unsupported(status int, param, msg string) *model.ConfigError {
	ce := &model.ConfigError{Kind: model.KindUnsupportedParameter, Status: status, Param: param, Message: msg}
	m := strings.ToLower(msg)
	switch {
	case param == "max_tokens" || param == "temperature" || param == "top_p" ||
		strings.Contains(m, "max_completion_tokens") && strings.Contains(m, "max_tokens") && !c.Reasoning():
		ce.Fix = fmt.Sprintf("%s is a reasoning model: run with --reasoning yes (max_completion_tokens, no temperature)", c.cfg.Model)
	case param == "max_completion_tokens" || strings.Contains(m, "max_completion_tokens"):
		if c.cfg.Profile == ProfileAzure {
			ce.Fix = fmt.Sprintf("OPENAI_API_VERSION %s predates max_completion_tokens: use 2024-12-01-preview or later", c.cfg.APIVersion)
		} else {
			ce.Fix = fmt.Sprintf("this server does not take max_completion_tokens: run with --reasoning no, or --provider openai-compatible if %s is not OpenAI", c.cfg.BaseURL)
		}
	case msg == sdk.ErrReasoningToolsRequireResponses.Error() || strings.Contains(m, "responses api"):
		ce.Fix = fmt.Sprintf("%s takes tools only through the Responses API: choose another model, or --reasoning-effort none if the model allows it", c.cfg.Model)
	case param != "":
		ce.Fix = fmt.Sprintf("the provider refuses %q for %s: choose a model that takes it", param, c.cfg.Model)
	default:
		ce.Fix = fmt.Sprintf("the provider refuses this request shape for %s: check --provider and --reasoning (docs/PROVIDERS.md)", c.cfg.Model)
	}
	return ce
}

func (c *Client) authFix() string {
	switch c.cfg.Profile {
	case ProfileAzure:
		return "set AZURE_OPENAI_API_KEY to a key of the resource at AZURE_OPENAI_ENDPOINT (" + c.cfg.BaseURL + ")"
	case ProfileCompatible:
		return "set OPENAI_API_KEY to the key the server at " + c.cfg.BaseURL + " expects"
	}
	return "set OPENAI_API_KEY to a valid key with access to " + c.cfg.Model
}

func (c *Client) unknownModelFix() string {
	switch c.cfg.Profile {
	case ProfileAzure:
		return fmt.Sprintf("--model names the Azure deployment, and %s has no deployment %q (check the deployment name and OPENAI_API_VERSION)", c.cfg.BaseURL, c.cfg.Model)
	case ProfileCompatible:
		return fmt.Sprintf("the server at %s serves no model %q, or no chat completions there (the base URL usually ends in /v1)", c.cfg.BaseURL, c.cfg.Model)
	}
	return fmt.Sprintf("--model %s is not a model this key can use (GET /v1/models lists them)", c.cfg.Model)
}
