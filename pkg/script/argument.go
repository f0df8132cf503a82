package script

import (
	"maps"
	"slices"
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
// when it is built from argument-derived names, literals, constants, pure
// builtins (len, set, str, a string's strip …) and calls of contract
// functions whose every return is argument-derived: anything else (a
// database read, the world's clock) makes it depend on the world. A local
// name is argument-derived when every value bound to it is, and every
// method called on it (seen.add(x)) or store into it (x[k] = v) takes
// argument-derived values only; a parameter of a contract function, when
// every call of that function passes an argument-derived value in its
// place. It is a greatest fixpoint: every name starts argument-derived and
// loses it on evidence of the world, so a loop counter (i += 1) keeps it
// while a value that ever meets the database does not.

// pureBuiltins are the builtins whose result depends on their operands
// alone.
var pureBuiltins = map[string]bool{
	"len": true, "set": true, "str": true, "int": true, "float": true, "bool": true, "list": true,
	"tuple": true, "sorted": true, "reversed": true, "range": true, "min": true, "max": true,
	"abs": true, "any": true, "all": true, "dict": true, "enumerate": true, "zip": true,
	"type": true, "repr": true, "round": true, "hasattr": true, "getattr": true, "math": true, "json": true,
	"True": true, "False": true, "None": true,
}

// argTaint holds, per function, the names that are argument-derived, and
// the contract functions whose every return is.
type argTaint struct {
	ix    *funcIndex
	names map[*fn]map[string]bool
	pure  map[*fn]bool
	// ofParams are the contract functions whose every return is built
	// from their own parameters alone, whatever a call passes (a money
	// rounding helper): such a call of argument-derived values is
	// argument-derived at that call. byParams marks the taint that
	// computes them, where every parameter starts derived.
	ofParams map[*fn]bool
	byParams bool
}

// callSite is one call of a contract function.
type callSite struct {
	caller *fn
	call   *syntax.CallExpr
}

// taintFacts are what the fixpoint reads of each function: the values
// bound to each local, its parameters (and their defaults), its returns,
// and the calls of it.
type taintFacts struct {
	vals    map[*fn]map[string][]syntax.Expr
	params  map[*fn][]syntax.Expr
	returns map[*fn][]syntax.Expr
	sites   map[*fn][]callSite
}

// argumentTaint computes the argument-derived names of every function.
func (ix *funcIndex) argumentTaint() *argTaint {
	f := ix.taintFacts()
	return ix.taintWith(f, false, ix.taintWith(f, true, nil).pure)
}

// taintWith is the fixpoint of argumentTaint; byParams starts every plain
// parameter of every function derived and keeps it so, which leaves pure
// the functions whose returns read their parameters alone.
func (ix *funcIndex) taintWith(f taintFacts, byParams bool, ofParams map[*fn]bool) *argTaint {
	at := &argTaint{ix: ix, names: map[*fn]map[string]bool{}, pure: map[*fn]bool{}, byParams: byParams, ofParams: ofParams}
	if byParams {
		at.ofParams = at.pure // the functions of their parameters are what this taint finds
	}
	asValue := ix.functionValues()
	for _, d := range ix.order {
		names := map[string]bool{}
		for name := range f.vals[d] {
			names[name] = true
		}
		handler := strings.HasPrefix(d.file, "handlers/") && d.def.Name.Name == "handle"
		for i, p := range f.params[d] {
			for _, n := range boundNames(p) {
				delete(names, n) // a parameter is what its callers pass
				_, plain := paramName(p)
				if handler && i == 0 || !handler && plain && !asValue[d] && len(f.sites[d]) > 0 || byParams && plain && !handler {
					names[n] = true
				}
			}
		}
		at.names[d] = names
		at.pure[d] = true
	}
	for at.prune(f) {
	}
	return at
}

// paramName is a parameter's name, and whether it is a plain or defaulted
// one (not *args or **kwargs).
func paramName(p syntax.Expr) (string, bool) {
	switch p := p.(type) {
	case *syntax.Ident:
		return p.Name, true
	case *syntax.BinaryExpr:
		if id, ok := p.X.(*syntax.Ident); ok && p.Op == syntax.EQ {
			return id.Name, true
		}
	}
	return "", false
}

// taintFacts gathers, once, what argumentTaint's fixpoint reads.
func (ix *funcIndex) taintFacts() taintFacts {
	f := taintFacts{vals: map[*fn]map[string][]syntax.Expr{}, params: map[*fn][]syntax.Expr{},
		returns: map[*fn][]syntax.Expr{}, sites: map[*fn][]callSite{}}
	for _, d := range ix.order {
		vals := map[string][]syntax.Expr{}
		walkLocal(d.def.Body, func(n syntax.Node) {
			switch n := n.(type) {
			case *syntax.AssignStmt:
				var self []syntax.Expr
				if n.Op != syntax.EQ {
					self = []syntax.Expr{n.LHS} // x += v reads x too
				}
				for _, name := range boundNames(n.LHS) {
					vals[name] = append(append(vals[name], n.RHS), self...)
				}
				if base := storeBase(n.LHS); base != "" {
					vals[base] = append(vals[base], n.RHS) // x[k] = v, x.f = v
				}
			case *syntax.ForStmt:
				for _, name := range boundNames(n.Vars) {
					vals[name] = append(vals[name], n.X)
				}
			case *syntax.ReturnStmt:
				if n.Result != nil {
					f.returns[d] = append(f.returns[d], n.Result)
				}
			case *syntax.CallExpr:
				// A method call may change its receiver: x.add(v), x.append(v).
				if dot, ok := n.Fn.(*syntax.DotExpr); ok {
					if id, ok := unparen(dot.X).(*syntax.Ident); ok {
						vals[id.Name] = append(vals[id.Name], n.Args...)
					}
				}
				if id, ok := n.Fn.(*syntax.Ident); ok {
					if callee := ix.lookup(d.file, id.Name); callee != nil {
						f.sites[callee] = append(f.sites[callee], callSite{d, n})
					}
				}
			}
		})
		controlFlow(d.def.Body, nil, vals, func(x syntax.Expr) { f.returns[d] = append(f.returns[d], x) })
		f.vals[d] = vals
		f.params[d] = d.def.Params
	}
	return f
}

// controlFlow adds the implicit flows of a function body: a local bound, or
// changed by a method call, under a condition (an if's, a while's, a for's
// iterable) depends on that condition too, as a function's result depends
// on every condition that decides which of its returns is reached, an
// earlier return's included. Without it a helper that returns "sender" or
// "recipient" by comparing a database row with an argument would pass for
// argument-derived: each of its returns is a literal. ctl are the
// conditions around body; ret takes each condition that decides a return.
func controlFlow(body []syntax.Stmt, ctl []syntax.Expr, vals map[string][]syntax.Expr, ret func(syntax.Expr)) {
	bind := func(names []string) {
		for _, n := range names {
			vals[n] = append(vals[n], ctl...)
		}
	}
	for _, s := range body {
		switch s := s.(type) {
		case *syntax.AssignStmt:
			if len(ctl) == 0 {
				continue
			}
			bind(boundNames(s.LHS))
			if base := storeBase(s.LHS); base != "" {
				bind([]string{base})
			}
		case *syntax.ExprStmt:
			if c, ok := unparen(s.X).(*syntax.CallExpr); ok && len(ctl) > 0 {
				if dot, ok := c.Fn.(*syntax.DotExpr); ok {
					if id, ok := unparen(dot.X).(*syntax.Ident); ok {
						bind([]string{id.Name})
					}
				}
			}
		case *syntax.IfStmt:
			inner := append(slices.Clone(ctl), s.Cond)
			if holdsReturn(s.True) || holdsReturn(s.False) {
				ret(s.Cond)
			}
			controlFlow(s.True, inner, vals, ret)
			controlFlow(s.False, inner, vals, ret)
		case *syntax.ForStmt:
			if holdsReturn(s.Body) {
				ret(s.X)
			}
			controlFlow(s.Body, append(slices.Clone(ctl), s.X), vals, ret)
		case *syntax.WhileStmt:
			if holdsReturn(s.Body) {
				ret(s.Cond)
			}
			controlFlow(s.Body, append(slices.Clone(ctl), s.Cond), vals, ret)
		}
	}
}

// holdsReturn reports whether a block holds a return statement (outside nested
// functions).
func holdsReturn(body []syntax.Stmt) bool {
	found := false
	walkLocal(body, func(n syntax.Node) {
		if _, ok := n.(*syntax.ReturnStmt); ok {
			found = true
		}
	})
	return found
}

// storeBase is the variable a store into an element or field changes (x in
// x[k] = v or x.f = v), or "".
func storeBase(lhs syntax.Expr) string {
	for stored := false; ; stored = true {
		switch x := unparen(lhs).(type) {
		case *syntax.IndexExpr:
			lhs = x.X
		case *syntax.DotExpr:
			lhs = x.X
		case *syntax.Ident:
			if !stored {
				return "" // a plain binding, not a store
			}
			return x.Name
		default:
			return ""
		}
	}
}

// functionValues are the contract functions named other than as a call
// (passed as a key=, kept in a dict): calls the analysis cannot see may
// pass them anything.
func (ix *funcIndex) functionValues() map[*fn]bool {
	out := map[*fn]bool{}
	visit := func(file string, root syntax.Node) {
		called := map[*syntax.Ident]bool{}
		syntax.Walk(root, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.CallExpr); ok {
				if id, ok := c.Fn.(*syntax.Ident); ok {
					called[id] = true
				}
			}
			if id, ok := n.(*syntax.Ident); ok && !called[id] {
				if d := ix.lookup(file, id.Name); d != nil {
					out[d] = true
				}
			}
			return true
		})
	}
	for _, d := range ix.order {
		for _, s := range d.def.Body {
			visit(d.file, s)
		}
	}
	for file, consts := range ix.consts {
		for _, x := range consts {
			if x != nil {
				visit(file, x)
			}
		}
	}
	return out
}

// prune takes argument-derivation from every name and function that a
// value of the world reaches, and reports whether it took any.
func (at *argTaint) prune(f taintFacts) bool {
	changed := false
	for _, d := range at.ix.order {
		params := map[string]int{}
		for i, p := range f.params[d] {
			if n, ok := paramName(p); ok {
				params[n] = i
			}
		}
		for name := range at.names[d] {
			ok := true
			if i, isParam := params[name]; isParam && at.byParams {
				continue // what a call passes is the call's
			} else if isParam && len(f.sites[d]) > 0 {
				for _, s := range f.sites[d] {
					ok = ok && at.passes(s, d, i, name)
				}
			} else if !isParam {
				for _, x := range f.vals[d][name] {
					ok = ok && x != nil && at.derived(d, x)
				}
			}
			if !ok {
				delete(at.names[d], name)
				changed = true
			}
		}
		if at.pure[d] {
			for _, x := range f.returns[d] {
				if !at.derived(d, x) {
					at.pure[d] = false
					changed = true
					break
				}
			}
		}
	}
	return changed
}

// passes reports whether call site s passes an argument-derived value for
// callee's i-th parameter, named name: in its place, by keyword, or by the
// parameter's default.
func (at *argTaint) passes(s callSite, callee *fn, i int, name string) bool {
	positional := 0
	for _, a := range s.call.Args {
		switch a := a.(type) {
		case *syntax.BinaryExpr:
			if a.Op == syntax.EQ {
				if id, ok := a.X.(*syntax.Ident); ok && id.Name == name {
					return at.derived(s.caller, a.Y)
				}
				continue
			}
		case *syntax.UnaryExpr:
			if a.Op == syntax.STAR || a.Op == syntax.STARSTAR {
				return false // spread: its place is unknown
			}
		}
		if positional == i {
			return at.derived(s.caller, a)
		}
		positional++
	}
	if b, ok := callee.def.Params[i].(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
		return at.expr(callee.file, nil, b.Y, 0) // the default
	}
	return false
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
	file, x := at.ix.constExpr(file, name)
	return x != nil && depth < 8 && at.expr(file, nil, x, depth+1)
}

// constExpr is the value a top-level constant is bound to, and the file it
// is bound in, following load aliases through lib files (bounded); nil when
// name is no constant.
func (ix *funcIndex) constExpr(file, name string) (string, syntax.Expr) {
	for range 8 {
		if x, ok := ix.consts[file][name]; ok {
			return file, x
		}
		a, ok := ix.aliases[file][name]
		if !ok {
			return "", nil
		}
		file, name = a[0], a[1]
	}
	return "", nil
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
		if derived, local := names[x.Name]; local {
			return derived // false: a comprehension's variable of the world
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
	case *syntax.Comprehension:
		// Its variables are its own: each is derived when what its
		// clause walks is, in the scope the clauses before it make.
		inner := maps.Clone(names)
		if inner == nil {
			inner = map[string]bool{}
		}
		for _, c := range x.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				ok := at.expr(file, inner, c.X, depth)
				for _, n := range boundNames(c.Vars) {
					inner[n] = ok
				}
			case *syntax.IfClause:
				if !at.expr(file, inner, c.Cond, depth) {
					return false
				}
			}
		}
		if kv, ok := x.Body.(*syntax.DictEntry); ok {
			return at.expr(file, inner, kv.Key, depth) && at.expr(file, inner, kv.Value, depth)
		}
		return at.expr(file, inner, x.Body, depth)
	case *syntax.DictExpr:
		for _, e := range x.List {
			if kv, ok := e.(*syntax.DictEntry); !ok || !derived(kv.Key) || !derived(kv.Value) {
				return false
			}
		}
		return true
	case *syntax.CallExpr:
		if id, ok := x.Fn.(*syntax.Ident); ok {
			if callee := at.ix.lookup(file, id.Name); callee != nil {
				// Every parameter a pure function's returns read is passed
				// derived values at every call (prune sees to it); one they
				// do not read (the db a date check asks) does not matter.
				if !at.byParams && at.pure[callee] {
					return true
				}
				// A function of its parameters alone, called on derived
				// values: money(args["amount"]).
				return at.ofParams[callee] && allDerived(callArgs(x))
			}
		}
		if !allDerived(callArgs(x)) {
			return false
		}
		switch f := x.Fn.(type) {
		case *syntax.Ident:
			return pureBuiltins[f.Name]
		case *syntax.DotExpr:
			// A read that names no table answers from its parameters,
			// which the loop above found derived.
			if (f.Name.Name == "one" || f.Name.Name == "query") && len(x.Args) > 0 {
				if text, ok := at.sqlText(file, x.Args[0], depth); ok && pureSQL(text) {
					return true
				}
			}
			if at.byParams && (f.Name.Name == "one" || f.Name.Name == "query" || f.Name.Name == "execute") {
				return false // a parameter may be the database
			}
			// A method of an argument-derived value (a string's strip, a
			// dict's get): its result is the value's own.
			return derived(f.X)
		}
	}
	return false
}

// callArgs are the values a call passes (of key=value, the value).
func callArgs(x *syntax.CallExpr) []syntax.Expr {
	out := make([]syntax.Expr, 0, len(x.Args))
	for _, a := range x.Args {
		if kw, ok := a.(*syntax.BinaryExpr); ok && kw.Op == syntax.EQ {
			a = kw.Y // key=value: the value counts
		}
		out = append(out, a)
	}
	return out
}

// argumentCheck reports whether the last condition on path (the branch's
// own) is argument-derived in d, and so is every condition under which d
// returned before it: a check of an optional argument made only once the
// world has not returned early (no guardian named, for a patient who is a
// minor) is the world's rule, not a malformed call.
func (at *argTaint) argumentCheck(d *fn, path, returned []cond) bool {
	if len(path) == 0 || !at.derived(d, path[len(path)-1].x) {
		return false
	}
	for _, c := range returned {
		if !at.derived(d, c.x) {
			return false
		}
	}
	return true
}
