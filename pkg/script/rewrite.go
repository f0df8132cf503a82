package script

import (
	"fmt"
	"strconv"

	"go.starlark.net/syntax"
)

// The rewrite turns every operation that can allocate more than a constant
// per step into a call of a checked builtin, so the allocation budget is
// charged before the memory is taken:
//
//	x + y, x * y, x % y, x | y,
//	x & y, x ^ y, x - y, x << y  -> _sg_bin(op, x, y)
//	v op= y                      -> v = _sg_aug(op, v, y)   (lists and dicts still update in place)
//	a[i] op= y                   -> _sg_augindex(op, a, i, y)
//	x.name(args...)              -> _sg_method(x, "name", args...)
//	x.name (not called)          -> _sg_attr(x, "name")     (a method value that charges when called)
//	x[lo:hi:step]                -> _sg_slice(x, lo, hi, step)
//
// Assignment targets keep their shape; only the expressions inside them (an
// index, the object an index applies to) are rewritten. Builtins that are
// values (list, sorted, getattr, json.decode...) are replaced in the
// predeclared names by charging versions, so taking them as values changes
// nothing.
const (
	fnBin      = "_sg_bin"
	fnAug      = "_sg_aug"
	fnAugIndex = "_sg_augindex"
	fnMethod   = "_sg_method"
	fnAttr     = "_sg_attr"
	fnSlice    = "_sg_slice"
	// {...} and {k: v for ...} -> _sg_dict({...}): an empty dict takes a
	// hash table bucket, far more than other one-step values.
	fnDictLiteral = "_sg_dict"
)

// chargedOps are the binary operators whose result can be larger than a
// constant: everything but comparisons, division and the logical operators.
var chargedOps = map[syntax.Token]bool{
	syntax.PLUS: true, syntax.STAR: true, syntax.PERCENT: true, syntax.PIPE: true,
	syntax.AMP: true, syntax.CIRCUMFLEX: true, syntax.MINUS: true, syntax.LTLT: true,
}

// augOps maps an augmented assignment to its binary operator.
var augOps = map[syntax.Token]syntax.Token{
	syntax.PLUS_EQ: syntax.PLUS, syntax.MINUS_EQ: syntax.MINUS, syntax.STAR_EQ: syntax.STAR,
	syntax.SLASH_EQ: syntax.SLASH, syntax.SLASHSLASH_EQ: syntax.SLASHSLASH, syntax.PERCENT_EQ: syntax.PERCENT,
	syntax.AMP_EQ: syntax.AMP, syntax.PIPE_EQ: syntax.PIPE, syntax.CIRCUMFLEX_EQ: syntax.CIRCUMFLEX,
	syntax.LTLT_EQ: syntax.LTLT, syntax.GTGT_EQ: syntax.GTGT,
}

// want holds the operations to note (want.go): by operator place, the
// call's side.
func rewrite(f *syntax.File, want map[string]int) error {
	r := &rewriter{want: want}
	f.Stmts = r.stmts(f.Stmts)
	return r.err
}

type rewriter struct {
	err  error
	want map[string]int
}

func (r *rewriter) fail(pos syntax.Position, format string, args ...any) {
	if r.err == nil {
		r.err = syntax.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
	}
}

func (r *rewriter) stmts(ss []syntax.Stmt) []syntax.Stmt {
	for i, s := range ss {
		ss[i] = r.stmt(s)
	}
	return ss
}

func (r *rewriter) stmt(s syntax.Stmt) syntax.Stmt {
	switch s := s.(type) {
	case *syntax.ExprStmt:
		s.X = r.expr(s.X)
	case *syntax.AssignStmt:
		return r.assign(s)
	case *syntax.DefStmt:
		s.Params = r.params(s.Params)
		s.Body = r.stmts(s.Body)
	case *syntax.ForStmt:
		s.Vars = r.target(s.Vars)
		s.X = r.expr(s.X)
		s.Body = r.stmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = r.expr(s.Cond)
		s.Body = r.stmts(s.Body)
	case *syntax.IfStmt:
		s.Cond = r.expr(s.Cond)
		s.True = r.stmts(s.True)
		s.False = r.stmts(s.False)
	case *syntax.ReturnStmt:
		if s.Result != nil {
			s.Result = r.expr(s.Result)
		}
	case *syntax.LoadStmt, *syntax.BranchStmt:
	}
	return s
}

// target rewrites the expressions inside an assignment target but keeps the
// target itself assignable.
func (r *rewriter) target(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.Ident:
	case *syntax.ParenExpr:
		e.X = r.target(e.X)
	case *syntax.TupleExpr:
		for i, x := range e.List {
			e.List[i] = r.target(x)
		}
	case *syntax.ListExpr:
		for i, x := range e.List {
			e.List[i] = r.target(x)
		}
	case *syntax.IndexExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
	case *syntax.DotExpr:
		e.X = r.expr(e.X)
	default:
		// Not a valid target: the resolver reports it.
		return r.expr(e)
	}
	return e
}

func (r *rewriter) assign(s *syntax.AssignStmt) syntax.Stmt {
	s.RHS = r.expr(s.RHS)
	if s.Op == syntax.EQ {
		s.LHS = r.target(s.LHS)
		return s
	}
	op, ok := augOps[s.Op]
	if !ok {
		r.fail(s.OpPos, "unsupported assignment %s", s.Op)
		return s
	}
	switch lhs := s.LHS.(type) {
	case *syntax.Ident:
		if op != syntax.STAR && op != syntax.LTLT && isNumberLiteral(s.RHS) {
			return s // n += 1 cannot grow anything
		}
		s.RHS = call(fnAug, s.OpPos, opLiteral(op, s.OpPos), ident(lhs), s.RHS)
		s.Op = syntax.EQ
		return s
	case *syntax.IndexExpr:
		x, y := r.expr(lhs.X), r.expr(lhs.Y)
		return &syntax.ExprStmt{X: call(fnAugIndex, s.OpPos, opLiteral(op, s.OpPos), x, y, s.RHS)}
	}
	r.fail(s.OpPos, "%s is only supported on a variable or an element (x[i] %s y)", s.Op, s.Op)
	return s
}

func (r *rewriter) params(ps []syntax.Expr) []syntax.Expr {
	for _, p := range ps {
		if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			b.Y = r.expr(b.Y)
		}
	}
	return ps
}

func (r *rewriter) exprs(es []syntax.Expr) []syntax.Expr {
	for i, e := range es {
		es[i] = r.expr(e)
	}
	return es
}

// args rewrites call arguments, where name=value is a BinaryExpr with Op EQ.
func (r *rewriter) args(es []syntax.Expr) []syntax.Expr {
	for i, e := range es {
		if b, ok := e.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			b.Y = r.expr(b.Y)
			continue
		}
		es[i] = r.expr(e)
	}
	return es
}

func (r *rewriter) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case nil:
		return nil
	case *syntax.Ident, *syntax.Literal:
		return e
	case *syntax.ParenExpr:
		e.X = r.expr(e.X)
	case *syntax.CallExpr:
		e.Args = r.args(e.Args)
		if dot, ok := e.Fn.(*syntax.DotExpr); ok {
			recv := r.expr(dot.X)
			args := append([]syntax.Expr{recv, strLiteral(dot.Name.Name, dot.NamePos)}, e.Args...)
			return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: dot.NamePos, Name: fnMethod}, Lparen: e.Lparen, Args: args, Rparen: e.Rparen}
		}
		e.Fn = r.expr(e.Fn)
	case *syntax.DotExpr:
		return call(fnAttr, e.NamePos, r.expr(e.X), strLiteral(e.Name.Name, e.NamePos))
	case *syntax.Comprehension:
		e.Body = r.expr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.Vars = r.target(c.Vars)
				c.X = r.expr(c.X)
			case *syntax.IfClause:
				c.Cond = r.expr(c.Cond)
			}
		}
		if e.Curly {
			return call(fnDictLiteral, e.Lbrack, e)
		}
	case *syntax.DictExpr:
		for _, it := range e.List {
			if de, ok := it.(*syntax.DictEntry); ok {
				de.Key = r.expr(de.Key)
				de.Value = r.expr(de.Value)
			}
		}
		return call(fnDictLiteral, e.Lbrace, e)
	case *syntax.DictEntry:
		e.Key = r.expr(e.Key)
		e.Value = r.expr(e.Value)
	case *syntax.LambdaExpr:
		e.Params = r.params(e.Params)
		e.Body = r.expr(e.Body)
	case *syntax.ListExpr:
		e.List = r.exprs(e.List)
	case *syntax.TupleExpr:
		e.List = r.exprs(e.List)
	case *syntax.CondExpr:
		e.Cond = r.expr(e.Cond)
		e.True = r.expr(e.True)
		e.False = r.expr(e.False)
	case *syntax.UnaryExpr:
		e.X = r.expr(e.X)
	case *syntax.SliceExpr:
		none := func(x syntax.Expr) syntax.Expr {
			if x == nil {
				return &syntax.Ident{NamePos: e.Lbrack, Name: "None"}
			}
			return r.expr(x)
		}
		return call(fnSlice, e.Lbrack, r.expr(e.X), none(e.Lo), none(e.Hi), none(e.Step))
	case *syntax.IndexExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
	case *syntax.BinaryExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
		if side, ok := r.want[posKey(e.OpPos)]; ok {
			return wantCall(e, side)
		}
		if !chargedOps[e.Op] {
			return e
		}
		if e.Op != syntax.STAR && e.Op != syntax.LTLT && (isNumberLiteral(e.X) || isNumberLiteral(e.Y)) {
			return e // n + 1, n % 7, n - 1 cannot grow anything
		}
		return call(fnBin, e.OpPos, opLiteral(e.Op, e.OpPos), e.X, e.Y)
	}
	return e
}

func isNumberLiteral(e syntax.Expr) bool {
	l, ok := e.(*syntax.Literal)
	return ok && (l.Token == syntax.INT || l.Token == syntax.FLOAT)
}

func call(fn string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: pos, Name: fn}, Lparen: pos, Args: args, Rparen: pos}
}

func ident(id *syntax.Ident) *syntax.Ident {
	return &syntax.Ident{NamePos: id.NamePos, Name: id.Name}
}

func opLiteral(op syntax.Token, pos syntax.Position) *syntax.Literal {
	return &syntax.Literal{Token: syntax.INT, TokenPos: pos, Raw: strconv.Itoa(int(op)), Value: int64(op)}
}

func strLiteral(s string, pos syntax.Position) *syntax.Literal {
	return &syntax.Literal{Token: syntax.STRING, TokenPos: pos, Raw: strconv.Quote(s), Value: s}
}
