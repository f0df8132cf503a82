package contract

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"
)

// check runs the cross-references: between contract.yaml's parts, and from it
// to the world and the Starlark files. Each step owns one part of the
// contract.
func (l *loader) check(pos *positions) {
	// When tools: is not a list (reported as a bad value), every reference to
	// a tool would be noise.
	toolRefs := !pos.toolsBad
	l.checkDeclarations(pos, toolRefs)
	compiled := l.checkTools(pos)
	l.checkReachable()
	l.checkCaller(pos, toolRefs)
	l.checkUseCaseTools(pos, toolRefs)
	l.checkDirections(pos, toolRefs)
	l.checkSequences(pos, compiled, toolRefs)
}

// checkDeclarations: at least one tool, no name declared twice, and rules'
// checks naming code-settled sub-goals.
func (l *loader) checkDeclarations(pos *positions, toolRefs bool) {
	c, r := l.c, l.r
	if pos.toolItems == 0 && toolRefs {
		r.add(ContractFile, pos.toolsKey, CodeNoTools, "the contract declares no tools; an agent needs at least one")
	}
	dupes(r, CodeDuplicateRule, "rule", len(c.Rules), func(i int) (string, int) { return c.Rules[i].ID, c.Rules[i].Line })
	l.checkRuleChecks()
	l.checkSubGoalTools()
	dupes(r, CodeDuplicateUseCase, "use case", len(c.UseCases), func(i int) (string, int) { return c.UseCases[i].ID, c.UseCases[i].Line })
	dupes(r, CodeDuplicateTool, "tool", len(c.Tools), func(i int) (string, int) { return c.Tools[i].Name, c.Tools[i].Line })
	dupes(r, CodeDuplicateSequence, "sequence", len(c.Sequences), func(i int) (string, int) { return c.Sequences[i].Name, c.Sequences[i].Line })
}

// checkTools checks each tool on its own (params, x-refs, log_only,
// requires, handler) and returns the compiled params schemas, indexed as
// the tools (nil where a schema did not compile).
func (l *loader) checkTools(pos *positions) []*jsonschema.Schema {
	c := l.c
	compiled := make([]*jsonschema.Schema, len(c.Tools))
	for i := range c.Tools {
		t, tp := &c.Tools[i], pos.tools[i]
		compiled[i] = l.checkParams(t, tp)
		l.checkXRefs(t, tp)
		l.checkLogOnly(t, tp)
		l.checkRequires(t, tp)
		l.checkHandler(t, tp)
	}
	return compiled
}

// checkLogOnly: log_only names parameters of the tool.
func (l *loader) checkLogOnly(t *Tool, tp toolPos) {
	props := properties(t.Params)
	for j, name := range t.LogOnly {
		if _, ok := props[name]; !ok {
			l.r.add(ContractFile, tp.logOnly[j], CodeUnknownParam, "log_only names %q, which is not a parameter of %s", name, t.Name)
		}
	}
}

// checkRequires: each requirement names other tools, and its same: names a
// parameter of both the tool and the tools it requires.
func (l *loader) checkRequires(t *Tool, tp toolPos) {
	c, r := l.c, l.r
	const F = ContractFile
	props := properties(t.Params)
	for j, req := range t.Requires {
		rp := tp.requires[j]
		for k, name := range req.AnyOf {
			other := c.Tool(name)
			switch {
			case name == t.Name:
				r.add(F, rp.anyOf[k], CodeBadValue, "tool %s requires itself", t.Name)
			case other == nil:
				r.add(F, rp.anyOf[k], CodeUnknownRequires, "tool %s requires %q, which is not a tool", t.Name, name)
			default:
				for s, arg := range req.Same {
					if _, ok := properties(other.Params)[arg]; !ok {
						r.add(F, rp.same[s], CodeUnknownParam, "same: %q is not a parameter of %s", arg, other.Name)
					}
				}
			}
		}
		for s, arg := range req.Same {
			if _, ok := props[arg]; !ok {
				r.add(F, rp.same[s], CodeUnknownParam, "same: %q is not a parameter of %s", arg, t.Name)
			}
		}
	}
}

// checkCaller: the caller's table and key are in the schema, and the tools
// it is read from exist.
func (l *loader) checkCaller(pos *positions, toolRefs bool) {
	c, r := l.c, l.r
	const F = ContractFile
	cl := c.Caller
	if cl == nil {
		return
	}
	if l.schemaOK && cl.Table != "" {
		if tab := c.Table(cl.Table); tab == nil {
			r.add(F, pos.caller.table, CodeUnknownCallerTable, "caller table %q is not in schema.sql", cl.Table)
		} else if cl.Key != "" && tab.Column(cl.Key) == nil {
			r.add(F, pos.caller.key, CodeUnknownCallerKey, "caller key %q is not a column of %s", cl.Key, cl.Table)
		}
	}
	for i, name := range cl.From {
		if c.Tool(name) == nil && toolRefs {
			r.add(F, pos.caller.from[i], CodeUnknownCallerTool, "caller from names %q, which is not a tool", name)
		}
	}
}

// checkUseCaseTools: the tools a use case names exist.
func (l *loader) checkUseCaseTools(pos *positions, toolRefs bool) {
	c := l.c
	for i, uc := range c.UseCases {
		for j, name := range uc.Tools {
			if c.Tool(name) == nil && toolRefs {
				l.r.add(ContractFile, pos.useCases[i][j], CodeUnknownTool, "use case %s names tool %q, which is not a tool", uc.ID, name)
			}
		}
	}
}

// checkSequences: each step calls a tool that exists, with arguments its
// params accept.
func (l *loader) checkSequences(pos *positions, compiled []*jsonschema.Schema, toolRefs bool) {
	c := l.c
	for i, s := range c.Sequences {
		for j, step := range s.Steps {
			sp := pos.steps[i][j]
			if step.Tool == "" || !toolRefs {
				continue
			}
			k := toolIndex(c, step.Tool)
			if k < 0 {
				l.r.add(ContractFile, sp.tool, CodeUnknownTool, "sequence %s calls %q, which is not a tool", s.Name, step.Tool)
				continue
			}
			l.checkStepArgs(&c.Tools[k], compiled[k], step, sp)
		}
	}
}

// checkDirections settles each use case's direction (the contract's when it
// gives none: inbound if the contract takes inbound calls) and checks what an
// outbound use case needs (checkOutbound).
func (l *loader) checkDirections(pos *positions, toolRefs bool) {
	c := l.c
	allowed := map[string]bool{}
	for _, d := range c.Direction {
		allowed[d] = true
	}
	def := Inbound
	if len(c.Direction) > 0 && !allowed[Inbound] {
		def = Outbound
	}
	for i := range c.UseCases {
		u := &c.UseCases[i]
		var at map[string]int
		if i < len(pos.useCaseFields) {
			at = pos.useCaseFields[i]
		}
		line := func(k string) int {
			if n := at[k]; n > 0 {
				return n
			}
			return u.Line
		}
		if u.Direction == "" {
			if _, given := at["direction"]; given {
				continue // a bad value, already reported
			}
			u.Direction = def
		} else if len(c.Direction) > 0 && !allowed[u.Direction] {
			l.r.add(ContractFile, line("direction"), CodeDirectionNotAllowed, "use case %s is %s, but the contract's direction is %s: add %s to it", u.ID, u.Direction, strings.Join(c.Direction, " and "), u.Direction)
		}
		if !u.Outbound() {
			for _, k := range []string{"purpose", "missed_call", "call_later"} {
				if _, given := at[k]; given {
					l.r.add(ContractFile, line(k), CodeBadValue, "use case %s: %s is for outbound use cases (direction: outbound)", u.ID, k)
				}
			}
			continue
		}
		_, purposeGiven := at["purpose"]
		l.checkOutbound(u, line, purposeGiven, toolRefs)
	}
}

// checkOutbound checks what an outbound use case needs: tools that exist for
// a missed call and a call put off, and a purpose table whose records lead to
// a callee in the caller table. line is where a field of the use case is
// (the use case's own line when the field is not given).
func (l *loader) checkOutbound(u *UseCase, line func(field string) int, purposeGiven, toolRefs bool) {
	c, r := l.c, l.r
	const F = ContractFile
	for _, k := range []string{"missed_call", "call_later"} {
		name := u.MissedCall
		if k == "call_later" {
			name = u.CallLater
		}
		if name != "" && c.Tool(name) == nil && toolRefs {
			r.add(F, line(k), CodeUnknownTool, "use case %s: %s names %q, which is not a tool", u.ID, k, name)
		}
	}
	switch {
	case u.Purpose == "":
		if !purposeGiven {
			r.add(F, u.Line, CodeMissingField, "outbound use case %s needs a purpose: the table of the record each call is about", u.ID)
		}
	case !l.schemaOK:
	case c.Table(u.Purpose) == nil:
		r.add(F, line("purpose"), CodeUnknownPurpose, "use case %s: purpose %q is not a table of schema.sql", u.ID, u.Purpose)
	case c.Caller == nil || c.Caller.Table == "" || c.Table(c.Caller.Table) == nil:
		r.add(F, line("purpose"), CodeOutboundNoCaller, "use case %s is outbound, but the contract names no caller table to draw the callee from (caller: {table, key})", u.ID)
	case c.CalleePath(u.Purpose) == nil:
		r.add(F, line("purpose"), CodePurposeNoCallee, "use case %s: no chain of foreign keys leads from %s to %s: the callee is the owner of the call's purpose record", u.ID, u.Purpose, c.Caller.Table)
	}
}

func toolIndex(c *Contract, name string) int {
	for i := range c.Tools {
		if c.Tools[i].Name == name {
			return i
		}
	}
	return -1
}

// checkRuleChecks: a rule's check names a code-settled sub-goal of the
// contract. A sub-goal file that exists but did not parse is reported as such,
// not again here.
func (l *loader) checkRuleChecks() {
	for _, rule := range l.c.Rules {
		if rule.Check == "" {
			continue
		}
		line := rule.CheckLine
		if line == 0 {
			line = rule.Line
		}
		sg := l.c.SubGoal(rule.Check)
		switch {
		case sg == nil && l.c.Sources["subgoals/"+rule.Check+".star"] != "":
		case sg == nil:
			l.r.add(ContractFile, line, CodeBadRuleCheck, "rule %s: check %q is not a sub-goal of the contract (subgoals/%s.star)", rule.ID, rule.Check, rule.Check)
		case sg.Judged:
			l.r.add(ContractFile, line, CodeBadRuleCheck, "rule %s: check %q is judged; a rule's check must be settled by code", rule.ID, rule.Check)
		}
	}
}

// checkSubGoalTools: the tools a judged sub-goal is about are tools of the
// contract.
func (l *loader) checkSubGoalTools() {
	for _, sg := range l.c.SubGoals {
		for _, t := range sg.Tools {
			if l.c.Tool(t) == nil {
				l.r.add(sg.File, sg.ToolsLine, CodeUnknownTool, "sub-goal %s: tools names %q, which is not a tool of the contract", sg.Name, t)
			}
		}
	}
}

// dupes reports the second and later uses of a name.
func dupes(r report, code, what string, n int, at func(int) (string, int)) {
	first := map[string]int{}
	for i := 0; i < n; i++ {
		name, line := at(i)
		if name == "" {
			continue
		}
		if l, ok := first[name]; ok {
			r.add(ContractFile, line, code, "%s %q is declared twice (first on line %d)", what, name, l)
			continue
		}
		first[name] = line
	}
}

func properties(params map[string]any) map[string]any {
	p, _ := params["properties"].(map[string]any)
	return p
}

// noLoader refuses every $ref outside the schema itself: a contract is
// untrusted input and must not make the loader read files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("references outside the params schema are not allowed (%s)", url)
}

var printer = message.NewPrinter(language.English)

// validationMessages flattens a jsonschema error into its leaf messages.
func validationMessages(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{strings.ReplaceAll(err.Error(), "\n", "; ")}
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, fmt.Sprintf("at '/%s': %s", strings.Join(e.InstanceLocation, "/"), e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

// CompileParams compiles a tool's params as a draft 2020-12 JSON Schema that
// may not reference anything outside itself.
func CompileParams(params map[string]any) (*jsonschema.Schema, error) {
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseLoader(noLoader{})
	const url = "urn:suitegen:params"
	if err := comp.AddResource(url, params); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	s, err := comp.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	return s, nil
}

// checkParams requires an object schema that compiles, whose required names are declared.
func (l *loader) checkParams(t *Tool, tp toolPos) *jsonschema.Schema {
	if t.Params == nil {
		return nil // reported while reading
	}
	line := t.Line
	if tp.params != nil {
		line = tp.params.Line
	}
	bad := func(format string, args ...any) {
		l.r.add(ContractFile, line, CodeBadParamsSchema, "params of %s: %s", t.Name, fmt.Sprintf(format, args...))
	}
	if t.Params["type"] != "object" {
		bad("must be an object schema (type: object)")
		return nil
	}
	if p, ok := t.Params["properties"]; ok {
		props, isMap := p.(map[string]any)
		if !isMap {
			bad("properties must be a mapping of argument name to schema")
			return nil
		}
		for _, name := range t.ParamOrder {
			if _, isMap := props[name].(map[string]any); !isMap {
				bad("argument %q: its schema must be a mapping", name)
			}
		}
	}
	if req, ok := t.Params["required"].([]any); ok {
		props := properties(t.Params)
		for _, v := range req {
			if s, isStr := v.(string); isStr {
				if _, declared := props[s]; !declared {
					bad("required names %q, which is not in properties", s)
				}
			}
		}
	}
	s, err := CompileParams(t.Params)
	if err != nil {
		msgs := validationMessages(err)
		bad("not a valid JSON Schema: %s", strings.Join(msgs, "; "))
		return nil
	}
	return s
}

// checkXRefs requires each x-ref to be "table.column" naming a real column.
func (l *loader) checkXRefs(t *Tool, tp toolPos) {
	props := properties(t.Params)
	for _, name := range t.ParamOrder {
		p, _ := props[name].(map[string]any)
		ref, has := p["x-ref"]
		if !has {
			continue
		}
		line := tp.xref[name]
		if ref == nil && l.lineHasHash(line) {
			l.r.add(ContractFile, line, CodeUnquotedHash, "%s.%s: x-ref is null because an unquoted # starts a comment; quote the value", t.Name, name)
			continue
		}
		if ref == false {
			continue // declared free text
		}
		s, isStr := ref.(string)
		table, column, dot := strings.Cut(s, ".")
		if !isStr || !dot || table == "" || column == "" || strings.Contains(column, ".") {
			l.r.add(ContractFile, line, CodeBadXRef, "%s.%s: x-ref must be table.column (or false: names no record), got %v", t.Name, name, ref)
			continue
		}
		if !l.schemaOK {
			continue
		}
		tab := l.c.Table(table)
		switch {
		case tab == nil:
			l.r.add(ContractFile, line, CodeBadXRef, "%s.%s: x-ref %s names table %q, which is not in schema.sql", t.Name, name, s, table)
		case tab.Column(column) == nil:
			l.r.add(ContractFile, line, CodeBadXRef, "%s.%s: x-ref %s names column %q, which table %s does not have", t.Name, name, s, column, table)
		}
	}
}

func (l *loader) checkHandler(t *Tool, tp toolPos) {
	if t.Handler == "" {
		return
	}
	if !localStar(t.Handler) {
		l.r.add(ContractFile, tp.handler, CodeBadValue, "handler %q must be a relative path to a .star file inside the contract", t.Handler)
		return
	}
	if st, err := fs.Stat(l.fsys, t.Handler); err != nil || st.IsDir() {
		l.r.add(ContractFile, tp.handler, CodeHandlerMissing, "tool %s has no handler: %s does not exist", t.Name, t.Handler)
		return
	}
	f := l.parsed[t.Handler]
	if f == nil {
		return // a syntax error, reported on the file
	}
	def := f.defs["handle"]
	switch {
	case def == nil:
		l.r.add(t.Handler, 0, CodeHandlerNoHandle, "handler of %s has no top-level def handle(args, db)", t.Name)
	case !callable(def, 2):
		l.r.add(t.Handler, int(def.Def.Line), CodeHandlerNoHandle, "handle must take (args, db)")
	}
}

// checkReachable finds tools whose requirements can never all be met: a
// requirement is met only by a tool that can itself be called.
func (l *loader) checkReachable() {
	c := l.c
	ok := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, t := range c.Tools {
			if ok[t.Name] {
				continue
			}
			all := true
			for _, req := range t.Requires {
				met := false
				for _, name := range req.AnyOf {
					met = met || ok[name]
				}
				all = all && met
			}
			if all {
				ok[t.Name] = true
				changed = true
			}
		}
	}
	for _, t := range c.Tools {
		if ok[t.Name] {
			continue
		}
		// Requirements naming unknown tools are reported as such; only report a cycle otherwise.
		known := true
		for _, req := range t.Requires {
			for _, name := range req.AnyOf {
				if c.Tool(name) == nil || name == t.Name {
					known = false
				}
			}
		}
		if known {
			l.r.add(ContractFile, t.Line, CodeRequiresCycle, "tool %s can never be called: its requires go round in a circle", t.Name)
		}
	}
}

// checkStepArgs reports null-by-comment arguments and arguments the world would refuse.
func (l *loader) checkStepArgs(t *Tool, schema *jsonschema.Schema, step SequenceStep, sp stepPos) {
	props := properties(t.Params)
	names := make([]string, 0, len(step.Args))
	for name := range step.Args {
		names = append(names, name)
	}
	sort.Strings(names)
	hashed := false
	for _, name := range names {
		n := sp.args[name]
		p, declared := props[name].(map[string]any)
		if !declared {
			l.r.add(ContractFile, lineOf(n, step.Line), CodeBadStepArgs, "%s has no argument %q", t.Name, name)
			continue
		}
		if n != nil && n.Tag == "!!null" && wantsString(p) && l.hashOnLine(n) {
			l.r.add(ContractFile, n.Line, CodeUnquotedHash, "argument %s is null because an unquoted # starts a comment; quote the value", name)
			hashed = true
		}
	}
	if schema == nil || hashed {
		return
	}
	if err := schema.Validate(step.Args); err != nil {
		for _, m := range validationMessages(err) {
			l.r.add(ContractFile, step.Line, CodeBadStepArgs, "%s: %s", t.Name, m)
		}
	}
}

func lineOf(n *yaml.Node, fallback int) int {
	if n != nil {
		return n.Line
	}
	return fallback
}

func wantsString(p map[string]any) bool {
	switch t := p["type"].(type) {
	case string:
		return t == "string"
	case []any:
		for _, x := range t {
			if x == "string" {
				return true
			}
		}
	}
	_, hasRef := p["x-ref"]
	return p["type"] == nil && hasRef
}

func (l *loader) hashOnLine(n *yaml.Node) bool { return l.lineHasHash(n.Line) }

func (l *loader) lineHasHash(line int) bool {
	lines := strings.Split(string(l.files[ContractFile]), "\n")
	return line >= 1 && line <= len(lines) && strings.Contains(lines[line-1], "#")
}
