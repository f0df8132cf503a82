package writer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/skills"
)

// maxToolResult bounds what one tool answer puts back into the conversation.
const maxToolResult = 16 << 10

// session is one slice's conversation with the model.
type session struct {
	w      *Writer
	e      *engine.Engine
	b      brief.Brief
	run    canvas.Run
	msgs   []model.Message
	have   map[string]int // bucket -> credited so far
	want   map[string]int
	prompt string // sha256 of the system prompt, for provenance
	waited time.Duration
	// outage is set by a tool that met a database outage: the session ends
	// with it after that tool's answer (see transient.go).
	outage error
}

func (w *Writer) writeSlice(ctx context.Context, d *queue.Delivery) error {
	s := d.Slice
	run, err := w.cfg.Store.Run(ctx, s.RunId)
	if errors.Is(err, canvas.ErrNotFound) {
		return &unknownRunError{s.RunId}
	}
	if err != nil {
		return fmt.Errorf("read run: %w", err)
	}
	e, err := w.cfg.Engines.Get(ctx, run.ContractSHA256)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	buckets, err := w.cfg.Store.Buckets(ctx, s.RunId)
	if err != nil {
		return fmt.Errorf("read buckets: %w", err)
	}
	byID := map[string]canvas.Bucket{}
	for _, b := range buckets {
		byID[b.ID] = b
	}
	ss := &session{w: w, e: e, run: run, have: map[string]int{}, want: map[string]int{}}
	ss.b = brief.Brief{Run: s.RunId, Slice: s.SliceId, Agent: e.C.Agent, Contract: e.C.SHA256, Seed: run.Seed, Lessons: s.Lessons, Gap: s.Gap}
	if sp := s.Spread; sp != nil {
		ss.b.Spread = plan.Spread{Initials: sp.NameInitials, CodePrefixes: sp.CodePrefixes, Personalities: sp.Personalities, Accents: sp.Accents, Styles: sp.Styles, Locations: sp.Locations}
	}
	for _, a := range s.Buckets {
		b, ok := byID[a.BucketId]
		if !ok {
			return fmt.Errorf("slice names bucket %s, which run %s does not have", a.BucketId, s.RunId)
		}
		var spec plan.Spec
		if err := json.Unmarshal(b.Spec, &spec); err != nil {
			return fmt.Errorf("bucket %s spec: %w", b.ID, err)
		}
		// What is credited comes from the ledger, not the message: a
		// redelivered slice picks up where the journal says it stopped.
		ss.b.Buckets = append(ss.b.Buckets, brief.Bucket{ID: b.ID, UseCase: b.UseCase, Angle: b.Angle, Outcome: b.Outcome,
			Overlay: b.Overlay, Kind: b.Kind, Axes: b.Axes, Want: b.Want, Have: b.Done, Spec: spec})
		ss.have[b.ID], ss.want[b.ID] = b.Done, b.Want
	}
	ss.b.TurnBudget = 6 + 5*ss.b.Outstanding()
	if s.TurnBudget > 0 && int(s.TurnBudget) > ss.b.TurnBudget {
		ss.b.TurnBudget = int(s.TurnBudget)
	}
	if ss.b.Outstanding() == 0 {
		return nil
	}
	system := skills.WriterPrompt(e.C)
	sum := sha256.Sum256([]byte(system))
	ss.prompt = hex.EncodeToString(sum[:])
	ss.msgs = []model.Message{
		{Role: model.RoleSystem, Content: system},
		{Role: model.RoleUser, Content: brief.Render(ss.b)},
	}
	sctx, cancel := context.WithTimeout(ctx, w.cfg.SessionTimeout)
	defer cancel()
	return ss.loop(sctx)
}

func (ss *session) outstanding() int {
	n := 0
	for id, want := range ss.want {
		if ss.have[id] < want {
			n += want - ss.have[id]
		}
	}
	return n
}

func (ss *session) loop(ctx context.Context) error {
	w := ss.w
	empty, failures := 0, 0
	for turn := 0; turn < ss.b.TurnBudget; turn++ {
		if ss.outstanding() == 0 {
			return nil
		}
		resp, err := ss.complete(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("session: %w", ctx.Err())
			}
			if errors.Is(err, errRateLimitedTooLong) {
				return err
			}
			if errors.Is(err, errBudgetReached) {
				// The slice ends here, written as far as it got; the planner
				// sees the cap too and deals nothing more.
				w.log.Info("run budget reached; ending the slice", "slice", ss.b.Slice)
				return nil
			}
			if ce, fatal := model.IsFatal(err); fatal {
				if ce.Kind == model.KindQuotaTooSmall && turn > 0 {
					// The conversation outgrew what the quota admits in a
					// window: the slice ends as far as it got, and the
					// planner deals what is left to a fresh, short session.
					w.log.Warn("the next request is larger than the provider quota admits; ending the slice", "slice", ss.b.Slice, "err", err)
					return nil
				}
				return err // no retry cures a refused configuration (see handle)
			}
			failures++
			if failures > 3 {
				return fmt.Errorf("model: %w", err)
			}
			w.log.Warn("model call failed; asking again", "err", err, "slice", ss.b.Slice)
			if !sleep(ctx, model.RetryDelay(err, time.Duration(failures)*time.Second)) {
				return ctx.Err()
			}
			turn--
			continue
		}
		failures = 0
		msg := resp.Message
		msg.Role = model.RoleAssistant
		ss.msgs = append(ss.msgs, msg)
		if len(msg.ToolCalls) == 0 {
			empty++
			if empty > 3 {
				return errors.New("model: three replies without a tool call")
			}
			ss.msgs = append(ss.msgs, model.Message{Role: model.RoleUser, Content: "Use the tools: rehearse with try_calls, submit with submit_scenario, and call finish when the slice is written."})
			continue
		}
		for _, tc := range msg.ToolCalls {
			out, done := ss.tool(ctx, tc)
			w.log.Debug("tool call", "slice", ss.b.Slice, "tool", tc.Name, "args", clip(tc.Arguments, 2000), "answer", clip(out, 2000))
			if len(out) > maxToolResult {
				out = out[:maxToolResult] + "\n[truncated]"
			}
			if ss.outage != nil {
				return ss.outage
			}
			ss.msgs = append(ss.msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: out})
			if done {
				return nil
			}
		}
	}
	return nil
}

var errRateLimitedTooLong = errors.New("writer: provider kept refusing for rate; releasing the slice")

// complete makes one model call under the shared quota: a token reservation
// first, the usage settled after, a 429 paused out for everyone sharing the
// bucket (the slice is kept), every call's spend in the ledger.
func (ss *session) complete(ctx context.Context) (model.Response, error) {
	w := ss.w
	req := model.Request{Model: w.cfg.Model.Name(), Messages: ss.msgs, Tools: brief.Tools(), MaxTokens: w.cfg.MaxTokens, Seed: ss.b.Seed}
	for {
		if err := ss.checkBudget(ctx); err != nil {
			return model.Response{}, err
		}
		cctx, cancel := context.WithTimeout(ctx, w.cfg.CallTimeout)
		start := time.Now()
		resp, err := w.cfg.Model.Complete(cctx, req)
		cancel()
		// The provider's time alone: the wait for the shared quota is the
		// limiter's own metric.
		elapsed := time.Since(start) - resp.Timing.LimiterWait
		if rl, ok := model.IsRateLimited(err); ok {
			// Not a failed call: the quota was reached. The client has told the
			// shared limiter, which pauses every writer; this slice waits and asks again.
			// ObserveModelCall counts the 429 in model_rate_limited_total too.
			w.cfg.Metrics.For(ss.b.Run).ObserveModelCall(req.Model, metrics.OutcomeRateLimited, elapsed, 0, 0)
			pause := rl.RetryAfter
			if pause <= 0 {
				pause = 2 * time.Second
			}
			pause += time.Duration(rand.Int64N(int64(pause/4) + 1))
			ss.waited += pause
			if ss.waited > w.cfg.MaxRateLimitWait {
				return model.Response{}, errRateLimitedTooLong
			}
			if !sleep(ctx, pause) {
				return model.Response{}, ctx.Err()
			}
			continue
		}
		u := resp.Usage
		outcome := metrics.OutcomeOK
		switch {
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, model.ErrTimeout):
			outcome = metrics.OutcomeTimeout
		case err != nil:
			outcome = metrics.OutcomeError
		}
		mx := w.cfg.Metrics.For(ss.b.Run)
		mx.ObserveModelCall(req.Model, outcome, elapsed, u.PromptTokens, u.CompletionTokens)
		mx.ObserveModelSpend(req.Model, u.CachedPromptTokens, u.ReasoningTokens, resp.CostUSD)
		// Every call's usage lands in the meter, failed ones included.
		if u.Total() > 0 || err == nil {
			if serr := w.cfg.Store.SpendCall(ctx, canvas.Call{Run: ss.b.Run, Slice: ss.b.Slice, Writer: w.cfg.ID, Model: req.Model,
				Prompt: u.PromptTokens, Completion: u.CompletionTokens, CachedPrompt: u.CachedPromptTokens, Reasoning: u.ReasoningTokens,
				CostUSD: resp.CostUSD, Priced: resp.Priced, Outcome: outcome}); serr != nil {
				return model.Response{}, fmt.Errorf("budget meter: %w", serr)
			}
		}
		return resp, err
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func errorText(err error) string {
	s := err.Error()
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 500 {
		s = s[:500]
	}
	return "Error: " + s
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
