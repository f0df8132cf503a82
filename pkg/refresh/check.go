// Package refresh keeps a written suite in step with its contract: Check
// re-proves every scenario file against the contract as it is now and names
// the stale ones, and Merge folds scenarios a later run proved into the suite
// (replacing the stale, or adding new ones) without touching any other file.
package refresh

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
)

// Prover proves one scenario (*prove.Prover).
type Prover interface {
	Prove(ctx context.Context, sc *scenario.Scenario) (prove.Verdict, error)
}

// Stale is a scenario of the suite the contract no longer proves: the first
// refusal's gate, code and reason.
type Stale struct {
	Name    string     `json:"name"`
	UseCase string     `json:"use_case"`
	Branch  string     `json:"branch"`
	Bucket  string     `json:"bucket,omitempty"`
	Gate    prove.Gate `json:"gate"`
	Code    prove.Code `json:"code"`
	Reason  string     `json:"reason"`
}

// Report is what Check found.
type Report struct {
	Suite string `json:"suite"`
	Agent string `json:"agent"`
	// Recorded is the contract hash the suite records (suite.ContractUnknown
	// for a suite written before hashes were recorded); Contract is the
	// contract's hash now.
	Recorded string `json:"recorded_contract_sha256"`
	Contract string `json:"contract_sha256"`
	// Changed is Recorded differing from Contract (an unknown hash counts as
	// changed).
	Changed bool    `json:"contract_changed"`
	Checked int     `json:"checked"`
	Stale   []Stale `json:"stale"`
	// codes are the identifiers each kept scenario hands its caller, by
	// name: what a scenario added beside them must not repeat.
	codes map[string][]string
}

// StaleNames is the names of the stale scenarios, in suite order.
func (r Report) StaleNames() []string {
	out := make([]string, len(r.Stale))
	for i, s := range r.Stale {
		out[i] = s.Name
	}
	return out
}

// ErrForeign is a suite written for another agent than the contract's.
var ErrForeign = errors.New("suite written for another contract")

// ForeignError names the two agents.
type ForeignError struct {
	Suite, SuiteAgent, ContractAgent string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("%s was written for agent %q, the contract is agent %q (another contract)", e.Suite, e.SuiteAgent, e.ContractAgent)
}

// Is makes errors.Is(err, ErrForeign) hold.
func (e *ForeignError) Is(target error) bool { return target == ErrForeign }

// Options tune Check.
type Options struct {
	// Foreign re-proves a suite written for another agent instead of
	// refusing it with a *ForeignError.
	Foreign bool
	// Checked, when set, is told after each scenario how many are
	// re-proved so far (for a progress line).
	Checked func(n int)
}

// Check re-proves every scenario of w against c with p, in suite order.
// Nothing on disk changes.
func Check(ctx context.Context, p Prover, w *suite.Written, c *contract.Contract, opts Options) (Report, error) {
	if w.Index.Agent != c.Agent && !opts.Foreign {
		return Report{}, &ForeignError{Suite: w.Dir, SuiteAgent: w.Index.Agent, ContractAgent: c.Agent}
	}
	rep := Report{Suite: w.Dir, Agent: w.Index.Agent, Recorded: w.Index.Contract(), Contract: c.SHA256, Stale: []Stale{}}
	rep.Changed = rep.Recorded != rep.Contract
	rep.codes = map[string][]string{}
	for i := range w.Scenarios {
		sc := w.Scenarios[i]
		v, err := p.Prove(ctx, &sc)
		if err != nil {
			return Report{}, fmt.Errorf("refresh: prove %s: %w", sc.Name, err)
		}
		rep.Checked++
		if opts.Checked != nil {
			opts.Checked(rep.Checked)
		}
		if v.Kept {
			rep.codes[sc.Name] = v.Codes
			continue
		}
		st := Stale{Name: sc.Name, UseCase: sc.UseCase, Branch: sc.Branch, Bucket: sc.Bucket}
		if len(v.Refusals) > 0 {
			r := v.Refusals[0]
			st.Gate, st.Code, st.Reason = r.Gate, r.Code, r.Message
		}
		rep.Stale = append(rep.Stale, st)
	}
	return rep, nil
}

// SuiteProver is e's prover with the sub-goals the suite's run added
// (catalogue.json entries of origin "run", with their source) compiled over
// the contract's. One that no longer compiles is left out, so a scenario
// naming it is refused as unknown: stale, not an error.
func SuiteProver(e *engine.Engine, dir string) (*prove.Prover, error) {
	added, _, err := suite.RunSubGoals(filepath.Join(dir, "catalogue.json"))
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(added) == 0 {
		return e.Prover, nil
	}
	if err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	p, _, err := e.WithSubGoals(added)
	if err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	return p, nil
}
