package prove

import (
	"fmt"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// IsBuiltin reports whether name is a built-in sub-goal (the outbound ones
// included: a run may not add a sub-goal of their names).
func IsBuiltin(name string) bool { return builtin(name) != nil || outboundBuiltin(name) != nil }

// WithSubGoals returns a prover of the same contract and world whose catalogue
// also holds sub-goals added during a run; progs must have their checks (see
// script.Programs.WithSubGoals). p is unchanged and still serves other runs of
// the contract; the world and its copies are shared.
func (p *Prover) WithSubGoals(sgs []contract.SubGoal, progs *script.Programs) (*Prover, error) {
	np := *p
	np.progs = progs
	np.extra = make(map[string]*contract.SubGoal, len(p.extra)+len(sgs))
	for k, v := range p.extra {
		np.extra[k] = v
	}
	for i := range sgs {
		sg := sgs[i]
		if builtin(sg.Name) != nil || p.c.SubGoal(sg.Name) != nil || np.extra[sg.Name] != nil {
			return nil, fmt.Errorf("prove: sub-goal %q is already in the catalogue", sg.Name)
		}
		if !sg.Judged && !progs.HasCheck(sg.Name) {
			return nil, fmt.Errorf("prove: sub-goal %q has no compiled check", sg.Name)
		}
		np.extra[sg.Name] = &sg
	}
	return &np, nil
}

// RunSubGoals are the sub-goals added to this prover's catalogue for a run.
func (p *Prover) RunSubGoals() []contract.SubGoal {
	out := make([]contract.SubGoal, 0, len(p.extra))
	for _, sg := range p.extra {
		out = append(out, *sg)
	}
	return out
}

// Programs are the compiled handlers and checks this prover runs.
func (p *Prover) Programs() *script.Programs { return p.progs }

// WithWorld is a prover of the same contract and catalogue over w, whose
// programs are progs: a mutant of the contract (w a view of this prover's
// world, world.WithPrograms). The frozen world's snapshot is shared.
func (p *Prover) WithWorld(w *world.World, progs *script.Programs) *Prover {
	np := *p
	np.w, np.progs = w, progs
	return &np
}
