package contract

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ContractFile is the contract's YAML, relative to the contract directory.
const ContractFile = "contract.yaml"

// knownFields is every key the loader accepts, per kind of mapping. The
// published JSON Schema (schema.json) has a $defs entry of the same name (the
// root for "contract") whose properties are exactly these; a test keeps the
// two from drifting.
var knownFields = map[string][]string{
	"contract":         {"agent", "one_liner", "modality", "direction", "now", "notes", "caller", "rules", "use_cases", "tools", "sequences", "personas"},
	"caller":           {"table", "key", "from"},
	"rule":             {"id", "text", "check"},
	"use_case":         {"id", "text", "tools", "direction", "purpose", "missed_call", "call_later"},
	"tool":             {"name", "description", "params", "requires", "handler", "changes_state", "log_only", "ends_conversation"},
	"requirement_same": {"tool", "same"},
	"sequence":         {"name", "steps", "expect"},
	"step":             {"tool", "args", "expect"},
	"expectation":      {"sql", "rows", "unordered"},
	"personas":         {"personalities", "accents", "locations", "styles", "line_qualities", "background_noises", "spellings"},
}

// requiredFields are the keys that must be present, per kind of mapping.
var requiredFields = map[string][]string{
	"contract":         {"agent", "one_liner", "modality", "direction", "use_cases", "tools"},
	"caller":           {"table", "key"},
	"rule":             {"id", "text"},
	"use_case":         {"id", "text"},
	"tool":             {"name", "description"},
	"requirement_same": {"tool"},
	"sequence":         {"name", "steps"},
	"step":             {"tool"},
	"expectation":      {"sql", "rows"},
}

var (
	agentPattern = regexp.MustCompile(agentPatternText)
	idPattern    = regexp.MustCompile(idPatternText)
	toolPattern  = regexp.MustCompile(toolPatternText)
)

// Patterns, also published in schema.json (a test keeps them equal).
const (
	agentPatternText = `^[a-z0-9-]+$`
	// Rule, use case and sequence ids end up in file names and scenario fields.
	idPatternText = `^[A-Za-z0-9][A-Za-z0-9_.-]*$`
	// What function-calling APIs accept as a function name.
	toolPatternText = `^[A-Za-z0-9_-]{1,64}$`
)

// positions keeps the lines cross-checks need, beside the Contract values
// (tools[i] describes c.Tools[i], and so on).
type positions struct {
	toolsKey  int  // line of "tools:", 0 when absent
	toolItems int  // entries under tools:
	toolsBad  bool // tools: is not a list: references to tools cannot be checked
	tools     []toolPos
	steps     [][]stepPos // per sequence, per step
	caller    callerPos
	useCases  [][]int // per use case, line of each tools entry
	// per use case, the line of each outbound field given (direction,
	// purpose, missed_call, call_later)
	useCaseFields []map[string]int
}

type toolPos struct {
	handler  int // line of handler:, else the tool's line
	params   *yaml.Node
	xref     map[string]int // param -> line of its x-ref
	requires []reqPos
	logOnly  []int
}

type reqPos struct {
	anyOf []int
	same  []int
}

type stepPos struct {
	tool int
	args map[string]*yaml.Node // argument -> value node
}

type callerPos struct {
	table, key int
	from       []int
}

// yamlDoc walks contract.yaml's node tree, reporting as it goes.
type yamlDoc struct {
	lines  []string
	r      report
	budget int // nodes left to convert; guards against alias bombs
}

const yamlNodeBudget = 1 << 16

func (d *yamlDoc) add(line int, code, format string, args ...any) {
	d.r.add(ContractFile, line, code, format, args...)
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// parseContractYAML fills c from contract.yaml and returns the positions of what it read.
func parseContractYAML(data []byte, c *Contract, r report) *positions {
	d := &yamlDoc{lines: strings.Split(string(data), "\n"), r: r, budget: yamlNodeBudget}
	doc := d.document(data)
	if doc == nil {
		return nil
	}
	f := d.fields(doc, "contract")
	if f == nil {
		return nil
	}
	pos := &positions{}
	d.about(f, c)
	if v := f.get("caller"); v != nil {
		c.Caller = d.caller(v, &pos.caller)
	}
	if v := f.get("rules"); v != nil {
		c.Rules = d.rules(v)
	}
	if v := f.get("use_cases"); v != nil {
		c.UseCases, pos.useCases, pos.useCaseFields = d.useCases(v)
	}
	if v := f.get("tools"); v != nil {
		pos.toolsKey = f.keyLine("tools")
		items := d.seq(v, "tools")
		pos.toolItems = len(items)
		pos.toolsBad = resolve(v).Kind != yaml.SequenceNode
		for _, n := range items {
			if tool, tp, ok := d.tool(n); ok {
				c.Tools = append(c.Tools, tool)
				pos.tools = append(pos.tools, tp)
			}
		}
	}
	if v := f.get("sequences"); v != nil {
		for _, n := range d.seq(v, "sequences") {
			if s, sp, ok := d.sequence(n); ok {
				c.Sequences = append(c.Sequences, s)
				pos.steps = append(pos.steps, sp)
			}
		}
	}
	if v := f.get("personas"); v != nil {
		c.Personas = d.personas(v)
	}
	return pos
}

// document decodes the one YAML document of data and returns its root
// node; nil (with a problem reported) when there is none to read.
func (d *yamlDoc) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			d.add(0, CodeMissingField, "contract.yaml is empty")
			return nil
		}
		d.syntaxError(err, d.problemLine(err))
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.add(extra.Line, CodeYAMLSyntax, "more than one YAML document; a contract is one document")
	} else if !errors.Is(err, io.EOF) {
		d.syntaxError(err, 0)
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	return doc
}

// about reads what the contract says of its agent: agent, one_liner,
// modality, direction, now and notes.
func (d *yamlDoc) about(f *mapping, c *Contract) {
	if v := f.get("agent"); v != nil {
		if s, ok := d.str(v, "agent"); ok && !agentPattern.MatchString(s) {
			d.add(v.Line, CodeBadValue, "agent %q must be a slug: lower-case letters, digits and dashes", s)
		} else {
			c.Agent = s
		}
	}
	if v := f.get("one_liner"); v != nil {
		c.OneLiner, _ = d.str(v, "one_liner")
	}
	if v := f.get("modality"); v != nil {
		if s, ok := d.str(v, "modality"); ok {
			if s != "chat" && s != "voice" {
				d.add(v.Line, CodeBadValue, "modality %q: want chat or voice", s)
			} else {
				c.Modality = s
			}
		}
	}
	if v := f.get("direction"); v != nil {
		c.Direction = d.direction(v)
	}
	if v := f.get("now"); v != nil {
		if s, ok := d.str(v, "now"); ok {
			if _, err := time.Parse(time.RFC3339, s); err != nil {
				d.add(v.Line, CodeBadValue, "now %q: want an RFC 3339 time such as 2026-03-10T10:00:00-06:00", s)
			} else {
				c.Now = s
			}
		}
	}
	if v := f.get("notes"); v != nil {
		c.Notes, _ = d.str(v, "notes")
	}
}

// rules reads rules:, keeping those with an id.
func (d *yamlDoc) rules(v *yaml.Node) []Rule {
	var out []Rule
	for _, n := range d.seq(v, "rules") {
		if rf := d.fields(n, "rule"); rf != nil {
			rule := Rule{Line: n.Line}
			rule.ID, _ = d.id(rf.get("id"), "rule id")
			rule.Text, _ = d.str(rf.get("text"), "text")
			if v := rf.get("check"); v != nil {
				rule.Check, _ = d.str(v, "check")
				rule.CheckLine = v.Line
			}
			if rule.ID != "" {
				out = append(out, rule)
			}
		}
	}
	return out
}

// useCases reads use_cases:, keeping those with an id, the lines of each
// one's tools, and the lines of its outbound fields (direction, purpose,
// missed_call, call_later).
func (d *yamlDoc) useCases(v *yaml.Node) ([]UseCase, [][]int, []map[string]int) {
	items := d.seq(v, "use_cases")
	if len(items) == 0 && v.Kind == yaml.SequenceNode {
		d.add(v.Line, CodeMissingField, "use_cases is empty: name at least one thing the agent is for")
	}
	var out []UseCase
	var toolLines [][]int
	var fieldLines []map[string]int
	for _, n := range items {
		if uf := d.fields(n, "use_case"); uf != nil {
			uc := UseCase{Line: n.Line}
			uc.ID, _ = d.id(uf.get("id"), "use case id")
			uc.Text, _ = d.str(uf.get("text"), "text")
			var lines []int
			if t := uf.get("tools"); t != nil {
				uc.Tools, lines = d.strs(t, "tools")
			}
			fields := d.outbound(uf, &uc)
			if uc.ID != "" {
				out = append(out, uc)
				toolLines = append(toolLines, lines)
				fieldLines = append(fieldLines, fields)
			}
		}
	}
	return out, toolLines, fieldLines
}

// outbound reads a use case's direction and outbound fields into uc,
// returning the line of each one given.
func (d *yamlDoc) outbound(uf *mapping, uc *UseCase) map[string]int {
	fields := map[string]int{}
	for _, k := range []string{"direction", "purpose", "missed_call", "call_later"} {
		v := uf.get(k)
		if v == nil {
			continue
		}
		fields[k] = v.Line
		s, ok := d.str(v, k)
		if !ok {
			continue
		}
		switch k {
		case "direction":
			if s != Inbound && s != Outbound {
				d.add(v.Line, CodeBadValue, "use case direction %q: want inbound or outbound", s)
				continue
			}
			uc.Direction = s
		case "purpose":
			uc.Purpose = s
		case "missed_call":
			uc.MissedCall = s
		case "call_later":
			uc.CallLater = s
		}
	}
	return fields
}

// personas reads personas:, the lists persona traits are drawn from.
func (d *yamlDoc) personas(v *yaml.Node) Personas {
	pf := d.fields(v, "personas")
	if pf == nil {
		return Personas{}
	}
	get := func(k string) []string {
		if n := pf.get(k); n != nil {
			s, _ := d.strs(n, k)
			return s
		}
		return nil
	}
	return Personas{
		Personalities: get("personalities"),
		Accents:       get("accents"),
		Locations:     get("locations"),
		Styles:        get("styles"),

		LineQualities:    get("line_qualities"),
		BackgroundNoises: get("background_noises"),
		Spellings:        get("spellings"),
	}
}

// syntaxError reports a YAML error at line, else at the line yaml.v3 names.
func (d *yamlDoc) syntaxError(err error, line int) {
	msg, yamlLine := splitYAMLError(err)
	if line == 0 {
		line = yamlLine
	}
	// The usual cause in a flow mapping is a value starting with #, read as a comment.
	for _, l := range []int{line, line - 1} {
		if l >= 1 && l <= len(d.lines) && strings.Contains(d.lines[l-1], " #") {
			msg += " (a # after a space starts a comment: quote values that hold #)"
			break
		}
	}
	if line >= 1 && line <= len(d.lines) && plainValueHoldsColon(d.lines[line-1]) {
		msg += " (a \": \" inside an unquoted value reads as another key: quote the value)"
	}
	d.add(line, CodeYAMLSyntax, "%s", msg)
}

// plainValueHoldsColon reports whether a "key: value" line's value is a plain (unquoted,
// not block or flow) scalar that itself holds ": ", which YAML reads as a nested mapping.
func plainValueHoldsColon(line string) bool {
	rest := strings.TrimLeft(line, " \t")
	rest = strings.TrimPrefix(rest, "- ")
	i := strings.Index(rest, ": ")
	if i <= 0 || strings.ContainsAny(rest[:i], "{}[],\"' ") {
		return false // not a block mapping's plain key (a flow mapping, or no key at all)
	}
	value := strings.TrimLeft(rest[i+2:], " ")
	if value == "" || strings.ContainsAny(value[:1], "\"'|>{[&*!#") {
		return false
	}
	return strings.Contains(value, ": ") || strings.HasSuffix(value, ":")
}

func splitYAMLError(err error) (msg string, line int) {
	msg = strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimPrefix(msg, m[0]+": ")
	}
	return msg, line
}

// problemLine finds the line a YAML error is on. yaml.v3 names the line where
// the enclosing construct starts (the "rules:" above a badly indented entry);
// the first line whose prefix of the document fails with the same message is
// where the author has to look. Found by bisection, assuming that once a
// prefix fails, longer ones fail too; 0 when that does not hold.
func (d *yamlDoc) problemLine(err error) int {
	want, _ := splitYAMLError(err)
	fails := func(n int) bool {
		var node yaml.Node
		e := yaml.Unmarshal([]byte(strings.Join(d.lines[:n], "\n")), &node)
		if e == nil {
			return false
		}
		msg, _ := splitYAMLError(e)
		return msg == want
	}
	lo, hi := 1, len(d.lines) // invariant: the answer is in [lo, hi]
	if !fails(hi) {
		return 0
	}
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// mapping is one YAML mapping's keys and values.
type mapping struct {
	keys map[string]*yaml.Node
	vals map[string]*yaml.Node
}

func (m *mapping) get(k string) *yaml.Node { return m.vals[k] }

func (m *mapping) keyLine(k string) int {
	if n := m.keys[k]; n != nil {
		return n.Line
	}
	return 0
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// fields reads a mapping of the given kind, reporting unknown, duplicate and missing keys.
func (d *yamlDoc) fields(n *yaml.Node, kind string) *mapping {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		line := 0
		if n != nil {
			line = n.Line
		}
		d.add(line, CodeBadValue, "%s: expected a mapping, got %s", strings.ReplaceAll(kind, "_", " "), describe(n))
		return nil
	}
	known := map[string]bool{}
	for _, k := range knownFields[kind] {
		known[k] = true
	}
	m := &mapping{keys: map[string]*yaml.Node{}, vals: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			d.add(n.Content[i].Line, CodeBadValue, "%s: keys must be plain names", kind)
			continue
		}
		if !known[k.Value] {
			d.add(k.Line, CodeUnknownField, "%s has no field %q (known: %s)", strings.ReplaceAll(kind, "_", " "), k.Value, strings.Join(knownFields[kind], ", "))
			continue
		}
		if prev, dup := m.keys[k.Value]; dup {
			d.add(k.Line, CodeDuplicateKey, "%q is given twice (first on line %d)", k.Value, prev.Line)
			continue
		}
		m.keys[k.Value] = k
		m.vals[k.Value] = v
	}
	for _, k := range requiredFields[kind] {
		if _, ok := m.vals[k]; !ok && !(kind == "contract" && k == "tools") {
			d.add(n.Line, CodeMissingField, "%s needs %q", strings.ReplaceAll(kind, "_", " "), k)
		}
	}
	return m
}

func describe(n *yaml.Node) string {
	n = resolve(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Tag == "!!null":
		return "null"
	case n.Kind == yaml.ScalarNode:
		return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
	}
	return "something else"
}

// hashOnLine reports whether the source line of n holds a '#': an unquoted # read as a comment.
func (d *yamlDoc) hashOnLine(n *yaml.Node) bool {
	return n.Line >= 1 && n.Line <= len(d.lines) && strings.Contains(d.lines[n.Line-1], "#")
}

// str reads a string scalar; a null on a line holding # is the unquoted-hash mistake.
func (d *yamlDoc) str(n *yaml.Node, what string) (string, bool) {
	n = resolve(n)
	if n == nil {
		return "", false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		if d.hashOnLine(n) {
			d.add(n.Line, CodeUnquotedHash, "%s is null because an unquoted # starts a comment; quote the value", what)
		} else {
			d.add(n.Line, CodeBadValue, "%s: expected a string, got null", what)
		}
		return "", false
	}
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "!!timestamp") {
		d.add(n.Line, CodeBadValue, "%s: expected a string, got %s (quote it)", what, describe(n))
		return "", false
	}
	if strings.TrimSpace(n.Value) == "" {
		d.add(n.Line, CodeBadValue, "%s is empty", what)
		return "", false
	}
	return n.Value, true
}

// id reads an identifier-like string.
func (d *yamlDoc) id(n *yaml.Node, what string) (string, bool) {
	s, ok := d.str(n, what)
	if ok && !idPattern.MatchString(s) {
		d.add(n.Line, CodeBadValue, "%s %q: use letters, digits, '-', '_' and '.', starting with a letter or digit", what, s)
		return "", false
	}
	return s, ok
}

func (d *yamlDoc) boolean(n *yaml.Node, what string) bool {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.add(n.Line, CodeBadValue, "%s: expected true or false, got %s", what, describe(n))
		return false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		d.add(n.Line, CodeBadValue, "%s: %v", what, err)
	}
	return b
}

// seq reads a list's items.
func (d *yamlDoc) seq(n *yaml.Node, what string) []*yaml.Node {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.add(n.Line, CodeBadValue, "%s: expected a list, got %s", what, describe(n))
		return nil
	}
	return n.Content
}

// strs reads a list of strings and the line of each.
func (d *yamlDoc) strs(n *yaml.Node, what string) ([]string, []int) {
	var out []string
	var lines []int
	for _, item := range d.seq(n, what) {
		if s, ok := d.str(item, what+" entry"); ok {
			out = append(out, s)
			lines = append(lines, item.Line)
		}
	}
	return out, lines
}

func (d *yamlDoc) direction(n *yaml.Node) []string {
	n = resolve(n)
	var dirs []string
	var lines []int
	if n.Kind == yaml.SequenceNode {
		dirs, lines = d.strs(n, "direction")
		if len(n.Content) == 0 {
			d.add(n.Line, CodeBadValue, "direction is an empty list: want inbound, outbound or both")
		}
	} else if s, ok := d.str(n, "direction"); ok {
		dirs, lines = []string{s}, []int{n.Line}
	}
	seen := map[string]bool{}
	var out []string
	for i, s := range dirs {
		switch {
		case s != "inbound" && s != "outbound":
			d.add(lines[i], CodeBadValue, "direction %q: want inbound or outbound", s)
		case seen[s]:
			d.add(lines[i], CodeBadValue, "direction %q is given twice", s)
		default:
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (d *yamlDoc) caller(n *yaml.Node, pos *callerPos) *Caller {
	f := d.fields(n, "caller")
	if f == nil {
		return nil
	}
	c := &Caller{Line: resolve(n).Line}
	if v := f.get("table"); v != nil {
		c.Table, _ = d.str(v, "caller table")
		pos.table = v.Line
	}
	if v := f.get("key"); v != nil {
		c.Key, _ = d.str(v, "caller key")
		pos.key = v.Line
	}
	if v := f.get("from"); v != nil {
		c.From, pos.from = d.strs(v, "caller from")
	}
	return c
}

func (d *yamlDoc) tool(n *yaml.Node) (Tool, toolPos, bool) {
	var t Tool
	tp := toolPos{xref: map[string]int{}}
	f := d.fields(n, "tool")
	if f == nil {
		return t, tp, false
	}
	n = resolve(n)
	t.Line = n.Line
	tp.handler = n.Line
	name, ok := d.str(f.get("name"), "tool name")
	if ok && !toolPattern.MatchString(name) {
		d.add(f.get("name").Line, CodeBadValue, "tool name %q: use 1-64 letters, digits, '_' or '-'", name)
		ok = false
	}
	t.Name = name
	t.Description, _ = d.str(f.get("description"), "description")
	if v := f.get("params"); v != nil {
		tp.params = resolve(v)
		if p, ok := d.value(v).(map[string]any); ok {
			t.Params = p
			t.ParamOrder, tp.xref = paramOrder(resolve(v))
		} else if resolve(v).Kind != yaml.MappingNode {
			d.add(v.Line, CodeBadParamsSchema, "params of %s must be an object JSON Schema, got %s", name, describe(v))
		}
	} else {
		t.Params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if v := f.get("requires"); v != nil {
		for _, item := range d.seq(v, "requires") {
			req, rp, ok := d.requirement(item)
			if ok {
				t.Requires = append(t.Requires, req)
				tp.requires = append(tp.requires, rp)
			}
		}
	}
	if v := f.get("handler"); v != nil {
		tp.handler = v.Line
		t.Handler, _ = d.str(v, "handler")
	} else if ok {
		t.Handler = "handlers/" + name + ".star"
	}
	if v := f.get("changes_state"); v != nil {
		b := d.boolean(v, "changes_state")
		t.ChangesState = &b
	}
	if v := f.get("log_only"); v != nil {
		t.LogOnly, tp.logOnly = d.strs(v, "log_only")
	}
	if v := f.get("ends_conversation"); v != nil {
		t.EndsConversation = d.boolean(v, "ends_conversation")
	}
	return t, tp, ok
}

// paramOrder reads the property names in the order written, and the line of each x-ref.
func paramOrder(params *yaml.Node) ([]string, map[string]int) {
	xref := map[string]int{}
	var order []string
	for i := 0; i+1 < len(params.Content); i += 2 {
		if params.Content[i].Value != "properties" {
			continue
		}
		props := resolve(params.Content[i+1])
		if props == nil || props.Kind != yaml.MappingNode {
			return nil, xref
		}
		for j := 0; j+1 < len(props.Content); j += 2 {
			name := props.Content[j].Value
			order = append(order, name)
			p := resolve(props.Content[j+1])
			if p == nil || p.Kind != yaml.MappingNode {
				continue
			}
			for k := 0; k+1 < len(p.Content); k += 2 {
				if p.Content[k].Value == "x-ref" {
					xref[name] = p.Content[k].Line
				}
			}
		}
	}
	return order, xref
}

// requirement reads one requires entry: a list of tools (any of), a bare tool
// name, or {tool: X, same: [args]}.
func (d *yamlDoc) requirement(n *yaml.Node) (Requirement, reqPos, bool) {
	n = resolve(n)
	req := Requirement{Line: n.Line}
	var rp reqPos
	switch n.Kind {
	case yaml.SequenceNode:
		req.AnyOf, rp.anyOf = d.strs(n, "requires")
		if len(n.Content) == 0 {
			d.add(n.Line, CodeBadValue, "requires entry is an empty list: name at least one tool")
		}
	case yaml.MappingNode:
		f := d.fields(n, "requirement_same")
		if f == nil {
			return req, rp, false
		}
		if v := f.get("tool"); v != nil {
			if s, ok := d.str(v, "requires tool"); ok {
				req.AnyOf, rp.anyOf = []string{s}, []int{v.Line}
			}
		}
		if v := f.get("same"); v != nil {
			req.Same, rp.same = d.strs(v, "same")
		}
	default:
		if s, ok := d.str(n, "requires entry"); ok {
			req.AnyOf, rp.anyOf = []string{s}, []int{n.Line}
		}
	}
	return req, rp, len(req.AnyOf) > 0
}

func (d *yamlDoc) sequence(n *yaml.Node) (Sequence, []stepPos, bool) {
	var s Sequence
	f := d.fields(n, "sequence")
	if f == nil {
		return s, nil, false
	}
	s.Line = resolve(n).Line
	name, ok := d.id(f.get("name"), "sequence name")
	s.Name = name
	var sps []stepPos
	if v := f.get("steps"); v != nil {
		items := d.seq(v, "steps")
		if len(items) == 0 && resolve(v).Kind == yaml.SequenceNode {
			d.add(v.Line, CodeBadValue, "sequence %s has no steps", name)
		}
		for _, item := range items {
			if step, sp, ok := d.step(item); ok {
				s.Steps = append(s.Steps, step)
				sps = append(sps, sp)
			}
		}
	}
	if v := f.get("expect"); v != nil {
		for _, item := range d.seq(v, "expect") {
			if e, ok := d.expectation(item); ok {
				s.Expect = append(s.Expect, e)
			}
		}
	}
	return s, sps, ok
}

// step reads one step of a sequence: its tool, its args (with the node of
// each, for the lines problems point at) and what it expects.
func (d *yamlDoc) step(item *yaml.Node) (SequenceStep, stepPos, bool) {
	sf := d.fields(item, "step")
	if sf == nil {
		return SequenceStep{}, stepPos{}, false
	}
	step := SequenceStep{Line: resolve(item).Line, Args: map[string]any{}}
	sp := stepPos{args: map[string]*yaml.Node{}}
	if tv := sf.get("tool"); tv != nil {
		step.Tool, _ = d.str(tv, "step tool")
		sp.tool = tv.Line
	}
	if av := sf.get("args"); av != nil {
		an := resolve(av)
		if an.Kind != yaml.MappingNode {
			d.add(av.Line, CodeBadValue, "step args: expected a mapping, got %s", describe(av))
		} else {
			step.Args, _ = d.value(an).(map[string]any)
			for i := 0; i+1 < len(an.Content); i += 2 {
				sp.args[an.Content[i].Value] = resolve(an.Content[i+1])
			}
		}
	}
	if ev := sf.get("expect"); ev != nil {
		if e, ok := d.str(ev, "step expect"); ok {
			switch e {
			case "ok":
			case "refused":
				step.Expect = e
			default:
				d.add(ev.Line, CodeUnknownSeqExpect, "step expect %q: want ok or refused", e)
			}
		}
	}
	return step, sp, true
}

// expectation reads one expectation of a sequence: a query and the rows it
// must return.
func (d *yamlDoc) expectation(item *yaml.Node) (Expectation, bool) {
	ef := d.fields(item, "expectation")
	if ef == nil {
		return Expectation{}, false
	}
	e := Expectation{Line: resolve(item).Line}
	e.SQL, _ = d.str(ef.get("sql"), "sql")
	if rv := ef.get("rows"); rv != nil {
		e.Rows = []map[string]any{}
		for _, row := range d.seq(rv, "rows") {
			if m, ok := d.value(row).(map[string]any); ok && resolve(row).Kind == yaml.MappingNode {
				e.Rows = append(e.Rows, m)
			} else {
				d.add(row.Line, CodeBadValue, "rows: each row is a mapping of column to value, got %s", describe(row))
			}
		}
	}
	if uv := ef.get("unordered"); uv != nil {
		e.Unordered = d.boolean(uv, "unordered")
	}
	return e, true
}

// value converts a node to a JSON value: map[string]any, []any, string, int64,
// float64, bool or nil. Problems (non-string keys, non-finite numbers) are reported.
func (d *yamlDoc) value(n *yaml.Node) any {
	return d.valueDepth(n, 0)
}

func (d *yamlDoc) valueDepth(n *yaml.Node, depth int) any {
	n = resolve(n)
	if n == nil || !d.spend(n, depth) {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			if k == nil || k.Kind != yaml.ScalarNode {
				d.add(n.Content[i].Line, CodeBadValue, "keys must be plain strings")
				continue
			}
			if _, dup := m[k.Value]; dup {
				d.add(k.Line, CodeDuplicateKey, "%q is given twice", k.Value)
			}
			m[k.Value] = d.valueDepth(n.Content[i+1], depth+1)
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			s = append(s, d.valueDepth(item, depth+1))
		}
		return s
	case yaml.ScalarNode:
		return d.scalar(n)
	}
	return nil
}

// spend charges a node to the document's budget, which bounds what aliases
// can expand to, and reports whether it may be read: not past the budget
// or deeper than 200 levels (each reported once).
func (d *yamlDoc) spend(n *yaml.Node, depth int) bool {
	d.budget--
	if d.budget == 0 {
		d.add(n.Line, CodeBadValue, "document too large (aliases expand beyond %d nodes)", yamlNodeBudget)
	}
	if d.budget <= 0 {
		return false
	}
	if depth > 200 {
		d.add(n.Line, CodeBadValue, "nested too deeply")
		d.budget = 0
		return false
	}
	return true
}

// scalar is a scalar node's JSON value by its tag: null, bool, an int64
// (a float with no fraction written as an integer too), a finite float64,
// else its text.
func (d *yamlDoc) scalar(n *yaml.Node) any {
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err == nil {
			return b
		}
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i
		}
		var f float64
		if err := n.Decode(&f); err == nil {
			return f
		}
	case "!!float":
		var f float64
		if err := n.Decode(&f); err == nil {
			if math.IsInf(f, 0) || math.IsNaN(f) {
				d.add(n.Line, CodeBadValue, "%s is not a JSON number", n.Value)
				return nil
			}
			if f == math.Trunc(f) && math.Abs(f) < 1<<53 && !strings.ContainsAny(n.Value, ".eE") {
				return int64(f)
			}
			return f
		}
	}
	return n.Value
}
