package script

import (
	"context"
	"strconv"
	"sync"

	"go.starlark.net/syntax"

	"github.com/suitegen/suitegen/pkg/contract"
)

// Edit changes a file's syntax tree after it is parsed and before it is
// compiled: a mutant of the contract, with every position kept.
type Edit func(file string, f *syntax.File)

// CompileEdited is Compile with edit applied to every file it compiles.
func CompileEdited(c *contract.Contract, opts Options, edit Edit) (*Programs, error) {
	return compileWith(c, opts, edit)
}

// BranchOff is the Edit under which branch b never refuses: its condition
// reads False (True for an else arm), so the code after the if runs on.
func BranchOff(b Branch) Edit {
	return func(file string, f *syntax.File) {
		if file != b.File {
			return
		}
		syntax.Walk(f, func(n syntax.Node) bool {
			s, ok := n.(*syntax.IfStmt)
			if !ok {
				return true
			}
			switch {
			case !b.Else && int(s.If.Line) == b.Line:
				s.Cond = &syntax.Ident{NamePos: s.If, Name: "False"}
			case b.Else && !isElif(s) && len(s.False) > 0 && int(s.ElsePos.Line) == b.Line:
				s.Cond = &syntax.Ident{NamePos: s.If, Name: "True"}
			}
			return true
		})
	}
}

// CheckHolds is the Edit under which the check of the sub-goal file always
// holds: its body is `return None`.
func CheckHolds(subgoalFile string) Edit {
	return func(file string, f *syntax.File) {
		if file != subgoalFile {
			return
		}
		for _, s := range f.Stmts {
			if d, ok := s.(*syntax.DefStmt); ok && d.Name.Name == "check" {
				d.Body = []syntax.Stmt{&syntax.ReturnStmt{Return: d.Def, Result: &syntax.Ident{NamePos: d.Def, Name: "None"}}}
			}
		}
	}
}

// branchTable maps the file:line of each refusing statement to its branch.
func branchTable(c *contract.Contract) map[string]string {
	bs, err := Branches(c)
	if err != nil {
		return nil // a file that does not parse is reported by Compile
	}
	m := make(map[string]string, len(bs))
	for _, b := range bs {
		m[b.File+":"+strconv.Itoa(b.Refuses)] = b.At()
	}
	return m
}

// branchOf is the branch a refusal came from: the innermost frame of its
// call stack that stands on a branch's refusing statement.
func (p *Programs) branchOf(stack []syntax.Position) string {
	for _, pos := range stack {
		if at, ok := p.branches[pos.Filename()+":"+strconv.Itoa(int(pos.Line))]; ok {
			return at
		}
	}
	return ""
}

// BranchLog collects the refusal branches the handler calls under a
// context reach (WithBranchLog). It is safe for concurrent use.
type BranchLog struct {
	mu  sync.Mutex
	hit map[string]int
}

// Hits are the branches reached, each with how many calls refused there.
func (l *BranchLog) Hits() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.hit))
	for k, v := range l.hit {
		out[k] = v
	}
	return out
}

func (l *BranchLog) add(at string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hit == nil {
		l.hit = map[string]int{}
	}
	l.hit[at]++
}

type branchLogKey struct{}

// WithBranchLog returns a context under which every handler refusal from a
// branch is recorded in l.
func WithBranchLog(ctx context.Context, l *BranchLog) context.Context {
	return context.WithValue(ctx, branchLogKey{}, l)
}

// LogBranch records, under a context WithBranchLog made, a refusal from
// branch at: a handler's own refusal does, and so does a refusal a world
// gives back from what it kept instead of running the handler again.
func LogBranch(ctx context.Context, at string) {
	if l, ok := ctx.Value(branchLogKey{}).(*BranchLog); ok && at != "" {
		l.add(at)
	}
}
