package writer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/outage"
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
	run    ledger.Run
	msgs   []model.Message
	have   map[string]int // bucket -> credited so far
	want   map[string]int
	prompt string // sha256 of the system prompt, for provenance
	// mark is where the turns not yet compacted begin (after the brief and
	// the digests); subs are the submissions those turns made.
	mark int
	subs []brief.Submission
	// rehearsals are the session's rehearsals that ran, by their number
	// less one: a submission may name one for its setup and solution.
	rehearsals []brief.TryArgs
	waited     time.Duration
	// outage is set by a tool that met a database outage: the session ends
	// with it after that tool's answer (see outage.go).
	outage error
}

// writeSlice writes one slice. Its phases: whether the ledger already has
// the slice done (errAlreadyDone), the run the slice belongs to (one
// this writer may write), the delivery recorded begun and whether the
// slice's earlier deliveries leave it any (charge.go), the engine of the
// run's contract, the brief from
// the ledger's buckets (what is credited comes from the ledger, not the
// message, so a redelivered slice picks up where the journal says it
// stopped), then the model session.
func (w *Writer) writeSlice(ctx context.Context, d Delivery) error {
	s := d.Slice()
	if err := w.done(ctx, s); err != nil {
		return err
	}
	run, err := w.run(ctx, s.Run)
	if err != nil {
		return err
	}
	if err := w.begin(ctx, d); err != nil {
		return err
	}
	if w.cfg.BeforeSlice != nil {
		w.cfg.BeforeSlice(s.ID)
	}
	e, err := w.cfg.Engines.Get(ctx, run.ContractSHA256)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	b, err := w.brief(ctx, s, run, e)
	if err != nil {
		return err
	}
	if b.Outstanding() == 0 {
		return nil
	}
	ss := &session{w: w, e: e, run: run, b: b, have: map[string]int{}, want: map[string]int{}}
	for _, bk := range b.Buckets {
		ss.have[bk.ID], ss.want[bk.ID] = bk.Have, bk.Want
	}
	b.Notes = skills.Buckets(b.Features())
	text, err := brief.Render(b)
	if err != nil {
		return &unbriefableError{err: err}
	}
	system := skills.WriterPrompt(e.C)
	sum := sha256.Sum256([]byte(system))
	ss.prompt = hex.EncodeToString(sum[:])
	ss.msgs = []model.Message{
		{Role: model.RoleSystem, Content: system},
		{Role: model.RoleUser, Content: text},
	}
	ss.mark = len(ss.msgs)
	sctx, cancel := context.WithTimeout(ctx, w.cfg.SessionTimeout)
	defer cancel()
	err = ss.loop(sctx)
	if err != nil && sctx.Err() != nil && ctx.Err() == nil {
		// The session's own time ran out: whatever a tool met on the way
		// out, that is no outage to pause for.
		return fmt.Errorf("session: %w (last: %v)", sctx.Err(), err)
	}
	return err
}

// errAlreadyDone: the ledger records the slice done. Only a writer that
// committed all of the slice's work records that, so this delivery is a
// redelivery after an ack that was lost (or a republish of a finished
// slice): it is acked as it is, without a session, which could otherwise
// write into buckets the planner has since folded and dealt again.
var errAlreadyDone = errors.New("writer: the ledger has the slice done")

// done returns errAlreadyDone when the ledger records slice s done, nil when
// it does not (or does not know the slice), and the read's error otherwise.
func (w *Writer) done(ctx context.Context, s queue.Slice) error {
	ss, err := w.cfg.Ledger.Slices(ctx, s.Run, s.Round)
	if err != nil {
		return fmt.Errorf("read slices: %w", err)
	}
	for _, sl := range ss {
		if sl.ID == s.ID && sl.State == ledger.SliceDone {
			return errAlreadyDone
		}
	}
	return nil
}

// run is the ledger's run of a slice, if this writer may write it: a run the
// ledger has, not over, recorded with the model this writer drives.
func (w *Writer) run(ctx context.Context, id string) (ledger.Run, error) {
	run, err := w.cfg.Ledger.Run(ctx, id)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return run, &unknownRunError{id}
	case err != nil:
		return run, fmt.Errorf("read run: %w", err)
	case run.State.Final():
		return run, &runOverError{run: id, state: run.State}
	case run.Model != w.cfg.Model.Name():
		return run, &otherModelError{run: id, model: run.Model, mine: w.cfg.Model.Name()}
	}
	return run, nil
}

// brief is what the model is told about slice s: its buckets as the ledger
// has them, the spread, lessons and gap the planner dealt, and a turn budget
// that covers what is still outstanding.
func (w *Writer) brief(ctx context.Context, s queue.Slice, run ledger.Run, e *engine.Engine) (brief.Brief, error) {
	buckets, err := w.cfg.Ledger.BucketsOf(ctx, s.Run, s.Buckets)
	if err != nil {
		return brief.Brief{}, fmt.Errorf("read buckets: %w", err)
	}
	byID := make(map[string]ledger.Bucket, len(buckets))
	for _, b := range buckets {
		byID[b.ID] = b
	}
	b := brief.Brief{Run: s.Run, Slice: s.ID, Agent: e.C.Agent, Contract: e.C.SHA256, Seed: run.Seed,
		Lessons: s.Lessons, Gap: s.Gap, Spread: plan.Spread(s.Spread)}
	for _, id := range s.Buckets {
		bk, ok := byID[id]
		if !ok {
			return brief.Brief{}, fmt.Errorf("slice names bucket %s, which run %s does not have", id, s.Run)
		}
		b.Buckets = append(b.Buckets, brief.Bucket{Bucket: bk.Bucket, Have: bk.Done})
	}
	b.TurnBudget = max(6+5*b.Outstanding(), s.TurnBudget)
	return b, nil
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

// loop runs the model session until the slice is written, the model calls
// finish, or its turns run out. A model call that fails is asked again (a
// few times, backing off); one that ends the slice (an outage, a budget, a
// provider that keeps refusing for rate) ends it.
func (ss *session) loop(ctx context.Context) error {
	empty, failures := 0, 0
	for turn := 0; turn < ss.b.TurnBudget; turn++ {
		if ss.outstanding() == 0 {
			return nil
		}
		resp, err := ss.complete(ctx)
		if err != nil {
			failures++
			if end, err := ss.modelFailed(ctx, err, failures, turn); end {
				return err
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
		before := len(ss.subs)
		for _, tc := range msg.ToolCalls {
			out, done := ss.tool(ctx, tc)
			ss.w.log.Debug("tool call", "slice", ss.b.Slice, "tool", tc.Name, "args", clip(tc.Arguments, 2000), "answer", clip(out, 2000))
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
		ss.compact(msg, ss.subs[before:])
	}
	return nil
}

// compact replaces the turns since the last digest with a digest of their
// submissions once a turn made of submissions only has had them all kept:
// the rehearsals, inspections and refused tries that led to kept scenarios
// are not resent on every later turn. Turns that kept nothing yet stay
// whole, so a refused scenario's reasons and the rehearsal behind it are
// there to fix it from; so do the turns before one whose calls were not all
// kept submissions, and every turn while a scenario refused earlier is not
// yet kept, since a model writing several scenarios side by side may still
// be working on some of them. Called only between turns, when every
// tool call has its answer.
func (ss *session) compact(turn model.Message, subs []brief.Submission) {
	if len(subs) == 0 || len(subs) != len(turn.ToolCalls) {
		return
	}
	for i, s := range subs {
		if !s.Kept || turn.ToolCalls[i].Name != brief.ToolSubmit {
			return
		}
	}
	// A scenario refused in an earlier turn and not yet kept is still being
	// worked on (its round went on in another reply): its reasons stay.
	last := map[[2]string]bool{}
	for _, s := range ss.subs {
		last[[2]string{s.Bucket, s.Name}] = s.Kept
	}
	for _, kept := range last {
		if !kept {
			return
		}
	}
	ss.msgs = append(ss.msgs[:ss.mark], model.Message{Role: model.RoleUser, Content: brief.Digest(ss.subs)})
	ss.mark = len(ss.msgs)
	ss.subs = nil
}

// modelFailed decides what a failed model call (the failures-th in a row)
// does to the session: end it (end, with the slice's error, nil when the
// slice is written as far as it got), or wait and ask again.
func (ss *session) modelFailed(ctx context.Context, err error, failures, turn int) (end bool, _ error) {
	switch {
	case ctx.Err() != nil:
		return true, fmt.Errorf("session: %w", ctx.Err())
	case errors.Is(err, errRateLimitedTooLong):
		return true, err
	case errors.As(err, new(*outageError)):
		// The ledger's budget meter met an outage (meterError marks it):
		// the writer pauses; asking the model again would not help.
		return true, err
	case errors.Is(err, errBudgetReached):
		// The slice ends here, written as far as it got; the planner sees
		// the cap too and deals nothing more.
		ss.w.log.Info("run budget reached; ending the slice", "slice", ss.b.Slice)
		return true, nil
	}
	if ce, fatal := model.IsFatal(err); fatal {
		if ce.Kind == model.KindQuotaTooSmall && turn > 0 {
			// The conversation outgrew what the quota admits in a window:
			// the slice ends as far as it got, and the planner deals what
			// is left to a fresh, short session.
			ss.w.log.Warn("the next request is larger than the provider quota admits; ending the slice", "slice", ss.b.Slice, "err", err)
			return true, nil
		}
		return true, err // no retry cures a refused configuration (see Writer.outcome)
	}
	if failures > 3 {
		return true, &modelError{err}
	}
	ss.w.log.Warn("model call failed; asking again", "err", err, "slice", ss.b.Slice)
	if !sleep(ctx, model.RetryDelay(err, time.Duration(failures)*time.Second)) {
		return true, ctx.Err()
	}
	return false, nil
}

var errRateLimitedTooLong = errors.New("writer: provider kept refusing for rate; releasing the slice")

// complete makes one model call under the shared quota: a token reservation
// first, the usage settled after, a 429 paused out for everyone sharing the
// bucket (the slice is kept), every call's spend in the ledger.
func (ss *session) complete(ctx context.Context) (model.Response, error) {
	w := ss.w
	kind := replyKind(ss.msgs)
	req := model.Request{Model: w.cfg.Model.Name(), Messages: ss.msgs, Tools: brief.Tools(), Seed: ss.b.Seed}
	req.MaxTokens = w.allowance(kind, req)
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
			if serr := w.cfg.Ledger.SpendCall(ctx, ledger.Call{Run: ss.b.Run, Slice: ss.b.Slice, Writer: w.cfg.ID, Model: req.Model,
				Prompt: u.PromptTokens, Completion: u.CompletionTokens, CachedPrompt: u.CachedPromptTokens, Reasoning: u.ReasoningTokens,
				CostUSD: resp.CostUSD, Priced: resp.Priced, Outcome: outcome}); serr != nil {
				return model.Response{}, meterError(serr)
			}
		}
		if err == nil {
			w.replies.Observe(kind, req.MaxTokens, u.CompletionTokens)
		}
		return resp, err
	}
}

// Under a tokens quota a request counts its prompt and its whole reply
// allowance at admission. Requests that are a small share of a minute's
// quota fill a sliding window nearly full; large ones leave up to half of
// one unused (docs/BENCHMARKS.md, "Why not 100%"), and a long conversation
// can outgrow the quota. So under a known quota a request's allowance keeps
// its charge within 1/quotaShare of the quota per minute, but never below
// oneMove, which holds one scenario's next move (a rehearsal, a submission):
// a model then writes the slice's cases one after the other.
const (
	quotaShare = 20
	oneMove    = 2048
)

// allowance is req's reply allowance: sized from the replies to earlier
// requests of its kind, and kept to a share of the provider's tokens quota
// when one is known.
func (w *Writer) allowance(kind string, req model.Request) int {
	size := w.replies.Size(kind)
	q, ok := w.cfg.Model.(model.TokenQuota)
	if !ok {
		return size
	}
	tpm := q.TokensPerMinute()
	if tpm <= 0 {
		return size
	}
	room := tpm/quotaShare - model.EstimatePromptTokens(req)
	return min(size, max(room, min(oneMove, w.replies.Cap())))
}

// replyKind is the kind of reply a request expects, for sizing its
// allowance: what its conversation ends with. After a tool's answer the
// model mostly makes that tool's next move (a rehearsal is followed by a
// submission, a refused submission by another); after the brief, a digest or
// a nudge it opens a scenario.
func replyKind(msgs []model.Message) string {
	if len(msgs) == 0 {
		return "open"
	}
	if last := msgs[len(msgs)-1]; last.Role == model.RoleTool {
		return "after " + last.Name
	}
	return "open"
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

// errorAnswer answers a call the writer did not serve as asked: why, in
// words for the model (one line, bounded), and a code for programs.
func errorAnswer(code brief.Code, format string, a ...any) string {
	s := strings.ReplaceAll(fmt.Sprintf(format, a...), "\n", " ")
	if len(s) > 500 {
		s = s[:500]
	}
	return brief.Error{Message: s, Code: code}.Answer()
}

// checkBudget is asked before every model call: the planner stops dealing at
// the run's cap, but slices already dealt would otherwise run to their end.
func (ss *session) checkBudget(ctx context.Context) error {
	b, err := ss.w.cfg.Ledger.Budget(ctx, ss.run)
	if err != nil {
		return meterError(err)
	}
	if b.Reached() {
		return errBudgetReached
	}
	return nil
}

// errBudgetReached ends a session whose run has spent its --budget-tokens
// or --budget-usd.
var errBudgetReached = errors.New("writer: the run's spend budget is reached")

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// meterError is a failed read or write of the run's budget meter in the
// ledger; an outage is marked as one, so the session ends and the writer
// pauses instead of asking the model again.
func meterError(err error) error {
	err = fmt.Errorf("budget meter: %w", err)
	if outage.Is(err) {
		return &outageError{err}
	}
	return err
}

// modelError is a model call that kept failing. It is the provider's
// trouble, never an outage of the writer's own servers, whatever its type
// (a connection to the provider reset is a network error too).
type modelError struct{ err error }

func (e *modelError) Error() string { return "model: " + e.err.Error() }
func (e *modelError) Unwrap() error { return e.err }
