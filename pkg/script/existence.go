package script

import (
	"go.starlark.net/syntax"
)

// Classes of refusal branch (Branch.Class).
const (
	// ClassRule is a branch whose condition is a rule of the world: the
	// case's records can make it true (an order's status, an amount, an
	// argument's value).
	ClassRule = "rule"
	// ClassExistence is an existence guard: the branch is reached only when
	// a value read from the database (db.one or db.query, directly, through
	// a local variable or through a function that returns one) is None or
	// empty — a read that found no row, as when the record an argument
	// names does not exist.
	ClassExistence = "existence-guard"
)

// The classification works on the syntax tree alone. A read is a value
// that is None or empty only when the database had no row for it: a call of
// the db's one or query (no other value of the language has those
// methods), a call of a contract function that returns one (returnsRead),
// or a local variable every assignment of which is a read. A branch is an
// existence guard when the conditions that lead to its arm (its own, the
// earlier ones of its elif chain and those of the ifs around it) include
// one that, taking the value the arm needs, implies a read is None or empty.

// cond is one condition on the way to an arm: x must evaluate to truth.
type cond struct {
	x     syntax.Expr
	truth bool
}

// classOf is the class of a branch reached under path, in function d,
// once the function has not returned under any of returned.
func (ix *funcIndex) classOf(d *fn, path, returned []cond) string {
	if len(path) == 0 {
		return ClassRule
	}
	if (emptiness{ix: ix, file: d.file, vars: ix.readVars(d)}).any(path) {
		return ClassExistence
	}
	if ix.taint().argumentCheck(d, path, returned) {
		return ClassArgument
	}
	return ClassRule
}

// emptiness decides what a condition's value implies about reads.
type emptiness struct {
	ix   *funcIndex
	file string
	vars map[string]bool
}

// when: the condition x evaluating to truth implies some read is None or
// empty.
func (e emptiness) when(x syntax.Expr, truth bool) bool {
	x = unparen(x)
	switch x := x.(type) {
	case *syntax.UnaryExpr:
		if x.Op == syntax.NOT && x.X != nil {
			return e.when(x.X, !truth)
		}
	case *syntax.BinaryExpr:
		switch x.Op {
		case syntax.AND:
			if truth { // both hold: either implying it is enough
				return e.when(x.X, true) || e.when(x.Y, true)
			}
			return e.when(x.X, false) && e.when(x.Y, false)
		case syntax.OR:
			if truth {
				return e.when(x.X, true) && e.when(x.Y, true)
			}
			return e.when(x.X, false) || e.when(x.Y, false)
		case syntax.EQL, syntax.NEQ, syntax.LT, syntax.LE, syntax.GT, syntax.GE:
			return e.compare(x.Op, x.X, x.Y, truth) || e.compare(flip(x.Op), x.Y, x.X, truth)
		}
	}
	// A value's truth: a read, or the length of one, is falsy only when
	// empty (a row is never an empty dict).
	return !truth && (e.read(x) || e.lenOfRead(x) != nil)
}

// compare: l op r evaluating to truth implies some read is None or empty,
// where l is the read (or its length) and r what it is compared with.
func (e emptiness) compare(op syntax.Token, l, r syntax.Expr, truth bool) bool {
	if e.read(l) && isEmptyValue(r) {
		// read == None: true means empty; read != None: false does.
		return (op == syntax.EQL && truth) || (op == syntax.NEQ && !truth)
	}
	if e.lenOfRead(l) == nil {
		return false
	}
	k, ok := intLiteral(r)
	if !ok || k < -1 || k > 2 { // no other bound separates empty from not
		return false
	}
	// The lengths for which the comparison takes the value truth: 0 alone.
	zero := false
	for n := int64(0); n <= max(k, 0)+2; n++ {
		if cmpInt(op, n, k) == truth {
			if n > 0 {
				return false
			}
			zero = true
		}
	}
	return zero
}

// read: x is a read of the database.
func (e emptiness) read(x syntax.Expr) bool {
	return e.ix.isRead(e.file, e.vars, x)
}

// lenOfRead is the read whose length x is (len(read)), or nil.
func (e emptiness) lenOfRead(x syntax.Expr) syntax.Expr {
	call, ok := unparen(x).(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 {
		return nil
	}
	id, ok := call.Fn.(*syntax.Ident)
	if !ok || id.Name != "len" || e.ix.lookup(e.file, "len") != nil {
		return nil
	}
	if e.read(call.Args[0]) {
		return call.Args[0]
	}
	return nil
}

// isRead: x is a read, given the function's read variables.
func (ix *funcIndex) isRead(file string, vars map[string]bool, x syntax.Expr) bool {
	switch x := unparen(x).(type) {
	case *syntax.Ident:
		return vars[x.Name]
	case *syntax.CallExpr:
		switch f := x.Fn.(type) {
		case *syntax.DotExpr:
			return f.Name != nil && (f.Name.Name == "one" || f.Name.Name == "query")
		case *syntax.Ident:
			d := ix.lookup(file, f.Name)
			return d != nil && ix.reads[d]
		}
	}
	return false
}

// readVars are the local variables of d every assignment of which is a
// read (a parameter never is: its value is the caller's).
func (ix *funcIndex) readVars(d *fn) map[string]bool {
	if v, ok := ix.vars[d]; ok {
		return v
	}
	v := ix.readVarsNow(d)
	if ix.settled {
		ix.vars[d] = v
	}
	return v
}

func (ix *funcIndex) readVarsNow(d *fn) map[string]bool {
	rhs, other := assignments(d)
	vars := map[string]bool{}
	// Least fixpoint: a variable assigned from another read variable is one
	// once that one is.
	for changed := true; changed; {
		changed = false
		for name, xs := range rhs {
			if vars[name] || other[name] {
				continue
			}
			all := true
			for _, x := range xs {
				if !ix.isRead(d.file, vars, x) {
					all = false
					break
				}
			}
			if all {
				vars[name] = true
				changed = true
			}
		}
	}
	return vars
}

// solidVars are the local variables of d every assignment of which is a
// literal that is never empty (a document built up and returned).
func solidVars(d *fn) map[string]bool {
	rhs, other := assignments(d)
	vars := map[string]bool{}
	for name, xs := range rhs {
		all := !other[name]
		for _, x := range xs {
			all = all && neverEmpty(x)
		}
		vars[name] = all
	}
	return vars
}

// assignments are the values assigned by = to each plain local name of d,
// and the names bound any other way (parameters, loops, unpacking,
// augmented assignment), whose values are not known.
func assignments(d *fn) (rhs map[string][]syntax.Expr, other map[string]bool) {
	rhs, other = map[string][]syntax.Expr{}, map[string]bool{}
	for _, p := range d.def.Params {
		for _, n := range boundNames(p) {
			other[n] = true
		}
	}
	walkLocal(d.def.Body, func(s syntax.Node) {
		switch s := s.(type) {
		case *syntax.AssignStmt:
			if id, ok := s.LHS.(*syntax.Ident); ok && s.Op == syntax.EQ {
				rhs[id.Name] = append(rhs[id.Name], s.RHS)
				return
			}
			for _, n := range boundNames(s.LHS) {
				other[n] = true
			}
		case *syntax.ForStmt:
			for _, n := range boundNames(s.Vars) {
				other[n] = true
			}
		}
	})
	return rhs, other
}

// returnsRead: d's result is None or empty only when a read found
// nothing — every return returns a read, a literal that is never empty, or
// None (or nothing) on a path whose conditions imply a read is empty — and
// its body ends in a return (falling off the end returns None).
func (ix *funcIndex) returnsRead(d *fn) bool {
	body := d.def.Body
	if len(body) == 0 {
		return false
	}
	if _, ok := body[len(body)-1].(*syntax.ReturnStmt); !ok {
		return false
	}
	e := emptiness{ix: ix, file: d.file, vars: ix.readVarsNow(d)}
	solid := solidVars(d)
	all := true
	var walk func(ss []syntax.Stmt, path []cond)
	walk = func(ss []syntax.Stmt, path []cond) {
		for _, s := range ss {
			switch s := s.(type) {
			case *syntax.ReturnStmt:
				switch {
				case s.Result != nil && (e.read(s.Result) || neverEmpty(s.Result) || isVar(s.Result, solid)):
				case (s.Result == nil || isEmptyValue(s.Result)) && e.any(path):
				default:
					all = false
				}
			case *syntax.IfStmt:
				walk(s.True, with(path, cond{s.Cond, true}))
				walk(s.False, with(path, cond{s.Cond, false}))
			case *syntax.ForStmt:
				walk(s.Body, path)
			case *syntax.WhileStmt:
				walk(s.Body, path)
			}
		}
	}
	walk(body, nil)
	return all
}

// any: some condition of the path implies a read is empty.
func (e emptiness) any(path []cond) bool {
	for _, c := range path {
		if e.when(c.x, c.truth) {
			return true
		}
	}
	return false
}

// with is path and one more condition, path's array left as it was.
func with(path []cond, c cond) []cond {
	return append(path[:len(path):len(path)], c)
}

func isVar(x syntax.Expr, vars map[string]bool) bool {
	id, ok := unparen(x).(*syntax.Ident)
	return ok && vars[id.Name]
}

// neverEmpty: x is a dict or list literal with entries.
func neverEmpty(x syntax.Expr) bool {
	switch x := unparen(x).(type) {
	case *syntax.DictExpr:
		return len(x.List) > 0
	case *syntax.ListExpr:
		return len(x.List) > 0
	}
	return false
}

// walkLocal visits the statements and expressions of a function body,
// leaving out nested functions and lambdas (their names are their own).
func walkLocal(body []syntax.Stmt, visit func(syntax.Node)) {
	for _, s := range body {
		syntax.Walk(s, func(n syntax.Node) bool {
			switch n.(type) {
			case *syntax.DefStmt, *syntax.LambdaExpr:
				return false
			}
			visit(n)
			return true
		})
	}
}

// boundNames are the names a target binds: x, (x, y), [x, y], a parameter
// x, x=default, *x or **x.
func boundNames(x syntax.Expr) []string {
	switch x := x.(type) {
	case *syntax.Ident:
		return []string{x.Name}
	case *syntax.ParenExpr:
		return boundNames(x.X)
	case *syntax.TupleExpr:
		var out []string
		for _, y := range x.List {
			out = append(out, boundNames(y)...)
		}
		return out
	case *syntax.ListExpr:
		var out []string
		for _, y := range x.List {
			out = append(out, boundNames(y)...)
		}
		return out
	case *syntax.BinaryExpr:
		if x.Op == syntax.EQ {
			return boundNames(x.X)
		}
	case *syntax.UnaryExpr:
		if x.X != nil {
			return boundNames(x.X)
		}
	}
	return nil
}

func unparen(x syntax.Expr) syntax.Expr {
	for {
		p, ok := x.(*syntax.ParenExpr)
		if !ok {
			return x
		}
		x = p.X
	}
}

// isEmptyValue: x is None, [], {} or ().
func isEmptyValue(x syntax.Expr) bool {
	switch x := unparen(x).(type) {
	case *syntax.Ident:
		return x.Name == "None"
	case *syntax.ListExpr:
		return len(x.List) == 0
	case *syntax.DictExpr:
		return len(x.List) == 0
	case *syntax.TupleExpr:
		return len(x.List) == 0
	}
	return false
}

func intLiteral(x syntax.Expr) (int64, bool) {
	neg := false
	if u, ok := unparen(x).(*syntax.UnaryExpr); ok && u.Op == syntax.MINUS && u.X != nil {
		neg, x = true, u.X
	}
	l, ok := unparen(x).(*syntax.Literal)
	if !ok || l.Token != syntax.INT {
		return 0, false
	}
	k, ok := l.Value.(int64)
	if neg {
		k = -k
	}
	return k, ok
}

// flip is the operator of the comparison with its sides swapped.
func flip(op syntax.Token) syntax.Token {
	switch op {
	case syntax.LT:
		return syntax.GT
	case syntax.GT:
		return syntax.LT
	case syntax.LE:
		return syntax.GE
	case syntax.GE:
		return syntax.LE
	}
	return op
}

func cmpInt(op syntax.Token, a, b int64) bool {
	switch op {
	case syntax.EQL:
		return a == b
	case syntax.NEQ:
		return a != b
	case syntax.LT:
		return a < b
	case syntax.LE:
		return a <= b
	case syntax.GT:
		return a > b
	case syntax.GE:
		return a >= b
	}
	return false
}
