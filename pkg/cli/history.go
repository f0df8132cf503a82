package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
)

func cmdHistory(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen history", "OUT [NAME] [--json]",
		"Print the versions of the suite's scenarios that revise replaced (OUT/history.jsonl), oldest first, each with the ask and the run that replaced it, then what the scenario is now. No database is needed.")
	asJSON := f.Bool("json", false, "print the versions as JSON: [{name, ask, run, old}] (old is the scenario file as it was)")
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return &UsageError{"history takes one suite directory and at most one scenario name"}
	}
	w, err := suite.Read(pos[0])
	if err != nil {
		return err
	}
	vs, err := suite.ReadHistory(pos[0])
	if err != nil {
		return err
	}
	if len(pos) == 2 {
		name := pos[1]
		vs = slices.DeleteFunc(vs, func(v suite.Version) bool { return v.Name != name })
		if _, ok := w.Raw[name]; !ok && len(vs) == 0 {
			return fmt.Errorf("%s has no scenario %q and no history of one", pos[0], name)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(append([]suite.Version{}, vs...))
	}
	return printHistory(env.Stdout, w, vs, pos[1:])
}

// printHistory prints each scenario's versions, oldest first, then what it
// is now (the next version, or its file in the suite).
func printHistory(out io.Writer, w *suite.Written, vs []suite.Version, only []string) error {
	if len(vs) == 0 {
		what := "no scenario of the suite"
		if len(only) > 0 {
			what = only[0]
		}
		fmt.Fprintf(out, "%s: never revised\n", what)
		return nil
	}
	var names []string
	byName := map[string][]suite.Version{}
	for _, v := range vs {
		if byName[v.Name] == nil {
			names = append(names, v.Name)
		}
		byName[v.Name] = append(byName[v.Name], v)
	}
	for _, name := range names {
		fmt.Fprintf(out, "%s\n", name)
		for _, v := range byName[name] {
			was, err := scenario.Decode(v.Old)
			if err != nil {
				return fmt.Errorf("%s: %s's version replaced by run %s: %w", suite.HistoryFile, name, v.Run, err)
			}
			fmt.Fprintf(out, "  was %s\n  revised by run %s, asked %q\n", shape(was), v.Run, v.Ask)
		}
		now := "no longer in the suite"
		for i := range w.Scenarios {
			if w.Scenarios[i].Name == name {
				now = shape(&w.Scenarios[i])
			}
		}
		fmt.Fprintf(out, "  now %s\n", now)
	}
	return nil
}

func shape(sc *scenario.Scenario) string {
	return fmt.Sprintf("%s, %s, expects %s: %s", sc.UseCase, sc.Kind, sc.Expects, sc.Branch)
}
