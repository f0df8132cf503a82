package contract

import (
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"

	"go.starlark.net/syntax"
)

// starOptions is the dialect handlers, sub-goals and lib files are written in.
var starOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// SubGoalParamTypes are the types a sub-goal may declare for its params.
var SubGoalParamTypes = []string{"string", "int", "number", "bool", "list", "dict"}

// starFile is one parsed Starlark file.
type starFile struct {
	defs    map[string]*syntax.DefStmt
	globals map[string]bool // top-level names: defs, assignments, loads
	loads   []*syntax.LoadStmt
}

// ParseStarlark parses a Starlark source in the contract dialect (syntax only).
func ParseStarlark(filename, src string) (*syntax.File, error) {
	return starOptions.Parse(filename, src, 0)
}

func (l *loader) loadStarlark(pos *positions) {
	l.parsed = map[string]*starFile{}
	var paths []string
	for _, dir := range []string{"handlers", "subgoals", "lib"} {
		for _, p := range l.list(dir) {
			if strings.HasSuffix(p, ".star") {
				paths = append(paths, p)
			}
		}
	}
	// Handlers may live elsewhere when a tool names its own path.
	for _, t := range l.c.Tools {
		if t.Handler != "" && localStar(t.Handler) && !strings.HasPrefix(t.Handler, "handlers/") {
			if _, err := fs.Stat(l.fsys, t.Handler); err == nil {
				paths = append(paths, t.Handler)
			}
		}
	}
	sort.Strings(paths)
	paths = dedupe(paths)
	for _, p := range paths {
		data, ok := l.read(p)
		if !ok {
			continue
		}
		src := string(data)
		l.c.Sources[p] = src
		code := CodeHandlerSyntax
		switch {
		case strings.HasPrefix(p, "subgoals/"):
			code = CodeSubGoalSyntax
		case strings.HasPrefix(p, "lib/"):
			code = CodeLibSyntax
		}
		f, err := ParseStarlark(p, src)
		if err != nil {
			var se syntax.Error
			if errors.As(err, &se) {
				l.r.add(p, int(se.Pos.Line), code, "%s", se.Msg)
			} else {
				l.r.add(p, 0, code, "%v", err)
			}
			continue
		}
		l.parsed[p] = summarise(f)
		if strings.HasPrefix(p, "subgoals/") {
			l.subGoal(p, src, f)
		}
	}
	l.checkLoads()
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// localStar reports whether p is a clean relative path to a .star file inside the contract.
func localStar(p string) bool {
	return strings.HasSuffix(p, ".star") && !path.IsAbs(p) && path.Clean(p) == p &&
		p != ".." && !strings.HasPrefix(p, "../") && !strings.Contains(p, "\\")
}

func summarise(f *syntax.File) *starFile {
	sf := &starFile{defs: map[string]*syntax.DefStmt{}, globals: map[string]bool{}}
	var bind func(e syntax.Expr)
	bind = func(e syntax.Expr) {
		switch x := e.(type) {
		case *syntax.Ident:
			sf.globals[x.Name] = true
		case *syntax.TupleExpr:
			for _, y := range x.List {
				bind(y)
			}
		case *syntax.ListExpr:
			for _, y := range x.List {
				bind(y)
			}
		case *syntax.ParenExpr:
			bind(x.X)
		}
	}
	var walk func(stmts []syntax.Stmt)
	walk = func(stmts []syntax.Stmt) {
		for _, s := range stmts {
			switch x := s.(type) {
			case *syntax.DefStmt:
				sf.defs[x.Name.Name] = x
				sf.globals[x.Name.Name] = true
			case *syntax.AssignStmt:
				bind(x.LHS)
			case *syntax.LoadStmt:
				sf.loads = append(sf.loads, x)
				for _, to := range x.To {
					sf.globals[to.Name] = true
				}
			// Top-level control is allowed: names bound inside are globals too.
			case *syntax.IfStmt:
				walk(x.True)
				walk(x.False)
			case *syntax.ForStmt:
				bind(x.Vars)
				walk(x.Body)
			case *syntax.WhileStmt:
				walk(x.Body)
			}
		}
	}
	walk(f.Stmts)
	return sf
}

// callable reports whether def can be called with n positional arguments.
func callable(def *syntax.DefStmt, n int) bool {
	plain, defaulted, star := 0, 0, false
	for _, p := range def.Params {
		switch x := p.(type) {
		case *syntax.Ident:
			plain++
		case *syntax.BinaryExpr:
			defaulted++
		case *syntax.UnaryExpr:
			if x.Op == syntax.STAR && x.X != nil {
				star = true
			}
		}
	}
	return plain <= n && (n <= plain+defaulted || star)
}

// checkLoads reports load() statements naming a file or a name that is not there.
func (l *loader) checkLoads() {
	paths := make([]string, 0, len(l.parsed))
	for p := range l.parsed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		for _, ld := range l.parsed[p].loads {
			mod := ld.ModuleName()
			line := int(ld.Load.Line)
			if !strings.HasPrefix(mod, "lib/") || !localStar(mod) {
				l.r.add(p, line, CodeUnknownLoad, "load(%q): only lib/<name>.star files can be loaded", mod)
				continue
			}
			target, ok := l.parsed[mod]
			if !ok {
				if _, has := l.c.Sources[mod]; has {
					continue // it has a syntax error of its own
				}
				l.r.add(p, line, CodeUnknownLoad, "load(%q): no such file", mod)
				continue
			}
			for _, from := range ld.From {
				if strings.HasPrefix(from.Name, "_") {
					l.r.add(p, int(from.NamePos.Line), CodeUnknownLoad, "load(%q, %q): names starting with _ are private to their file", mod, from.Name)
				} else if !target.globals[from.Name] {
					l.r.add(p, int(from.NamePos.Line), CodeUnknownLoad, "load(%q, %q): %s defines no %s", mod, from.Name, mod, from.Name)
				}
			}
		}
	}
}

// subGoal reads what, judged, params and tools from a sub-goal file's literal
// top-level assignments (nothing is executed) and checks its check().
func (l *loader) subGoal(file, src string, f *syntax.File) {
	l.c.SubGoals = append(l.c.SubGoals, readSubGoal(file, src, f, l.parsed[file], l.r))
}

// ParseSubGoal reads one sub-goal source outside a contract directory (a
// sub-goal a writer adds during a run) exactly as Load reads
// subgoals/<name>.star: the name is file's base name, what, judged and params
// come from literal assignments, and a check(world, calls, params) is required
// unless the sub-goal is judged. Problems carry file and line. Loads are not
// resolved here: compiling the check (script) reports a missing lib file.
func ParseSubGoal(file, src string) (SubGoal, Problems) {
	var ps Problems
	r := report{&ps}
	f, err := ParseStarlark(file, src)
	if err != nil {
		var se syntax.Error
		if errors.As(err, &se) {
			r.add(file, int(se.Pos.Line), CodeSubGoalSyntax, "%s", se.Msg)
		} else {
			r.add(file, 0, CodeSubGoalSyntax, "%v", err)
		}
		return SubGoal{Name: strings.TrimSuffix(path.Base(file), ".star"), File: file, Source: src}, ps
	}
	sg := readSubGoal(file, src, f, summarise(f), r)
	ps.Sort()
	return sg, ps
}

// readSubGoal is the shared reading of one parsed sub-goal file.
func readSubGoal(file, src string, f *syntax.File, sf *starFile, r report) SubGoal {
	sg := SubGoal{Name: strings.TrimSuffix(path.Base(file), ".star"), File: file, Source: src, Params: map[string]string{}}
	whatSeen := false
	for _, s := range f.Stmts {
		as, isAssign := s.(*syntax.AssignStmt)
		if !isAssign || as.Op != syntax.EQ {
			continue
		}
		id, isIdent := as.LHS.(*syntax.Ident)
		if !isIdent {
			continue
		}
		line := int(as.OpPos.Line)
		switch id.Name {
		case "what":
			whatSeen = true
			v, lit := literal(as.RHS)
			w, isStr := v.(string)
			if !lit || !isStr || strings.TrimSpace(w) == "" {
				r.add(file, line, CodeSubGoalSyntax, "what must be a non-empty string literal")
				continue
			}
			sg.What = w
		case "judged":
			v, lit := literal(as.RHS)
			b, isBool := v.(bool)
			if !lit || !isBool {
				r.add(file, line, CodeSubGoalSyntax, "judged must be True or False")
				continue
			}
			sg.Judged = b
		case "tools":
			v, lit := literal(as.RHS)
			list, isList := v.([]any)
			if !lit || !isList {
				r.add(file, line, CodeSubGoalSyntax, "tools must be a list literal of tool names")
				continue
			}
			sg.ToolsLine = line
			for _, t := range list {
				name, isStr := t.(string)
				if !isStr || name == "" {
					r.add(file, line, CodeSubGoalSyntax, "tools must be a list literal of tool names")
					sg.Tools = nil
					break
				}
				sg.Tools = append(sg.Tools, name)
			}
		case "params":
			v, lit := literal(as.RHS)
			m, isDict := v.(map[string]any)
			if !lit || !isDict {
				r.add(file, line, CodeSubGoalBadParams, "params must be a dict literal of name to type (%s)", strings.Join(SubGoalParamTypes, ", "))
				continue
			}
			for name, t := range m {
				ts, isStr := t.(string)
				if !isStr || !validParamType(ts) {
					r.add(file, line, CodeSubGoalBadParams, "param %q: type must be one of %s", name, strings.Join(SubGoalParamTypes, ", "))
					continue
				}
				sg.Params[name] = ts
			}
		}
	}
	if !whatSeen {
		r.add(file, 0, CodeMissingField, "sub-goal %s has no what = \"...\" (what it checks, in words)", sg.Name)
	}
	if !sg.Judged && sg.ToolsLine > 0 {
		r.add(file, sg.ToolsLine, CodeSubGoalSyntax, "tools is for a judged sub-goal: a code-settled check is listed where the plan binds its params")
	}
	if !sg.Judged {
		def := sf.defs["check"]
		if def == nil {
			r.add(file, 0, CodeSubGoalNoCheck, "sub-goal %s is not judged and has no def check(world, calls, params)", sg.Name)
		} else if !callable(def, 3) {
			r.add(file, int(def.Def.Line), CodeSubGoalNoCheck, "check must take (world, calls, params)")
		} else {
			for name, typ := range paramsRead(def) {
				if _, declared := sg.Params[name]; !declared {
					sg.Params[name] = typ
				}
			}
		}
	}
	return sg
}

// paramsRead are the params a check reads by a literal name
// (params["invoice_id"], params.get("status")) and the type each is used
// as: "number" when it goes through float() or int(), else "string". A
// check that reads a param its file never declares still says what it
// needs.
func paramsRead(def *syntax.DefStmt) map[string]string {
	if len(def.Params) < 3 {
		return nil
	}
	pid, ok := def.Params[2].(*syntax.Ident)
	if !ok {
		return nil
	}
	out := map[string]string{}
	named := map[string]string{} // a local name holding a param's value
	nameOf := func(e syntax.Expr) string {
		switch x := e.(type) {
		case *syntax.IndexExpr:
			if id, ok := x.X.(*syntax.Ident); ok && id.Name == pid.Name {
				if lit, ok := x.Y.(*syntax.Literal); ok && lit.Token == syntax.STRING {
					return lit.Value.(string)
				}
			}
		case *syntax.CallExpr:
			if dot, ok := x.Fn.(*syntax.DotExpr); ok && dot.Name.Name == "get" && len(x.Args) > 0 {
				if id, ok := dot.X.(*syntax.Ident); ok && id.Name == pid.Name {
					if lit, ok := x.Args[0].(*syntax.Literal); ok && lit.Token == syntax.STRING {
						return lit.Value.(string)
					}
				}
			}
		case *syntax.Ident:
			return named[x.Name]
		}
		return ""
	}
	syntax.Walk(def, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.AssignStmt:
			if id, ok := x.LHS.(*syntax.Ident); ok {
				if name := nameOf(x.RHS); name != "" {
					named[id.Name] = name
				}
			}
		case *syntax.IndexExpr, *syntax.CallExpr:
			if name := nameOf(x.(syntax.Expr)); name != "" {
				if _, seen := out[name]; !seen {
					out[name] = "string"
				}
			}
			if call, ok := x.(*syntax.CallExpr); ok {
				if fn, ok := call.Fn.(*syntax.Ident); ok && (fn.Name == "float" || fn.Name == "int") && len(call.Args) == 1 {
					if name := nameOf(call.Args[0]); name != "" {
						out[name] = "number"
					}
				}
			}
		}
		return true
	})
	return out
}

func validParamType(t string) bool {
	for _, k := range SubGoalParamTypes {
		if t == k {
			return true
		}
	}
	return false
}

// literal evaluates a literal expression: strings (and + of strings), numbers,
// True/False/None, lists, tuples and dicts with string keys.
func literal(e syntax.Expr) (any, bool) {
	switch x := e.(type) {
	case *syntax.Literal:
		return x.Value, x.Token == syntax.STRING || x.Token == syntax.INT || x.Token == syntax.FLOAT
	case *syntax.Ident:
		switch x.Name {
		case "True":
			return true, true
		case "False":
			return false, true
		case "None":
			return nil, true
		}
	case *syntax.ParenExpr:
		return literal(x.X)
	case *syntax.BinaryExpr:
		if x.Op == syntax.PLUS {
			a, ok1 := literal(x.X)
			b, ok2 := literal(x.Y)
			as, s1 := a.(string)
			bs, s2 := b.(string)
			if ok1 && ok2 && s1 && s2 {
				return as + bs, true
			}
		}
	case *syntax.ListExpr:
		return literalList(x.List)
	case *syntax.TupleExpr:
		return literalList(x.List)
	case *syntax.DictExpr:
		m := map[string]any{}
		for _, e := range x.List {
			entry, ok := e.(*syntax.DictEntry)
			if !ok {
				return nil, false
			}
			k, ok := literal(entry.Key)
			ks, isStr := k.(string)
			if !ok || !isStr {
				return nil, false
			}
			v, ok := literal(entry.Value)
			if !ok {
				return nil, false
			}
			m[ks] = v
		}
		return m, true
	}
	return nil, false
}

func literalList(list []syntax.Expr) (any, bool) {
	out := make([]any, 0, len(list))
	for _, e := range list {
		v, ok := literal(e)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}
