package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"text/tabwriter"

	"github.com/suitegen/suitegen/pkg/adequacy"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/suite"
)

func init() {
	register(command{"adequacy", "OUT --contract DIR [--json] [--parallel P]", "mutate the contract (each refusal branch off, each rule's check neutered) and report which mutants the suite catches", cmdAdequacy})
}

func cmdAdequacy(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen adequacy", "OUT --contract DIR [--json] [--parallel P]",
		"Measure whether a written suite tests every refusal branch of the handlers and every rule with a check: each is removed in turn from the contract and the suite's scenarios proved again; a mutant is caught when some scenario is no longer kept.")
	dir := f.str("contract", "", "the contract directory the suite was written for (required)")
	asJSON := f.Bool("json", false, "print the report as JSON")
	par := f.num("parallel", 2, "proofs run at once")
	cn := f.conn()
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *dir == "" {
		return &UsageError{"adequacy takes a written suite's directory and --contract DIR"}
	}
	if *par < 1 {
		return &UsageError{"--parallel must be at least 1"}
	}
	out := pos[0]
	c, err := contract.LoadValid(*dir)
	if err != nil {
		return err
	}
	scs, err := suite.Scenarios(out)
	if err != nil {
		return err
	}
	run, bad, err := suite.RunSubGoals(filepath.Join(out, "catalogue.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, s := range bad {
		env.Log.Warn("run sub-goal left out", "sub_goal", s.Name, "err", s.Err)
	}
	e, closeEngine, err := openEngine(ctx, env, cn, c)
	if err != nil {
		return err
	}
	defer closeEngine()
	prover, skipped, err := e.WithSubGoals(run)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		env.Log.Warn("run sub-goal left out", "sub_goal", s.Name, "err", s.Err)
	}
	rep, err := adequacy.Measure(ctx, adequacy.Config{Contract: c, World: e.World, Prover: prover,
		RunSubGoals: prover.RunSubGoals(), Scenarios: scs, Parallel: *par})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	printAdequacy(env.Stdout, out, *dir, rep)
	return nil
}

func printAdequacy(w io.Writer, out, dir string, rep adequacy.Report) {
	fmt.Fprintf(w, "adequacy of %s against %s: %d kept scenarios", out, dir, rep.Scenarios)
	if len(rep.NotKept) > 0 {
		fmt.Fprintf(w, " (%d no longer kept, left out: %s ...)", len(rep.NotKept), rep.NotKept[0])
	}
	fmt.Fprintf(w, "\nrules caught %d/%d", rep.RulesCaught, rep.Rules)
	if len(rep.RulesJudged) > 0 {
		fmt.Fprintf(w, " (%d judged rules have no check to neuter)", len(rep.RulesJudged))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, branchesLine(rep))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tAT\tCAUGHT\tREACHED\tBY / WHY")
	for _, m := range rep.Mutants {
		caught, note := "no", m.Why
		switch {
		case m.Caught:
			caught, note = "yes", m.By
		case m.Shadowed != "":
			caught = "shadowed"
		}
		kind := m.Kind
		switch m.Class {
		case script.ClassExistence:
			kind = "guard"
		case script.ClassArgument:
			kind = "argument"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", kind, m.At, caught, m.Reached, note)
	}
	tw.Flush()
}

// branchesLine is the branches' figure, by class: an existence guard is
// reached only when a read finds nothing, and no kept refusal may rest on a
// record that does not exist; an argument check is decided by the request's
// own values, whatever the world holds: both are counted apart.
func branchesLine(rep adequacy.Report) string {
	return fmt.Sprintf("branches caught %d/%d (%d rule branches: %d caught, %d shadowed by a later branch that refuses the same calls; %d existence guards: %d caught, no kept refusal may rest on a missing record; %d argument checks: %d caught, decided by the request's own values alone)",
		rep.BranchesCaught, rep.Branches, rep.RuleBranches, rep.RuleBranchesCaught, rep.RuleBranchesShadowed, rep.ExistenceGuards, rep.ExistenceGuardsCaught, rep.ArgumentChecks, rep.ArgumentChecksCaught)
}
