package contractgen

import (
	"fmt"
	"strings"
)

type ucSpec struct {
	id, text string
	tools    []string
	act      string
}

type ruleSpec struct {
	id, text, check string
}

func (g *gen) verifiers() []string {
	var v []string
	for _, t := range g.tools {
		if t.op == "verify" {
			v = append(v, t.truth.Name)
		}
	}
	return v
}

// toolOf returns the tool of op on r, or nil.
func (g *gen) toolOf(op string, r *resource) *toolSpec {
	for _, t := range g.tools {
		if t.op == op && t.res == r {
			return t
		}
	}
	return nil
}

// useCasesAndRules deals one use case per act (ids from words no tool name
// has), the rules with their checks, and the sub-goals those checks are.
func (g *gen) useCasesAndRules() {
	ver := g.verifiers()
	used := map[string]bool{}
	for _, t := range g.tools {
		tmpl, ok := useCaseIDs[t.op]
		if !ok {
			continue
		}
		syn := ""
		if t.res != nil {
			syn = t.res.kind.syn
		}
		id := fmt.Sprintf(g.pick(tmpl), syn)
		if strings.Contains(id, "%!") {
			id = g.pick(tmpl)
		}
		for n := 2; used[id]; n++ {
			id = fmt.Sprintf("%s-%d", strings.TrimSuffix(id, fmt.Sprintf("-%d", n-1)), n)
		}
		used[id] = true
		text := useCaseTexts[t.op]
		if strings.Contains(text, "%s") {
			text = fmt.Sprintf(text, syn)
		}
		tools := append([]string(nil), ver...)
		switch t.op {
		case "get":
			if l := g.toolOf("list", t.res); l != nil {
				tools = append(tools, l.truth.Name)
			}
		case "cancel", "refund", "change", "add":
			if l := g.toolOf("get", t.res); l != nil {
				tools = append(tools, l.truth.Name)
			}
		}
		tools = append(tools, t.truth.Name)
		g.useCases = append(g.useCases, ucSpec{id: id, text: text, tools: tools, act: t.truth.Name})
	}

	var skip []string
	for _, t := range g.tools {
		if t.truth.Role == HandOff || t.truth.Role == EndsCall {
			skip = append(skip, t.truth.Name)
		}
	}
	g.rules = append(g.rules, ruleSpec{id: g.pick([]string{"identify-first", "verify-before-account", "who-before-what"}),
		text:  "Identify the caller by first name, last name and date of birth, or by email and phone, before reading or changing anything of theirs.",
		check: "identified_first"})
	g.files["subgoals/identified_first.star"] = fmt.Sprintf(`what = "Nothing of the caller's was read or changed before they were identified"
judged = False
params = {}

VERIFIERS = %s
SKIP = %s

def check(world, calls, params):
    for c in calls:
        if not c["ok"] or c["tool"] in SKIP:
            continue
        if c["tool"] in VERIFIERS:
            return None
        return "%%s ran before the caller was identified" %% c["tool"]
    return None
`, starList(ver), starList(skip))
	if g.chance(0.7) {
		g.rules = append(g.rules, ruleSpec{id: "own-records-only",
			text:  "Serve only the identified caller: never read out or change another person's records, whoever asks.",
			check: "callers_records_only"})
		g.files["subgoals/callers_records_only.star"] = g.ownershipCheck(ver)
	}
	g.rules = append(g.rules,
		ruleSpec{id: "confirm-before-change", text: "Before any change or credit, say exactly what will happen and get a clear yes."},
		ruleSpec{id: "no-guessing", text: "Give only facts the tools return; never guess an amount, a date or a status."})
	g.files["subgoals/courteous_close.star"] = `what = "The agent closed the conversation politely and said what happens next"
judged = True
`
}

// ownershipCheck is a sub-goal that fails when an ok call named a record of
// someone other than the caller.
func (g *gen) ownershipCheck(ver []string) string {
	p := g.p
	var person, owned []string
	for _, t := range g.tools {
		for _, a := range t.params {
			tr := t.truthMap()[a.name]
			switch {
			case tr.ref == p.table+"."+p.pk:
				person = append(person, fmt.Sprintf("    %q: %q,", t.truth.Name, a.name))
			case t.res != nil && tr.ref == t.res.table+"."+t.res.pk:
				owned = append(owned, fmt.Sprintf("    %q: [%q, %q],", t.truth.Name, a.name, t.res.rowSQL(p)))
			}
		}
	}
	return fmt.Sprintf(`what = "Every record the agent read or changed belongs to the identified caller"
judged = False
params = {%q: "string"}

VERIFIERS = %s
PERSON = {
%s
}
OWNED = {
%s
}

def check(world, calls, params):
    me = params[%q]
    view = world.before if world.before != None else world
    for c in calls:
        if not c["ok"]:
            continue
        args = c["args"]
        if c["tool"] in VERIFIERS and c["result"] != me:
            return "%%s identified %%s, not the caller %%s" %% (c["tool"], c["result"], me)
        arg = PERSON.get(c["tool"])
        if arg != None and args.get(arg) != None and args[arg] != me:
            return "%%s was called for %%s, not the caller %%s" %% (c["tool"], args[arg], me)
        rec = OWNED.get(c["tool"])
        if rec != None and args.get(rec[0]) != None:
            row = view.one(rec[1], args[rec[0]])
            if row != None and row["owner_key"] != me:
                return "%%s was called on %%s, which is not the caller's" %% (c["tool"], args[rec[0]])
    return None
`, p.pk, starList(ver), strings.Join(person, "\n"), strings.Join(owned, "\n"), p.pk)
}

func starList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// yaml writes contract.yaml; every string is JSON-quoted, which YAML reads
// as the same string.
func (g *gen) yaml(agent string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	modality := "chat"
	if g.chance(0.4) {
		modality = "voice"
	}
	w("agent: %s\n", agent)
	w("one_liner: %s\n", jsonStr(fmt.Sprintf("Support line for %s about their %s", g.p.kind.plural, g.joinNouns())))
	w("modality: %s\ndirection: inbound\nnow: %s\n", modality, jsonStr(g.nowStr))
	w("notes: |\n")
	for _, n := range g.notes() {
		w("  %s\n", n)
	}
	if g.chance(0.5) {
		w("caller:\n  table: %s\n  key: %s\n  from: %s\n", g.p.table, g.p.pk, jsonList(g.verifiers()))
	}
	w("rules:\n")
	for _, r := range g.rules {
		w("  - id: %s\n    text: %s\n", r.id, jsonStr(r.text))
		if r.check != "" {
			w("    check: %s\n", r.check)
		}
	}
	w("use_cases:\n")
	for _, u := range g.useCases {
		w("  - id: %s\n    text: %s\n    tools: %s\n", u.id, jsonStr(u.text), jsonList(u.tools))
	}
	w("tools:\n")
	ver := g.verifiers()
	for _, t := range g.tools {
		w("  - name: %s\n    description: %s\n", jsonStr(t.truth.Name), jsonStr(t.description))
		var props, req []string
		for _, p := range t.params {
			props = append(props, jsonStr(p.name)+": "+p.schema())
			if p.required {
				req = append(req, p.name)
			}
		}
		w("    params: {\"type\": \"object\", \"properties\": {%s}, \"required\": %s}\n", strings.Join(props, ", "), jsonList(req))
		if t.requires {
			w("    requires:\n      - %s\n", jsonList(ver))
		}
		if len(t.logOnly) > 0 {
			w("    log_only: %s\n", jsonList(t.logOnly))
		}
		if t.ends {
			w("    ends_conversation: true\n")
		}
	}
	return b.String()
}

func jsonList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = jsonStr(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func (g *gen) joinNouns() string {
	var n []string
	for _, r := range g.res {
		n = append(n, r.kind.plural)
	}
	return strings.Join(n, ", ")
}

func (g *gen) notes() []string {
	out := []string{
		fmt.Sprintf("Callers are %s. Identify them by first name, last name and date of birth (or email and phone) first.", g.p.kind.plural),
		fmt.Sprintf("Each account is on a %s (%s); the %s caps any one credit.", g.tier.noun, strings.Join(g.tier.codes, ", "), g.tier.noun),
	}
	for _, r := range g.res {
		owner := "the caller"
		if r.parent != nil {
			owner = "a " + r.parent.kind.noun
		}
		out = append(out, fmt.Sprintf("%s belong to %s and move %s. Only %s ones can be changed or cancelled, and only before they start; only %s ones can be credited.",
			strings.ToUpper(r.kind.plural[:1])+r.kind.plural[1:], owner, strings.Join(r.statuses, ", "), r.statuses[0], r.statuses[1]))
	}
	return out
}
