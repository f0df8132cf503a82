package script

import (
	"fmt"
	"strconv"

	"go.starlark.net/syntax"
)

// The rewrite turns operations that can allocate far more than one element
// per step into calls of checked builtins, so the allocation budget is
// charged before the memory is taken:
//
//	x + y, x * y, x % y          -> _sg_bin(op, x, y)
//	v += y                       -> v = _sg_iadd(v, y)    (lists still extend in place)
//	a[i] += y, a.f += y          -> a[i] += _sg_charge(y)
//	v *= y, v %= y               -> v = _sg_bin(op, v, y)  (other targets are rejected)
//	x.join(...) and friends      -> _sg_method(x, "join", ...)
const (
	fnBin    = "_sg_bin"
	fnIAdd   = "_sg_iadd"
	fnCharge = "_sg_charge"
	fnMethod = "_sg_method"
)

// guardedMethods are the methods that can allocate in proportion to their
// input in a single step.
var guardedMethods = map[string]bool{
	"join": true, "replace": true, "format": true, "split": true, "rsplit": true,
	"splitlines": true, "elems": true, "codepoints": true, "elem_ords": true, "codepoint_ords": true,
	"extend": true, "update": true, "union": true,
}

func rewrite(f *syntax.File) error {
	r := &rewriter{}
	f.Stmts = r.stmts(f.Stmts)
	return r.err
}

type rewriter struct{ err error }

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
		s.Vars = r.expr(s.Vars)
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

func (r *rewriter) assign(s *syntax.AssignStmt) syntax.Stmt {
	s.RHS = r.expr(s.RHS)
	s.LHS = r.expr(s.LHS) // targets themselves are never rewritten; their index expressions are
	id, isIdent := s.LHS.(*syntax.Ident)
	switch s.Op {
	case syntax.EQ:
		return s
	case syntax.PLUS_EQ:
		if isNumberLiteral(s.RHS) {
			return s
		}
		if isIdent {
			s.RHS = call(fnIAdd, s.OpPos, ident(id), s.RHS)
			s.Op = syntax.EQ
		} else {
			s.RHS = call(fnCharge, s.OpPos, s.RHS)
		}
	case syntax.STAR_EQ, syntax.PERCENT_EQ:
		op := syntax.STAR
		if s.Op == syntax.PERCENT_EQ {
			op = syntax.PERCENT
		}
		if !isIdent {
			if r.err == nil {
				r.err = syntax.Error{Pos: s.OpPos, Msg: fmt.Sprintf("%s is only supported on a plain variable; write x = x %s y", s.Op, op)}
			}
			return s
		}
		s.RHS = call(fnBin, s.OpPos, opLiteral(op, s.OpPos), ident(id), s.RHS)
		s.Op = syntax.EQ
	}
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
		if dot, ok := e.Fn.(*syntax.DotExpr); ok && guardedMethods[dot.Name.Name] {
			recv := r.expr(dot.X)
			args := append([]syntax.Expr{recv, strLiteral(dot.Name.Name, dot.NamePos)}, e.Args...)
			return &syntax.CallExpr{Fn: &syntax.Ident{NamePos: dot.NamePos, Name: fnMethod}, Lparen: e.Lparen, Args: args, Rparen: e.Rparen}
		}
		e.Fn = r.expr(e.Fn)
	case *syntax.DotExpr:
		e.X = r.expr(e.X)
	case *syntax.Comprehension:
		e.Body = r.expr(e.Body)
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.Vars = r.expr(c.Vars)
				c.X = r.expr(c.X)
			case *syntax.IfClause:
				c.Cond = r.expr(c.Cond)
			}
		}
	case *syntax.DictExpr:
		for _, it := range e.List {
			if de, ok := it.(*syntax.DictEntry); ok {
				de.Key = r.expr(de.Key)
				de.Value = r.expr(de.Value)
			}
		}
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
		e.X = r.expr(e.X)
		e.Lo = r.expr(e.Lo)
		e.Hi = r.expr(e.Hi)
		e.Step = r.expr(e.Step)
	case *syntax.IndexExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
	case *syntax.BinaryExpr:
		e.X = r.expr(e.X)
		e.Y = r.expr(e.Y)
		switch e.Op {
		case syntax.PLUS:
			if isNumberLiteral(e.X) || isNumberLiteral(e.Y) {
				return e // n + 1 cannot grow anything
			}
		case syntax.STAR, syntax.PERCENT:
		default:
			return e
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
