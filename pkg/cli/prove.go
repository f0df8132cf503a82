package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
)

func cmdProve(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen prove", "DIR SCENARIO.json [--catalogue OUT/catalogue.json] [-v]", "Run the gates on one scenario: exit 0 when it would be kept, 1 with the reasons.")
	cat := f.str("catalogue", "", "a written suite's catalogue.json: the sub-goals writers added during its run join the contract's")
	verbose := f.Bool("v", false, "print, per gate, what the prover played (the solution, nothing, the tempting path, without or with a precondition) and what each check said")
	cn := f.conn()
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return &UsageError{"prove takes a contract directory and a scenario file"}
	}
	c, err := contract.LoadValid(pos[0])
	if err != nil {
		return err
	}
	b, err := os.ReadFile(pos[1])
	if err != nil {
		return err
	}
	sc, err := scenario.Decode(b)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[1], err)
	}
	e, closeEngine, err := openEngine(ctx, env, cn, c)
	if err != nil {
		return err
	}
	defer closeEngine()
	prover := e.Prover
	if *cat != "" {
		if prover, err = runProver(e, *cat); err != nil {
			return err
		}
	}
	v, err := prover.Prove(ctx, sc)
	if err != nil {
		return err
	}
	if *verbose {
		explain(env.Stdout, v)
	}
	if v.Kept {
		fmt.Fprintf(env.Stdout, "kept: %s (%s)\n", sc.Name, v.Duration.Round(time.Microsecond))
		return nil
	}
	for _, r := range v.Refusals {
		fmt.Fprintf(env.Stdout, "%s: %s/%s: %s\n", sc.Name, r.Gate, r.Code, r.Message)
	}
	return fmt.Errorf("%s refused by %d reason(s)", sc.Name, len(v.Refusals))
}

// explain prints, gate by gate up to the one that refused, the runs the
// gate read: what was played, how the world answered, what each check said.
func explain(w io.Writer, v prove.Verdict) {
	refusedAt := prove.Gate("")
	if len(v.Refusals) > 0 {
		refusedAt = v.Refusals[0].Gate
	}
	for _, g := range prove.Gates {
		if g == prove.GateSuite {
			break
		}
		var runs []prove.Run
		for _, r := range v.Runs {
			if r.Gate == g {
				runs = append(runs, r)
			}
		}
		verdict := "passed"
		if g == refusedAt {
			verdict = "REFUSED"
		}
		fmt.Fprintf(w, "%s: %s\n", g, verdict)
		for _, r := range runs {
			if r.Request > 0 {
				fmt.Fprintf(w, "  request %d, %s: %s\n", r.Request, r.Counterfactual, calls(r.Calls))
			} else {
				fmt.Fprintf(w, "  %s: %s\n", r.Counterfactual, calls(r.Calls))
			}
			if r.Note != "" {
				fmt.Fprintf(w, "    -> %s\n", r.Note)
			}
			for _, c := range r.Checks {
				switch {
				case c.Broken:
					fmt.Fprintf(w, "    BROKEN %s: %s\n", c.Name, c.Why)
				case c.Held:
					fmt.Fprintf(w, "    holds  %s\n", c.Name)
				default:
					fmt.Fprintf(w, "    FAILS  %s: %s\n", c.Name, c.Why)
				}
			}
		}
		if g == refusedAt {
			return
		}
	}
}

func calls(cs []prove.CallStep) string {
	if len(cs) == 0 {
		return "no calls"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		switch {
		case c.OK:
			parts[i] = c.Tool + " ok"
		case c.Crash:
			parts[i] = c.Tool + " CRASHED (" + c.Error + ")"
		case c.Branch != "":
			parts[i] = c.Tool + " refused at " + c.Branch + " (" + c.Error + ")"
		default:
			parts[i] = c.Tool + " refused (" + c.Error + ")"
		}
	}
	return strings.Join(parts, ", ")
}
