// Package plan derives what a suite should cover from the contract and its
// world: the grid of cells (operation × object), the state axes whose level
// changes the right answer, the buckets (kinds of case) with a derived want, and
// the themes a large plan is paged by. It also deals the caller spread and ranks
// open work. A plan is deterministic: the same contract, world and ask give the
// same plan, bucket for bucket.
package plan

import (
	"sort"
	"strings"
	"unicode"

	"github.com/suitegen/suitegen/pkg/contract"
)

// Operations, in the order cells are listed.
var Operations = []string{
	"retrieve", "compare", "explain", "diagnose",
	"create", "update", "cancel", "execute", "configure",
	"authenticate", "navigate", "handoff",
}

var verbs = map[string]string{
	"get": "retrieve", "find": "retrieve", "list": "retrieve", "search": "retrieve", "lookup": "retrieve",
	"look": "retrieve", "check": "retrieve", "show": "retrieve", "view": "retrieve", "read": "retrieve", "track": "retrieve",
	"compare": "compare", "explain": "explain", "calculate": "explain", "estimate": "explain", "quote": "explain",
	"diagnose": "diagnose", "troubleshoot": "diagnose",
	"create": "create", "add": "create", "book": "create", "place": "create", "report": "create", "file": "create",
	"open": "create", "request": "create", "submit": "create", "log": "create", "register": "create", "schedule": "create",
	"update": "update", "modify": "update", "change": "update", "edit": "update", "set": "update", "rate": "update", "adjust": "update",
	"cancel": "cancel", "delete": "cancel", "remove": "cancel", "close": "cancel", "revoke": "cancel",
	"execute": "execute", "process": "execute", "return": "execute", "exchange": "execute", "refund": "execute",
	"pay": "execute", "apply": "execute", "redeem": "execute", "charge": "execute", "issue": "execute", "send": "execute",
	"configure": "configure", "enable": "configure", "disable": "configure",
	"authenticate": "authenticate", "verify": "authenticate", "login": "authenticate", "identify": "authenticate",
	"navigate": "navigate", "calc": "explain",
	"transfer": "handoff", "escalate": "handoff", "handoff": "handoff",
}

// Cell is one operation on one object.
type Cell struct {
	Operation string   `json:"operation"`
	Object    string   `json:"object"`
	Tools     []string `json:"tools"`
}

// ID is "operation-object".
func (c Cell) ID() string { return c.Operation + "-" + c.Object }

// Words splits an identifier or sentence into lower-case words.
func Words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func singular(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// ToolCell says which cell a tool acts on: the operation from its verb, the
// object from the table it names (or its nouns).
func ToolCell(c *contract.Contract, t *contract.Tool) Cell {
	ws := Words(t.Name)
	op := ""
	for _, w := range ws {
		if o, ok := verbs[w]; ok {
			op = o
			break
		}
	}
	if op == "" {
		op = "execute"
		if t.ChangesState != nil && !*t.ChangesState {
			op = "retrieve"
		}
	}
	if t.EndsConversation {
		op = "handoff"
	}
	obj := ""
	tables := map[string]string{}
	for _, tb := range c.Tables {
		tables[singular(tb.Name)] = singular(tb.Name)
		for _, part := range strings.Split(tb.Name, "_") {
			if _, ok := tables[singular(part)]; !ok {
				tables[singular(part)] = singular(tb.Name)
			}
		}
	}
	for _, w := range ws {
		if _, isVerb := verbs[w]; isVerb && obj == "" {
			continue
		}
		if o, ok := tables[singular(w)]; ok {
			obj = o
			break
		}
	}
	if obj == "" {
		for _, w := range ws {
			if _, isVerb := verbs[w]; !isVerb && len(w) > 2 && w != "by" && w != "id" {
				obj = singular(w)
				break
			}
		}
	}
	if obj == "" {
		obj = "conversation"
	}
	return Cell{Operation: op, Object: obj, Tools: []string{t.Name}}
}

// Grid returns every cell the contract's tools act on, sorted.
func Grid(c *contract.Contract) []Cell {
	byID := map[string]*Cell{}
	for i := range c.Tools {
		cell := ToolCell(c, &c.Tools[i])
		if have, ok := byID[cell.ID()]; ok {
			have.Tools = append(have.Tools, c.Tools[i].Name)
			continue
		}
		cc := cell
		byID[cell.ID()] = &cc
	}
	out := make([]Cell, 0, len(byID))
	for _, cell := range byID {
		sort.Strings(cell.Tools)
		out = append(out, *cell)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID() < out[j].ID() })
	return out
}

// UseCaseTools returns the tools serving a use case, the final (acting) tool
// last: the contract's own list when it gives one, else the tools whose names
// share words with the use case, the one sharing most (its id's words
// counting double) acting.
//
// wrote says which tools a rehearsal saw write (ground.Grounding.Wrote).
func UseCaseTools(c *contract.Contract, u *contract.UseCase, wrote map[string]bool) []string {
	if len(u.Tools) > 0 {
		return u.Tools
	}
	// A word of the use case's id (its verb and object: book-specialist)
	// weighs twice a word only its text has, and three times when the text
	// has it too.
	want := map[string]int{}
	for _, w := range Words(u.Text) {
		if len(w) > 2 {
			want[singular(w)] = 1
		}
	}
	inID := map[string]bool{}
	for _, w := range Words(u.ID) {
		if len(w) > 2 && !inID[singular(w)] {
			inID[singular(w)] = true
			// The id's word the text repeats (referral-status: "where a
			// referral stands") is what the use case is about: it weighs
			// more than the id's other words.
			want[singular(w)] += 2
		}
	}
	type scored struct {
		name  string
		score int
		acts  bool
	}
	var ss []scored
	for i := range c.Tools {
		t := &c.Tools[i]
		if t.EndsConversation {
			continue
		}
		n := 0
		for _, w := range Words(t.Name) {
			n += want[singular(w)]
		}
		if n > 0 {
			ss = append(ss, scored{t.Name, n, Changes(c, t, wrote)})
		}
	}
	// The tool most like the use case acts (last); of equals, one that
	// changes something, unless the use case asks a question: then one
	// that reads (billing-question reads the bill, it does not open a
	// review of it).
	asks := Asks(u)
	sort.SliceStable(ss, func(i, j int) bool {
		if ss[i].score != ss[j].score {
			return ss[i].score < ss[j].score
		}
		if asks {
			return ss[i].acts && !ss[j].acts
		}
		return !ss[i].acts && ss[j].acts
	})
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.name)
	}
	return out
}

// Changes reports whether a tool changes the world: as the contract says
// (changes_state), else as its rehearsal did (wrote: per tool a rehearsal
// answered ok, whether that call wrote), else, for a tool no rehearsal
// answered, as the verb of its name says. A tool that ends the conversation
// hands it on; it changes nothing of the world's.
func Changes(c *contract.Contract, t *contract.Tool, wrote map[string]bool) bool {
	switch {
	case t.ChangesState != nil:
		return *t.ChangesState
	case t.EndsConversation:
		return false
	}
	if w, ok := wrote[t.Name]; ok {
		return w
	}
	op := ToolCell(c, t).Operation
	return op != "retrieve" && op != "authenticate"
}

// askWords open a request for information: a question ("what", "where"),
// or a verb that asks to be told ("explain", "tell").
var askWords = map[string]bool{
	"what": true, "where": true, "when": true, "which": true, "who": true, "why": true, "how": true,
	"whether": true, "is": true, "are": true, "does": true, "do": true, "can": true,
	"tell": true, "answer": true, "describe": true, "say": true,
}

// Asks reports whether a use case asks to be told something rather than to
// have something done, from its text: it is a question, or it opens with a
// verb that reads or explains ("Explain a bill", "Tell the user where an
// order is"). Its tools then serve it by reading.
func Asks(u *contract.UseCase) bool {
	if strings.HasSuffix(strings.TrimSpace(u.Text), "?") {
		return true
	}
	ws := Words(u.Text)
	if len(ws) == 0 {
		return false
	}
	if askWords[ws[0]] {
		return true
	}
	switch verbs[ws[0]] {
	case "retrieve", "explain", "compare", "diagnose":
		return true
	}
	return false
}

// RuleChoice is the tool, and the value of one of its enumerated
// arguments, that the rules of a use case point to when no tool's name
// shares a word with it: "offer the privacy officer" in the rule a
// third-party caller's use case is named after points to
// transfer_to_staff(department: privacy_officer).
type RuleChoice struct {
	Tool, Param string
	Value       any
}

// RuleTools finds a use case's tool through its rules: the rules whose ids
// share a word with the use case's id, and in their text every word of one
// enumerated value of some tool's argument (a value of one word counts only
// when it is long). It returns nothing when no value, or more than one
// tool's, is named.
func RuleTools(c *contract.Contract, u *contract.UseCase) (RuleChoice, bool) {
	id := map[string]bool{}
	for _, w := range Words(u.ID) {
		if len(w) > 3 {
			id[singular(w)] = true
		}
	}
	said := map[string]bool{}
	for _, r := range c.Rules {
		linked := false
		for _, w := range Words(r.ID) {
			linked = linked || id[singular(w)]
		}
		if !linked {
			continue
		}
		for _, w := range Words(r.Text) {
			said[singular(w)] = true
		}
	}
	var found []RuleChoice
	for i := range c.Tools {
		t := &c.Tools[i]
		for _, p := range t.ParamNames() {
			for _, v := range t.Enum(p) {
				s, ok := v.(string)
				if !ok {
					continue
				}
				ws := Words(s)
				all := len(ws) > 1 || len(ws) == 1 && len(ws[0]) >= 8
				for _, w := range ws {
					all = all && said[singular(w)]
				}
				if all {
					found = append(found, RuleChoice{t.Name, p, v})
				}
			}
		}
	}
	if len(found) == 0 {
		return RuleChoice{}, false
	}
	for _, f := range found[1:] {
		if f.Tool != found[0].Tool {
			return RuleChoice{}, false
		}
	}
	return found[0], true
}

// Handoff returns the tool that hands a conversation to a person, or "".
func Handoff(c *contract.Contract) string {
	for _, t := range c.Tools {
		if t.EndsConversation {
			for _, w := range Words(t.Name) {
				if verbs[w] == "handoff" {
					return t.Name
				}
			}
		}
	}
	for _, t := range c.Tools {
		if t.EndsConversation {
			return t.Name
		}
	}
	return ""
}
