package script

import (
	"strings"

	"go.starlark.net/syntax"
)

// ClassArgument is an argument check: the branch's own condition reads
// nothing but the call's arguments (and literals), so whether it refuses
// is settled by what the call says, whatever the world holds (no items
// given, an item listed twice, a blank street). Only a malformed call
// reaches it; no state of the world does.
const ClassArgument = "argument-check"

// The analysis is a taint over the syntax tree. A handler's first
// parameter (args) is the call's arguments. A value is argument-derived
// when it is built from argument-derived names, literals and pure
// builtins (len, set, str, a string's strip …) alone: any other call (a
// database read, a contract function) makes it depend on the world. A
// local name is argument-derived when every value bound to it is, and
// every method called on it (seen.add(x)) takes argument-derived values
// only; a parameter of a contract function, when every call of that
// function passes an argument-derived value in its place. It is a least
// fixpoint: a name no evidence supports depends on the world.

// pureBuiltins are the builtins whose result depends on their operands
// alone.
var pureBuiltins = map[string]bool{
	"len": true, "set": true, "str": true, "int": true, "float": true, "bool": true, "list": true,
	"tuple": true, "sorted": true, "reversed": true, "range": true, "min": true, "max": true,
	"abs": true, "any": true, "all": true, "dict": true, "enumerate": true, "zip": true,
	"True": true, "False": true, "None": true,
}

// argTaint holds, per function, the names that are argument-derived.
type argTaint struct {
	ix    *funcIndex
	names map[*fn]map[string]bool
}

// argumentTaint computes the argument-derived names of every function.
func (ix *funcIndex) argumentTaint() *argTaint {
	at := &argTaint{ix: ix, names: map[*fn]map[string]bool{}}
	for _, d := range ix.order {
		at.names[d] = map[string]bool{}
		if strings.HasPrefix(d.file, "handlers/") && d.def.Name.Name == "handle" && len(d.def.Params) > 0 {
			for _, n := range boundNames(d.def.Params[0]) {
				at.names[d][n] = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, d := range ix.order {
			if at.localPass(d) {
				changed = true
			}
		}
		if at.paramPass() {
			changed = true
		}
	}
	return at
}

// localPass marks the locals of d that every binding and mutation shows
// argument-derived, and reports whether it marked any.
func (at *argTaint) localPass(d *fn) bool {
	params := map[string]bool{}
	for _, p := range d.def.Params {
		for _, n := range boundNames(p) {
			params[n] = true
		}
	}
	vals := map[string][]syntax.Expr{}
	bad := map[string]bool{}
	walkLocal(d.def.Body, func(n syntax.Node) {
		switch n := n.(type) {
		case *syntax.AssignStmt:
			if id, ok := n.LHS.(*syntax.Ident); ok && n.Op == syntax.EQ {
				vals[id.Name] = append(vals[id.Name], n.RHS)
				return
			}
			for _, name := range boundNames(n.LHS) {
				if n.Op == syntax.EQ {
					vals[name] = append(vals[name], n.RHS) // unpacked: as tainted as the whole
				} else {
					vals[name] = append(vals[name], n.RHS, &syntax.Ident{Name: name})
				}
			}
		case *syntax.ForStmt:
			for _, name := range boundNames(n.Vars) {
				vals[name] = append(vals[name], n.X)
			}
		case *syntax.CallExpr:
			// A method call may change its receiver: x.add(v), x.append(v).
			if dot, ok := n.Fn.(*syntax.DotExpr); ok {
				if id, ok := unparen(dot.X).(*syntax.Ident); ok {
					vals[id.Name] = append(vals[id.Name], n.Args...)
				}
			}
		case *syntax.Comprehension:
			for _, c := range n.Clauses {
				if f, ok := c.(*syntax.ForClause); ok {
					for _, name := range boundNames(f.Vars) {
						bad[name] = true // bound where the walk above does not look
					}
				}
			}
		}
	})
	changed := false
	for name, xs := range vals {
		if at.names[d][name] || params[name] || bad[name] {
			continue
		}
		all := true
		for _, x := range xs {
			all = all && at.derived(d, x)
		}
		if all {
			at.names[d][name] = true
			changed = true
		}
	}
	return changed
}

// paramPass marks the parameters of contract functions that every call
// passes an argument-derived value for, and reports whether it marked any.
func (at *argTaint) paramPass() bool {
	type site struct {
		caller *fn
		call   *syntax.CallExpr
	}
	calls := map[*fn][]site{}
	for _, d := range at.ix.order {
		walkLocal(d.def.Body, func(n syntax.Node) {
			call, ok := n.(*syntax.CallExpr)
			if !ok {
				return
			}
			id, ok := call.Fn.(*syntax.Ident)
			if !ok {
				return
			}
			if callee := at.ix.lookup(d.file, id.Name); callee != nil {
				calls[callee] = append(calls[callee], site{d, call})
			}
		})
	}
	changed := false
	for callee, sites := range calls {
		for i, p := range callee.def.Params {
			id, ok := p.(*syntax.Ident) // plain positional parameters only
			if !ok || at.names[callee][id.Name] {
				continue
			}
			all := true
			for _, s := range sites {
				if i >= len(s.call.Args) {
					all = false
					break
				}
				a := s.call.Args[i]
				if b, ok := a.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
					all = false // a keyword argument: its place is not i
					break
				}
				if u, ok := a.(*syntax.UnaryExpr); ok && (u.Op == syntax.STAR || u.Op == syntax.STARSTAR) {
					all = false
					break
				}
				all = all && at.derived(s.caller, a)
			}
			if all {
				at.names[callee][id.Name] = true
				changed = true
			}
		}
	}
	return changed
}

// derived reports whether x, in function d, is built from the call's
// arguments and literals alone.
func (at *argTaint) derived(d *fn, x syntax.Expr) bool {
	return at.expr(d.file, at.names[d], x, 0)
}

// constant reports whether name, in file, is a top-level constant: bound
// once, at the top level of its file (or of the file it is loaded from), to
// a value built from literals alone (REASONS = ["a", "b"]).
func (at *argTaint) constant(file, name string, depth int) bool {
	for range 8 { // alias chains through lib files, bounded
		if x, ok := at.ix.consts[file][name]; ok {
			return x != nil && depth < 8 && at.expr(file, nil, x, depth+1)
		}
		a, ok := at.ix.aliases[file][name]
		if !ok {
			return false
		}
		file, name = a[0], a[1]
	}
	return false
}

// expr reports whether x, in file, given the argument-derived names, is
// built from the call's arguments, constants and literals alone.
func (at *argTaint) expr(file string, names map[string]bool, x syntax.Expr, depth int) bool {
	derived := func(y syntax.Expr) bool { return at.expr(file, names, y, depth) }
	allDerived := func(ys []syntax.Expr) bool {
		for _, y := range ys {
			if !derived(y) {
				return false
			}
		}
		return true
	}
	switch x := unparen(x).(type) {
	case *syntax.Literal:
		return true
	case *syntax.Ident:
		if names[x.Name] {
			return true
		}
		if at.ix.lookup(file, x.Name) != nil {
			return false // a function, not a value of the call
		}
		return pureBuiltins[x.Name] || at.constant(file, x.Name, depth)
	case *syntax.IndexExpr:
		return derived(x.X) && derived(x.Y)
	case *syntax.SliceExpr:
		for _, y := range []syntax.Expr{x.Lo, x.Hi, x.Step} {
			if y != nil && !derived(y) {
				return false
			}
		}
		return derived(x.X)
	case *syntax.DotExpr:
		return derived(x.X)
	case *syntax.UnaryExpr:
		return x.X != nil && derived(x.X)
	case *syntax.BinaryExpr:
		return derived(x.X) && derived(x.Y)
	case *syntax.CondExpr:
		return derived(x.Cond) && derived(x.True) && derived(x.False)
	case *syntax.ListExpr:
		return allDerived(x.List)
	case *syntax.TupleExpr:
		return allDerived(x.List)
	case *syntax.DictExpr:
		for _, e := range x.List {
			if kv, ok := e.(*syntax.DictEntry); !ok || !derived(kv.Key) || !derived(kv.Value) {
				return false
			}
		}
		return true
	case *syntax.CallExpr:
		if !allDerived(x.Args) {
			return false
		}
		switch f := x.Fn.(type) {
		case *syntax.Ident:
			return pureBuiltins[f.Name] && at.ix.lookup(file, f.Name) == nil
		case *syntax.DotExpr:
			// A method of an argument-derived value (a string's strip, a
			// dict's get): its result is the value's own.
			return derived(f.X)
		}
	}
	return false
}

// argumentCheck reports whether the last condition on path (the branch's
// own) is argument-derived in d.
func (at *argTaint) argumentCheck(d *fn, path []cond) bool {
	return len(path) > 0 && at.derived(d, path[len(path)-1].x)
}
