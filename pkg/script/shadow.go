package script

import (
	"strconv"

	"go.starlark.net/syntax"
)

// A refusal branch is shadowed when a later branch refuses every call it
// does: `if a["status"] == "confirmed": refuse(...)` followed by
// `if a["status"] != "booked": refuse(...)`. With the first branch gone the
// second refuses in its place, so no case of any world can tell the two
// handlers apart: a mutant without the branch is equivalent, and a suite
// is not faulted for missing it. Shadowing is read from the syntax tree and
// proved, never guessed: the later branch's condition must follow from the
// earlier one's by comparisons of the same expression with literals (==,
// !=, in, not in, and, or, not), and every statement between them must
// leave that expression as it was, call nothing and leave the function only
// by refusing. Whatever a database would also forbid (a CHECK that
// makes a paid statement's balance zero) is not proved here; the adequacy
// report names such branches by what refused instead.

// shadowsOf maps the line of each refusal branch of function d that a later
// branch shadows to that branch's line.
func (ix *funcIndex) shadowsOf(d *fn) map[int]int {
	out := map[int]int{}
	var walk func(ss, cont []syntax.Stmt)
	walk = func(ss, cont []syntax.Stmt) {
		for i, s := range ss {
			after := append(append([]syntax.Stmt(nil), ss[i+1:]...), cont...)
			switch s := s.(type) {
			case *syntax.IfStmt:
				if st, _ := ix.armRefuses(d.file, s.True); st != nil {
					// With the branch off, its else (or elif) runs next.
					next := append(append([]syntax.Stmt(nil), s.False...), after...)
					if line := ix.shadower(d.file, s.Cond, next); line > 0 {
						out[int(s.If.Line)] = line
					}
				}
				walk(s.True, after)
				walk(s.False, after)
			case *syntax.ForStmt:
				walk(s.Body, nil) // what runs after a body is the next turn
			case *syntax.WhileStmt:
				walk(s.Body, nil)
			}
		}
	}
	walk(d.def.Body, nil)
	return out
}

// shadower is the line of the first if among next, the statements run
// after a branch whose condition c held is turned off, that refuses
// whenever c holds; 0 when a statement before it may change what c reads
// or leave the function, or none does.
func (ix *funcIndex) shadower(file string, c syntax.Expr, next []syntax.Stmt) int {
	roots := map[string]bool{}
	if !ix.subjects(file, c, roots) {
		return 0
	}
	for _, s := range next {
		if s, ok := s.(*syntax.IfStmt); ok && ix.implies(file, c, s.Cond) && ix.refusesAtOnce(file, s.True, roots) {
			return int(s.If.Line)
		}
		if !keeps(s, roots) {
			return 0
		}
	}
	return 0
}

// refusesAtOnce reports whether an arm refuses before it can leave or
// change what the roots name.
func (ix *funcIndex) refusesAtOnce(file string, arm []syntax.Stmt, roots map[string]bool) bool {
	for _, s := range arm {
		if ix.refusingCall(file, s) != nil {
			return true
		}
		if !keeps(s, roots) {
			return false
		}
	}
	return false
}

// subjects adds to roots the variables the comparisons of c read, and
// reports whether c is made of comparisons implies understands.
func (ix *funcIndex) subjects(file string, c syntax.Expr, roots map[string]bool) bool {
	switch x := unparen(c).(type) {
	case *syntax.BinaryExpr:
		switch x.Op {
		case syntax.AND, syntax.OR:
			return ix.subjects(file, x.X, roots) && ix.subjects(file, x.Y, roots)
		}
		e, _, _, ok := ix.comparison(file, x)
		if !ok {
			return false
		}
		roots[rootName(e)] = true
		return true
	case *syntax.UnaryExpr:
		return x.Op == syntax.NOT && ix.subjects(file, x.X, roots)
	}
	return false
}

// implies reports whether d is true whenever c is.
func (ix *funcIndex) implies(file string, c, d syntax.Expr) bool {
	c, d = unparen(c), unparen(d)
	if b, ok := c.(*syntax.BinaryExpr); ok && b.Op == syntax.AND {
		return ix.implies(file, b.X, d) || ix.implies(file, b.Y, d)
	}
	if b, ok := d.(*syntax.BinaryExpr); ok && b.Op == syntax.OR {
		return ix.implies(file, c, b.X) || ix.implies(file, c, b.Y)
	}
	if b, ok := d.(*syntax.BinaryExpr); ok && b.Op == syntax.AND {
		return ix.implies(file, c, b.X) && ix.implies(file, c, b.Y)
	}
	ce, cv, cin, ok := ix.values(file, c)
	if !ok || !cin {
		return false // c must pin its expression to some of a few values
	}
	de, dv, din, ok := ix.values(file, d)
	if !ok || exprKey(ce) != exprKey(de) {
		return false
	}
	for v := range cv {
		if dv[v] != din {
			return false // a value c allows for which d is false
		}
	}
	return true
}

// values reads a condition as "e is (in) one of vals" (in true) or "e is
// none of vals" (in false).
func (ix *funcIndex) values(file string, x syntax.Expr) (e syntax.Expr, vals map[string]bool, in bool, ok bool) {
	x = unparen(x)
	if u, isNot := x.(*syntax.UnaryExpr); isNot && u.Op == syntax.NOT {
		e, vals, in, ok = ix.values(file, u.X)
		return e, vals, !in, ok
	}
	b, isBin := x.(*syntax.BinaryExpr)
	if !isBin {
		return nil, nil, false, false
	}
	e, vals, in, ok = ix.comparison(file, b)
	return
}

// comparison reads e == lit, lit == e, e != lit, e in LIST, e not in LIST,
// where e is a variable, a field or an index by a literal, and LIST a list
// or tuple of literals, or a constant bound to one.
func (ix *funcIndex) comparison(file string, b *syntax.BinaryExpr) (syntax.Expr, map[string]bool, bool, bool) {
	x, y := unparen(b.X), unparen(b.Y)
	switch b.Op {
	case syntax.EQL, syntax.NEQ:
		if _, ok := literalKey(x); ok {
			x, y = y, x
		}
		v, ok := literalKey(y)
		if !ok || !subject(x) {
			return nil, nil, false, false
		}
		return x, map[string]bool{v: true}, b.Op == syntax.EQL, true
	case syntax.IN, syntax.NOT_IN:
		if !subject(x) {
			return nil, nil, false, false
		}
		vals, ok := ix.literalSet(file, y)
		if !ok {
			return nil, nil, false, false
		}
		return x, vals, b.Op == syntax.IN, true
	}
	return nil, nil, false, false
}

// literalSet is the set of a list or tuple of literals, or of a top-level
// constant bound to one.
func (ix *funcIndex) literalSet(file string, x syntax.Expr) (map[string]bool, bool) {
	if id, ok := x.(*syntax.Ident); ok {
		if _, cx := ix.constExpr(file, id.Name); cx != nil {
			x = cx
		}
	}
	var elems []syntax.Expr
	switch l := unparen(x).(type) {
	case *syntax.ListExpr:
		elems = l.List
	case *syntax.TupleExpr:
		elems = l.List
	default:
		return nil, false
	}
	out := map[string]bool{}
	for _, el := range elems {
		v, ok := literalKey(unparen(el))
		if !ok {
			return nil, false
		}
		out[v] = true
	}
	return out, true
}

// literalKey is a literal's value as a key: strings and numbers by value
// and type, None, True and False by name.
func literalKey(x syntax.Expr) (string, bool) {
	switch l := x.(type) {
	case *syntax.Literal:
		switch v := l.Value.(type) {
		case string:
			return "s" + strconv.Quote(v), true
		case int64:
			return "n" + strconv.FormatInt(v, 10), true
		}
	case *syntax.Ident:
		switch l.Name {
		case "None", "True", "False":
			return l.Name, true
		}
	}
	return "", false
}

// subject reports an expression a comparison may pin: a variable, or a
// field or literal index of one, with no call that could differ between
// two readings.
func subject(x syntax.Expr) bool {
	switch x := unparen(x).(type) {
	case *syntax.Ident:
		_, lit := literalKey(x)
		return !lit
	case *syntax.DotExpr:
		return subject(x.X)
	case *syntax.IndexExpr:
		_, lit := literalKey(unparen(x.Y))
		return lit && subject(x.X)
	}
	return false
}

// rootName is the variable a subject reads.
func rootName(x syntax.Expr) string {
	switch x := unparen(x).(type) {
	case *syntax.Ident:
		return x.Name
	case *syntax.DotExpr:
		return rootName(x.X)
	case *syntax.IndexExpr:
		return rootName(x.X)
	}
	return ""
}

// exprKey is a subject written out, to compare two of them.
func exprKey(x syntax.Expr) string {
	switch x := unparen(x).(type) {
	case *syntax.Ident:
		return x.Name
	case *syntax.DotExpr:
		return exprKey(x.X) + "." + x.Name.Name
	case *syntax.IndexExpr:
		k, _ := literalKey(unparen(x.Y))
		return exprKey(x.X) + "[" + k + "]"
	}
	return ""
}

// keeps reports whether statement s cannot leave the function other than
// by refusing and cannot change a value the roots name: no return, break
// or continue, no assignment to a root, and no call but refuse's (a call
// could change a root in place, or fail where the later branch would have
// refused).
func keeps(s syntax.Stmt, roots map[string]bool) bool {
	ok := true
	syntax.Walk(s, func(n syntax.Node) bool {
		if !ok {
			return false
		}
		switch n := n.(type) {
		case *syntax.ReturnStmt, *syntax.DefStmt, *syntax.LambdaExpr:
			ok = false
		case *syntax.BranchStmt:
			ok = n.Token == syntax.PASS
		case *syntax.AssignStmt:
			for _, name := range boundNames(n.LHS) {
				ok = ok && !roots[name]
			}
			ok = ok && !roots[rootName(n.LHS)]
		case *syntax.ForStmt:
			for _, name := range boundNames(n.Vars) {
				ok = ok && !roots[name]
			}
		case *syntax.CallExpr:
			id, isID := unparen(n.Fn).(*syntax.Ident)
			ok = isID && id.Name == "refuse"
		}
		return ok
	})
	return ok
}
