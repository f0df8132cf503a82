package script

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/suitegen/suitegen/pkg/contract"
)

// DefaultNow is the world's clock when neither Options.Now nor the contract's
// now is given (contract.DefaultNow).
const DefaultNow = contract.DefaultNow

// Defaults for Options.
const (
	DefaultMaxSteps   = 1_000_000
	DefaultMaxQueries = 1_000
	// DefaultTimeout is a backstop against a stuck machine, not a rule of
	// the world: every bound a contract can meet (steps, queries, rows,
	// memory) counts work, so a call's outcome never depends on how busy
	// the machine is. A statement's own time is bounded by the world.
	DefaultTimeout   = 30 * time.Second
	DefaultMaxDepth  = 500
	DefaultMaxAlloc  = 256 << 20
	DefaultMaxResult = 1 << 20
	DefaultMaxRows   = 10_000
)

// Options bounds every call. Zero values take the defaults above.
type Options struct {
	MaxSteps   uint64        // Starlark steps per call
	MaxQueries int           // database round trips (query, one, execute) per call
	Timeout    time.Duration // wall clock per call
	MaxDepth   int           // Starlark call depth
	MaxAlloc   int64         // bytes a call may allocate through growth operations (see package doc)
	MaxResult  int           // encoded bytes of a handler result
	MaxRows    int           // rows one db or world query may return
	Now        string        // the world's clock; default: the contract's now, else DefaultNow
}

func (o Options) withDefaults(c *contract.Contract) (Options, error) {
	switch {
	case o.Timeout < 0:
		return o, fmt.Errorf("script options: Timeout must not be negative, got %s", o.Timeout)
	case o.MaxDepth < 0:
		return o, fmt.Errorf("script options: MaxDepth must not be negative, got %d", o.MaxDepth)
	case o.MaxAlloc < 0:
		return o, fmt.Errorf("script options: MaxAlloc must not be negative, got %d", o.MaxAlloc)
	case o.MaxResult < 0:
		return o, fmt.Errorf("script options: MaxResult must not be negative, got %d", o.MaxResult)
	case o.MaxRows < 0:
		return o, fmt.Errorf("script options: MaxRows must not be negative, got %d", o.MaxRows)
	case o.MaxQueries < 0:
		return o, fmt.Errorf("script options: MaxQueries must not be negative, got %d", o.MaxQueries)
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.MaxQueries == 0 {
		o.MaxQueries = DefaultMaxQueries
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxAlloc == 0 {
		o.MaxAlloc = DefaultMaxAlloc
	}
	if o.MaxResult == 0 {
		o.MaxResult = DefaultMaxResult
	}
	if o.MaxRows == 0 {
		o.MaxRows = DefaultMaxRows
	}
	if o.Now == "" && c != nil {
		o.Now = c.Now
	}
	if o.Now == "" {
		o.Now = DefaultNow
	}
	return o, nil
}

var (
	// ErrLimit is wrapped by every crash caused by a step, query, time,
	// depth, allocation, row or result limit.
	ErrLimit = errors.New("limit exceeded")
	// ErrBroken is wrapped by Check's error when a sub-goal check is a bug
	// in the catalogue (it raised, returned a wrong type, or does not exist).
	ErrBroken = errors.New("broken check")
	// ErrNoHandler is wrapped when a tool has no compiled handler.
	ErrNoHandler = errors.New("no handler")
)

// Refusal is the world saying no: the handler called refuse(message).
type Refusal struct {
	Message string
	// Branch is the refusal branch it came from (file:line of its if, see
	// Branches), or "" when the refusal stands in no branch.
	Branch string
	// Want, when the branch refused because a number of the call's
	// disagreed with one the handler computed, is the two (want.go).
	Want  *Want
	stack []syntax.Position // the Starlark frames at the refusal, innermost first
}

func (r *Refusal) Error() string { return "refused: " + r.Message }

// Crash is any other failure of a call: a bug in the contract, a limit, or a
// database error. Reason is fit to show to the contract's author.
type Crash struct {
	Reason string
	Err    error // the underlying error (wraps ErrLimit for limits); may be nil
}

func (c *Crash) Error() string { return "crash: " + c.Reason }
func (c *Crash) Unwrap() error { return c.Err }

// FileError is one compile problem, with its place in the contract.
type FileError struct {
	File string
	Line int
	Col  int
	Msg  string
}

func (e FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// CompileError lists every file that failed to compile.
type CompileError struct {
	Errs []FileError
}

func (e *CompileError) Error() string {
	parts := make([]string, len(e.Errs))
	for i, fe := range e.Errs {
		parts[i] = fe.Error()
	}
	return "compile: " + strings.Join(parts, "; ")
}

// Programs is a compiled contract: frozen modules shared by all calls. It is
// safe for concurrent use.
type Programs struct {
	opts        Options
	predeclared starlark.StringDict
	handlers    map[string]*starlark.Function // tool -> handle
	checks      map[string]*starlark.Function // sub-goal -> check
	modules     map[string]starlark.StringDict
	branches    map[string]string // file:line of a refusing statement -> its branch
	wants       wantOps           // the operations whose sides a refusal carries (want.go)
}

// HandlerPath is the source path of a tool's handler: its handler field, else
// handlers/<name>.star.
func HandlerPath(t *contract.Tool) string {
	if t.Handler != "" {
		return path.Clean(t.Handler)
	}
	return "handlers/" + t.Name + ".star"
}

// Compile parses every handler and sub-goal file of c (and the lib files they
// load), executes each top level once and freezes the globals. A tool whose
// handler file is absent is not an error here (the contract validator reports
// it); calling it is a crash wrapping ErrNoHandler.
func Compile(c *contract.Contract, opts Options) (*Programs, error) {
	return compileWith(c, opts, nil)
}

func compileWith(c *contract.Contract, opts Options, edit Edit) (*Programs, error) {
	opts, err := opts.withDefaults(c)
	if err != nil {
		return nil, err
	}
	p := &Programs{
		opts:     opts,
		handlers: map[string]*starlark.Function{},
		checks:   map[string]*starlark.Function{},
		modules:  map[string]starlark.StringDict{},
		branches: branchTable(c),
		wants:    wantSites(c),
	}
	p.predeclared = p.makePredeclared()
	cp := &compiler{p: p, edit: edit, sources: c.Sources, state: map[string]int{}, errs: map[string]error{}}
	var cerr CompileError
	addErr := func(file string, err error) {
		cerr.Errs = append(cerr.Errs, fileError(file, err))
	}
	for i := range c.Tools {
		t := &c.Tools[i]
		file := HandlerPath(t)
		if _, ok := c.Sources[file]; !ok {
			continue
		}
		g, err := cp.module(file)
		if err != nil {
			addErr(file, err)
			continue
		}
		fn, ok := g["handle"].(*starlark.Function)
		if !ok {
			addErr(file, errors.New("no function handle(args, db) defined"))
			continue
		}
		p.handlers[t.Name] = fn
	}
	for i := range c.SubGoals {
		sg := &c.SubGoals[i]
		file := path.Clean(sg.File)
		src, ok := c.Sources[file]
		if !ok {
			if sg.Source == "" {
				continue
			}
			src = sg.Source
		}
		g, err := cp.moduleSource(file, src)
		if err != nil {
			addErr(file, err)
			continue
		}
		fn, ok := g["check"].(*starlark.Function)
		if !ok {
			if !sg.Judged {
				addErr(file, errors.New("no function check(world, calls, params) defined"))
			}
			continue
		}
		p.checks[sg.Name] = fn
	}
	if len(cerr.Errs) > 0 {
		sort.SliceStable(cerr.Errs, func(i, j int) bool { return cerr.Errs[i].File < cerr.Errs[j].File })
		return nil, &cerr
	}
	return p, nil
}

// HasHandler reports whether tool has a compiled handler.
func (p *Programs) HasHandler(tool string) bool { _, ok := p.handlers[tool]; return ok }

// HasCheck reports whether the sub-goal has a compiled check.
func (p *Programs) HasCheck(name string) bool { _, ok := p.checks[name]; return ok }

// Now is the world's clock as handlers see it.
func (p *Programs) Now() string { return p.opts.Now }

// Options returns the effective limits.
func (p *Programs) Options() Options { return p.opts }

func fileError(file string, err error) FileError {
	var se syntax.Error
	if errors.As(err, &se) {
		return FileError{File: file, Line: int(se.Pos.Line), Col: int(se.Pos.Col), Msg: se.Msg}
	}
	var rl resolve.ErrorList
	if errors.As(err, &rl) && len(rl) > 0 {
		msgs := make([]string, len(rl))
		for i, e := range rl {
			msgs[i] = e.Msg
			if i > 0 {
				msgs[i] = e.Pos.String() + ": " + e.Msg
			}
		}
		return FileError{File: file, Line: int(rl[0].Pos.Line), Col: int(rl[0].Pos.Col), Msg: strings.Join(msgs, "; ")}
	}
	var ee *starlark.EvalError
	if errors.As(err, &ee) && len(ee.CallStack) > 0 {
		pos := ee.CallStack.At(0).Pos
		return FileError{File: file, Line: int(pos.Line), Col: int(pos.Col), Msg: ee.Msg}
	}
	return FileError{File: file, Msg: err.Error()}
}

// compiler executes modules once, resolving load() inside the contract.
type compiler struct {
	p       *Programs
	edit    Edit
	sources map[string]string
	state   map[string]int // 1: loading, 2: done
	errs    map[string]error
}

func (cp *compiler) module(file string) (starlark.StringDict, error) {
	src, ok := cp.sources[file]
	if !ok {
		return nil, fmt.Errorf("no such file %q in the contract", file)
	}
	return cp.moduleSource(file, src)
}

func (cp *compiler) moduleSource(file, src string) (starlark.StringDict, error) {
	switch cp.state[file] {
	case 1:
		return nil, fmt.Errorf("load cycle through %q", file)
	case 2:
		return cp.p.modules[file], cp.errs[file]
	}
	cp.state[file] = 1
	g, err := cp.exec(file, src)
	cp.state[file] = 2
	cp.p.modules[file], cp.errs[file] = g, err
	return g, err
}

func (cp *compiler) exec(file, src string) (starlark.StringDict, error) {
	f, err := fileOptions.Parse(file, src, 0)
	if err != nil {
		return nil, err
	}
	if cp.edit != nil {
		cp.edit(file, f)
	}
	if err := rewrite(f, cp.p.wants.side); err != nil {
		return nil, err
	}
	prog, err := starlark.FileProgram(f, cp.p.predeclared.Has)
	if err != nil {
		return nil, err
	}
	th, st, stop := cp.p.newThread(context.Background(), "load "+file)
	defer stop()
	th.Load = func(_ *starlark.Thread, module string) (starlark.StringDict, error) {
		m := path.Clean(module)
		if path.IsAbs(m) || strings.HasPrefix(m, "../") || m == ".." {
			return nil, fmt.Errorf("load %q: only files of the contract can be loaded", module)
		}
		if _, ok := cp.sources[m]; !ok {
			return nil, fmt.Errorf("load %q: no such file in the contract", module)
		}
		return cp.module(m)
	}
	g, err := prog.Init(th, cp.p.predeclared)
	if err != nil {
		return nil, st.classify(err)
	}
	g.Freeze()
	return g, nil
}

var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// Trace is what a handler call did besides its result.
type Trace struct {
	Read  []string // argument names the handler read, sorted
	Wrote bool     // db.execute affected at least one row
	Steps uint64
}

// Handle runs a tool's handler. Exactly one of: a result (ok), a *Refusal
// (refused), or another error (a crash, usually *Crash).
func (p *Programs) Handle(ctx context.Context, tool string, args map[string]any, db DB) (json.RawMessage, error) {
	res, _, err := p.HandleWithTrace(ctx, tool, args, db)
	return res, err
}

// HandleTraced is Handle that also returns which arguments the handler read.
func (p *Programs) HandleTraced(ctx context.Context, tool string, args map[string]any, db DB) (json.RawMessage, []string, error) {
	res, tr, err := p.HandleWithTrace(ctx, tool, args, db)
	return res, tr.Read, err
}

// HandleWithTrace is Handle that also returns the read arguments and whether
// the handler wrote. The trace is filled whatever the outcome.
func (p *Programs) HandleWithTrace(ctx context.Context, tool string, args map[string]any, db DB) (json.RawMessage, Trace, error) {
	fn, ok := p.handlers[tool]
	if !ok {
		return nil, Trace{}, &Crash{Reason: fmt.Sprintf("tool %q has no handler", tool), Err: ErrNoHandler}
	}
	th, st, stop := p.newThread(ctx, "handle "+tool)
	defer stop()
	st.db = db
	am, err := newArgs(args)
	if err != nil {
		return nil, Trace{}, &Crash{Reason: "arguments: " + err.Error(), Err: err}
	}
	v, err := starlark.Call(th, fn, starlark.Tuple{am, &dbValue{}}, nil)
	tr := Trace{Read: am.readKeys(), Wrote: st.wrote, Steps: th.ExecutionSteps()}
	if err != nil {
		err = st.classify(err)
		var ref *Refusal
		if errors.As(err, &ref) {
			ref.Branch = p.branchOf(ref.stack)
			ref.Want = p.wantOf(st, ref.Branch)
			LogBranch(ctx, ref.Branch)
		}
		return nil, tr, err
	}
	var out []byte
	if s, ok := v.(starlark.String); ok {
		out, err = json.Marshal(string(s))
	} else {
		out, err = encodeJSON(v, p.opts.MaxResult)
	}
	if err == nil && len(out) > p.opts.MaxResult {
		err = fmt.Errorf("%w: result is %d bytes, more than %d", ErrLimit, len(out), p.opts.MaxResult)
	}
	if err != nil {
		return nil, tr, &Crash{Reason: "result: " + err.Error(), Err: err}
	}
	return out, tr, nil
}

// Check runs a sub-goal check. held is true when it returns None or True;
// false with why when it returns a string. Any other outcome (it raises,
// refuses, hits a limit or returns another type) is an error wrapping
// ErrBroken.
func (p *Programs) Check(ctx context.Context, name string, w WorldView, calls []Call, params map[string]any) (held bool, why string, err error) {
	fn, ok := p.checks[name]
	if !ok {
		return false, "", fmt.Errorf("%w: sub-goal %q has no check", ErrBroken, name)
	}
	th, st, stop := p.newThread(ctx, "check "+name)
	defer stop()
	wv := &worldValue{ctx: st.ctx, view: w}
	cl := starlark.NewList(nil)
	for _, c := range calls {
		cv, err := callValue(th, c)
		if err != nil {
			return false, "", fmt.Errorf("%w: %s: calls: %v", ErrBroken, name, err)
		}
		_ = cl.Append(cv)
	}
	pv, err := toStarlark(map[string]any(params))
	if err != nil {
		return false, "", fmt.Errorf("%w: %s: params: %v", ErrBroken, name, err)
	}
	if params == nil {
		pv = starlark.NewDict(0)
	}
	v, err := starlark.Call(th, fn, starlark.Tuple{wv, cl, pv}, nil)
	if err != nil {
		return false, "", fmt.Errorf("%w: %s: %w", ErrBroken, name, st.classify(err))
	}
	switch v := v.(type) {
	case starlark.NoneType:
		return true, "", nil
	case starlark.Bool:
		if v {
			return true, "", nil
		}
	case starlark.String:
		return false, string(v), nil
	}
	return false, "", fmt.Errorf("%w: %s: check returned %s, want None, True or a string", ErrBroken, name, v.Type())
}
