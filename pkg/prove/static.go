package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/suitegen/suitegen/pkg/contract"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,119}$`)

// placeholders are values that betray invented data, unless the world holds
// them: a seed whose customers live at example.com is not inventing them.
var placeholders = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(john|jane) doe\b`),
	regexp.MustCompile(`\b4242[ -]?4242[ -]?4242[ -]?4242\b`),
	regexp.MustCompile(`\b4111[ -]?1111[ -]?1111[ -]?1111\b`),
	regexp.MustCompile(`(?i)\blorem ipsum\b`),
	regexp.MustCompile(`(?i)\b(placeholder|todo|tbd|xxx+)\b`),
	regexp.MustCompile(`(?i)@(example|test)\.(com|org)\b`),
	regexp.MustCompile(`\b555-01\d\d\b`),
	regexp.MustCompile(`(?i)\b123 main st`),
}

func (p *Prover) static(sc *scenario.Scenario) []Refusal {
	var rs []Refusal
	bad := func(code Code, format string, a ...any) {
		rs = append(rs, Refusal{Gate: GateStatic, Code: code, Message: fmt.Sprintf(format, a...)})
	}
	if !namePattern.MatchString(sc.Name) {
		bad(CodeBadName, "name %q must be lower-case letters, digits and dashes", sc.Name)
	}
	for field, v := range map[string]string{"use_case": sc.UseCase, "branch": sc.Branch, "tests": sc.Tests, "instruction": sc.Instruction, "persona.name": sc.Persona.Name} {
		if strings.TrimSpace(v) == "" {
			bad(CodeMissingField, "%s is empty", field)
		}
	}
	if sc.UseCase != "" && p.c.UseCase(sc.UseCase) == nil {
		bad(CodeUnknownUseCase, "use case %q is not in the contract", sc.UseCase)
	}
	if !slices.Contains(scenario.Kinds, sc.Kind) {
		bad(CodeBadKind, "kind %q is not one of %v", sc.Kind, scenario.Kinds)
	}
	if !slices.Contains(scenario.Outcomes, sc.Expects) {
		bad(CodeBadExpects, "expects %q is not one of %v", sc.Expects, scenario.Outcomes)
	}
	if sc.MaxTurns <= 0 {
		bad(CodeMissingField, "max_turns must be positive")
	} else if msg := turnsShort(sc.MaxTurns, []*scenario.Scenario{sc}); msg != "" {
		bad(CodeTurnsShort, "%s", msg)
	}
	if sc.Expects != scenario.OutcomeSucceed && sc.Expects != "" && len(sc.Tempting) == 0 {
		bad(CodeTemptingRequired, "expects %s: doing nothing is right, so tempting calls (the wrong move) are required as the counterfactual", sc.Expects)
	}
	if sc.Expects == scenario.OutcomeSucceed && len(sc.Solution) == 0 {
		bad(CodeEmptySolution, "expects succeed but the solution has no calls")
	}
	for _, part := range []struct {
		name  string
		calls []scenario.Call
	}{{"solution", sc.Solution}, {"tempting", sc.Tempting}, {"missing", sc.Missing}} {
		for i, c := range part.calls {
			t := p.c.Tool(c.Tool)
			if t == nil {
				bad(CodeUnknownTool, "%s step %d calls %q, which the contract does not have", part.name, i+1, c.Tool)
				continue
			}
			if !p.progs.HasHandler(c.Tool) {
				bad(CodeNoHandler, "%s step %d calls %q, which has no handler: it cannot run, so it cannot pass", part.name, i+1, c.Tool)
			}
			props, _ := t.Params["properties"].(map[string]any)
			for k := range c.Args {
				if _, ok := props[k]; !ok {
					bad(CodeBadArgs, "%s step %d: %s has no argument %q", part.name, i+1, c.Tool, k)
				}
			}
			for _, k := range t.Required() {
				if _, ok := c.Args[k]; !ok {
					bad(CodeBadArgs, "%s step %d: %s needs argument %q", part.name, i+1, c.Tool, k)
				}
			}
			if msg := p.argsInvalid(c); msg != "" {
				bad(CodeBadArgs, "%s step %d: %s: %s", part.name, i+1, c.Tool, msg)
			}
		}
	}
	if msg := p.requiresUnmet(sc.Solution); msg != "" {
		bad(CodeRequiresUnmet, "%s", msg)
	}
	if msg := p.afterHandoff(sc.Solution); msg != "" {
		bad(CodeAfterHandoff, "%s", msg)
	}
	settled := 0
	if len(sc.SubGoals) == 0 {
		bad(CodeNoSubGoals, "a scenario needs at least one sub-goal")
	}
	for _, ref := range sc.SubGoals {
		declared, judged, ok := p.subGoalParams(ref.Name)
		if !ok {
			rs = append(rs, Refusal{Gate: GateStatic, Code: CodeUnknownSubGoal, Message: fmt.Sprintf("sub-goal %q is not in the catalogue (list_sub_goals shows it)", ref.Name), SubGoal: ref.Name})
			continue
		}
		if !judged {
			settled++
		}
		var missing, extra []string
		for name := range declared {
			if _, ok := ref.Params[name]; !ok {
				missing = append(missing, name)
			}
		}
		for name := range ref.Params {
			if _, ok := declared[name]; !ok {
				extra = append(extra, name)
			}
		}
		sort.Strings(missing)
		sort.Strings(extra)
		if len(missing) > 0 || len(extra) > 0 {
			rs = append(rs, Refusal{Gate: GateStatic, Code: CodeBadParams, Message: fmt.Sprintf("sub-goal %s: missing params %v, unknown params %v", ref.Name, missing, extra), SubGoal: ref.Name})
		} else if msg := p.anyRecord(ref); msg != "" {
			rs = append(rs, Refusal{Gate: GateStatic, Code: CodeBadParams, Message: msg, SubGoal: ref.Name})
		}
	}
	if len(sc.SubGoals) > 0 && settled == 0 {
		bad(CodeNoSettledCheck, "every sub-goal is judged; at least one must be code-settled")
	}
	rs = append(rs, p.staticOutcome(sc)...)
	rs = append(rs, p.standIns(sc)...)
	rs = append(rs, p.outboundStatic(sc)...)
	rs = append(rs, directives(sc, p.domainWords())...)
	rs = append(rs, p.subGoalDirectives(sc)...)
	known := p.knownTokens(sc)
	conventions := p.seedConventions()
	for _, s := range textOf(sc) {
		for i, re := range placeholders {
			for _, m := range re.FindAllStringIndex(s, -1) {
				if conventions[i] || worldHolds(s, m, known) {
					continue
				}
				bad(CodePlaceholder, "placeholder data %q: use values from the world", s[m[0]:m[1]])
			}
		}
	}
	return dedupe(rs)
}

func dedupe(rs []Refusal) []Refusal {
	seen := map[string]bool{}
	var out []Refusal
	for _, r := range rs {
		k := string(r.Code) + r.Message
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

// textOf is every string a scenario says or sends.
func textOf(sc *scenario.Scenario) []string {
	out := []string{sc.Instruction, sc.Persona.Name, sc.Persona.Opening}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, st := range sc.Setup {
		for _, a := range st.Args {
			walk(a)
		}
	}
	for _, c := range append(append(append([]scenario.Call{}, sc.Solution...), sc.Tempting...), sc.Missing...) {
		walk(map[string]any(c.Args))
	}
	return out
}

// requiresUnmet checks a solution calls gated tools only after what they require.
func (p *Prover) requiresUnmet(calls []scenario.Call) string {
	for i, c := range calls {
		t := p.c.Tool(c.Tool)
		if t == nil {
			continue
		}
		for _, req := range t.Requires {
			met := false
			for j := 0; j < i && !met; j++ {
				if !slices.Contains(req.AnyOf, calls[j].Tool) {
					continue
				}
				same := true
				for _, a := range req.Same {
					if ground.Text(calls[j].Args[a]) != ground.Text(c.Args[a]) {
						same = false
					}
				}
				met = same
			}
			if !met {
				what := strings.Join(req.AnyOf, " or ")
				if len(req.Same) > 0 {
					what += " on the same " + strings.Join(req.Same, ", ")
				}
				return fmt.Sprintf("solution step %d calls %s before %s", i+1, c.Tool, what)
			}
		}
	}
	return ""
}

// ready runs after setup: the caller exists and every ready query holds. A
// query the database fails for its own reasons is an error, not a refusal.
func (p *Prover) ready(ctx context.Context, cp *world.Copy, sc *scenario.Scenario) ([]Refusal, error) {
	var rs []Refusal
	if cl := p.c.Caller; cl != nil && sc.CallerID != nil {
		rows, err := cp.Query(ctx, fmt.Sprintf("SELECT 1 FROM %s WHERE %s::text = $1", cl.Table, cl.Key), ground.Text(sc.CallerID))
		if err != nil && infrastructure(err) {
			return nil, err
		}
		if err != nil || len(rows) == 0 {
			rs = append(rs, Refusal{Gate: GateReady, Code: CodeUnknownCaller, Message: fmt.Sprintf("caller_id %v is not a %s.%s after setup", sc.CallerID, cl.Table, cl.Key)})
		}
	}
	more, err := p.outboundReady(ctx, cp, sc)
	if err != nil {
		return nil, err
	}
	rs = append(rs, more...)
	for i, rc := range sc.Ready {
		if !selectOnly.MatchString(rc.SQL) {
			rs = append(rs, Refusal{Gate: GateReady, Code: CodeBadReady, Message: fmt.Sprintf("ready check %d must be a single SELECT", i+1)})
			continue
		}
		if !p.readsTable(rc.SQL) {
			rs = append(rs, Refusal{Gate: GateReady, Code: CodeBadReady, Message: fmt.Sprintf("ready check %d reads no table of the world: it confirms nothing (%s)", i+1, firstOf(rc.Why, rc.SQL))})
			continue
		}
		rows, err := cp.Query(ctx, rc.SQL, rc.Args...)
		if err != nil && infrastructure(err) {
			return nil, err
		}
		if err != nil {
			rs = append(rs, Refusal{Gate: GateReady, Code: CodeBadReady, Message: fmt.Sprintf("ready check %d: %v", i+1, err)})
			continue
		}
		if rc.Rows == nil {
			if len(rows) == 0 {
				rs = append(rs, Refusal{Gate: GateReady, Code: CodeNotReady, Message: fmt.Sprintf("ready check %d returned no row: %s", i+1, firstOf(rc.Why, rc.SQL))})
			}
			continue
		}
		got := make([]map[string]any, len(rows))
		for j, r := range rows {
			got[j] = r.Map()
		}
		if !sameJSON(got, rc.Rows) {
			rs = append(rs, Refusal{Gate: GateReady, Code: CodeNotReady, Message: fmt.Sprintf("ready check %d returned %s, not %s", i+1, js(got), js(rc.Rows))})
		}
	}
	return rs, nil
}

// anyRecord says why a called check names no record of a tool that takes
// one ("" when it does, or is another check): called(get_order_details, {})
// holds for a look-up of any order, not of the one the case is about. A tool
// without a record argument (a handoff with a summary) is whole without args.
func (p *Prover) anyRecord(ref scenario.SubGoalRef) string {
	if ref.Name != "called" {
		return ""
	}
	tool, _ := ref.Params["tool"].(string)
	args, _ := ref.Params["args"].(map[string]any)
	t := p.c.Tool(tool)
	if t == nil || len(args) > 0 {
		return ""
	}
	for _, n := range t.Required() {
		if table, _, ok := p.c.RefOf(t.Name, n); ok {
			return fmt.Sprintf("sub-goal called names %s with no args, yet it takes %s (a %s row): any call of it holds, whichever record it names; give the args of the record the case is about", tool, n, table)
		}
	}
	return ""
}

// readsTable reports whether a ready query reads a table of the world (a
// FROM or JOIN naming one): a query that reads none (SELECT 1) confirms
// nothing about the state the setup made.
func (p *Prover) readsTable(sql string) bool {
	for _, m := range fromTable.FindAllStringSubmatch(sql, -1) {
		if p.c.Table(strings.ToLower(m[1])) != nil {
			return true
		}
	}
	return false
}

var fromTable = regexp.MustCompile(`(?i)\b(?:from|join)\s+(?:public\.)?"?([A-Za-z_][A-Za-z0-9_]*)`)

var selectOnly = regexp.MustCompile(`(?is)^\s*(select|with)\b[^;]*;?\s*$`)

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sameJSON compares as JSON values (numbers numerically).
func sameJSON(a, b any) bool {
	var x, y any
	_ = json.Unmarshal([]byte(js(a)), &x)
	_ = json.Unmarshal([]byte(js(b)), &y)
	return js(x) == js(y)
}

// tokens splits text into the words a caller is handed: runs of letters,
// digits and the characters codes and addresses are written with.
func tokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("@.#-_/+$%:", r))
	})
}

// trimToken drops the punctuation a sentence leaves on a word.
func trimToken(w string) string { return strings.Trim(w, ".,;:!?()[]{}\"'") }

// worldTokens are the tokens of every string of a world's seed and its
// contract's code (a handler's constant text reaches results), computed once
// per world.
var worldTokens sync.Map // world and contract sha256 -> what the world holds

func (p *Prover) seedTokens() map[string]bool {
	if v, ok := worldTokens.Load(p.c.WorldSHA256 + "\x00" + p.c.SHA256); ok {
		return v.(map[string]bool)
	}
	out := map[string]bool{}
	for v := range p.seed {
		addTokens(out, v)
	}
	for _, src := range p.c.Sources {
		for _, lit := range quoted.FindAllString(src, -1) {
			addTokens(out, strings.Trim(lit, `"'`))
		}
	}
	v, _ := worldTokens.LoadOrStore(p.c.WorldSHA256+"\x00"+p.c.SHA256, out)
	return v.(map[string]bool)
}

// nameWords are the contract's own names (address_line1, card_last4) and
// their words: its vocabulary. A caller told "the new address line1" is
// handed a word of the contract, not a code the world must hold.
func (p *Prover) nameWords() map[string]bool {
	key := "names\x00" + p.c.SHA256
	if v, ok := worldTokens.Load(key); ok {
		return v.(map[string]bool)
	}
	out := map[string]bool{}
	for i := range p.c.Tools {
		for _, n := range p.c.Tools[i].ParamNames() {
			addNameWords(out, n)
		}
	}
	for _, t := range p.c.Tables {
		for _, col := range t.Columns {
			addNameWords(out, col.Name)
		}
	}
	v, _ := worldTokens.LoadOrStore(key, out)
	return v.(map[string]bool)
}

func addNameWords(out map[string]bool, name string) {
	out[strings.ToLower(name)] = true
	for _, w := range contract.NameWords(name) {
		out[w] = true
	}
}

// seedConventions says which placeholder patterns the seed itself follows
// (its customers' addresses are at example.com, its phone numbers are
// 555-01xx): values in those shapes are the world's style, not invented
// data. Whether such a value is one the world holds is the grounding
// gate's question.
func (p *Prover) seedConventions() map[int]bool {
	key := "conventions\x00" + p.c.WorldSHA256
	if v, ok := worldTokens.Load(key); ok {
		return v.(map[int]bool)
	}
	out := map[int]bool{}
	for v := range p.seed {
		for i, re := range placeholders {
			if !out[i] && re.MatchString(v) {
				out[i] = true
			}
		}
	}
	v, _ := worldTokens.LoadOrStore(key, out)
	return v.(map[int]bool)
}

var quoted = regexp.MustCompile(`"[^"\n]*"|'[^'\n]*'`)

func addTokens(set map[string]bool, s string) {
	set[s] = true
	for _, w := range tokens(s) {
		set[trimToken(w)] = true
	}
}

// knownTokens are the tokens the world holds for a scenario: the seed's, the
// contract's code's and its setup's.
func (p *Prover) knownTokens(sc *scenario.Scenario) func(string) bool {
	seed := p.seedTokens()
	setup := map[string]bool{}
	for _, st := range sc.Setup {
		for _, a := range st.Args {
			walkStrings(a, func(s string) { addTokens(setup, s) })
		}
	}
	return func(t string) bool { return seed[t] || setup[t] }
}

func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		for _, e := range x {
			walkStrings(e, f)
		}
	}
}

// worldHolds reports whether the match m of s lies in words the world holds
// (every token it overlaps is known).
func worldHolds(s string, m []int, known func(string) bool) bool {
	pos := 0
	overlapped := false
	for _, w := range tokens(s) {
		i := strings.Index(s[pos:], w)
		if i < 0 {
			continue
		}
		start, end := pos+i, pos+i+len(w)
		pos = end
		if end <= m[0] || start >= m[1] {
			continue
		}
		overlapped = true
		if !known(trimToken(w)) {
			return false
		}
	}
	return overlapped
}

// Words that hold digits but are not codes a caller could be handed: money,
// percentages, years, plain numbers, times, ordinals, spans.
var notCodes = []*regexp.Regexp{
	regexp.MustCompile(`^[-+]?[$€£¥]?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]+)?$`), // 1,250.00
	regexp.MustCompile(`^[-+]?[$€£¥][0-9]+(\.[0-9]+)?[kKmM]?$`),           // $300, $12.50, $5k
	regexp.MustCompile(`^[-+]?[0-9]+\.[0-9]+$`),                           // 12.50
	regexp.MustCompile(`^[0-9]+[kKmM]$`),                                  // 5k
	regexp.MustCompile(`^[0-9]+(\.[0-9]+)?%$`),                            // 100%
	regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(usd|eur|gbp|USD|EUR|GBP)$`),
	regexp.MustCompile(`^[0-9]{1,2}(:[0-9]{2}){1,2}([aApP]\.?[mM]\.?)?$`), // 10:30, 9:05pm
	regexp.MustCompile(`^[0-9]{1,2}([aApP][mM]|h)$`),                      // 7pm, 24h
	regexp.MustCompile(`^[0-9]+(st|nd|rd|th)$`),                           // 21st
	regexp.MustCompile(`^[0-9]+-[0-9]+$`),                                 // 5-7
	regexp.MustCompile(`^[0-9]+-?(day|days|hour|hours|minute|minutes|min|mins|week|weeks|month|months|year|years|star|stars|night|nights)$`),
}

// calendarDay reports a day (2026-03-14) or a moment on one
// (2026-03-14T10:00:00Z).
func calendarDay(s string) bool {
	if len(s) < 10 || len(s) > 10 && s[10] != 'T' {
		return false
	}
	_, err := time.Parse("2006-01-02", s[:10])
	return err == nil
}

// plainNumber is at most four digits: a count, an amount, a year, not a code.
var plainNumber = regexp.MustCompile(`^[0-9]{1,4}$`)

// codeLike returns the words of s that read as codes a caller could be
// handed and the world must hold: a word of four or more characters with a
// digit or an @ in it, unless it is money, a percentage, a year, an
// ordinary number, a time, an ordinal or a span.
func codeLike(s string) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		w = trimToken(w)
		if len(w) < 4 || !strings.ContainsAny(w, "0123456789@") {
			continue
		}
		if plainNumber.MatchString(w) {
			continue
		}
		code := true
		for _, re := range notCodes {
			if re.MatchString(w) {
				code = false
				break
			}
		}
		if code {
			out = append(out, w)
		}
	}
	return out
}

// grounding: codes and references handed to the caller exist in the seed,
// the setup or the solution's results (a fact the caller misremembers on
// purpose is exempt when what the world holds instead is grounded); every
// output appears in a result, and every computed output is what its sum
// over the results gives.
func (p *Prover) grounding(sc *scenario.Scenario, results []world.CallResult, also ...world.CallResult) []Refusal {
	known := map[string]bool{}
	// The conversation's other requests' calls and answers ground what the
	// caller is handed for them (a shared instruction), never an output.
	handedText := ""
	for _, r := range also {
		ground.AddValues(known, map[string]any(r.Args))
		handedText += string(r.Result) + "\n"
	}
	for _, st := range sc.Setup {
		for _, a := range st.Args {
			ground.AddValues(known, a)
		}
	}
	for _, c := range sc.Solution {
		ground.AddValues(known, map[string]any(c.Args))
	}
	// A calendar day the tempting act sends is the caller's wish (a visit
	// on a Saturday, a car from last week), not a record the world must
	// hold: a caller may name any day, and the world's answer to it is the
	// case.
	// So is a number the tempting act sends as a number (points to redeem,
	// twice the balance): a quantity the caller asks for, which the world
	// refuses, not a code it must hold. A code sent as text still must be.
	// And so is text the tempting act sends for an argument its author
	// marked `x-ref: false` (a bank account number with a pattern): the
	// author's word that it names no record, so the caller's to state.
	for _, c := range sc.Tempting {
		t := p.c.Tool(c.Tool)
		for name, v := range c.Args {
			if d, ok := v.(string); ok && (calendarDay(d) || t != nil && ground.Declined(t, name)) {
				known[d] = true
			}
			switch v.(type) {
			case int, int32, int64, float64, json.Number:
				known[ground.Text(v)] = true
			}
		}
	}
	// A value written with spaces (a phone "07974 487020", a postcode) is
	// handed, and read, a word at a time.
	for v := range known {
		if strings.ContainsAny(v, " \t") {
			for _, w := range strings.Fields(v) {
				known[trimToken(w)] = true
			}
		}
	}
	resultText := ""
	for _, r := range results {
		resultText += string(r.Result) + "\n"
	}
	seedTok, names := p.seedTokens(), p.nameWords()
	handedText += resultText
	grounded := func(tok string) bool {
		return known[tok] || p.seed[tok] || seedTok[tok] || names[strings.ToLower(tok)] || strings.Contains(handedText, tok)
	}
	var rs []Refusal
	said := map[string]bool{}
	for _, m := range sc.Misremembered {
		if m.Said == "" || m.Said == m.Actual {
			rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeUngrounded, Message: fmt.Sprintf("misremembered %q must differ from what the world holds", m.Said)})
			continue
		}
		for _, tok := range append(codeLike(m.Actual), m.Actual) {
			if !grounded(tok) {
				rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeUngrounded, Message: fmt.Sprintf("misremembered %q: the world does not hold %q", m.Said, tok)})
			}
		}
		// What the caller gets wrong is a fact about their own case: the
		// world holds it where the case reads it (an answer, the setup's
		// rows), on a record of the caller's, or on reference data nobody
		// owns; another customer's phone is no fact of this caller's.
		if a := strings.TrimSpace(m.Actual); a != "" && !known[a] && !strings.Contains(handedText, a) && !p.heldWhere(sc, a, p.ownedBy(sc, true)) && p.heldWhere(sc, a, p.ownedBy(sc, false)) {
			rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeUngrounded, Message: fmt.Sprintf("misremembered %q: what the world holds instead, %q, is on records of other people, never on the caller's, on reference data or in an answer of the case", m.Said, a)})
		}
		for _, tok := range codeLike(m.Said) {
			said[tok] = true
		}
		said[trimToken(m.Said)] = true
	}
	for _, s := range []string{sc.Instruction, sc.Persona.Opening} {
		for _, tok := range codeLike(s) {
			if grounded(tok) || said[tok] {
				continue
			}
			rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeUngrounded, Message: fmt.Sprintf("the caller is handed %q, which exists nowhere in the world, the setup or the solution's results", tok)})
		}
	}
	for _, o := range sc.Outputs {
		if o == "" || !strings.Contains(resultText, o) {
			rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeOutputNotInResults, Message: fmt.Sprintf("output %q appears in no result of the solution", o)})
		}
	}
	shownNums := map[string]bool{}
	for _, r := range results {
		leaves(shownNums, r.Result)
	}
	for _, cv := range sc.Computed {
		if msg := computedWrong(cv, results); msg != "" {
			rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeOutputNotInResults, Message: fmt.Sprintf("computed output %q: %s", cv.Value, msg)})
			continue
		}
		// A number written into the sum is one the agent has: the caller
		// says it or an answer shows it. Any other makes any figure.
		for _, ref := range cv.Of {
			if strings.HasPrefix(ref, "$") || handedIn(ref, sc.Instruction, sc.Persona.Opening) || numberShown(shownNums, ref) {
				continue
			}
			rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeOutputNotInResults, Message: fmt.Sprintf("computed output %q: %s is a number the caller never says and no answer shows: the agent could not work it out", cv.Value, ref)})
			break
		}
	}
	return dedupe(rs)
}

// numberShown reports whether one of the shown values is the number v.
func numberShown(shown map[string]bool, v string) bool {
	for s := range shown {
		if numberEqual(s, v) {
			return true
		}
	}
	return false
}

// computedWrong says why a computed output is not what its sum over the
// results gives ("" when it is).
func computedWrong(cv scenario.Computed, results []world.CallResult) string {
	if !slices.Contains(scenario.ComputedOps, cv.Op) {
		return fmt.Sprintf("op %q is not one of %v", cv.Op, scenario.ComputedOps)
	}
	if len(cv.Of) == 0 {
		return "of is empty"
	}
	var nums []float64
	count := 0
	for _, ref := range cv.Of {
		vals, err := resolveNumbers(ref, results)
		if err != "" {
			return err
		}
		count += len(vals)
		nums = append(nums, vals...)
	}
	want, ok := parseAmount(cv.Value)
	if !ok {
		return "the value is not a number"
	}
	var got float64
	switch cv.Op {
	case "count":
		got = float64(count)
	case "sum":
		for _, n := range nums {
			got += n
		}
	case "difference", "ratio", "product", "min", "max":
		if len(nums) == 0 {
			return "no number to work from"
		}
		got = nums[0]
		for _, n := range nums[1:] {
			switch cv.Op {
			case "difference":
				got -= n
			case "product":
				got *= n
			case "ratio":
				if n == 0 {
					return "division by zero"
				}
				got /= n
			case "min":
				got = math.Min(got, n)
			case "max":
				got = math.Max(got, n)
			}
		}
	}
	if math.Abs(got-want) > 0.005 {
		return fmt.Sprintf("the %s of %v is %s", cv.Op, cv.Of, strconv.FormatFloat(got, 'f', -1, 64))
	}
	return ""
}

// parseAmount reads "1,250.00", "$57.50", "12%" as a number.
func parseAmount(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimLeft(s, "$€£¥")
	s = strings.TrimRight(s, "%")
	s = strings.ReplaceAll(s, ",", "")
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// resolveNumbers reads a Computed operand: a number, or "$N.path" into the
// result of step N ("*" takes every element of a list).
func resolveNumbers(ref string, results []world.CallResult) ([]float64, string) {
	if f, ok := parseAmount(ref); ok && !strings.HasPrefix(ref, "$") {
		return []float64{f}, ""
	}
	if !strings.HasPrefix(ref, "$") {
		return nil, fmt.Sprintf("%q is neither a number nor a $N.path reference", ref)
	}
	head, path, _ := strings.Cut(ref[1:], ".")
	n, err := strconv.Atoi(head)
	if err != nil || n < 1 || n > len(results) {
		return nil, fmt.Sprintf("%q names no step of the solution", ref)
	}
	var doc any
	if json.Unmarshal(results[n-1].Result, &doc) != nil {
		return nil, fmt.Sprintf("step %d has no result to read", n)
	}
	cur := []any{doc}
	if path != "" {
		for _, part := range strings.Split(path, ".") {
			var next []any
			for _, d := range cur {
				switch x := d.(type) {
				case map[string]any:
					if v, ok := x[part]; ok {
						next = append(next, v)
					}
				case []any:
					if part == "*" {
						next = append(next, x...)
					} else if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(x) {
						next = append(next, x[i])
					}
				}
			}
			cur = next
		}
	}
	var out []float64
	for _, v := range cur {
		switch x := v.(type) {
		case float64:
			out = append(out, x)
		case string:
			if f, ok := parseAmount(x); ok {
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("%q reads no number in the results", ref)
	}
	return out, ""
}

// afterHandoff names a solution step that follows a hand-over: once a tool
// that ends the conversation has run, no caller is left to identify, look
// anything up for or act for.
func (p *Prover) afterHandoff(calls []scenario.Call) string {
	for i, c := range calls[:max(len(calls)-1, 0)] {
		if t := p.c.Tool(c.Tool); t != nil && t.EndsConversation {
			return fmt.Sprintf("solution step %d (%s) follows step %d (%s), which ends the conversation: a hand-over is the reference's last call", i+2, calls[i+1].Tool, i+1, c.Tool)
		}
	}
	return ""
}

// ownedBy picks rows by whose they are: with mine, rows of the scenario's
// caller or of nobody (reference data); without, rows of someone else.
func (p *Prover) ownedBy(sc *scenario.Scenario, mine bool) func(table string, row map[string]any) bool {
	added := addedRows(sc.Setup)
	caller := ground.Text(sc.CallerID)
	return func(table string, row map[string]any) bool {
		owner, owned := p.ownerOf(table, row, added, caller)
		return mine == (!owned || owner == caller)
	}
}

// turnsShort says why max turns cannot hold a conversation's requests ("" when
// they can). A turn is one step of the agent: a tool call or a message to the
// caller. The budget must hold every reference call and one message per
// request at least; a tighter one fails the right agent before it is done.
func turnsShort(turns int, reqs []*scenario.Scenario) string {
	need := len(reqs)
	for _, r := range reqs {
		need += len(r.Solution)
	}
	if turns >= need {
		return ""
	}
	return fmt.Sprintf("max_turns %d cannot hold the reference: its %d call(s) and a message to the caller for each of its %d request(s) are %d turns, and an agent that does exactly that runs out", turns, need-len(reqs), len(reqs), need)
}
