package script

import (
	"fmt"
	"strconv"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/suitegen/suitegen/pkg/contract"
)

// A refusal branch whose condition compares a number the call gave with
// one the handler worked out (paid != total_price, abs(amount - total) >
// 0.005) refuses every call but the one that gives the computed number, a
// number no column holds. The comparison is found in the tree: an operand
// built from the call's arguments alone (argTaint) against one that is not,
// as the two sides of a comparison or a subtraction in the branch's
// condition. Compiled, such an operation is a call of _sg_want, which does
// it and notes both sides; a refusal from the branch then carries them
// (Refusal.Want), so whoever filled the call can send the wanted number.

// fnWant is the checked builtin a noted operation becomes:
// _sg_want(op, x, y, site, argSide).
const fnWant = "_sg_want"

// Want is, for a refusal whose branch compared a number of the call's with
// one the handler computed, the two numbers as the branch last compared
// them: Arg is the call's side (an argument, or a sum of them), Value the
// handler's. Each is an int64 or a float64.
type Want struct {
	Arg   any `json:"arg"`
	Value any `json:"value"`
}

// wantOps are the operations to note: by the operator's place
// (file:line:col), which side is the call's (0 for x, 1 for y); and by
// branch (file:line), the places in its condition.
type wantOps struct {
	side     map[string]int
	byBranch map[string][]string
}

func posKey(p syntax.Position) string {
	return p.Filename() + ":" + strconv.Itoa(int(p.Line)) + ":" + strconv.Itoa(int(p.Col))
}

// wantSites finds, in every refusal branch a handler reaches, the
// comparisons and subtractions of a call's number with a computed one.
func wantSites(c *contract.Contract) wantOps {
	w := wantOps{side: map[string]int{}, byBranch: map[string][]string{}}
	files, err := handlerFiles(c)
	if err != nil {
		return w // a file that does not parse is reported by Compile
	}
	ix := newFuncIndex(files)
	at := ix.taint()
	seen := map[*fn]bool{}
	for i := range c.Tools {
		handle := ix.lookup(HandlerPath(&c.Tools[i]), "handle")
		if handle == nil {
			continue
		}
		for _, d := range ix.reach(handle) {
			if !seen[d] {
				seen[d] = true
				at.noteWants(d, &w)
			}
		}
	}
	return w
}

// noteWants adds the noted operations of d's refusal branches.
func (at *argTaint) noteWants(d *fn, w *wantOps) {
	ix := at.ix
	walkLocal(d.def.Body, func(n syntax.Node) {
		s, ok := n.(*syntax.IfStmt)
		if !ok {
			return
		}
		var branches []string
		if st, _ := ix.armRefuses(d.file, s.True); st != nil {
			branches = append(branches, d.file+":"+strconv.Itoa(int(s.If.Line)))
		}
		if !isElif(s) {
			if st, _ := ix.armRefuses(d.file, s.False); st != nil {
				branches = append(branches, d.file+":"+strconv.Itoa(int(s.ElsePos.Line)))
			}
		}
		if len(branches) == 0 {
			return
		}
		syntax.Walk(s.Cond, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.LambdaExpr, *syntax.Comprehension:
				return false // their names are not the function's
			case *syntax.BinaryExpr:
				if !noted[n.Op] {
					return true
				}
				side := -1
				switch {
				case at.callSide(d, n.X) && !at.derived(d, n.Y):
					side = 0
				case at.callSide(d, n.Y) && !at.derived(d, n.X):
					side = 1
				}
				if side >= 0 {
					k := posKey(n.OpPos)
					w.side[k] = side
					for _, b := range branches {
						w.byBranch[b] = append(w.byBranch[b], k)
					}
				}
			}
			return true
		})
	})
}

// noted are the operators whose two sides are noted: an equality, and a
// difference (compared in turn with a tolerance). An order (quantity >
// stock) wants no one number: any on the right side goes, and a value the
// caller asks for beyond it is a refusal cases test.
var noted = map[syntax.Token]bool{syntax.EQL: true, syntax.NEQ: true, syntax.MINUS: true}

// callSide reports whether x is built from the call's arguments alone and
// names at least one of them (a literal is no side of the call's).
func (at *argTaint) callSide(d *fn, x syntax.Expr) bool {
	if !at.derived(d, x) {
		return false
	}
	names := at.names[d]
	found := false
	syntax.Walk(x, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok && names[id.Name] {
			found = true
		}
		return !found
	})
	return found
}

// wantCall is what the rewrite puts in place of a noted operation.
func wantCall(e *syntax.BinaryExpr, side int) *syntax.CallExpr {
	site := strLiteral(posKey(e.OpPos), e.OpPos)
	sideLit := &syntax.Literal{Token: syntax.INT, TokenPos: e.OpPos, Raw: strconv.Itoa(side), Value: int64(side)}
	return call(fnWant, e.OpPos, opLiteral(e.Op, e.OpPos), e.X, e.Y, site, sideLit)
}

// builtinWant does a noted operation and, where both sides are numbers,
// notes them for the call's refusal.
func builtinWant(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 5 || len(kwargs) != 0 {
		return nil, fmt.Errorf("internal: %s wants 5 arguments", b.Name())
	}
	op, err := opOf(args[0])
	if err != nil {
		return nil, err
	}
	x, y := args[1], args[2]
	site, _ := starlark.AsString(args[3])
	side, _ := starlark.AsInt32(args[4])
	if st := stateOf(th); st != nil {
		mine, theirs := x, y
		if side == 1 {
			mine, theirs = y, x
		}
		a, aok := number(mine)
		v, vok := number(theirs)
		if aok && vok {
			if st.wants == nil {
				st.wants = map[string]Want{}
			}
			st.wants[site] = Want{Arg: a, Value: v}
		}
	}
	if op == syntax.MINUS {
		return builtinBin(th, b, starlark.Tuple{args[0], x, y}, nil)
	}
	ok, err := starlark.Compare(op, x, y)
	if err != nil {
		return nil, err
	}
	return starlark.Bool(ok), nil
}

// number is a Starlark number as an int64 or float64.
func number(v starlark.Value) (any, bool) {
	switch v := v.(type) {
	case starlark.Int:
		if n, ok := v.Int64(); ok {
			return n, true
		}
	case starlark.Float:
		return float64(v), true
	}
	return nil, false
}

// wantOf is what a refusal from branch carries: the last noted operation of
// its condition whose sides differ (the one that decided), else the last.
func (p *Programs) wantOf(st *callState, branch string) *Want {
	var out *Want
	for _, k := range p.wants.byBranch[branch] {
		if w, ok := st.wants[k]; ok {
			if out == nil || fmt.Sprint(w.Arg) != fmt.Sprint(w.Value) {
				out = &w
			}
		}
	}
	return out
}
