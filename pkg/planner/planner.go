// Package planner turns a contract and an ask into a run: it derives the plan,
// writes the canvas to the ledger, and deals claimed slices onto the queue in
// rounds. Between rounds it folds progress from the ledger — never from a
// writer's report — re-ranks what is open, and deals again, until nothing is
// open. A planner restarted mid-run picks the run up where the ledger says it
// is: the plan is not derived twice and slices in flight are not republished.
package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/suitegen/suitegen/pkg/canvas"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/queue"
	suitegenv1 "github.com/suitegen/suitegen/proto/suitegenv1"
)

// Config configures a planner.
type Config struct {
	Store   *canvas.Store
	Queue   *queue.Queue
	Engine  *engine.Engine
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// RunID names the run; reusing an existing run's id resumes it.
	RunID string
	Asked int
	Seed  int64
	Model string
	// BudgetTokens caps the run's spend (0: none); dispatch stops at the cap.
	BudgetTokens int64
	// Steer is the user's plan (--plan FILE).
	Steer []plan.Steer
	// MaxWant caps one bucket's want (0: the plan's default); raising it lets
	// one contract hold a larger suite.
	MaxWant int
	// AllowPartial runs a plan that leaves use cases without a bucket;
	// without it Prepare refuses such a plan (a *plan.Unplanned) before
	// anything is spent.
	AllowPartial bool
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
}

func (c *Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("planner: Config.Store is required")
	case c.Queue == nil:
		return errors.New("planner: Config.Queue is required")
	case c.Engine == nil:
		return errors.New("planner: Config.Engine is required")
	case c.RunID == "":
		return errors.New("planner: Config.RunID is required")
	case c.Asked <= 0:
		return fmt.Errorf("planner: Config.Asked must be positive, got %d", c.Asked)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = metrics.New(prometheus.NewRegistry(), c.RunID, "planner")
	}
	if c.MaxRounds <= 0 {
		c.MaxRounds = 8
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 3
	}
	if c.PerSlice <= 0 {
		c.PerSlice = 3
	}
	if c.SliceScenarios <= 0 {
		c.SliceScenarios = 12
	}
	if c.RoundTimeout <= 0 {
		c.RoundTimeout = 30 * time.Minute
	}
	if c.Poll <= 0 {
		c.Poll = 200 * time.Millisecond
	}
	if c.Model == "" {
		c.Model = "builtin"
	}
	return nil
}

// Planner plans and deals one run.
type Planner struct {
	cfg  Config
	log  *slog.Logger
	Plan *plan.Plan
	// budgetHit is set when dealing stopped at the budget cap.
	budgetHit bool
}

// New validates the config.
func New(cfg Config) (*Planner, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Planner{cfg: cfg, log: cfg.Logger.With("run", cfg.RunID, "role", "planner")}, nil
}

// ErrPlanRefused is a plan that fails the whole-plan checks.
var ErrPlanRefused = errors.New("planner: plan refused")

// Prepare creates the run and its canvas, or finds them when the run exists.
func (p *Planner) Prepare(ctx context.Context) error {
	c := p.cfg.Engine.C
	if err := engine.Save(ctx, p.cfg.Store.Pool(), c); err != nil {
		return err
	}
	pl, err := plan.Derive(ctx, c, probe.Rehearser(p.cfg.Engine.World), plan.Options{Asked: p.cfg.Asked, Steer: p.cfg.Steer, MaxWant: p.cfg.MaxWant})
	if err != nil {
		return err
	}
	p.Plan = pl
	if pl.Most > 0 && p.cfg.Asked > pl.Most {
		return &plan.TooMany{Asked: p.cfg.Asked, Most: pl.Most, Why: pl.MostWhy}
	}
	if len(pl.Gaps) > 0 {
		if !p.cfg.AllowPartial {
			return &plan.Unplanned{Gaps: pl.Gaps}
		}
		for _, g := range pl.Gaps {
			p.log.Warn("use case not planned", "use_case", g.UseCase, "reason", g.Reason)
		}
	}
	if probs := pl.Check(c); len(probs) > 0 {
		return fmt.Errorf("%w: %v", ErrPlanRefused, probs)
	}
	cfgJSON, _ := json.Marshal(map[string]any{"coverage": pl.Measure(c), "capacity": pl.Capacity, "axes": pl.Axes, "cells": len(pl.Cells), "max_want": p.cfg.MaxWant, "allow_partial": p.cfg.AllowPartial})
	_, err = p.cfg.Store.CreateRun(ctx, canvas.Run{
		ID: p.cfg.RunID, Agent: c.Agent, ContractSHA256: c.SHA256, WorldSHA256: c.WorldSHA256,
		Model: p.cfg.Model, State: "planning", Asked: p.cfg.Asked, Seed: p.cfg.Seed,
		BudgetTokens: p.cfg.BudgetTokens, Config: cfgJSON,
	})
	if err != nil {
		return fmt.Errorf("planner: create run: %w", err)
	}
	bs := make([]canvas.Bucket, 0, len(pl.Buckets))
	for _, b := range pl.Buckets {
		spec, _ := json.Marshal(b.Spec)
		bs = append(bs, canvas.Bucket{ID: b.ID, Ord: b.Ord, Theme: b.Theme, Cell: b.Cell, UseCase: b.UseCase,
			Angle: b.Angle, Outcome: b.Outcome, Overlay: b.Overlay, Kind: b.Kind, Axes: b.Axes, Want: b.Want,
			State: "open", Origin: "plan", Spec: spec})
	}
	if err := p.cfg.Store.PutBuckets(ctx, p.cfg.RunID, bs); err != nil {
		return fmt.Errorf("planner: canvas: %w", err)
	}
	p.cfg.Metrics.ScenariosAsked.Set(float64(p.cfg.Asked))
	return nil
}

// Result is how a run's writing ended.
type Result struct {
	Proved  int
	Asked   int
	Blocked int
	Rounds  int
	// Budget is set when dispatch stopped at the budget cap.
	Budget bool
}

// Run deals rounds until nothing is open, the rounds run out or the budget
// cap is reached. It returns when every slice it dealt has finished.
func (p *Planner) Run(ctx context.Context) (Result, error) {
	run, err := p.cfg.Store.Run(ctx, p.cfg.RunID)
	if err != nil {
		return Result{}, err
	}
	if err := p.cfg.Store.SetRunState(ctx, p.cfg.RunID, "writing", ""); err != nil {
		return Result{}, err
	}
	res := Result{Asked: run.Asked}
	for round := max(run.Round, 1); round <= p.cfg.MaxRounds; round++ {
		if err := p.cfg.Store.SetRound(ctx, p.cfg.RunID, round); err != nil {
			return res, err
		}
		res.Rounds = round
		if over, err := p.overBudget(ctx, run); err != nil {
			return res, err
		} else if over {
			res.Budget = true
			break
		}
		dealt, err := p.deal(ctx, round, "work", "")
		if err != nil {
			return res, err
		}
		if err := p.await(ctx, round); err != nil {
			return res, err
		}
		if err := p.fold(ctx, p.cfg.MaxAttempts); err != nil {
			return res, fmt.Errorf("planner: fold: %w", err)
		}
		raised, err := p.topUp(ctx, run.Asked)
		if err != nil {
			return res, err
		}
		if dealt == 0 && raised == 0 {
			break
		}
	}
	res.Budget = res.Budget || p.budgetHit
	bs, err := p.cfg.Store.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return res, err
	}
	p.observe(bs)
	for _, b := range bs {
		res.Proved += min(b.Done, b.Want)
		if b.State == "blocked" {
			res.Blocked++
		}
	}
	return res, nil
}

func (p *Planner) overBudget(ctx context.Context, run canvas.Run) (bool, error) {
	if run.BudgetTokens <= 0 {
		return false, nil
	}
	pr, co, err := p.cfg.Store.Spent(ctx, p.cfg.RunID)
	if err != nil {
		return false, err
	}
	p.cfg.Metrics.BudgetSpentTokens.Set(float64(pr + co))
	p.cfg.Metrics.BudgetCapTokens.Set(float64(run.BudgetTokens))
	return pr+co >= run.BudgetTokens, nil
}

func (p *Planner) observe(bs []canvas.Bucket) {
	counts := map[string]int{}
	for _, b := range bs {
		counts[b.State]++
	}
	p.cfg.Metrics.SetBuckets(counts)
}

// deal claims and publishes this round's slices: every open bucket with work
// outstanding, ranked, grouped never two from one cell. Slices the ledger
// already has for this round (a restarted planner) are republished with the
// same id, which the queue drops as duplicates if they are still there.
func (p *Planner) deal(ctx context.Context, round int, kind, gap string) (int, error) {
	bs, err := p.cfg.Store.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	p.observe(bs)
	existing, err := p.cfg.Store.Slices(ctx, p.cfg.RunID, round)
	if err != nil {
		return 0, err
	}
	byID := map[string]canvas.Bucket{}
	for _, b := range bs {
		byID[b.ID] = b
	}
	var slices [][]string
	if len(existing) > 0 {
		for _, s := range existing {
			if s.State == "published" {
				slices = append(slices, s.BucketIDs)
			}
		}
	} else {
		themeAll, themeUntouched := map[string]int{}, map[string]int{}
		for _, b := range bs {
			themeAll[b.Theme]++
			if b.Done == 0 {
				themeUntouched[b.Theme]++
			}
		}
		var open []plan.Open
		for _, b := range bs {
			if b.State != "open" || b.Done >= b.Want {
				continue
			}
			open = append(open, plan.Open{ID: b.ID, Theme: b.Theme, Cell: b.Cell, Ord: b.Ord, Outstanding: b.Want - b.Done,
				ThemeUntouched: float64(themeUntouched[b.Theme]) / float64(themeAll[b.Theme])})
		}
		for _, group := range plan.Deal(plan.Rank(open), p.cfg.PerSlice, p.cfg.SliceScenarios) {
			ids := make([]string, len(group))
			for i, o := range group {
				ids[i] = o.ID
			}
			slices = append(slices, ids)
		}
	}
	run, err := p.cfg.Store.Run(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	c := p.cfg.Engine.C
	lessons, err := p.lessons(ctx)
	if err != nil {
		return 0, err
	}
	dealt := 0
	for n, ids := range slices {
		if stop, err := p.spentOut(ctx, run.BudgetTokens); err != nil {
			return dealt, err
		} else if stop {
			p.log.Info("budget reached; dealing stops", "round", round, "dealt", dealt, "left", len(slices)-dealt)
			break
		}
		id := fmt.Sprintf("%s-r%d-s%03d", p.cfg.RunID, round, n+1)
		if len(existing) > 0 {
			id = existing[n].ID
		}
		msg := &suitegenv1.Slice{RunId: p.cfg.RunID, SliceId: id, Round: uint32(round), Seed: run.Seed,
			Contract: &suitegenv1.ContractRef{Agent: c.Agent, Sha256: c.SHA256}, Gap: gap, CreatedUnix: 0, Lessons: lessons}
		msg.Kind = suitegenv1.Slice_KIND_WORK
		if kind == "gap" {
			msg.Kind = suitegenv1.Slice_KIND_GAP
		}
		var indices []int
		outstanding := 0
		for _, bid := range ids {
			b := byID[bid]
			var spec plan.Spec
			_ = json.Unmarshal(b.Spec, &spec)
			for k := b.Done; k < b.Want; k++ {
				indices = append(indices, spec.Index(k))
			}
			outstanding += b.Want - b.Done
			msg.Buckets = append(msg.Buckets, &suitegenv1.BucketAssignment{BucketId: b.ID, Cell: b.Cell, UseCase: b.UseCase,
				Angle: b.Angle, Outcome: b.Outcome, Overlay: b.Overlay, Axes: b.Axes, Want: uint32(b.Want), Have: uint32(b.Done)})
		}
		sp := plan.SpreadFor(c, indices)
		msg.Spread = &suitegenv1.CallerSpread{NameInitials: sp.Initials, CodePrefixes: sp.CodePrefixes,
			Personalities: sp.Personalities, Accents: sp.Accents, Styles: sp.Styles, Locations: sp.Locations}
		msg.TurnBudget = uint32(6 + 5*outstanding)
		if len(existing) == 0 {
			if err := p.cfg.Store.ClaimSlice(ctx, canvas.Slice{RunID: p.cfg.RunID, ID: id, Round: round, Kind: kind, BucketIDs: ids}); err != nil {
				return 0, fmt.Errorf("planner: claim %s: %w", id, err)
			}
		}
		if _, err := p.cfg.Queue.Publish(ctx, msg); err != nil {
			return 0, fmt.Errorf("planner: publish %s: %w", id, err)
		}
		p.cfg.Metrics.SlicesPublished.Inc()
		dealt++
	}
	if dealt > 0 {
		p.log.Info("round dealt", "round", round, "slices", dealt)
	}
	return dealt, nil
}

// await waits until every slice of the round is finished in the ledger. A
// slice still unfinished at the round timeout is recorded dead.
//
// A writer that dies on every delivery of a slice (a poison slice) never
// records it dead itself, so the planner learns of exhausted slices two ways:
// the server's max-deliveries advisory while it listens, and, for advisories
// sent while no planner listened (it was restarted), a queue that has held
// nothing pending or in flight for longer than two ack waits while the
// ledger still shows the round's slices published.
func (p *Planner) await(ctx context.Context, round int) error {
	deadline := time.Now().Add(p.cfg.RoundTimeout)
	t := time.NewTicker(p.cfg.Poll)
	defer t.Stop()
	lctx, stopListening := context.WithCancel(ctx)
	defer stopListening()
	if err := p.cfg.Queue.DeadLetters(lctx, func(seq uint64) { p.deadLetter(lctx, seq) }); err != nil {
		p.log.Warn("not listening for dead letters; relying on the empty-queue check", "err", err)
	}
	qc := p.cfg.Queue.Config()
	quiet := 2*qc.AckWait + qc.FetchWait
	var emptySince, failingSince time.Time
	for {
		ss, err := p.cfg.Store.Slices(ctx, p.cfg.RunID, round)
		if err != nil {
			// The ledger restarting or failing over is not the end of the
			// run: keep polling for a while, as the writers do.
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if ctx.Err() != nil || time.Since(failingSince) > storeOutage {
				return err
			}
			p.log.Warn("reading the ledger failed; polling again", "err", err)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
			continue
		}
		failingSince = time.Time{}
		open := 0
		for _, s := range ss {
			if s.State == "published" {
				open++
			}
		}
		if open == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return p.bury(ctx, ss, "no writer finished the slice within the round timeout")
		}
		if n, a, err := p.cfg.Queue.Pending(ctx); err == nil {
			p.cfg.Metrics.SetQueue(n, a)
			switch {
			case n > 0 || a > 0:
				emptySince = time.Time{}
			case emptySince.IsZero():
				emptySince = time.Now()
			case time.Since(emptySince) > quiet:
				return p.bury(ctx, ss, fmt.Sprintf("dead-lettered: the queue gave up on the slice (no delivery acknowledged within %d deliveries); every delivery's writer died or went silent past the ack wait", qc.MaxDeliver))
			}
		} else {
			emptySince = time.Time{}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// storeOutage is how long the planner keeps retrying a ledger that fails
// before it gives up on the run.
const storeOutage = 2 * time.Minute

// fold folds the ledger, retrying through a ledger outage of up to
// storeOutage (Fold is one transaction, so a retry is safe).
func (p *Planner) fold(ctx context.Context, maxAttempts int) error {
	start := time.Now()
	for {
		_, err := p.cfg.Store.Fold(ctx, p.cfg.RunID, maxAttempts)
		if err == nil || ctx.Err() != nil || time.Since(start) > storeOutage {
			return err
		}
		p.log.Warn("fold failed; retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// bury records every still-published slice of ss dead with reason.
func (p *Planner) bury(ctx context.Context, ss []canvas.Slice, reason string) error {
	for _, s := range ss {
		if s.State != "published" {
			continue
		}
		if err := p.cfg.Store.FinishSlice(ctx, p.cfg.RunID, s.ID, "dead", "", reason, s.Deliveries); err != nil {
			return err
		}
		p.cfg.Metrics.SlicesDeadLettered.Inc()
		p.log.Error("slice dead", "slice", s.ID, "reason", reason)
	}
	return nil
}

// deadLetter records in the ledger a slice of this run the queue gave up on
// after its last delivery (the server's max-deliveries advisory), with why.
func (p *Planner) deadLetter(ctx context.Context, seq uint64) {
	s, err := p.cfg.Queue.Lookup(ctx, seq)
	if err != nil {
		p.log.Warn("reading a dead-lettered slice", "seq", seq, "err", err)
		return
	}
	if s.GetRunId() != p.cfg.RunID {
		return
	}
	max := p.cfg.Queue.Config().MaxDeliver
	reason := fmt.Sprintf("dead-lettered after %d deliveries, none acknowledged: every delivery's writer died or went silent past the ack wait", max)
	if err := p.cfg.Store.FinishSlice(ctx, p.cfg.RunID, s.GetSliceId(), "dead", "", reason, max); err != nil {
		p.log.Warn("recording a dead-lettered slice", "slice", s.GetSliceId(), "err", err)
		return
	}
	p.cfg.Metrics.SlicesDeadLettered.Inc()
	p.log.Error("slice dead", "slice", s.GetSliceId(), "reason", reason)
}

// Gap deals one round of gap slices for buckets still open after the main
// rounds (the reviewer's fill), waits for them and folds. It returns how many
// slices it dealt.
func (p *Planner) Gap(ctx context.Context, reason string) (int, error) {
	run, err := p.cfg.Store.Run(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	if over, err := p.overBudget(ctx, run); err != nil || over {
		return 0, err
	}
	// Buckets blocked only for want of attempts get one more look.
	round := run.Round + 1
	if err := p.cfg.Store.SetRound(ctx, p.cfg.RunID, round); err != nil {
		return 0, err
	}
	n, err := p.deal(ctx, round, "gap", reason)
	if err != nil || n == 0 {
		return n, err
	}
	if err := p.await(ctx, round); err != nil {
		return n, err
	}
	if _, err := p.cfg.Store.Fold(ctx, p.cfg.RunID, p.cfg.MaxAttempts+1); err != nil {
		return n, err
	}
	return n, nil
}

// topUp keeps "asking for N returns N": what blocked buckets will not write
// is re-dealt to buckets with spare capacity, one at a time across use cases
// in plan order, so the same ledger always tops up the same way. It returns
// how many scenarios it added to wants.
func (p *Planner) topUp(ctx context.Context, asked int) (int, error) {
	bs, err := p.cfg.Store.Buckets(ctx, p.cfg.RunID)
	if err != nil {
		return 0, err
	}
	committed, next := 0, 0
	specs := make([]plan.Spec, len(bs))
	for i, b := range bs {
		if err := json.Unmarshal(b.Spec, &specs[i]); err != nil {
			return 0, fmt.Errorf("planner: bucket %s spec: %w", b.ID, err)
		}
		if b.State == "blocked" {
			committed += min(b.Done, b.Want)
		} else {
			committed += b.Want
		}
		sp := specs[i]
		next = max(next, sp.Base+sp.Sized, sp.TopUp+max(sp.Capacity-sp.Sized, 0))
	}
	short := asked - committed
	if short <= 0 {
		return 0, nil
	}
	raise := map[int]int{} // bucket index -> added
	var order []string
	byUC := map[string][]int{}
	for i, b := range bs {
		if b.State == "blocked" || b.State == "claimed" || specs[i].Capacity <= b.Want {
			continue
		}
		if _, ok := byUC[b.UseCase]; !ok {
			order = append(order, b.UseCase)
		}
		byUC[b.UseCase] = append(byUC[b.UseCase], i)
	}
	for added := 0; added < short; {
		progress := false
		for _, uc := range order {
			for _, i := range byUC[uc] {
				if bs[i].Want+raise[i] < specs[i].Capacity {
					raise[i]++
					added++
					progress = true
					break
				}
			}
			if added >= short {
				break
			}
		}
		if !progress {
			break
		}
	}
	total := 0
	for i := range bs {
		n := raise[i]
		if n == 0 {
			continue
		}
		sp := specs[i]
		if sp.TopUp == 0 && sp.Capacity > sp.Sized {
			sp.TopUp = next
			next += sp.Capacity - sp.Sized
		}
		js, _ := json.Marshal(sp)
		if err := p.cfg.Store.Raise(ctx, p.cfg.RunID, bs[i].ID, bs[i].Want+n, js); err != nil {
			return total, err
		}
		total += n
	}
	if total > 0 {
		p.log.Info("topped up", "short", short, "added", total)
	}
	return total, nil
}

// AllowPartialOf says whether a run was started with some use cases
// unplanned on purpose, from its ledger config, so a reviewer prepares the
// same run.
func AllowPartialOf(r canvas.Run) bool {
	var cfg struct {
		AllowPartial bool `json:"allow_partial"`
	}
	_ = json.Unmarshal(r.Config, &cfg)
	return cfg.AllowPartial
}

// MaxWantOf is the want cap a run was planned with, from its ledger config,
// so a reviewer or a resumed planner derives the same plan.
func MaxWantOf(r canvas.Run) int {
	var cfg struct {
		MaxWant int `json:"max_want"`
	}
	_ = json.Unmarshal(r.Config, &cfg)
	return cfg.MaxWant
}
