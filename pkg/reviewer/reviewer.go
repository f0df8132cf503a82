// Package reviewer reads a whole suite from the ledger and says what is wrong
// with it as a whole — things no single writer could see: use cases covered
// only on their ordinary path, outcomes missing, rules and gated tools
// untested, persona skew, two scenarios that test the same thing. What can be
// filled is published as gap slices; rounds are bounded, and a finished suite
// is a valid answer.
//
// The reviewer ends its run's lifecycle: a run the planner left reviewing is
// filled, written and moved to done (or failed, short of its ask); a run
// already done or failed is only written again, so a reviewer started twice
// (a retried Job) deals nothing the first did not.
package reviewer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/suitegen/suitegen/pkg/adequacy"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
)

// Ledger is what a reviewer's turn reads and moves of the ledger
// (*ledger.Store): the run, its count and budget, to conclude it; the rest
// of what the suite is written from (suite.Ledger).
type Ledger interface {
	suite.Ledger
	MoveRun(ctx context.Context, id string, to ledger.RunState, message string) (ledger.RunState, error)
	Count(ctx context.Context, run string) (int, error)
	Budget(ctx context.Context, r ledger.Run) (ledger.Budget, error)
}

// Dealer deals gap rounds (*planner.Planner).
type Dealer interface {
	// GapRounds counts the gap rounds the run has had.
	GapRounds(ctx context.Context) (int, error)
	// Settle finishes a round a stopped process left unfinished.
	Settle(ctx context.Context) error
	// Gap deals one gap round, waits for it and folds it; it returns the
	// slices dealt.
	Gap(ctx context.Context) (int, error)
}

// Fill deals gap rounds until the run has had rounds of them or one deals
// nothing, after finishing one a stopped reviewer left unfinished. The
// rounds are counted in the ledger, so Fill started again deals no more than
// Fill started once. It returns the slices it dealt.
func Fill(ctx context.Context, d Dealer, rounds int, log *slog.Logger) (int, error) {
	if d == nil {
		return 0, errors.New("reviewer: no dealer for gap slices")
	}
	if err := d.Settle(ctx); err != nil {
		return 0, err
	}
	had, err := d.GapRounds(ctx)
	if err != nil {
		return 0, err
	}
	dealt := 0
	for i := had; i < rounds; i++ {
		n, err := d.Gap(ctx)
		if err != nil {
			return dealt, err
		}
		dealt += n
		if n == 0 {
			break
		}
		log.Info("gap round", "slices", n)
	}
	return dealt, nil
}

// Config is a reviewer's part of one run.
type Config struct {
	Ledger Ledger
	// Dealer deals the gap rounds; nil deals none.
	Dealer Dealer
	RunID  string
	// Contract is the run's contract; Plan its plan, for the report's
	// coverage of cells, rules and gated tools (nil: left out).
	Contract *contract.Contract
	Plan     *plan.Plan
	// Out is where the suite is written.
	Out string
	// Rounds bounds the gap rounds of the run (0: none).
	Rounds int
	// Prover, when set, plays the kept scenarios' tempting acts on the run's
	// world so the report says which refusal branches they reach
	// (coverage.handler_branches); nil leaves that out.
	Prover *prove.Prover
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	c.Logger = cmp.Or(c.Logger, slog.Default())
	return c
}

// Validate names the first field that is wrong once defaults are applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Ledger == nil:
		return errors.New("reviewer: Config.Ledger is required")
	case c.RunID == "":
		return errors.New("reviewer: Config.RunID is required")
	case c.Contract == nil:
		return errors.New("reviewer: Config.Contract is required")
	case c.Out == "":
		return errors.New("reviewer: Config.Out is required")
	case c.Rounds < 0:
		return fmt.Errorf("reviewer: Config.Rounds must not be negative, got %d", c.Rounds)
	}
	return nil
}

// NotReadyError is a run the planner has not finished writing: there is
// nothing to review yet.
type NotReadyError struct {
	Run   string
	State ledger.RunState
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("reviewer: run %s is %s; review it once its planner has finished", e.Run, e.State)
}

// FailedError is a run that ended failed, with the reason its ledger gives.
type FailedError struct {
	Run, Reason string
}

func (e *FailedError) Error() string { return fmt.Sprintf("run %s failed: %s", e.Run, e.Reason) }

// ErrCancelled is a run its user stopped: the planner resumes it (same run
// id), not the reviewer.
var ErrCancelled = errors.New("reviewer: the run was cancelled; resume it with the planner")

// Run is the reviewer's turn in a run: Conclude, then Write the suite from
// the ledger into Out with the review beside it. A run that ends failed
// returns the suite and a *planner.ShortError (Conclude found it short) or a
// *FailedError (it had failed before).
func Run(ctx context.Context, cfg Config) (suite.Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return suite.Report{}, err
	}
	run, short, err := Conclude(ctx, cfg)
	if err != nil {
		return suite.Report{}, err
	}
	rep, err := Write(ctx, cfg.Ledger, run.ID, cfg.Contract, cfg.Plan, cfg.Out, cfg.Prover)
	switch {
	case err != nil:
		return rep, err
	case short != nil:
		return rep, short
	case run.State == ledger.RunFailed:
		return rep, &FailedError{Run: run.ID, Reason: run.Message}
	}
	return rep, nil
}

// Conclude ends a run the planner left reviewing: it deals the gap rounds,
// then moves the run to done when the ledger holds the ask, and to failed
// when it does not (short says by how much). A run already done or failed is
// returned as it is; a run still planned or writing is a *NotReadyError, a
// cancelled one ErrCancelled.
func Conclude(ctx context.Context, cfg Config) (run ledger.Run, short *planner.ShortError, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return run, nil, err
	}
	if run, err = cfg.Ledger.Run(ctx, cfg.RunID); err != nil {
		return run, nil, err
	}
	switch run.State {
	case ledger.RunPlanned, ledger.RunWriting:
		return run, nil, &NotReadyError{Run: run.ID, State: run.State}
	case ledger.RunCancelled:
		return run, nil, fmt.Errorf("%w (run %s)", ErrCancelled, run.ID)
	case ledger.RunReviewing:
		return settle(ctx, cfg, run)
	}
	return run, nil, nil
}

// settle fills a reviewing run and moves it to done, or to failed when the
// ledger then holds less than the ask (short says by how much). It returns
// the run as moved.
func settle(ctx context.Context, cfg Config, run ledger.Run) (ledger.Run, *planner.ShortError, error) {
	if cfg.Dealer != nil && cfg.Rounds > 0 {
		if _, err := Fill(ctx, cfg.Dealer, cfg.Rounds, cfg.Logger); err != nil {
			return run, nil, err
		}
	}
	short, err := shortfall(ctx, cfg, run)
	if err != nil {
		return run, nil, err
	}
	to, msg := ledger.RunDone, ""
	if short != nil {
		to, msg = ledger.RunFailed, short.Error()
	}
	if _, err := cfg.Ledger.MoveRun(ctx, run.ID, to, msg); err != nil {
		return run, nil, err
	}
	run.State, run.Message = to, msg
	return run, short, nil
}

// shortfall is how a run falls short of its ask, from the ledger; nil when
// it does not.
func shortfall(ctx context.Context, cfg Config, run ledger.Run) (*planner.ShortError, error) {
	proved, err := cfg.Ledger.Count(ctx, run.ID)
	if err != nil || proved >= run.Asked {
		return nil, err
	}
	bs, err := cfg.Ledger.Buckets(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	budget, err := cfg.Ledger.Budget(ctx, run)
	if err != nil {
		return nil, err
	}
	short := &planner.ShortError{Agent: run.Agent, Proved: proved, Asked: run.Asked, Budget: budget.Reached(),
		Report: filepath.Join(cfg.Out, "report.json")}
	short.Blocked, short.Short, short.Unplanned = planner.Shortfall(bs, run.Asked)
	return short, nil
}

// Write writes a run's suite from the ledger into out, with the review
// beside it (review.json). With a prover, the report also says which
// refusal branches of the handlers the kept scenarios reach, by class
// (adequacy.Reach); nil leaves coverage.handler_branches out. Every path
// that writes a run's report (the all-in-one run, the distributed
// reviewer) comes here, so they say the same.
func Write(ctx context.Context, l suite.Ledger, run string, c *contract.Contract, p *plan.Plan, out string, prover *prove.Prover) (suite.Report, error) {
	extra := reportExtra(c, p)
	if prover != nil {
		r, err := adequacy.NewReached(prover, c)
		if err != nil {
			return suite.Report{}, err
		}
		extra.Reach = r
	}
	rep, kept, err := suite.Write(ctx, l, run, c, out, extra)
	if err != nil {
		return suite.Report{}, err
	}
	bs, err := l.Buckets(ctx, run)
	if err != nil {
		return suite.Report{}, err
	}
	if err := suite.WriteJSON(filepath.Join(out, "review.json"), Assess(c, kept, bs)); err != nil {
		return suite.Report{}, err
	}
	return rep, nil
}

// Restate rewrites report.json and review.json of the suite in dir after
// a run over it (mode update, into or revise) changed it: kept are the
// suite's scenarios as they now are, each in the bucket of bs (the plan of
// the contract as it now is, Done counting them) its Bucket names; run is
// the run that wrote the new ones ("" when none did), whose refusals and
// spend join the report's. reach measures the handlers' refusal branches
// as for Write (nil: not measured).
func Restate(ctx context.Context, ledger suite.Ledger, run, mode string, c *contract.Contract, p *plan.Plan, dir string,
	kept []scenario.Scenario, bs []ledger.Bucket, reach suite.Reacher) (suite.Report, error) {
	a := suite.Account{Buckets: bs}
	if run != "" {
		var err error
		if a.Run, err = ledger.Run(ctx, run); err != nil {
			return suite.Report{}, err
		}
		if a.Refusals, err = ledger.Refusals(ctx, run); err != nil {
			return suite.Report{}, err
		}
		if a.Meter, err = ledger.Meter(ctx, run); err != nil {
			return suite.Report{}, err
		}
	}
	extra := reportExtra(c, p)
	extra.Reach = reach
	rep, err := suite.Restate(ctx, dir, c, kept, a, mode, extra)
	if err != nil {
		return suite.Report{}, err
	}
	if err := suite.WriteJSON(filepath.Join(dir, "review.json"), Assess(c, kept, bs)); err != nil {
		return suite.Report{}, err
	}
	return rep, nil
}

// reportExtra is what the report says of the contract and the plan beyond
// the ledger: built-in sub-goals, rules and gated tools, and which of them
// the plan tests and names.
func reportExtra(c *contract.Contract, p *plan.Plan) suite.ReportExtra {
	var x suite.ReportExtra
	for _, b := range prove.BuiltinsFor(c) {
		x.BuiltinSubGoals = append(x.BuiltinSubGoals, suite.SubGoalInfo{Name: b.Name, What: b.What, Judged: b.Judged, Params: b.Params, Origin: "builtin"})
	}
	for _, r := range c.Rules {
		x.Rules = append(x.Rules, r.ID)
	}
	for _, t := range c.Tools {
		if len(t.Requires) > 0 {
			x.GatedTools = append(x.GatedTools, t.Name)
		}
	}
	if p == nil {
		return x
	}
	for _, g := range p.Gaps {
		x.Unplanned = append(x.Unplanned, suite.UseCaseNote{UseCase: g.UseCase, Reason: g.Reason})
	}
	for _, g := range p.RefusalsOnly {
		x.RefusalsOnly = append(x.RefusalsOnly, suite.UseCaseNote{UseCase: g.UseCase, Reason: g.Reason})
	}
	for _, cr := range p.Crashes {
		x.HandlerCrashes = append(x.HandlerCrashes, suite.HandlerCrash{Tool: cr.Tool, At: cr.At, Reason: cr.Reason, Calls: cr.Calls})
	}
	x.Cells = len(p.Cells)
	cv := p.Measure(c)
	untested := map[string]bool{}
	for _, r := range cv.UntestedRules {
		untested[r] = true
	}
	for _, r := range c.Rules {
		if !untested[r.ID] {
			x.RulesNamed = append(x.RulesNamed, r.ID)
		}
	}
	unnamed := map[string]bool{}
	for _, t := range cv.UnnamedGated {
		unnamed[t] = true
	}
	for _, t := range x.GatedTools {
		if !unnamed[t] {
			x.GatedToolsNamed = append(x.GatedToolsNamed, t)
		}
	}
	return x
}
