package openai

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/sashabaranov/go-openai"

	"github.com/suitegen/suitegen/pkg/model"
)

// Defaults for Config.
const (
	DefaultBaseURL     = "https://api.openai.com/v1"
	DefaultCallTimeout = 2 * time.Minute
	// DefaultRetryAfter is the wait assumed for a 429 that names none.
	DefaultRetryAfter = 10 * time.Second
)

// Config configures a client.
type Config struct {
	// Profile is the kind of provider; empty means Detect(BaseURL).
	Profile Profile
	// BaseURL is the endpoint: for OpenAI and compatible servers the URL
	// the chat/completions path is appended to (default DefaultBaseURL), for
	// Azure the resource endpoint (AZURE_OPENAI_ENDPOINT).
	BaseURL string
	// APIKey may be empty for local servers only; never logged or put in errors.
	APIKey string
	// APIVersion is Azure's api-version query (OPENAI_API_VERSION); required
	// for Azure, unused otherwise.
	APIVersion string
	// Model is the model (for Azure: the deployment); required.
	// Request.Model overrides it per call.
	Model string
	// Reasoning says whether Model is a reasoning model (default: from its name).
	Reasoning Reasoning
	// ReasoningEffort, when set, is sent as reasoning_effort to reasoning models.
	ReasoningEffort string
	// Price, when set, prices every call's usage into Response.CostUSD.
	Price *model.Price
	// Timeout is the deadline of one call (default 2 min).
	Timeout time.Duration
	// HTTPClient is copied and its transport wrapped to read headers.
	HTTPClient *http.Client
	// Limiter, when set, admits every call and is told what it counted.
	Limiter model.Limiter
	// TPM is the tokens quota per minute the calls are admitted under (0:
	// not configured). With the limit the provider reports it is what
	// TokensPerMinute says.
	TPM int
	// DefaultRetryAfter is used for a 429 without retry-after or reset headers.
	DefaultRetryAfter time.Duration
	Logger            *slog.Logger
}

func (c *Config) validate() error {
	if c.Model == "" {
		return errors.New("openai: Config.Model is required")
	}
	if c.Profile == "" {
		c.Profile = Detect(c.BaseURL)
	}
	switch c.Profile {
	case ProfileOpenAI, ProfileCompatible:
		if c.BaseURL == "" {
			c.BaseURL = DefaultBaseURL
		}
	case ProfileAzure:
		if c.BaseURL == "" {
			return errors.New("openai: Config.BaseURL (the Azure resource endpoint, AZURE_OPENAI_ENDPOINT) is required for Azure")
		}
		if c.APIVersion == "" {
			return errors.New("openai: Config.APIVersion (OPENAI_API_VERSION) is required for Azure")
		}
		if c.APIKey == "" {
			return errors.New("openai: Config.APIKey (AZURE_OPENAI_API_KEY) is required for Azure")
		}
	default:
		return fmt.Errorf("openai: Config.Profile %q is not one of %v", c.Profile, Profiles)
	}
	if c.Profile == ProfileOpenAI && c.APIKey == "" {
		return errors.New("openai: Config.APIKey (OPENAI_API_KEY) is required for OpenAI")
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return fmt.Errorf("openai: Config.BaseURL %q is not an http(s) URL", c.BaseURL)
	}
	switch c.Reasoning {
	case ReasoningAuto, ReasoningYes, ReasoningNo:
	default:
		return fmt.Errorf("openai: Config.Reasoning %q is not auto, yes or no", c.Reasoning)
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultCallTimeout
	}
	if c.Timeout < 0 {
		return fmt.Errorf("openai: Config.Timeout %s is negative", c.Timeout)
	}
	if c.DefaultRetryAfter == 0 {
		c.DefaultRetryAfter = DefaultRetryAfter
	}
	if c.DefaultRetryAfter < 0 {
		return fmt.Errorf("openai: Config.DefaultRetryAfter %s is negative", c.DefaultRetryAfter)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// Client is a model.Client for one model of one provider. It makes exactly
// one HTTP request per Complete: retries are the caller's, so every 429
// reaches the shared limiter.
type Client struct {
	cfg   Config
	sdk   *sdk.Client
	http  *http.Client
	calib *calibration

	mu   sync.Mutex
	auth error // the last 401/403, until an answer succeeds

	// shape is the request shape --reasoning auto settled on after a
	// provider refused the one the model's name chose (shapeByName until then).
	shape atomic.Int32
	// reportedTPM is the tokens limit the provider's headers last named.
	reportedTPM atomic.Int64
}

// TokensPerMinute is the tokens quota the calls are admitted under: the
// configured one, or the provider's last reported limit when that is lower
// or nothing was configured; 0 while neither is known.
func (c *Client) TokensPerMinute() int {
	tpm := c.cfg.TPM
	if r := int(c.reportedTPM.Load()); r > 0 && (tpm <= 0 || r < tpm) {
		tpm = r
	}
	return max(tpm, 0)
}

var _ model.TokenQuota = (*Client)(nil)

// Request shapes of --reasoning auto.
const (
	shapeByName    int32 = iota // IsReasoningModel decides
	shapeReasoning              // max_completion_tokens, no temperature
	shapePlain                  // max_tokens and temperature
)

// New validates cfg and builds the client. It sends nothing; Probe checks
// the provider.
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		hc = &c
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &headerCapture{base: base}

	var oc sdk.ClientConfig
	if cfg.Profile == ProfileAzure {
		oc = sdk.DefaultAzureConfig(cfg.APIKey, strings.TrimRight(cfg.BaseURL, "/"))
		oc.APIVersion = cfg.APIVersion
		// --model is the deployment's own name: go-openai's default mapper
		// would strip "." from it.
		oc.AzureModelMapperFunc = func(m string) string { return m }
	} else {
		oc = sdk.DefaultConfig(cfg.APIKey)
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	oc.HTTPClient = hc
	return &Client{cfg: cfg, sdk: sdk.NewClientWithConfig(oc), http: hc, calib: newCalibration()}, nil
}

// Name is the configured model (the deployment, for Azure).
func (c *Client) Name() string { return c.cfg.Model }

// Profile is the profile in use.
func (c *Client) Profile() Profile { return c.cfg.Profile }

// Reasoning reports whether requests are shaped for a reasoning model.
func (c *Client) Reasoning() bool { return c.reasoning(c.cfg.Model) }

// reasoning: ReasoningNo cannot make a reasoning-family name take
// max_tokens, since go-openai refuses that before sending. Under
// ReasoningAuto the shape a provider's refusal settled on wins.
func (c *Client) reasoning(name string) bool {
	if c.cfg.Reasoning == ReasoningYes {
		return true
	}
	if c.cfg.Reasoning == ReasoningAuto {
		switch c.shape.Load() {
		case shapeReasoning:
			return true
		case shapePlain:
			return !plainAllowed(name)
		}
	}
	return IsReasoningModel(name)
}

// plainAllowed reports whether go-openai lets max_tokens out for the model
// name: it refuses it before sending for the reasoning families it knows by
// their bare name ("o3-mini", not "openai/o3-mini").
func plainAllowed(name string) bool {
	//lint:ignore SA1019 max_tokens is the parameter in question
	return sdk.NewReasoningValidator().Validate(sdk.ChatCompletionRequest{Model: name, MaxTokens: 1}) == nil
}

// adapt is --reasoning auto learning the request shape from a provider's
// 400: one naming max_tokens, temperature or top_p asks for the reasoning
// shape, one naming max_completion_tokens for the plain one. sent is
// whether the refused request had the reasoning shape. It reports whether
// the request is worth sending again (the shape it asks for is now the
// client's, switched by this refusal or by a concurrent one), and whether
// this refusal made the switch. The shape switches once: a refusal of the
// shape switched to is the provider's final word.
func (c *Client) adapt(name string, sent bool, err error) (param string, retry, switched bool) {
	ce, ok := model.IsFatal(err)
	if c.cfg.Reasoning != ReasoningAuto || !ok || ce.Kind != model.KindUnsupportedParameter {
		return "", false, false
	}
	var want int32
	switch ce.Param {
	case paramMaxTokens, paramTemperature, paramTopP:
		if sent {
			return "", false, false
		}
		want = shapeReasoning
	case paramMaxCompletionTokens:
		if !sent || !plainAllowed(name) {
			return "", false, false
		}
		want = shapePlain
	default:
		return "", false, false
	}
	switched = c.shape.CompareAndSwap(shapeByName, want)
	return ce.Param, switched || c.shape.Load() == want, switched
}

// Price is the configured price, if any.
func (c *Client) Price() (model.Price, bool) {
	if c.cfg.Price == nil {
		return model.Price{}, false
	}
	return *c.cfg.Price, true
}

// Ready is nil unless the provider's last answer refused the key (401/403):
// a writer whose key is refused is not ready until an answer succeeds.
func (c *Client) Ready() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.auth
}

func (c *Client) setAuth(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.auth = err
}

// Complete makes one chat completion call; under --reasoning auto, a 400
// refusing the request's shape switches the shape and sends the request
// once more (see adapt). Errors: *model.ConfigError (end
// the run), *model.RateLimitError for 429, model.ErrTimeout,
// *model.HTTPError, model.ErrEmptyReply (with the Response still filled for
// its usage), or a *model.TransportError; classify with model.IsFatal and
// model.IsRetryable. The Response's Timing is filled in every case.
func (c *Client) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	name := req.Model
	if name == "" {
		name = c.cfg.Model
	}
	sent := c.reasoning(name)
	resp, err := c.complete(ctx, req)
	if param, retry, switched := c.adapt(name, sent, err); retry {
		if switched {
			c.cfg.Logger.Warn("openai: the provider refused the request's shape; switching it and asking again",
				"model", name, "param", param, "reasoning_shape", c.reasoning(name), "err", err)
		}
		first := resp.Timing
		resp, err = c.complete(ctx, req)
		resp.Timing.LimiterWait += first.LimiterWait
		resp.Timing.Provider += first.Provider
	}
	return resp, err
}

// complete is one request: one admission, one HTTP call, one settlement.
func (c *Client) complete(ctx context.Context, req model.Request) (model.Response, error) {
	var resp model.Response
	wire, err := c.toWire(req)
	if err != nil {
		return resp, err
	}
	// go-openai would refuse these client-side; the refusal is a
	// configuration error, named with its fix before anything is spent.
	if err := sdk.NewReasoningValidator().Validate(wire); err != nil {
		return resp, c.unsupported(0, "", err.Error())
	}
	promptEst := model.EstimatePromptTokens(req)
	out := model.OutputTokens(req)
	var permit model.Permit
	admitted := c.calib.scale(promptEst) + out
	if c.cfg.Limiter != nil {
		t0 := time.Now()
		permit, err = c.cfg.Limiter.Acquire(ctx, admitted)
		if ce, ok := model.IsFatal(err); ok && ce.Kind == model.KindQuotaTooSmall && admitted > promptEst+out {
			// Only the scale makes it too large (the prior, before the
			// provider has reported, or a ratio learned on small prompts):
			// what the provider will count may still fit, so ask for the
			// bare estimate; the provider's answer settles it.
			admitted = promptEst + out
			permit, err = c.cfg.Limiter.Acquire(ctx, admitted)
		}
		resp.Timing.LimiterWait = time.Since(t0)
		if err != nil {
			return resp, fmt.Errorf("openai: waiting for provider quota: %w", err)
		}
	}

	capt := &callCapture{}
	callCtx, cancel := context.WithTimeout(context.WithValue(ctx, captureKey{}, capt), c.cfg.Timeout)
	stamp := c.stampWrite(ctx, permit)
	callCtx = httptrace.WithClientTrace(callCtx, stamp.trace())
	t1 := time.Now()
	answer, callErr := c.sdk.CreateChatCompletion(callCtx, wire)
	resp.Timing.Provider = time.Since(t1)
	cancel()
	written := stamp.wait()
	limits := parseLimits(capt.header)
	resp.Limits = limits
	if limits.LimitTokens > 0 {
		c.reportedTPM.Store(int64(limits.LimitTokens))
	}

	charge, err := c.interpret(ctx, callCtx, req, answer, callErr, capt, &resp, admitted, out)
	if !written && capt.status == 0 {
		// Not a byte of the request went out (the connection never
		// opened): the provider counted nothing.
		charge = 0
	}
	if err == nil || errors.Is(err, model.ErrEmptyReply) {
		c.setAuth(nil)
		if resp.Usage.PromptTokens > 0 {
			c.calib.observe(promptEst, resp.Usage.PromptTokens)
		}
	}
	if c.cfg.Price != nil {
		resp.CostUSD, resp.Priced = c.cfg.Price.Cost(resp.Usage), true
	}
	c.account(ctx, permit, limits, charge, err)
	return resp, err
}

// interpret turns go-openai's outcome into ours and says what the provider
// counted against its tokens quota.
func (c *Client) interpret(ctx, callCtx context.Context, req model.Request, out sdk.ChatCompletionResponse, callErr error,
	capt *callCapture, resp *model.Response, admitted, maxOut int) (int, error) {
	if callErr != nil {
		if capt.status >= 400 {
			// A refused request is not counted by providers.
			return 0, c.classify(capt.status, capt.header, callErr)
		}
		if capt.status == 0 {
			if ctx.Err() != nil {
				return admitted, fmt.Errorf("openai: call abandoned: %w", ctx.Err())
			}
			if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
				return admitted, fmt.Errorf("%w after %s", model.ErrTimeout, c.cfg.Timeout)
			}
			// The request may or may not have been admitted: charge the estimate.
			return admitted, &model.TransportError{Msg: c.redact(callErr.Error()), Err: callErr}
		}
		// An answer with a success status that did not decode.
		return admitted, &model.TransportError{Msg: "undecodable answer: " + c.redact(callErr.Error()), Err: callErr}
	}
	u := out.Usage
	resp.Usage = model.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil {
		resp.Usage.CachedPromptTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		resp.Usage.ReasoningTokens = d.ReasoningTokens
	}
	// The provider counted this call against its tokens/min window at
	// admission as prompt + the reply allowance, whatever was written (the
	// reasoning tokens are inside the allowance): settling the usage alone
	// would hand back tokens the provider still counts.
	charge := admitted
	if u.PromptTokens > 0 {
		charge = u.PromptTokens + max(maxOut, u.CompletionTokens)
	}
	if len(out.Choices) == 0 {
		return charge, model.ErrEmptyReply
	}
	m := out.Choices[0].Message
	resp.Message = model.Message{Role: model.RoleAssistant, Content: m.Content}
	for _, tc := range m.ToolCalls {
		resp.Message.ToolCalls = append(resp.Message.ToolCalls, model.ToolCall{
			ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments,
		})
	}
	if len(resp.Message.ToolCalls) == 0 && c.cfg.Profile == ProfileCompatible {
		if calls, rest := recoverToolCalls(resp.Message.Content, req.Tools); len(calls) > 0 {
			resp.Message.ToolCalls, resp.Message.Content = calls, rest
		}
	}
	mintIDs(resp.Message.ToolCalls, len(req.Messages))
	if resp.Message.Content == "" && len(resp.Message.ToolCalls) == 0 {
		return charge, model.ErrEmptyReply
	}
	return charge, nil
}

// account tells the limiter what happened, even when ctx was cancelled: a
// permit left unsettled keeps its estimate until the window forgets it.
func (c *Client) account(ctx context.Context, permit model.Permit, limits model.Limits, charge int, callErr error) {
	if c.cfg.Limiter == nil {
		return
	}
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if rl, ok := model.IsRateLimited(callErr); ok {
		if err := c.cfg.Limiter.Pause(bg, rl.RetryAfter); err != nil {
			c.cfg.Logger.Warn("openai: pausing the provider quota failed", "err", err)
		}
	}
	if permit != nil {
		if err := permit.Settle(bg, charge, limits); err != nil {
			c.cfg.Logger.Warn("openai: settling provider quota failed", "err", err)
		}
	}
}

// writeStamp tells a permit the moment its request was written, which is
// when the provider starts counting it (net/http/httptrace's WroteRequest):
// the admission was taken earlier, before the connection was set up. The
// trace hook runs on the transport's goroutine and only signals; a goroutine
// owned by the call stamps the admission (a round trip to the quota's
// database) and the call waits for it before settling, so the stamp is never
// earlier than the write and always precedes the settlement.
type writeStamp struct {
	permit model.Permit
	log    *slog.Logger
	wrote  chan struct{} // closed at the first complete write
	stop   chan struct{} // closed when the call is over
	done   chan struct{} // closed when the stamping goroutine has ended
	once   sync.Once
	tried  atomic.Bool // a write was attempted, complete or not
}

// stampWrite starts the goroutine that stamps permit (none without one).
func (c *Client) stampWrite(ctx context.Context, permit model.Permit) *writeStamp {
	w := &writeStamp{permit: permit, log: c.cfg.Logger, wrote: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	if permit == nil {
		close(w.done)
		return w
	}
	bg := context.WithoutCancel(ctx)
	go func() {
		defer close(w.done)
		select {
		case <-w.wrote:
		case <-w.stop:
			select {
			case <-w.wrote: // written, and the call ended before this ran
			default:
				return
			}
		}
		sctx, cancel := context.WithTimeout(bg, 10*time.Second)
		defer cancel()
		if err := w.permit.Sent(sctx); err != nil {
			w.log.Warn("openai: stamping the provider quota's admission at the write failed", "err", err)
		}
	}()
	return w
}

func (w *writeStamp) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		w.tried.Store(true)
		if info.Err == nil {
			// A write that failed is retried by the transport on a new
			// connection, or not received at all: the complete one counts.
			w.once.Do(func() { close(w.wrote) })
		}
	}}
}

// wait ends the stamping goroutine once the call is over and reports whether
// any of the request may have reached the provider.
func (w *writeStamp) wait() bool {
	close(w.stop)
	<-w.done
	return w.tried.Load()
}

// minRedacted is the shortest key redacted from text: a shorter one (a
// local server's placeholder) would blank out ordinary words.
const minRedacted = 8

func (c *Client) redact(s string) string {
	if len(c.cfg.APIKey) < minRedacted {
		return s
	}
	return strings.ReplaceAll(s, c.cfg.APIKey, "[redacted]")
}

// calibration scales the prompt estimate to what the provider reports: the
// largest ratio of reported to estimated prompt tokens over the last calls,
// so the quota is charged at least what the provider will count even when
// its tokenizer counts more than model.CountTokens.
type calibration struct {
	mu     sync.Mutex
	ratios [64]float64
	n      int
}

func newCalibration() *calibration { return &calibration{} }

func (k *calibration) observe(estimate, reported int) {
	if estimate <= 0 || reported <= 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ratios[k.n%len(k.ratios)] = float64(reported) / float64(estimate)
	k.n++
}

// UncalibratedFactor scales prompt estimates until the provider has
// reported a prompt's count: every writer's first requests are admitted
// together, before any answer, and a provider whose tokenizer counts more
// than model.CountTokens would see a full window overrun. Half again covers
// the tokenizers in use; the first answers settle the charges to the truth.
const UncalibratedFactor = 1.5

// factor is the ratio applied to estimates: UncalibratedFactor until a
// provider has reported, then the largest recent ratio (at most 4: a
// tokenizer four times off this estimate is a server reporting nonsense, not
// a tokenizer).
func (k *calibration) factor() float64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n == 0 {
		return UncalibratedFactor
	}
	f := 0.0
	for i := 0; i < min(k.n, len(k.ratios)); i++ {
		f = max(f, k.ratios[i])
	}
	return min(f, 4)
}

func (k *calibration) scale(estimate int) int {
	return int(float64(estimate)*k.factor() + 0.999)
}

// BaseURL is the endpoint requests go to (secrets are never in it).
func (c *Client) BaseURL() string { return c.cfg.BaseURL }
