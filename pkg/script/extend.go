package script

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"sort"

	"go.starlark.net/starlark"

	"github.com/suitegen/suitegen/pkg/contract"
)

// WithSubGoals compiles sub-goals added after the contract (a run's additions)
// on top of p and returns a Programs that knows p's handlers and checks plus
// theirs. p is not changed and nothing of p is recompiled: its frozen modules
// are shared, so an added sub-goal may load() the contract's lib files (sources
// are the contract's, c.Sources) and gets the same limits as p's checks.
// A sub-goal whose name p already has a check for is an error, as is a file
// that does not compile or defines no check(world, calls, params) while not
// judged; the error is a *CompileError naming file and line.
func (p *Programs) WithSubGoals(sources map[string]string, sgs []contract.SubGoal) (*Programs, error) {
	np := &Programs{
		opts:        p.opts,
		predeclared: p.predeclared,
		handlers:    p.handlers, // read-only after Compile
		branches:    p.branches,
		checks:      maps.Clone(p.checks),
		modules:     maps.Clone(p.modules),
	}
	cp := &compiler{p: np, sources: sources, state: map[string]int{}, errs: map[string]error{}}
	for file := range np.modules {
		cp.state[file] = 2 // compiled already: a load() reuses the frozen module
	}
	var cerr CompileError
	for i := range sgs {
		sg := &sgs[i]
		file := path.Clean(sg.File)
		if sg.File == "" {
			file = "subgoals/" + sg.Name + ".star"
		}
		if _, dup := np.checks[sg.Name]; dup {
			cerr.Errs = append(cerr.Errs, FileError{File: file, Msg: fmt.Sprintf("sub-goal %q already has a check", sg.Name)})
			continue
		}
		if _, dup := np.modules[file]; dup {
			cerr.Errs = append(cerr.Errs, FileError{File: file, Msg: "a file of that path is already compiled"})
			continue
		}
		g, err := cp.moduleSource(file, sg.Source)
		if err != nil {
			cerr.Errs = append(cerr.Errs, fileError(file, err))
			continue
		}
		fn, ok := g["check"].(*starlark.Function)
		if !ok {
			if !sg.Judged {
				cerr.Errs = append(cerr.Errs, fileError(file, errors.New("no function check(world, calls, params) defined")))
			}
			continue
		}
		np.checks[sg.Name] = fn
	}
	if len(cerr.Errs) > 0 {
		sort.SliceStable(cerr.Errs, func(i, j int) bool { return cerr.Errs[i].File < cerr.Errs[j].File })
		return nil, &cerr
	}
	return np, nil
}
