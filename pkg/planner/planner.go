// Package planner turns a contract and an ask into a run: it derives the plan,
// writes the canvas to the ledger, and deals claimed slices onto the queue in
// rounds. Between rounds it folds progress from the ledger — never from a
// writer's report — re-ranks what is open, and deals again, until nothing is
// open. A planner restarted mid-run picks the run up where the ledger says it
// is: the plan is not derived twice and slices in flight are not republished.
//
// The planner moves its run through its part of the lifecycle
// (ledger.RunState): planned when the canvas is written, writing while it
// deals, then reviewing when the ledger holds the ask, or failed when it does
// not and nothing is left to deal. A planner started on a run past writing
// deals nothing and reports how the run stands.
package planner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/queue"
)

// Ledger is what a planner reads and writes of the ledger (*ledger.Store).
type Ledger interface {
	SaveContract(ctx context.Context, sha, agent string, files map[string][]byte) error
	CreateRun(ctx context.Context, r ledger.Run) (created bool, err error)
	Run(ctx context.Context, id string) (ledger.Run, error)
	SavePlan(ctx context.Context, run string, p *plan.Plan) error
	Plan(ctx context.Context, run string) (*plan.Plan, error)
	MoveRun(ctx context.Context, id string, to ledger.RunState, message string) (ledger.RunState, error)
	SetRound(ctx context.Context, id string, round int) error
	Meter(ctx context.Context, run string) (ledger.Meter, error)
	PutBuckets(ctx context.Context, run string, bs []ledger.Bucket) error
	Buckets(ctx context.Context, run string) ([]ledger.Bucket, error)
	Raise(ctx context.Context, run string, rs ...ledger.Raising) error
	Slices(ctx context.Context, run string, round int) ([]ledger.Slice, error)
	ClaimSlice(ctx context.Context, sl ledger.Slice) error
	RedealSlice(ctx context.Context, dead string, sl ledger.Slice) (bool, error)
	FinishSlice(ctx context.Context, run, id string, to ledger.SliceState, writer, reason string, deliveries int) error
	Fold(ctx context.Context, run string, maxAttempts int) (ledger.FoldResult, error)
	// Deaths counts the dead slices that single each bucket out, the
	// deaths Fold blocks a bucket for.
	Deaths(ctx context.Context, run string) (map[string]int, error)
	TopRefusals(ctx context.Context, run string, limit int) ([]ledger.Reason, error)
}

// Queue is where a planner deals slices, and what it asks of the queue while
// it waits for them (*jetstream.Queue).
type Queue interface {
	Publish(ctx context.Context, s queue.Slice) (duplicate bool, err error)
	Pending(ctx context.Context) (numPending, ackPending uint64, err error)
	DeadLetters(ctx context.Context, fn func(streamSeq uint64)) error
	Lookup(ctx context.Context, streamSeq uint64) (queue.Slice, error)
	Config() queue.Config
}

// Config configures a planner.
type Config struct {
	Ledger  Ledger
	Queue   Queue
	Engine  *engine.Engine
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// RunID names the run; reusing an existing run's id resumes it.
	RunID string
	// Asked is how many scenarios the run is asked for (--scenarios).
	Asked int
	Seed  int64
	// Model is the model the run's slices are written with, recorded on the
	// run: writers leave the slices of a run whose model they do not drive.
	// Default "builtin".
	Model string
	// BudgetTokens caps the run's spend (0: none); dispatch stops at the cap.
	BudgetTokens int64
	// BudgetUSD caps the run's spend in dollars (0: none), likewise.
	BudgetUSD float64
	// Steer is the user's plan (--plan FILE).
	Steer []plan.Steer
	// MaxWant caps one bucket's want (0: the plan's default); raising it lets
	// one contract hold a larger suite.
	MaxWant int
	// PlanCache, when set, keeps the derived plan for a later Derive of the
	// same contract (plan.Options.Cache).
	PlanCache plan.Cache
	// AllowPartial runs a plan that leaves use cases without a bucket;
	// without it Prepare refuses such a plan (a *plan.Unplanned) before
	// anything is spent.
	AllowPartial bool
	// Narrow, when set, trims the derived plan to the buckets a run over an
	// existing suite needs (suitegen run --update, --into) and sets their
	// wants; the run is then asked for the wants' sum, and the whole-plan
	// checks, which judge a whole suite, are skipped.
	Narrow func(*plan.Plan) error
	// MaxRounds bounds planning rounds. Default 8.
	MaxRounds int
	// MaxAttempts blocks a bucket after this many failed attempts. Default 3.
	MaxAttempts int
	// PerSlice is the most buckets in one slice. Default 3.
	PerSlice int
	// SliceScenarios is the most scenarios one slice asks for. Default 12.
	SliceScenarios int
	// RoundTimeout bounds how long a round waits for its slices; a slice
	// nobody finished by then is recorded dead. Default 30m.
	RoundTimeout time.Duration
	// Poll is how often the ledger is read while waiting. Default 200ms.
	Poll time.Duration
	// LedgerOutage is how long the planner keeps retrying a ledger that
	// fails while it waits, before it gives up on the run. Default 2m.
	LedgerOutage time.Duration
}

// withDefaults returns c with every unset field at its default.
func (c Config) withDefaults() Config {
	c.Logger = cmp.Or(c.Logger, slog.Default())
	if c.Metrics == nil {
		c.Metrics = metrics.New(prometheus.NewRegistry(), c.RunID, "planner")
	}
	c.Model = cmp.Or(c.Model, "builtin")
	c.MaxRounds = cmp.Or(c.MaxRounds, 8)
	c.MaxAttempts = cmp.Or(c.MaxAttempts, 3)
	c.PerSlice = cmp.Or(c.PerSlice, 3)
	c.SliceScenarios = cmp.Or(c.SliceScenarios, 12)
	c.RoundTimeout = cmp.Or(c.RoundTimeout, 30*time.Minute)
	c.Poll = cmp.Or(c.Poll, 200*time.Millisecond)
	c.LedgerOutage = cmp.Or(c.LedgerOutage, 2*time.Minute)
	return c
}

// Validate names the first field that is wrong once defaults are applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Ledger == nil:
		return errors.New("planner: Config.Ledger is required")
	case c.Queue == nil:
		return errors.New("planner: Config.Queue is required")
	case c.Engine == nil:
		return errors.New("planner: Config.Engine is required")
	case c.RunID == "":
		return errors.New("planner: Config.RunID is required")
	case c.Asked <= 0:
		return fmt.Errorf("planner: Config.Asked must be positive, got %d", c.Asked)
	case c.BudgetTokens < 0:
		return fmt.Errorf("planner: Config.BudgetTokens must not be negative, got %d", c.BudgetTokens)
	case c.BudgetUSD < 0:
		return fmt.Errorf("planner: Config.BudgetUSD must not be negative, got %v", c.BudgetUSD)
	case c.MaxWant < 0:
		return fmt.Errorf("planner: Config.MaxWant must not be negative, got %d", c.MaxWant)
	case c.MaxRounds < 0, c.MaxAttempts < 0, c.PerSlice < 0, c.SliceScenarios < 0:
		return errors.New("planner: Config.MaxRounds, MaxAttempts, PerSlice and SliceScenarios must not be negative")
	case c.RoundTimeout < 0, c.Poll < 0, c.LedgerOutage < 0:
		return errors.New("planner: Config.RoundTimeout, Poll and LedgerOutage must not be negative")
	}
	return nil
}

// Planner plans and deals one run.
type Planner struct {
	cfg Config
	log *slog.Logger
	// Plan is the plan Prepare derived or read back, narrowed when the
	// config narrows; Whole is the same plan before narrowing, the one the
	// run keeps.
	Plan, Whole *plan.Plan
	// budgetHit is set when dealing stopped at the budget cap.
	budgetHit bool
	folding   Folding
}

// Folding is what folding the ledger cost the planner so far: the time its
// folds took, how many it ran, and the slices it dealt (the folds settle
// those slices' buckets).
type Folding struct {
	Time   time.Duration
	Folds  int
	Slices int
}

// Folding is the planner's folding so far. Call it from the goroutine that
// runs the planner, or after it stopped.
func (p *Planner) Folding() Folding { return p.folding }

// New validates the config.
func New(cfg Config) (*Planner, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Planner{cfg: cfg, log: cfg.Logger.With("run", cfg.RunID, "role", "planner")}, nil
}

// ErrNothingToWrite is a narrowed plan that wants nothing.
var ErrNothingToWrite = errors.New("the narrowed plan wants no scenario")

// ErrPlanRefused is a plan that fails the whole-plan checks.
var ErrPlanRefused = errors.New("planner: plan refused")

// Prepare creates the run and its canvas, or finds them when the run exists.
// A plan that fails the whole-plan checks is recorded as a failed run and
// returned as ErrPlanRefused.
func (p *Planner) Prepare(ctx context.Context) error {
	c := p.cfg.Engine.C
	if err := p.cfg.Ledger.SaveContract(ctx, c.SHA256, c.Agent, c.Files); err != nil {
		return fmt.Errorf("planner: %w", err)
	}
	pl, derived, err := p.plan(ctx)
	if err != nil {
		return err
	}
	p.Plan, p.Whole = pl, pl
	if p.cfg.Narrow != nil {
		// Narrowing replaces buckets, never edits one in place: a copy of
		// the list keeps the whole plan.
		whole := *pl
		whole.Buckets = slices.Clone(pl.Buckets)
		p.Whole = &whole
	}
	for _, cr := range pl.Crashes {
		p.log.Warn("handler crashed on calls the plan rehearsed", "tool", cr.Tool, "at", cr.At, "reason", cr.Reason, "rehearsals", cr.Calls)
	}
	// Asks the contract cannot serve stop here, before the run exists and
	// before anything is spent.
	if pl.Most > 0 && p.cfg.Asked > pl.Most {
		return &plan.TooMany{Asked: p.cfg.Asked, Most: pl.Most, Why: pl.MostWhy}
	}
	if len(pl.Gaps) > 0 {
		if !p.cfg.AllowPartial {
			return &plan.Unplanned{Gaps: pl.Gaps, UseCases: len(c.UseCases), Capacity: pl.Capacity}
		}
		for _, g := range pl.Gaps {
			p.log.Warn("use case not planned", "use_case", g.UseCase, "reason", g.Reason)
		}
	}
	asked := p.cfg.Asked
	if p.cfg.Narrow != nil {
		if err := p.cfg.Narrow(pl); err != nil {
			return fmt.Errorf("planner: %w", err)
		}
		asked = 0
		for _, b := range pl.Buckets {
			asked += b.Want
		}
		if asked == 0 {
			return fmt.Errorf("planner: %w", ErrNothingToWrite)
		}
	}
	if _, err := p.cfg.Ledger.CreateRun(ctx, ledger.Run{
		ID: p.cfg.RunID, Agent: c.Agent, ContractSHA256: c.SHA256, WorldSHA256: c.WorldSHA256,
		Model: p.cfg.Model, State: ledger.RunPlanned, Asked: asked, Seed: p.cfg.Seed,
		BudgetTokens: p.cfg.BudgetTokens, BudgetUSD: p.cfg.BudgetUSD,
		Config: ledger.RunConfig{Coverage: pl.Measure(c), Capacity: pl.Capacity, Axes: pl.Axes, MaxWant: p.cfg.MaxWant, AllowPartial: p.cfg.AllowPartial},
	}); err != nil {
		return fmt.Errorf("planner: create run: %w", err)
	}
	if derived {
		if err := p.cfg.Ledger.SavePlan(ctx, p.cfg.RunID, p.Whole); err != nil {
			return fmt.Errorf("planner: %w", err)
		}
	}
	if pl.Total() >= 100 && p.cfg.Narrow == nil {
		for _, s := range pl.Shortfalls(c) {
			p.log.Warn("plan short of a whole-plan check", "shortfall", s)
		}
	}
	if probs := pl.Check(c); len(probs) > 0 && p.cfg.Narrow == nil {
		refused := fmt.Errorf("%w: %v", ErrPlanRefused, probs)
		if _, err := p.cfg.Ledger.MoveRun(ctx, p.cfg.RunID, ledger.RunFailed, refused.Error()); err != nil {
			return errors.Join(refused, err)
		}
		return refused
	}
	bs := make([]ledger.Bucket, len(pl.Buckets))
	for i, b := range pl.Buckets {
		bs[i] = ledger.Bucket{Bucket: b, State: ledger.BucketOpen, Origin: ledger.OriginPlan}
	}
	if err := p.cfg.Ledger.PutBuckets(ctx, p.cfg.RunID, bs); err != nil {
		return fmt.Errorf("planner: canvas: %w", err)
	}
	p.cfg.Metrics.ScenariosAsked.Set(float64(asked))
	return nil
}

// plan is the run's plan: the one stored with the run when it exists for
// this contract (a planner resumed, the reviewer), so that every role works
// from the plan the run was created with; else a plan derived now (derived
// is true).
func (p *Planner) plan(ctx context.Context) (pl *plan.Plan, derived bool, err error) {
	c := p.cfg.Engine.C
	r, err := p.cfg.Ledger.Run(ctx, p.cfg.RunID)
	if err == nil && r.ContractSHA256 == c.SHA256 {
		pl, err = p.cfg.Ledger.Plan(ctx, p.cfg.RunID)
		if err == nil {
			p.log.Info("plan read from the ledger", "buckets", len(pl.Buckets))
			return pl, false, nil
		}
	}
	if err != nil && !errors.Is(err, ledger.ErrNotFound) {
		return nil, false, fmt.Errorf("planner: %w", err)
	}
	began := time.Now()
	pl, err = plan.Derive(ctx, c, probe.Rehearser(p.cfg.Engine.World), plan.Options{Asked: p.cfg.Asked, Steer: p.cfg.Steer, MaxWant: p.cfg.MaxWant, Rules: p.cfg.Engine.Prover,
		Mutants: probe.Mutants(p.cfg.Engine.World, c), Cache: p.cfg.PlanCache})
	if err != nil {
		return nil, false, err
	}
	msg := "plan derived"
	if pl.Cached {
		msg = "plan read from the plan cache"
	}
	p.log.Info(msg, "buckets", len(pl.Buckets), "took", time.Since(began).Round(time.Millisecond))
	return pl, true, nil
}

// Result is how a run's writing ended.
type Result struct {
	Proved  int
	Asked   int
	Blocked int
	// Short and Unplanned are as in ShortError.
	Short, Unplanned int
	Rounds           int
	// Budget is set when dispatch stopped at the budget cap.
	Budget bool
	// State is the run's state after the planner: reviewing, failed, or, for
	// a run the planner found past writing, whatever it was.
	State ledger.RunState
}

// ShortError is a run that ended with fewer scenarios than asked: what the
// agent supports, with the blocked buckets and their reasons in the report.
type ShortError struct {
	Agent         string
	Proved, Asked int
	// Blocked counts the buckets blocked short of their want; Short those
	// left below their want, unblocked, when the rounds ran out; Unplanned
	// is how much of the ask no bucket wants (the plan, capped by
	// --max-want, holds less).
	Blocked, Short, Unplanned int
	// Budget is set when a spend cap (tokens or dollars) stopped the run.
	Budget bool
	// Report, when known, is where the reasons are (report.json).
	Report string
}

func (e *ShortError) Error() string {
	var parts []string
	if e.Blocked > 0 {
		parts = append(parts, fmt.Sprintf("%d buckets blocked", e.Blocked))
	}
	if e.Short > 0 {
		parts = append(parts, fmt.Sprintf("%d buckets short of their want when the rounds ran out", e.Short))
	}
	if e.Unplanned > 0 {
		parts = append(parts, fmt.Sprintf("the plan holds %d fewer than asked", e.Unplanned))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%d scenarios missing", e.Asked-e.Proved))
	}
	why := strings.Join(parts, ", ")
	if e.Report != "" {
		why += "; reasons in " + e.Report
	}
	if e.Budget {
		why = "the spend budget (--budget-tokens or --budget-usd) was reached"
	}
	return fmt.Sprintf("%s: %d of %d scenarios proved (%s)", e.Agent, e.Proved, e.Asked, why)
}

// Shortfall says why buckets hold less than asked: how many are blocked
// below their want, how many are below it unblocked, and how much of the
// ask no bucket wants.
func Shortfall(bs []ledger.Bucket, asked int) (blocked, short, unplanned int) {
	want := 0
	for _, b := range bs {
		want += b.Want
		switch {
		case b.State == ledger.BucketBlocked:
			blocked++
		case b.Done < b.Want:
			short++
		}
	}
	return blocked, short, max(asked-want, 0)
}

// Run deals the run's rounds until nothing is open, the rounds run out or the
// budget cap is reached, and returns once every slice it dealt has finished.
// It then moves the run on: to reviewing when the ledger holds the ask, else
// to failed with a *ShortError. A run found past writing (a planner started
// again after it finished) is not dealt again: Run reports it as it stands,
// with a *ShortError for a failed run.
func (p *Planner) Run(ctx context.Context) (Result, error) {
	run, err := p.cfg.Ledger.Run(ctx, p.cfg.RunID)
	if err != nil {
		return Result{}, err
	}
	res := Result{Asked: run.Asked, State: run.State}
	if run.State == ledger.RunReviewing || run.State.Final() {
		p.log.Info("the run is past writing; nothing to deal", "state", run.State)
		return p.settled(ctx, run, res)
	}
	if _, err := p.cfg.Ledger.MoveRun(ctx, p.cfg.RunID, ledger.RunWriting, ""); err != nil {
		return res, err
	}
	res.State = ledger.RunWriting
	res.Rounds, res.Budget, err = p.rounds(ctx, run)
	if err != nil {
		return res, err
	}
	if err := p.tally(ctx, &res); err != nil {
		return res, err
	}
	// The spend gauges' last word: what the last round's slices spent.
	if _, err := p.budgetReached(ctx, run); err != nil {
		return res, err
	}
	to, msg := ledger.RunReviewing, ""
	var short *ShortError
	if res.Proved < res.Asked {
		short = &ShortError{Agent: run.Agent, Proved: res.Proved, Asked: res.Asked, Blocked: res.Blocked, Short: res.Short, Unplanned: res.Unplanned, Budget: res.Budget}
		to, msg = ledger.RunFailed, short.Error()
	}
	if _, err := p.cfg.Ledger.MoveRun(ctx, p.cfg.RunID, to, msg); err != nil {
		return res, err
	}
	res.State = to
	if short != nil {
		return res, short
	}
	return res, nil
}

// settled is Result for a run the planner does not deal: its tally, and a
// *ShortError when it failed short of its ask.
func (p *Planner) settled(ctx context.Context, run ledger.Run, res Result) (_ Result, err error) {
	res.Rounds = run.Round
	if err := p.tally(ctx, &res); err != nil {
		return res, err
	}
	if res.Budget, err = p.budgetReached(ctx, run); err != nil {
		return res, err
	}
	if run.State == ledger.RunFailed {
		return res, &ShortError{Agent: run.Agent, Proved: res.Proved, Asked: res.Asked, Blocked: res.Blocked, Short: res.Short, Unplanned: res.Unplanned, Budget: res.Budget}
	}
	return res, nil
}

// rounds deals round after round, each waited for and folded, until a round
// deals nothing and tops nothing up, the rounds run out, or the budget is
// reached (budget true).
func (p *Planner) rounds(ctx context.Context, run ledger.Run) (last int, budget bool, err error) {
	for round := max(run.Round, 1); round <= p.cfg.MaxRounds; round++ {
		if err := p.cfg.Ledger.SetRound(ctx, p.cfg.RunID, round); err != nil {
			return last, budget, err
		}
		last = round
		if reached, err := p.budgetReached(ctx, run); err != nil {
			return last, budget, err
		} else if reached {
			return last, true, nil
		}
		dealt, err := p.deal(ctx, round, ledger.SliceWork, "")
		if err != nil {
			return last, budget, err
		}
		if err := p.await(ctx, round, p.cfg.MaxAttempts); err != nil {
			return last, budget, err
		}
		if err := p.fold(ctx, p.cfg.MaxAttempts); err != nil {
			return last, budget, fmt.Errorf("planner: fold: %w", err)
		}
		raised, err := p.topUp(ctx, run.Asked)
		if err != nil {
			return last, budget, err
		}
		if dealt == 0 && raised == 0 {
			// A round resumed after a restart deals nothing of its own,
			// yet its fold may leave buckets open (a dead slice's, dealt
			// again as they were): those are the next round's.
			more, err := p.outstanding(ctx)
			if err != nil {
				return last, budget, err
			}
			if !more {
				break
			}
		}
	}
	return last, p.budgetHit, nil
}

// outstanding reports whether an open bucket is still short of its want.
func (p *Planner) outstanding(ctx context.Context) (bool, error) {
	bs, err := p.cfg.Ledger.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return false, err
	}
	for _, b := range bs {
		if b.State == ledger.BucketOpen && b.Outstanding() > 0 {
			return true, nil
		}
	}
	return false, nil
}

// tally fills res from the ledger's buckets: what is proved toward the ask
// (no bucket counts past its want) and why it falls short (Shortfall).
func (p *Planner) tally(ctx context.Context, res *Result) error {
	bs, err := p.cfg.Ledger.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return err
	}
	p.observe(bs)
	res.Proved = 0
	for _, b := range bs {
		res.Proved += min(b.Done, b.Want)
	}
	res.Blocked, res.Short, res.Unplanned = Shortfall(bs, res.Asked)
	return nil
}

// budgetReached reads the run's meter (cap or not, so the spend gauges
// move) and reports whether it reached the cap in tokens or in dollars.
func (p *Planner) budgetReached(ctx context.Context, run ledger.Run) (bool, error) {
	m, err := p.cfg.Ledger.Meter(ctx, p.cfg.RunID)
	if err != nil {
		return false, err
	}
	p.cfg.Metrics.SetSpend(m.Tokens(), m.CostUSD, run.BudgetTokens, run.BudgetUSD)
	p.cfg.Metrics.SetPerKept(m.PerKept())
	if m.Over(run) {
		p.budgetHit = true
	}
	return m.Over(run), nil
}

func (p *Planner) observe(bs []ledger.Bucket) {
	counts := map[string]int{}
	for _, b := range bs {
		counts[string(b.State)]++
	}
	p.cfg.Metrics.SetBuckets(counts)
}
