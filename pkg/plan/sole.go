package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// soleRows bounds the templates of a level soleCause tries to set apart,
// soleSteps the settings one template stacks, soleTries the settings it
// rehearses for one step, and soleAfter those it still tries in a step once
// one got the refusal further on (a setting that takes it all away may
// follow).
const (
	soleRows  = 2
	soleSteps = 3
	soleTries = 64
	soleAfter = 16
)

// soleCause gives a template of a refusal level, whose record another
// branch would refuse anyway, the settings (in its cases' setup) that take
// that other branch's ground away while the level's own branch still
// refuses: a loan renewed twice that is also long overdue has its due date
// moved later, so the case is refused for its renewals alone. Without it,
// an agent that ignored the level's rule would be refused all the same, and
// the level would prove nothing of its branch. Settings are tried one at a
// time (pushes, and each number of the rows that name the record moved as
// a whole); one is kept when the world still refuses at the level's branch
// and the world without that branch then carries the act out, or refuses
// it further on, from where the next setting is sought. It
// reports whether the template, refused at at, now bites.
func (sv *solver) soleCause(ctx context.Context, tool *contract.Tool, sol solution, lv *level, k, at string, calls []scenario.Call) (bool, error) {
	mr, err := sv.mutants.Without(at)
	if err != nil || mr == nil {
		return false, err
	}
	row := sv.g.Find(sol.table, sv.g.PK(sol.table), k)
	caller := sv.caseCaller(sol, row)
	setup := slices.Clone(lv.prior[k])
	act := calls[len(calls)-1]
	candidates := append(append(sv.aligns(tool.Name, sol.table, row, act, setup), sv.pushes(tool.Name, sol.table, row, act, true, caller)...), sv.wholePushes(tool.Name, sol.table, row, act, caller)...)
	for range soleSteps {
		// Each step has its own tries: a case is often refused by a chain
		// of later branches (a slot in the past, then taken, then of
		// another kind), one setting taking away one of them.
		tries, after := 0, 0
		ans, err := mr.Rehearse(ctx, setup, calls)
		if err != nil {
			return false, err
		}
		if len(ans) != len(calls) || !allOK(ans[:len(ans)-1]) {
			return false, nil
		}
		other := ans[len(ans)-1]
		if !other.Refused {
			break // bites
		}
		// A setting after which the world without the branch answers ok
		// is taken at once; else the first that gets its refusal past
		// the one it met, to build on.
		var past []scenario.Statement
		done := false
		for _, p := range candidates {
			if tries >= soleTries || after >= soleAfter {
				break
			}
			if slices.ContainsFunc(setup, func(st scenario.Statement) bool {
				return st.SQL == p.stmt.SQL && fmt.Sprint(st.Args) == fmt.Sprint(p.stmt.Args)
			}) {
				continue // already set
			}
			if past != nil {
				after++
			}
			next := append(slices.Clone(setup), p.stmt)
			tries++
			if still, err := sv.refusedAt(ctx, next, calls, at); err != nil || !still {
				if err != nil {
					return false, err
				}
				continue
			}
			m, err := mr.Rehearse(ctx, next, calls)
			if err != nil {
				return false, err
			}
			if len(m) != len(calls) || !allOK(m[:len(m)-1]) {
				continue
			}
			if last := m[len(m)-1]; last.OK {
				setup, done = next, true
				break
			} else if past == nil && last.Refused && later(last.Branch, other.Branch) {
				past = next
			}
		}
		if done {
			break
		}
		if past == nil {
			return false, nil
		}
		setup = past
	}
	if len(setup) == len(lv.prior[k]) {
		return false, nil
	}
	ans, err := mr.Rehearse(ctx, setup, calls)
	if err != nil || len(ans) != len(calls) || !allOK(ans) {
		return false, err
	}
	if lv.prior == nil {
		lv.prior = map[string][]scenario.Statement{}
	}
	lv.prior[k] = setup
	return true, nil
}

// refusedAt reports whether the world, after setup, answers calls' steps
// before the last ok and refuses the last at branch at. A setup the world
// does not take is no such case.
func (sv *solver) refusedAt(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, at string) (bool, error) {
	ans, err := sv.r.Rehearse(ctx, setup, calls)
	if se := (*scenario.SetupError)(nil); errors.As(err, &se) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return len(ans) == len(calls) && allOK(ans[:len(ans)-1]) && ans[len(ans)-1].Refused && ans[len(ans)-1].Branch == at, nil
}

// later reports whether refusal branch b stands past a in the handler's
// code: further down the same file, or in another file. A setting that
// moves a refusal there has got the call past the check it met.
func later(b, a string) bool {
	fb, lb, okb := strings.Cut(b, ":")
	fa, la, oka := strings.Cut(a, ":")
	if !okb || !oka || fb != fa {
		return b != a
	}
	nb, errb := strconv.Atoi(lb)
	na, erra := strconv.Atoi(la)
	return errb == nil && erra == nil && nb > na
}

// aligns are the settings that point the case's own record at a reference
// row the act's records name, or that a setting of the level points them at:
// the patient's own provider made the one the slot is with, who has left. A
// refusal about a reference row often gives way, its branch gone, to one
// about the case's tie to that row (a provider not taking new patients),
// which such a setting takes away.
func (sv *solver) aligns(tool, table string, row ground.Row, act scenario.Call, setup []scenario.Statement) []push {
	g := sv.g
	pk := g.PK(table)
	if row == nil || pk == "" {
		return nil
	}
	// The keys, per reference table, that the records the act's arguments
	// name (bar the case's own) point at.
	refs := map[string][]any{}
	for _, r := range sv.reach(tool, table, row, act) {
		if !r.arg || r.many || r.table == table {
			continue
		}
		if cur := g.Find(r.table, r.column, r.value); cur != nil {
			for _, fk := range g.FKs(r.table) {
				refs[fk.RefTable] = append(refs[fk.RefTable], cur[fk.Column])
			}
		}
	}
	var out []push
	for _, fk := range g.FKs(table) {
		if g.OwnedTable(fk.RefTable) {
			continue
		}
		var to []any
		add := func(v any) {
			if v != nil && ground.Text(v) != ground.Text(row[fk.Column]) && g.Find(fk.RefTable, fk.RefColumn, v) != nil &&
				!slices.ContainsFunc(to, func(x any) bool { return ground.Text(x) == ground.Text(v) }) {
				to = append(to, v)
			}
		}
		for _, v := range refs[fk.RefTable] {
			add(v)
		}
		for _, st := range setup {
			for _, a := range st.Args {
				add(a)
			}
		}
		for _, v := range to {
			out = append(out, push{
				stmt: scenario.Statement{SQL: fmt.Sprintf("UPDATE %s SET %s = $2 WHERE %s = $1", table, fk.Column, pk), Args: []any{row[pk], v}},
				what: fmt.Sprintf("%s of %s set to the %s the act names", strings.ReplaceAll(fk.Column, "_", " "), strings.ReplaceAll(table, "_", " "), strings.ReplaceAll(fk.RefTable, "_", " ")),
			})
		}
	}
	return out
}

// caseCaller is the caller of a case about row of the solution's table:
// its owner, or, of a shared row, the caller its cases are played for
// (ground.Graph.TiedCaller over the plan's first caller template).
func (sv *solver) caseCaller(sol solution, row ground.Row) ground.Row {
	var tmpl ground.Row
	if cl := sv.g.C.Caller; cl != nil && len(sol.callers) > 0 {
		tmpl = sv.g.Find(cl.Table, cl.Key, sol.callers[0])
	}
	return sv.g.SeedCaseAs(sol.table, row, tmpl, sol.owner).Caller
}

// wholePushes are the settings of each number of the rows that name the
// case's record, all of them at once (every charge on an account lowered),
// where pushes moves only the highest or lowest. Rows of other callers are
// never set: a setup may change only the case's own rows and those it names.
func (sv *solver) wholePushes(tool, table string, row map[string]any, act scenario.Call, caller ground.Row) []push {
	var out []push
	for _, r := range sv.ours(sv.reach(tool, table, row, act), caller) {
		if !r.many {
			continue
		}
		t := sv.g.C.Table(r.table)
		for _, col := range t.Columns {
			if !sv.pushable(t, col) {
				continue
			}
			for _, raise := range []bool{false, true} {
				out = append(out, push{stmt: scenario.Statement{
					SQL:  fmt.Sprintf("UPDATE %s SET %s = %s WHERE %s = $1", t.Name, col.Name, pushedValue(t, col, raise), r.column),
					Args: []any{r.value},
				}})
			}
		}
	}
	return out
}
