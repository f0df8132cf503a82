package probe

import (
	"fmt"
	"sync"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/script"
	"github.com/suitegen/suitegen/pkg/world"
)

// Mutants rehearses on views of w whose contract has one refusal branch of
// a handler removed, as `suitegen adequacy` removes it: how planning tells
// a case only that branch refuses from one another branch would refuse
// anyway. Each view is compiled once and shares w's database.
func Mutants(w *world.World, c *contract.Contract) *MutantWorlds {
	return &MutantWorlds{w: w, c: c, by: map[string]ground.Rehearser{}}
}

// MutantWorlds is Mutants' result; safe for concurrent use.
type MutantWorlds struct {
	w        *world.World
	c        *contract.Contract
	mu       sync.Mutex
	branches map[string]script.Branch
	by       map[string]ground.Rehearser
}

// Without is a rehearser on the world without the refusal branch at
// (file:line); nil when the contract has no branch there.
func (m *MutantWorlds) Without(at string) (ground.Rehearser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.by[at]; ok {
		return r, nil
	}
	if m.branches == nil {
		bs, err := script.Branches(m.c)
		if err != nil {
			return nil, fmt.Errorf("probe: branches: %w", err)
		}
		m.branches = map[string]script.Branch{}
		for _, b := range bs {
			m.branches[b.At()] = b
		}
	}
	b, ok := m.branches[at]
	if !ok {
		return nil, nil
	}
	progs, err := script.CompileEdited(m.c, m.w.Programs().Options(), script.BranchOff(b))
	if err != nil {
		return nil, fmt.Errorf("probe: without %s: %w", at, err)
	}
	r := Rehearser(m.w.WithPrograms(progs))
	m.by[at] = r
	return r, nil
}
