package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/suitegen/suitegen/pkg/adequacy"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/planner"
	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/refresh"
	"github.com/suitegen/suitegen/pkg/reviewer"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
)

// folding is what a run over an existing suite does with the plan and with
// what its run proved (*refresh.Update, *refresh.Extend).
type folding interface {
	Narrow(*plan.Plan) error
	Finish(ctx context.Context, p refresh.Prover, run string, fresh []scenario.Scenario) (refresh.Outcome, error)
}

// refreshSuite is a run over the suite in --update or --into: the suite is
// re-proved against the contract; the planner derives the plan as for the
// suite's own ask (its size plus the addition for --into) with the seed the
// suite was written with, and narrows it to the buckets that write what is
// missing; slices go through the queue, writers and ledger as in any run;
// then the scenarios the run proved are folded into the suite, and nothing
// else in it changes but index.json, catalogue.json (run sub-goals the new
// scenarios name), refresh.json, and report.json and review.json, restated
// for the suite as it then is.
func (j job) refreshSuite(ctx context.Context) (res Result) {
	dir := j.cfg.suiteDir()
	res = Result{RunID: j.runID(), Agent: j.c.Agent, Out: dir}
	fail := func(err error) Result {
		res.Err = fmt.Errorf("%s: %w", j.c.Agent, err)
		return res
	}
	w, err := suite.Read(dir)
	if err != nil {
		return fail(err)
	}
	if w.Index.Agent != j.c.Agent {
		return fail(&refresh.ForeignError{Suite: dir, SuiteAgent: w.Index.Agent, ContractAgent: j.c.Agent})
	}
	prover, err := refresh.SuiteProver(j.e, dir)
	if err != nil {
		return fail(err)
	}
	// The suite is re-proved first, under a progress line of its own.
	var checked atomic.Int64
	stopBar := j.barOf(ctx, func(context.Context) (progress.Snapshot, error) {
		return progress.Snapshot{Proved: int(checked.Load()), Asked: len(w.Scenarios)}, nil
	})
	rep, err := refresh.Check(ctx, prover, w, j.c, refresh.Options{Checked: func(n int) { checked.Store(int64(n)) }})
	stopBar()
	if err != nil {
		return fail(err)
	}
	// Counted under this run, whose metrics are served while it writes; a
	// bare check ends too soon to be scraped (docs/METRICS.md).
	j.mx.For(res.RunID).Reproved(rep.Checked-len(rep.Stale), len(rep.Stale))
	asked, seed := recorded(w)
	var f folding
	switch rv := j.cfg.Revise; {
	case rv.Dir != "":
		ask, err := refresh.ParseAsk(rv.Ask, j.cfg.ModelWrites())
		if err != nil {
			return fail(err)
		}
		names, err := refresh.Select(w, rv.Only, rv.Where)
		if err != nil {
			return fail(err)
		}
		u, err := refresh.NewRevision(w, j.c, rep, names, ask, rv.Ask)
		if err != nil {
			return fail(err)
		}
		u.Keep(func(name string, old []byte) error {
			return j.store.KeepVersion(ctx, ledger.Version{Run: res.RunID, Name: name, Ask: rv.Ask, Suite: dir, Body: old})
		})
		f = u
		res.Asked = len(names)
	case j.cfg.Update != "":
		u := refresh.NewUpdate(w, j.c, rep)
		f = u
		// With nothing stale the plan is still derived (and narrowed to
		// nothing): the report is restated against it.
		res.Asked = u.Stale()
	default:
		x, err := refresh.NewExtend(w, j.c, rep, j.cfg.Asked)
		if err != nil {
			return fail(err)
		}
		f = x
		res.Asked = j.cfg.Asked
		asked = len(w.Scenarios) + j.cfg.Asked
	}
	p, err := planner.New(planner.Config{Ledger: j.store, Queue: j.q, Engine: j.e, Metrics: j.mx.For(res.RunID), Logger: j.log,
		RunID: res.RunID, Asked: asked, Seed: seed, Model: j.model, BudgetTokens: j.cfg.BudgetTokens, BudgetUSD: j.cfg.BudgetUSD,
		MaxWant: j.cfg.MaxWant, AllowPartial: true, Narrow: f.Narrow, PlanCache: j.cfg.PlanCache})
	if err != nil {
		return fail(err)
	}
	run := res.RunID
	switch err := p.Prepare(ctx); {
	case errors.Is(err, planner.ErrNothingToWrite):
		run = "" // nothing the plan can write: fold in nothing
	case err != nil:
		return fail(err)
	default:
		stopBar := j.bar(ctx, run)
		_, err = p.Run(ctx)
		var short *planner.ShortError
		if err != nil && !errors.As(err, &short) {
			stopBar()
			return fail(err)
		}
		// A short run is no failure here: what could not be written is in
		// the outcome, scenario by scenario.
		_, _, err = reviewer.Conclude(ctx, reviewer.Config{Ledger: j.store, RunID: run, Contract: j.c, Plan: p.Plan, Out: dir, Logger: j.log})
		stopBar()
		if err != nil {
			return fail(err)
		}
	}
	var fresh []scenario.Scenario
	if run != "" {
		if fresh, err = j.store.Scenarios(ctx, run); err != nil {
			return fail(err)
		}
		gs, err := j.store.SubGoals(ctx, run)
		if err != nil {
			return fail(err)
		}
		if len(gs) > 0 {
			if err := suite.AddRunSubGoals(dir, gs); err != nil {
				return fail(err)
			}
			if prover, err = refresh.SuiteProver(j.e, dir); err != nil {
				return fail(err)
			}
		}
	}
	out, err := f.Finish(ctx, prover, run, fresh)
	res.Refresh = &out
	res.Proved = len(out.Replaced) + len(out.Added)
	// What Finish wrote, even short of the ask, is in the suite: its report
	// and review say so.
	if rerr := j.restate(ctx, dir, run, out.Mode, p.Whole, prover); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fail(err)
	}
	return res
}

// restate rewrites the suite's report.json and review.json from the suite as
// it now is, counted against the whole plan the run derived, with what run
// spent added to what the report had.
func (j job) restate(ctx context.Context, dir, run, mode string, whole *plan.Plan, prover *prove.Prover) error {
	if whole == nil {
		return errors.New("refresh: no plan to restate the report against")
	}
	w, err := suite.Read(dir)
	if err != nil {
		return err
	}
	kept, bs := refresh.Place(whole, w.Scenarios)
	reach, err := adequacy.NewReached(prover, j.c)
	if err != nil {
		return err
	}
	_, err = reviewer.Restate(ctx, j.store, run, mode, j.c, whole, dir, kept, bs, reach)
	return err
}

// recorded is the ask and the seed the suite's run was made with
// (report.json); without a readable report, the suite's size and seed 1.
func recorded(w *suite.Written) (asked int, seed int64) {
	asked, seed = max(len(w.Scenarios), 1), 1
	b, err := os.ReadFile(filepath.Join(w.Dir, "report.json"))
	if err != nil {
		return asked, seed
	}
	var r struct {
		Asked      int `json:"asked"`
		Provenance struct {
			Seed int64 `json:"seed"`
		} `json:"provenance"`
	}
	if json.Unmarshal(b, &r) != nil {
		return asked, seed
	}
	if r.Asked > 0 {
		asked = r.Asked
	}
	if r.Provenance.Seed != 0 {
		seed = r.Provenance.Seed
	}
	return asked, seed
}
