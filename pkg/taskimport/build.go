package taskimport

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// GateImport is the gate of a task the import cannot make a scenario of;
// its codes are below. Every other refusal is the prover's.
const GateImport prove.Gate = "import"

// Codes of GateImport.
const (
	// SeveralActs: the task's acts make more requests than one
	// conversation holds (prove.MaxRequests). A task whose actions change
	// state with several tools is otherwise a scenario of several requests.
	SeveralActs prove.Code = "several-acts"
	// NoAct: no action changes state: the task checks that nothing changes
	// (a refusal or a question) or that a look-up's answer is said, and
	// which it is cannot be read from the task.
	NoAct prove.Code = "no-act"
	// Handoff: an action hands the conversation over; an escalation needs
	// the move the agent must not make, which the task does not give.
	Handoff prove.Code = "handoff"
	// UnknownAct: the act's tool is not the contract's.
	UnknownAct prove.Code = "unknown-act"
	// NoUser: the task names no user.
	NoUser prove.Code = "no-user"
	// UserActions: the benchmark has the user perform actions (τ²-bench's
	// requestor "user"), which a scenario cannot hold.
	UserActions prove.Code = "user-actions"
	// InitialState: the task starts from changed data, which the import
	// does not turn into setup.
	InitialState prove.Code = "initial-state"
)

// Source says where tasks come from, for names and provenance.
type Source struct {
	Format string // FormatTauBench or FormatTau2Bench
	Prefix string // scenario names are Prefix-ID
}

// Built is a task made into a scenario, or the import refusal saying why it
// could not be.
type Built struct {
	Task     Task
	Scenario *scenario.Scenario
	Refusal  *prove.Refusal
}

var unsafeName = regexp.MustCompile(`[^a-z0-9]+`)

// Name is a scenario name for task id under prefix.
func Name(prefix, id string) string {
	s := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(prefix+"-"+id), "-"), "-")
	if len(s) > 100 {
		s = strings.TrimRight(s[:100], "-")
	}
	return s
}

// changesState reports whether t changes the world as the prover reads
// it: declared so. Only a contract that declares it of no tool has it read
// from the handler's SQL, which over-reaches (a look-up loading a library
// that writes elsewhere).
func changesState(c *contract.Contract, t *contract.Tool) bool {
	if t.ChangesState != nil {
		return *t.ChangesState
	}
	for _, o := range c.Tools {
		if o.ChangesState != nil {
			return false
		}
	}
	return len(c.Writes(t)) > 0
}

// Build makes t a scenario of c: the caller is the task's user, the
// solution its actions (with the look-ups the contract's requires ask for
// before a gated call, which the benchmark's actions leave out), expects
// succeed, the use case the one whose tools hold the act, the sub-goal
// that the act's tables change. A task that cannot be one scenario is
// refused with a GateImport code.
func Build(c *contract.Contract, src Source, t Task) Built {
	b := Built{Task: t}
	refuse := func(code prove.Code, format string, args ...any) Built {
		b.Refusal = &prove.Refusal{Gate: GateImport, Code: code, Message: fmt.Sprintf(format, args...)}
		return b
	}
	if len(t.UserActions) > 0 {
		names := make([]string, len(t.UserActions))
		for i, a := range t.UserActions {
			names[i] = a.Name
		}
		return refuse(UserActions, "the user performs %d action(s) (%s); a scenario has the agent's calls only", len(names), strings.Join(names, ", "))
	}
	if t.InitialState {
		return refuse(InitialState, "the task starts from changed data (initial_state), which the import does not turn into setup")
	}
	if t.UserID == "" {
		return refuse(NoUser, "the task names no user id")
	}
	var acts, handoffs []string
	for _, a := range t.Actions {
		tool := c.Tool(a.Name)
		if tool == nil {
			continue
		}
		if tool.EndsConversation {
			handoffs = append(handoffs, a.Name)
			continue
		}
		if changesState(c, tool) && !slices.Contains(acts, a.Name) {
			acts = append(acts, a.Name)
		}
	}
	var unknown []string
	for _, a := range t.Actions {
		if c.Tool(a.Name) == nil && !slices.Contains(unknown, a.Name) {
			unknown = append(unknown, a.Name)
		}
	}
	parts := requests(c, t.Actions)
	switch {
	case len(handoffs) > 0:
		return refuse(Handoff, "an action hands over (%s): the task expects an escalation, and the move the agent must not make instead is not in the task", handoffs[0])
	case len(parts) > prove.MaxRequests:
		return refuse(SeveralActs, "the actions change state with %d tools in %d requests (%s); a conversation has at most %d", len(acts), len(parts), strings.Join(acts, ", "), prove.MaxRequests)
	case len(acts) == 0 && len(unknown) > 0:
		return refuse(UnknownAct, "the contract has no tool %s", strings.Join(unknown, ", "))
	case len(acts) == 0:
		what := "no action"
		if len(t.Actions) > 0 {
			what = fmt.Sprintf("%d look-up(s) and no action that changes state", len(t.Actions))
		}
		return refuse(NoAct, "%s: the task checks that the data is left as it is (a refusal or a question) or that an answer is said; which it is, and the move to refuse, are not in the task", what)
	}

	sc := &scenario.Scenario{
		Name:        Name(src.Prefix, t.ID),
		Branch:      src.Format + " task " + t.ID,
		Kind:        "happy",
		Persona:     persona(t.UserID),
		CallerID:    t.UserID,
		Instruction: t.Instruction,
		MaxTurns:    30,
		Provenance: scenario.Provenance{
			ContractSHA256: c.SHA256, WorldSHA256: c.WorldSHA256,
			Model: "import:" + src.Format, Writer: "import",
		},
	}
	for i, p := range parts {
		r := request(c, t.UserID, t.Instruction, p)
		if i == len(parts)-1 {
			// What the agent must say is read at the end of the
			// conversation, from the answers of its last request.
			r.Outputs = slices.Clone(t.Outputs)
		}
		if i == 0 {
			sc.UseCase, sc.Expects, sc.Tests, sc.Solution, sc.SubGoals, sc.Outputs = r.UseCase, r.Expects, r.Tests, r.Solution, r.SubGoals, r.Outputs
			continue
		}
		sc.Then = append(sc.Then, r)
	}
	b.Scenario = sc
	return b
}

// part is the actions of one request and the act they lead to.
type part struct {
	act     string
	actions []Action
}

// requests splits a task's actions into the requests of one conversation:
// a request ends at the last call of its act's tool before another tool
// that changes state; the look-ups between two acts are the later
// request's, since it needs them. The same act on several records is one
// request. A task without an act is one part with no act.
func requests(c *contract.Contract, actions []Action) []part {
	var out []part
	cur := part{}
	lastAct := -1 // index in cur.actions of cur's last act call
	for _, a := range actions {
		tool := c.Tool(a.Name)
		acts := tool != nil && !tool.EndsConversation && changesState(c, tool)
		if acts && cur.act != "" && a.Name != cur.act {
			rest := slices.Clone(cur.actions[lastAct+1:])
			cur.actions = cur.actions[:lastAct+1]
			out = append(out, cur)
			cur, lastAct = part{actions: rest}, -1
		}
		cur.actions = append(cur.actions, a)
		if acts {
			cur.act, lastAct = a.Name, len(cur.actions)-1
		}
	}
	return append(out, cur)
}

// request makes one part a succeeding request: the use case whose tools
// hold its act, its actions with the look-ups the contract requires before
// a gated call, and the act's tables as the check.
func request(c *contract.Contract, caller, instruction string, p part) scenario.Request {
	r := scenario.Request{UseCase: useCase(c, p.act, p.actions), Expects: scenario.OutcomeSucceed}
	for _, a := range p.actions {
		r.Solution = append(r.Solution, scenario.Call{Tool: a.Name, Args: a.Kwargs})
	}
	// The benchmark grades the data the actions leave, values and all: each
	// act is checked as called with the values the task's instruction
	// states (a cabin, a reason), so an agent that sets another fails here
	// as it fails there.
	for _, a := range p.actions {
		if tool := c.Tool(a.Name); tool == nil || tool.EndsConversation || !changesState(c, tool) {
			continue
		}
		args := map[string]any{}
		for k, v := range a.Kwargs {
			if said(instruction, v) {
				args[k] = v
			}
		}
		if len(args) > 0 {
			r.SubGoals = append(r.SubGoals, scenario.SubGoalRef{Name: "called", Params: map[string]any{"tool": a.Name, "args": args}})
		}
	}
	r.Solution = withLookups(c, caller, r.Solution)
	var tables []any
	if tool := c.Tool(p.act); tool != nil {
		for _, w := range c.Writes(tool) {
			tables = append(tables, w)
		}
	}
	if len(tables) > 0 {
		r.SubGoals = append(r.SubGoals, scenario.SubGoalRef{Name: prove.RowWritten, Params: map[string]any{"tables": tables}})
		r.Tests = fmt.Sprintf("passes when %s is carried out as the task's reference actions do: %s change", p.act, joinAny(tables))
	} else {
		r.Tests = fmt.Sprintf("passes when %s is carried out as the task's reference actions do", p.act)
	}
	return r
}

// said reports a scalar value the instruction states, in any case and with
// spaces for underscores ("economy", "basic economy", "#W2378156").
func said(instruction string, v any) bool {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case float64, int, int64, json.Number:
		// A number is said as a whole number of its own ("3 bags").
		f, err := strconv.ParseFloat(fmt.Sprint(x), 64)
		if err != nil {
			return false
		}
		re := regexp.MustCompile(`(^|[^\d.,])` + regexp.QuoteMeta(strconv.FormatFloat(f, 'f', -1, 64)) + `($|[^\d]|[.,]\D|[.,]$)`)
		return re.MatchString(instruction)
	default:
		return false
	}
	if len(text) < 2 {
		return false
	}
	// Said as a word or words of their own, with spaces, hyphens and
	// underscores alike ("one-way" says one_way; "search" does not say SEA).
	parts := strings.FieldsFunc(text, func(r rune) bool { return r == '_' || r == '-' || r == ' ' })
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	words := strings.Join(parts, `[\s_-]+`)
	if words == "" {
		return false
	}
	return regexp.MustCompile(`(?i)(^|[^\pL\pN])` + words + `($|[^\pL\pN])`).MatchString(instruction)
}

func joinAny(xs []any) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// useCase is the use case the act belongs to: of those listing its tool,
// the one listing most of the task's tools, the contract's order breaking
// ties; a contract whose use cases list no tools gives its first.
func useCase(c *contract.Contract, act string, actions []Action) string {
	best, score := "", -1
	for _, u := range c.UseCases {
		if len(u.Tools) > 0 && !slices.Contains(u.Tools, act) {
			continue
		}
		n := 0
		for _, a := range actions {
			if slices.Contains(u.Tools, a.Name) {
				n++
			}
		}
		if n > score {
			best, score = u.ID, n
		}
	}
	if best == "" && len(c.UseCases) > 0 {
		best = c.UseCases[0].ID
	}
	return best
}

// persona is the least a valid persona holds: a name read from the user id
// (mia_li_3668: Mia Li) and a plain opening.
func persona(userID string) scenario.Persona {
	var words []string
	for _, w := range strings.Split(userID, "_") {
		if w == "" || strings.IndexFunc(w, func(r rune) bool { return r >= '0' && r <= '9' }) >= 0 {
			continue
		}
		words = append(words, strings.ToUpper(w[:1])+w[1:])
	}
	name := strings.Join(words, " ")
	if name == "" {
		name = "The customer"
	}
	return scenario.Persona{
		Name: name, Personality: "cooperative", Accent: "neutral", Style: "brief",
		Location: "home", Opening: "Hi, I need some help with my account.",
	}
}

// withLookups puts before each gated call the look-ups its requires ask
// for and no earlier call met, when their arguments can be filled from the
// gated call (the `same` arguments) or from the caller's key: the
// benchmark's reference actions list the writes and the agent is left to
// look up, while the prover reads the solution as the whole conversation.
func withLookups(c *contract.Contract, caller string, calls []scenario.Call) []scenario.Call {
	var out []scenario.Call
	met := func(r contract.Requirement, gated scenario.Call) bool {
		for _, p := range out {
			if !slices.Contains(r.AnyOf, p.Tool) {
				continue
			}
			same := true
			for _, s := range r.Same {
				same = same && fmt.Sprint(p.Args[s]) == fmt.Sprint(gated.Args[s])
			}
			if same {
				return true
			}
		}
		return false
	}
	for _, call := range calls {
		if t := c.Tool(call.Tool); t != nil {
			for _, r := range t.Requires {
				if met(r, call) {
					continue
				}
				if lk, ok := lookup(c, caller, r, call); ok {
					out = append(out, lk)
				}
			}
		}
		out = append(out, call)
	}
	return out
}

func lookup(c *contract.Contract, caller string, r contract.Requirement, gated scenario.Call) (scenario.Call, bool) {
	for _, name := range r.AnyOf {
		t := c.Tool(name)
		if t == nil {
			continue
		}
		args := map[string]any{}
		ok := true
		for _, p := range t.Required() {
			switch v, have := gated.Args[p]; {
			case have:
				args[p] = v
			case c.Caller != nil && p == c.Caller.Key:
				args[p] = caller
			default:
				ok = false
			}
		}
		for _, s := range r.Same {
			if v, have := gated.Args[s]; have {
				args[s] = v
			}
		}
		if ok {
			return scenario.Call{Tool: name, Args: args}, true
		}
	}
	return scenario.Call{}, false
}
