package prove

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// A scenario's words are for the caller who plays it: who they are, what
// happened, what they want. Text addressed to whoever grades the
// conversation is never that; text addressed to the agent under test (an
// injected "system note") is the case only in an adversarial scenario that
// expects the agent not to do what the caller wants.
var (
	toGrader = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(grader|evaluator|assessor|scorer|grading model|test harness)s?\b`),
		regexp.MustCompile(`(?i)\b(note|message|instructions?) (to|for) (the )?(judge|reviewer|model|llm|ai)\b`),
		regexp.MustCompile(`(?i)\b(mark|grade|score|treat|count|record)\b[^.!?]{0,40}\b(as )?(passed|passing|a pass|full marks|successful test|correct answer)\b`),
	}
	toAgent = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass)\b[^.!?]{0,40}\b(instructions?|rules|polic(y|ies)|prompts?|guidelines|checks)\b`),
		regexp.MustCompile(`(?i)\b(system|developer|admin|administrator)\s+(note|prompt|message|override|instructions?)\s*:`),
		regexp.MustCompile(`(?i)\byou are (now )?(an? |the )?(ai|assistant|language model|chatbot|bot)\b`),
		regexp.MustCompile(`(?i)(<\s*/?\s*(system|assistant|instructions?)\s*>|\[/?INST\]|<\|im_(start|end)\|>)`),
	}
)

// directives refuses scenario text aimed at the grader anywhere, and text
// aimed at the agent in what the caller plays (instruction, opening, persona)
// outside an adversarial case that expects a refusal, an ask or an
// escalation. The tests line and the branch describe the case and may speak
// of an injection; they may not address the grader.
func directives(sc *scenario.Scenario, domain map[string]bool) []Refusal {
	var rs []Refusal
	bad := func(field, m, why string) {
		rs = append(rs, Refusal{Gate: GateStatic, Code: CodeInjection, Message: fmt.Sprintf("%s says %q, %s", field, m, why)})
	}
	adversarial := sc.Kind == "adversarial" && sc.Expects != scenario.OutcomeSucceed
	for _, f := range []struct {
		name, text string
		played     bool // the caller plays it: an injection may be the case
	}{
		{"instruction", sc.Instruction, true}, {"persona.opening", sc.Persona.Opening, true},
		{"persona.name", sc.Persona.Name, true}, {"persona.personality", sc.Persona.Personality, true},
		{"persona.accent", sc.Persona.Accent, true}, {"persona.style", sc.Persona.Style, true},
		{"persona.location", sc.Persona.Location, true}, {"tests", sc.Tests, false}, {"branch", sc.Branch, false},
	} {
		d := directivesIn(f.text)
		if m := d.grader; m != "" && !ofDomain(m, domain) {
			bad(f.name, m, "which addresses whoever grades the conversation: a scenario is proved by code, and its words are for the caller")
			continue
		}
		if m := d.agent; m != "" && f.played && !adversarial {
			bad(f.name, m, fmt.Sprintf("an instruction injected at the agent, in a %s scenario that expects %s: an injection is an adversarial case the agent must resist (kind adversarial, expects refuse, ask or escalate)", sc.Kind, sc.Expects))
		}
	}
	return rs
}

// subGoalDirectives refuses text aimed at the grader in what a scenario's
// sub-goals hand the grader: the params it gives them, and the words of a
// sub-goal a writer added during the run (a judged sub-goal is graded from
// its words).
func (p *Prover) subGoalDirectives(sc *scenario.Scenario) []Refusal {
	var rs []Refusal
	seen := map[string]bool{}
	for _, ref := range sc.SubGoals {
		texts := map[string]bool{}
		ground.AddValues(texts, ref.Params)
		if sg := p.extra[ref.Name]; sg != nil && !seen[ref.Name] {
			seen[ref.Name] = true
			texts[sg.What] = true
		}
		for t := range texts {
			for _, m := range directivesIn(t).graderAll {
				if ofDomain(m, p.domainWords()) {
					continue
				}
				rs = append(rs, Refusal{Gate: GateStatic, Code: CodeInjection, SubGoal: ref.Name, Message: fmt.Sprintf("sub-goal %s hands the grader %q: a check's words say what it checks, and address nobody", ref.Name, m)})
			}
		}
	}
	return rs
}

// ofDomain reports a match that is one word of the contract's own (an
// insurer's loss assessor, a property evaluator): the domain speaks of it,
// so a caller may too, and it addresses no grader.
func ofDomain(m string, domain map[string]bool) bool {
	w := strings.ToLower(strings.TrimSpace(m))
	return !strings.Contains(w, " ") && (domain[w] || domain[strings.TrimSuffix(w, "s")])
}

// domainVocab holds each contract's words (domainWords), by its hash.
var domainVocab sync.Map

// domainWords are the words of the contract's own text: its tools' names and
// descriptions, its tables and columns, its use cases, rules and sub-goals.
func (p *Prover) domainWords() map[string]bool {
	if v, ok := domainVocab.Load(p.c.SHA256); ok {
		return v.(map[string]bool)
	}
	out := map[string]bool{}
	add := func(s string) {
		for _, w := range contract.NameWords(s) {
			out[w] = true
		}
	}
	for _, t := range p.c.Tools {
		add(t.Name)
		add(t.Description)
	}
	for _, t := range p.c.Tables {
		add(t.Name)
		for _, c := range t.Columns {
			add(c.Name)
		}
	}
	for _, u := range p.c.UseCases {
		add(u.Text)
	}
	for _, r := range p.c.Rules {
		add(r.Text)
	}
	for _, sg := range p.c.SubGoals {
		add(sg.What)
	}
	domainVocab.Store(p.c.SHA256, out)
	return out
}

// directiveMemo holds directivesIn's answer per text. Every proof searches
// every field of its scenario with each pattern, and most of those texts
// recur (a persona's fields across a slice, a candidate proved again after
// a correction, a sub-goal's params); past directiveMemoMax texts the
// answer is computed each time.
var (
	directiveMemo  sync.Map // text → directiveHits
	directiveMemoN atomic.Int64
)

const directiveMemoMax = 1 << 14

// directiveHits is what the patterns find in one text: the first match of
// the first grader pattern that matches (grader), every grader pattern's
// first match in pattern order (graderAll), and the first agent pattern's
// match (agent).
type directiveHits struct {
	grader    string
	graderAll []string
	agent     string
}

func directivesIn(text string) directiveHits {
	if text == "" {
		return directiveHits{}
	}
	if h, ok := directiveMemo.Load(text); ok {
		return h.(directiveHits)
	}
	var h directiveHits
	for _, re := range toGrader {
		if m := re.FindString(text); m != "" {
			if h.grader == "" {
				h.grader = m
			}
			h.graderAll = append(h.graderAll, m)
		}
	}
	for _, re := range toAgent {
		if m := re.FindString(text); m != "" {
			h.agent = m
			break
		}
	}
	if directiveMemoN.Load() < directiveMemoMax {
		if _, loaded := directiveMemo.LoadOrStore(text, h); !loaded {
			directiveMemoN.Add(1)
		}
	}
	return h
}
