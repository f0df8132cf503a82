package contractgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// toolSpec is one tool while it is dealt: its truth, its handler text and
// what contract.yaml says of it.
type toolSpec struct {
	truth       Tool
	op          string
	res         *resource
	words       []string
	description string
	params      []param
	requires    bool
	logOnly     []string
	ends        bool
	star        *star
	tm          map[string]argTruth // each param's ground truth
}

// param is one property of a tool's params schema, in order.
type param struct {
	name, typ, desc, format, xref string
	pattern                       string
	enum                          []string
	required                      bool
}

// star writes a handler line by line, so each refusal's `if` has a known line.
type star struct {
	file  string
	lines []string
	br    []Branch
}

func (s *star) add(format string, a ...any) {
	s.lines = append(s.lines, fmt.Sprintf(format, a...))
}

// refuseIf writes `if cond:` / `refuse(msg)` at the given indent and records
// the branch at the line of the `if`.
func (s *star) refuseIf(indent int, cond, msg, reason string) {
	s.refuseOn(indent, cond, msg, reason, "")
}

// refuseOn is refuseIf for a branch the value of column decides.
func (s *star) refuseOn(indent int, cond, msg, reason, column string) {
	pad := strings.Repeat("    ", indent)
	s.add("%sif %s:", pad, cond)
	s.br = append(s.br, Branch{At: fmt.Sprintf("%s:%d", s.file, len(s.lines)), Reason: reason, Column: column})
	s.add("%s    refuse(%s)", pad, msg)
}

func (s *star) String() string { return strings.Join(s.lines, "\n") + "\n" }

// styleName joins words in one of the styles real tool names have.
func (g *gen) styleName(words []string) string {
	switch v := g.r.IntN(20); {
	case v < 10:
		return strings.Join(words, "_")
	case v < 17:
		return camel(words)
	default:
		return strings.Join(words, "-")
	}
}

func camel(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i == 0 {
			b.WriteString(w)
			continue
		}
		rs := []rune(w)
		rs[0] = unicode.ToUpper(rs[0])
		b.WriteString(string(rs))
	}
	return b.String()
}

// argName names an argument in one of the ways callers' tools do.
func (g *gen) argName(choices ...string) string { return g.pick(choices) }

func (g *gen) personArg() string {
	s := g.p.kind.singular
	choices := []string{s + "_id", s + "Id", s + "_ref", s + "Number"}
	if g.p.pk != "id" {
		choices = append(choices, g.p.pk)
	}
	return g.pick(choices)
}

func (g *gen) resourceArg(r *resource) string {
	n := r.kind.noun
	return g.pick([]string{n + "_id", n + "Id", n + "_ref", n + "Number", "reference"})
}

// toolset deals the tools: one or two identity checks, per record a lookup
// and some of list, cancel, credit, change and add-a-line, per caller a
// change of email or tier, a hand-off and often a tool that ends the call.
func (g *gen) toolset(want int) {
	g.tools = append(g.tools, g.verifyByName())
	if g.chance(0.6) {
		g.tools = append(g.tools, g.verifyByContact())
	}
	var must, may []*toolSpec
	for _, r := range g.res {
		must = append(must, g.getTool(r))
		writers := []func(*resource) *toolSpec{g.cancelTool, g.refundTool, g.changeTool}
		if r.lines != "" {
			writers = append(writers, g.addTool)
		}
		g.r.Shuffle(len(writers), func(i, j int) { writers[i], writers[j] = writers[j], writers[i] })
		must = append(must, writers[0](r))
		for _, w := range writers[1:] {
			may = append(may, w(r))
		}
		may = append(may, g.listTool(r))
	}
	may = append(may, g.emailTool(), g.tierTool())
	must = append(must, g.transferTool())
	if g.chance(0.7) {
		must = append(must, g.endTool())
	}
	g.r.Shuffle(len(may), func(i, j int) { may[i], may[j] = may[j], may[i] })
	g.tools = append(g.tools, must...)
	for _, t := range may {
		if len(g.tools) >= want {
			break
		}
		g.tools = append(g.tools, t)
	}
	seen := map[string]int{}
	for _, t := range g.tools {
		name := g.styleName(t.words)
		// Two records may deal one name (reference, or a verb twice).
		if n := seen[strings.ToLower(name)]; n > 0 {
			name = fmt.Sprintf("%s%d", name, n+1)
		}
		seen[strings.ToLower(name)]++
		t.truth.Name = name
		t.truth.Handler = "handlers/" + name + ".star"
		t.star.file = t.truth.Handler
		for i := range t.star.br {
			t.star.br[i].At = strings.Replace(t.star.br[i].At, "?", t.star.file, 1)
		}
		t.truth.Branches = t.star.br
		t.truth.Args = nil
		for _, p := range t.params {
			t.truth.Args = append(t.truth.Args, t.argTruth(p))
		}
	}
}

// newTool starts a tool whose handler file is named once the tool is.
func newTool(op string, role Role, r *resource, words ...string) *toolSpec {
	return &toolSpec{op: op, res: r, words: words, truth: Tool{Role: role}, star: &star{file: "?"}, requires: true}
}

// argTruth is the ground truth of one param as it is dealt.
type argTruth struct {
	ref   string
	also  []string
	fresh bool
}

func (t *toolSpec) argTruth(p param) Arg {
	a := t.truthMap()[p.name]
	return Arg{Name: p.name, Ref: a.ref, Also: a.also, XRef: p.xref != "", Required: p.required, Fresh: a.fresh}
}

func (t *toolSpec) truthMap() map[string]argTruth {
	if t.tm == nil {
		t.tm = map[string]argTruth{}
	}
	return t.tm
}

// param adds a property and its truth; a record argument gets an x-ref now
// and then, as authors write them.
func (g *gen) param(t *toolSpec, p param, truth argTruth) {
	if truth.ref != Free && !truth.fresh && p.enum == nil && g.chance(0.15) {
		p.xref = truth.ref
	}
	t.params = append(t.params, p)
	t.truthMap()[p.name] = truth
}

func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (p param) schema() string {
	var parts []string
	parts = append(parts, `"type": `+jsonStr(p.typ))
	if p.desc != "" {
		parts = append(parts, `"description": `+jsonStr(p.desc))
	}
	if p.format != "" {
		parts = append(parts, `"format": `+jsonStr(p.format))
	}
	if p.pattern != "" {
		parts = append(parts, `"pattern": `+jsonStr(p.pattern))
	}
	if p.enum != nil {
		q := make([]string, len(p.enum))
		for i, e := range p.enum {
			q[i] = jsonStr(e)
		}
		parts = append(parts, `"enum": [`+strings.Join(q, ", ")+`]`)
	}
	if p.xref != "" {
		parts = append(parts, `"x-ref": `+jsonStr(p.xref))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
