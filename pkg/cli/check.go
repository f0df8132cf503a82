package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/progress"
	"github.com/suitegen/suitegen/pkg/refresh"
	"github.com/suitegen/suitegen/pkg/suite"
)

// StaleError is a check that found stale scenarios: exit 1.
type StaleError struct{ Stale, Checked int }

func (e *StaleError) Error() string {
	return fmt.Sprintf("%d of %d scenario(s) stale", e.Stale, e.Checked)
}

func cmdCheck(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen check", "OUT --contract DIR [--json] [--any-contract]",
		"Re-prove every scenario of the suite in OUT against the contract as it is now and list the stale ones: exit 0 when none is, 1 when some are (or the check could not run). Nothing is changed.")
	dir := f.str("contract", "", "the contract directory to prove against (required)")
	asJSON := f.Bool("json", false, "print the report as JSON: {suite, agent, recorded_contract_sha256, contract_sha256, contract_changed, checked, stale: [{name, use_case, branch, bucket, gate, code, reason}]}")
	foreign := f.Bool("any-contract", false, "re-prove a suite written for another agent than the contract's instead of refusing it")
	cn := f.conn()
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &UsageError{"check takes one suite directory"}
	}
	if *dir == "" {
		return &UsageError{"check needs --contract DIR"}
	}
	rep, err := check(ctx, env, cn, pos[0], *dir, refresh.Options{Foreign: *foreign})
	if errors.Is(err, refresh.ErrForeign) {
		// Only check takes --any-contract; export, which shares check, does not.
		return fmt.Errorf("%w; give --any-contract to re-prove it anyway", err)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printCheck(env.Stdout, rep)
	}
	if len(rep.Stale) > 0 {
		return &StaleError{Stale: len(rep.Stale), Checked: rep.Checked}
	}
	return nil
}

// check reads the suite (refusing one that is not a suite or does not read
// before any server starts) and re-proves it against the contract in dir.
func check(ctx context.Context, env *Env, cn conn, out, dir string, opts refresh.Options) (refresh.Report, error) {
	w, err := suite.Read(out)
	if err != nil {
		return refresh.Report{}, err
	}
	c, err := contract.LoadValid(dir)
	if err != nil {
		return refresh.Report{}, err
	}
	if w.Index.Agent != c.Agent && !opts.Foreign {
		return refresh.Report{}, &refresh.ForeignError{Suite: out, SuiteAgent: w.Index.Agent, ContractAgent: c.Agent}
	}
	e, closeEngine, err := openEngine(ctx, env, cn, c)
	if err != nil {
		return refresh.Report{}, err
	}
	defer closeEngine()
	p, err := refresh.SuiteProver(e, out)
	if err != nil {
		return refresh.Report{}, err
	}
	// The run's progress line, over the scenarios re-proved.
	var checked atomic.Int64
	opts.Checked = func(n int) { checked.Store(int64(n)) }
	bctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		progress.Bar(bctx, env.Stderr, env.TTY, func(context.Context) (progress.Snapshot, error) {
			return progress.Snapshot{Proved: int(checked.Load()), Asked: len(w.Scenarios)}, nil
		}, time.Second)
	}()
	rep, err := refresh.Check(ctx, p, w, c, opts)
	stop()
	<-done
	return rep, err
}

func printCheck(w io.Writer, rep refresh.Report) {
	switch {
	case rep.Recorded == suite.ContractUnknown:
		fmt.Fprintf(w, "contract: the suite records no contract hash (written before hashes were kept); now %s\n", short(rep.Contract))
	case rep.Changed:
		fmt.Fprintf(w, "contract: changed since the suite was written (%s, now %s)\n", short(rep.Recorded), short(rep.Contract))
	default:
		fmt.Fprintf(w, "contract: unchanged since the suite was written (%s)\n", short(rep.Contract))
	}
	for _, s := range rep.Stale {
		fmt.Fprintf(w, "stale %s: %s/%s: %s\n", s.Name, s.Gate, s.Code, s.Reason)
	}
	fmt.Fprintf(w, "%d of %d scenario(s) stale\n", len(rep.Stale), rep.Checked)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
