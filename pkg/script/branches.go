package script

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/syntax"

	"github.com/suitegen/suitegen/pkg/contract"
)

// A refusal branch is one way a handler says no: an if (or elif, or else)
// arm whose block refuses, either by calling refuse(...) (a bare call or a
// return of one) or by calling a function of the contract that always
// refuses (a helper whose body ends every path in refuse). Branches are read
// from the syntax tree, never from the text: a nested if is its own branch,
// an elif is its own branch, and a branch inside a lib function belongs to
// every handler that reaches that function. Each branch is classed an
// existence guard or a rule (existence.go), from the tree as well.

// Branch is one refusal branch.
type Branch struct {
	File string `json:"file"`
	Line int    `json:"line"` // the line of its if, elif or else
	// Else is true when the refusing arm is the else of its if: the branch
	// is taken when the condition is false.
	Else bool   `json:"else,omitempty"`
	Func string `json:"func"` // the function it is in
	// Refuses is the line of the statement in the arm that refuses.
	Refuses int `json:"refuses"`
	// Message is the refusal's message when it is a string literal (or the
	// literal format of a % expression), else "".
	Message string `json:"message,omitempty"`
	// Tools are the tools whose handlers reach the branch, sorted.
	Tools []string `json:"tools"`
	// Class is ClassRule, ClassExistence (an existence guard: reached
	// only when a database read finds nothing) or ClassArgument (reached
	// only by a call whose arguments alone are wrong).
	Class string `json:"class"`
	// Shadowed is, when a later branch refuses every call this one does
	// (shadow.go), that branch's file:line: without this one the handler
	// refuses all the same, so no case can tell it is gone.
	Shadowed string `json:"shadowed,omitempty"`
}

// Guard reports whether the branch is an existence guard.
func (b Branch) Guard() bool { return b.Class == ClassExistence }

// At is the branch's place, file:line.
func (b Branch) At() string { return b.File + ":" + strconv.Itoa(b.Line) }

// Branches lists the refusal branches every tool's handler can reach (the
// handler file's functions and the lib functions they call), ordered by
// file and line. A file that does not parse is an error (a contract that
// loaded has none).
func Branches(c *contract.Contract) ([]Branch, error) {
	files, err := handlerFiles(c)
	if err != nil {
		return nil, err
	}
	ix := newFuncIndex(files)
	byAt := map[string]*Branch{}
	free := map[string]bool{}        // tools whose handlers cannot read the world
	shadows := map[*fn]map[int]int{} // per function, once: lib functions are reached by many tools
	for i := range c.Tools {
		tool := c.Tools[i].Name
		file := HandlerPath(&c.Tools[i])
		handle := ix.lookup(file, "handle")
		if handle == nil {
			continue
		}
		reached := ix.reach(handle)
		free[tool] = worldFree(handle, reached, files)
		for _, fn := range reached {
			for _, b := range ix.branchesOf(fn) {
				at := b.At()
				if byAt[at] == nil {
					bb := b
					if shadows[fn] == nil {
						shadows[fn] = ix.shadowsOf(fn)
					}
					if line := shadows[fn][b.Line]; line > 0 && !b.Else {
						bb.Shadowed = b.File + ":" + strconv.Itoa(line)
					}
					byAt[at] = &bb
				}
				if !containsStr(byAt[at].Tools, tool) {
					byAt[at].Tools = append(byAt[at].Tools, tool)
				}
			}
		}
	}
	out := make([]Branch, 0, len(byAt))
	for _, b := range byAt {
		sort.Strings(b.Tools)
		if b.Class == ClassRule && allFree(b.Tools, free) {
			// No state of the world decides a branch that only handlers
			// which never read it reach (a calculator's division by zero):
			// the call's arguments alone do.
			b.Class = ClassArgument
		}
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return !out[i].Else && out[j].Else
	})
	return out, nil
}

// handlerFiles parses every file a handler reaches through load().
func handlerFiles(c *contract.Contract) (map[string]*syntax.File, error) {
	files := map[string]*syntax.File{}
	parse := func(name string) (*syntax.File, error) {
		if f, ok := files[name]; ok {
			return f, nil
		}
		src, ok := c.Sources[name]
		if !ok {
			return nil, nil
		}
		f, err := fileOptions.Parse(name, src, 0)
		if err != nil {
			return nil, fmt.Errorf("branches: %w", err)
		}
		files[name] = f
		return f, nil
	}
	// Every file a handler reaches through load().
	var queue []string
	for i := range c.Tools {
		queue = append(queue, HandlerPath(&c.Tools[i]))
	}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if _, seen := files[name]; seen {
			continue
		}
		f, err := parse(name)
		if err != nil {
			return nil, err
		}
		if f == nil {
			continue
		}
		for _, s := range f.Stmts {
			if l, ok := s.(*syntax.LoadStmt); ok {
				queue = append(queue, path.Clean(l.ModuleName()))
			}
		}
	}
	return files, nil
}

// FileBranches lists the refusal branches of one Starlark source on its own
// (its functions, loads unresolved: a loaded helper is not known to refuse).
// It is what Branches does per file, for a source outside a contract.
func FileBranches(name, src string) ([]Branch, error) {
	f, err := fileOptions.Parse(name, src, 0)
	if err != nil {
		return nil, fmt.Errorf("branches: %w", err)
	}
	ix := newFuncIndex(map[string]*syntax.File{name: f})
	var out []Branch
	for _, fn := range ix.order {
		out = append(out, ix.branchesOf(fn)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out, nil
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// fn is one top-level def of a file.
type fn struct {
	file string
	def  *syntax.DefStmt
}

// funcIndex resolves names to the top-level defs of the files, through
// load() aliases, and knows which functions always refuse.
type funcIndex struct {
	defs    map[string]map[string]*fn       // file -> name -> def
	aliases map[string]map[string][2]string // file -> local name -> (module, name there)
	order   []*fn
	refuses map[*fn]bool
	// reads are the functions every return of which is a database read;
	// vars each function's read variables, kept once reads is settled.
	reads   map[*fn]bool
	vars    map[*fn]map[string]bool
	settled bool
	args    *argTaint // argument-derived names, computed on first use
	// consts are each file's top-level names bound once by =, with the
	// value (nil when bound more than once).
	consts map[string]map[string]syntax.Expr
}

// taint is the index's argument taint, computed once.
func (ix *funcIndex) taint() *argTaint {
	if ix.args == nil {
		ix.args = ix.argumentTaint()
	}
	return ix.args
}

func newFuncIndex(files map[string]*syntax.File) *funcIndex {
	ix := &funcIndex{defs: map[string]map[string]*fn{}, aliases: map[string]map[string][2]string{}, refuses: map[*fn]bool{},
		reads: map[*fn]bool{}, vars: map[*fn]map[string]bool{}, consts: map[string]map[string]syntax.Expr{}}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		f := files[name]
		ix.defs[name] = map[string]*fn{}
		ix.aliases[name] = map[string][2]string{}
		ix.consts[name] = map[string]syntax.Expr{}
		for _, s := range f.Stmts {
			switch s := s.(type) {
			case *syntax.AssignStmt:
				for _, n := range boundNames(s.LHS) {
					_, again := ix.consts[name][n]
					id, plain := s.LHS.(*syntax.Ident)
					if again || !plain || s.Op != syntax.EQ || id.Name != n {
						ix.consts[name][n] = nil
					} else {
						ix.consts[name][n] = s.RHS
					}
				}
			case *syntax.DefStmt:
				d := &fn{file: name, def: s}
				ix.defs[name][s.Name.Name] = d
				ix.order = append(ix.order, d)
			case *syntax.LoadStmt:
				mod := path.Clean(s.ModuleName())
				for i := range s.To {
					// To is the local name, From the name in the loaded module.
					ix.aliases[name][s.To[i].Name] = [2]string{mod, s.From[i].Name}
				}
			}
		}
	}
	// A function always refuses when its body does, whatever it calls:
	// repeat until nothing changes, since helpers call helpers.
	for changed := true; changed; {
		changed = false
		for _, d := range ix.order {
			if !ix.refuses[d] && ix.blockRefuses(d.file, d.def.Body) {
				ix.refuses[d] = true
				changed = true
			}
		}
	}
	// Likewise for the functions that return a read: helpers return what
	// helpers return.
	for changed := true; changed; {
		changed = false
		for _, d := range ix.order {
			if !ix.reads[d] && ix.returnsRead(d) {
				ix.reads[d] = true
				changed = true
			}
		}
	}
	ix.settled = true
	return ix
}

func (ix *funcIndex) lookup(file, name string) *fn {
	for range 8 { // alias chains through lib files, bounded
		if d := ix.defs[file][name]; d != nil {
			return d
		}
		a, ok := ix.aliases[file][name]
		if !ok {
			return nil
		}
		file, name = a[0], a[1]
	}
	return nil
}

// refusingCall is the call a statement makes when that call refuses: a
// bare call or a return of one, of refuse or of a function that always
// refuses.
func (ix *funcIndex) refusingCall(file string, s syntax.Stmt) *syntax.CallExpr {
	var x syntax.Expr
	switch s := s.(type) {
	case *syntax.ExprStmt:
		x = s.X
	case *syntax.ReturnStmt:
		x = s.Result
	default:
		return nil
	}
	for {
		p, ok := x.(*syntax.ParenExpr)
		if !ok {
			break
		}
		x = p.X
	}
	call, ok := x.(*syntax.CallExpr)
	if !ok {
		return nil
	}
	id, ok := call.Fn.(*syntax.Ident)
	if !ok {
		return nil
	}
	if id.Name == "refuse" && ix.lookup(file, "refuse") == nil {
		return call
	}
	if d := ix.lookup(file, id.Name); d != nil && ix.refuses[d] {
		return call
	}
	return nil
}

// blockRefuses: every path through the block ends in a refusal (a
// refusing statement at its top level, before any return, or an if whose
// every arm refuses).
func (ix *funcIndex) blockRefuses(file string, body []syntax.Stmt) bool {
	for _, s := range body {
		if ix.refusingCall(file, s) != nil {
			return true
		}
		switch s := s.(type) {
		case *syntax.ReturnStmt:
			return false
		case *syntax.BranchStmt:
			return false
		case *syntax.IfStmt:
			if len(s.False) > 0 && ix.blockRefuses(file, s.True) && ix.blockRefuses(file, s.False) {
				return true
			}
		}
	}
	return false
}

// armRefuses is the statement of an arm that refuses, directly in the arm
// (not inside a nested if, which is its own branch).
func (ix *funcIndex) armRefuses(file string, arm []syntax.Stmt) (syntax.Stmt, *syntax.CallExpr) {
	for _, s := range arm {
		if c := ix.refusingCall(file, s); c != nil {
			return s, c
		}
	}
	return nil, nil
}

// branchesOf lists the refusal branches of one function's body, each
// classed by the conditions on the way to its arm.
func (ix *funcIndex) branchesOf(d *fn) []Branch {
	var out []Branch
	// returned holds the conditions under which the function has already
	// returned before the statement at hand (if C: return): it reaches the
	// statement only when each is false.
	var walk func(ss []syntax.Stmt, path, returned []cond)
	add := func(pos syntax.Position, isElse bool, s syntax.Stmt, call *syntax.CallExpr, path, returned []cond) {
		start, _ := s.Span()
		out = append(out, Branch{File: d.file, Line: int(pos.Line), Else: isElse, Func: d.def.Name.Name,
			Refuses: int(start.Line), Message: literalMessage(call), Class: ix.classOf(d, path, returned)})
	}
	walk = func(ss []syntax.Stmt, path, returned []cond) {
		returned = returned[:len(returned):len(returned)]
		for _, s := range ss {
			switch s := s.(type) {
			case *syntax.IfStmt:
				yes, no := with(path, cond{s.Cond, true}), with(path, cond{s.Cond, false})
				if st, c := ix.armRefuses(d.file, s.True); st != nil {
					add(s.If, false, st, c, yes, returned)
				}
				walk(s.True, yes, returned)
				// An elif is an IfStmt alone in False, found by the walk
				// (after this condition proved false); a plain else arm that
				// refuses is a branch of its own.
				if !isElif(s) {
					if st, c := ix.armRefuses(d.file, s.False); st != nil {
						add(s.ElsePos, true, st, c, no, returned)
					}
				}
				walk(s.False, no, returned)
				if returns(s.True) {
					returned = append(returned, cond{s.Cond, true})
				}
			case *syntax.ForStmt:
				walk(s.Body, path, returned)
			case *syntax.WhileStmt:
				walk(s.Body, path, returned)
			}
		}
	}
	walk(d.def.Body, nil, nil)
	return out
}

// returns reports whether an arm ends by returning.
func returns(arm []syntax.Stmt) bool {
	if len(arm) == 0 {
		return false
	}
	_, ok := arm[len(arm)-1].(*syntax.ReturnStmt)
	return ok
}

func isElif(s *syntax.IfStmt) bool {
	if len(s.False) != 1 {
		return false
	}
	inner, ok := s.False[0].(*syntax.IfStmt)
	return ok && inner.If == s.ElsePos
}

// literalMessage is the refusal's message when it is a string literal, or
// the format of "..." % args; else "".
func literalMessage(call *syntax.CallExpr) string {
	if call == nil || len(call.Args) == 0 {
		return ""
	}
	x := call.Args[0]
	if b, ok := x.(*syntax.BinaryExpr); ok && b.Op == syntax.PERCENT {
		x = b.X
	}
	if l, ok := x.(*syntax.Literal); ok && l.Token == syntax.STRING {
		if s, ok := l.Value.(string); ok {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

// reach lists the functions a function calls, transitively, itself first:
// every name called (as name(...)) that resolves to a top-level def.
// worldFree reports whether a handler can read nothing of the world: its
// db parameter is never named, so no function it calls gets the database,
// and no file its functions are in names the clock (now), even in a
// top-level constant. Conservative: a name that merely shadows them counts.
func worldFree(handle *fn, reached []*fn, files map[string]*syntax.File) bool {
	if ps := handle.def.Params; len(ps) > 1 {
		db, ok := paramName(ps[1])
		if !ok || names(handle.def.Body, db) {
			return false
		}
	}
	seen := map[string]bool{}
	for _, d := range reached {
		if f := files[d.file]; f != nil && !seen[d.file] {
			seen[d.file] = true
			if names([]*syntax.File{f}, "now") {
				return false
			}
		}
	}
	return true
}

// names reports whether the identifier name occurs anywhere under ns.
func names[N syntax.Node](ns []N, name string) bool {
	found := false
	for _, n := range ns {
		syntax.Walk(n, func(x syntax.Node) bool {
			if id, ok := x.(*syntax.Ident); ok && id.Name == name {
				found = true
			}
			return !found
		})
	}
	return found
}

func allFree(tools []string, free map[string]bool) bool {
	for _, t := range tools {
		if !free[t] {
			return false
		}
	}
	return len(tools) > 0
}

func (ix *funcIndex) reach(start *fn) []*fn {
	seen := map[*fn]bool{start: true}
	out := []*fn{start}
	for i := 0; i < len(out); i++ {
		d := out[i]
		syntax.Walk(d.def, func(n syntax.Node) bool {
			if c, ok := n.(*syntax.CallExpr); ok {
				if id, ok := c.Fn.(*syntax.Ident); ok {
					if t := ix.lookup(d.file, id.Name); t != nil && !seen[t] {
						seen[t] = true
						out = append(out, t)
					}
				}
			}
			// A function passed as a value (sorted(key=f)) is reached too.
			if id, ok := n.(*syntax.Ident); ok {
				if t := ix.lookup(d.file, id.Name); t != nil && !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
			return true
		})
	}
	return out
}
