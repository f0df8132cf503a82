package prove

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// A reference carries out what the caller asks. A caller who says they do
// not want the act ("they only want to know where the order is; they do
// not want to cancel it", "they do not want the appointment confirmed") has
// not asked for it, whatever the use case is called: a success that makes
// the act, or a refusal whose tempting act it is, tests an agent against a
// request nobody made. Each mention of the act's verb (the first word of its
// tool's name) is read in its clause: negated when a negation stands at
// most five words before it with only glue between (and one other word
// after a word of wanting), asked when a word of wanting stands at most
// three words before it without one ("wants to cancel", "wants the order
// cancelled"), and otherwise only a mention ("the agent rings to confirm",
// "what suspending a line would cost"). The act is withheld when a mention
// is negated and none asks for it: a caller may say what they do not want
// beside what they do.

// negation are the words that withhold what follows them.
var negation = map[string]bool{"not": true, "never": true, "no": true, "nor": true, "cannot": true, "nothing": true}

// withheldGlue are the words that may stand between a negation and the
// act's verb and keep the negation on it.
var withheldGlue = map[string]bool{"to": true, "it": true, "them": true, "that": true, "this": true,
	"be": true, "have": true, "has": true, "get": true, "any": true, "the": true, "a": true, "an": true,
	"is": true, "was": true, "being": true, "longer": true, "do": true, "does": true, "would": true,
	"anything": true, "their": true, "his": true, "her": true, "my": true}

// wanting are the words that ask for what follows them.
var wanting = map[string]bool{"want": true, "wants": true, "wanted": true, "wish": true, "wishes": true,
	"like": true, "ask": true, "asks": true, "asking": true, "need": true, "needs": true, "please": true,
	"request": true, "requests": true, "requesting": true}

// questionWord, between a word of wanting and the act's verb, makes the
// wish a question about the act ("asks how to pay it", "asks what renewing
// would cost"), which asks for nothing.
var questionWord = map[string]bool{"how": true, "what": true, "why": true}

// contracted is an English negation written short ("don't", "won’t").
var contracted = regexp.MustCompile(`(?i)n['’]t\b`)

// clause splits a sentence where a negation stops reaching: a comma, a
// dash, and the words that join clauses.
var clause = regexp.MustCompile(`(?i)[,–—]|\s-\s|\b(but|and|or|then|while|although|though|because|so)\b`)

// withheld names the act the caller says they do not want, with the
// sentence that says so ("" when the caller withholds none of them): the
// solution's state-changing calls for a success, the tempting calls that
// change state otherwise.
func (pr *proof) withheld() string {
	calls := pr.sc.Tempting
	if pr.sc.Expects == scenario.OutcomeSucceed {
		calls = nil
		for _, r := range pr.results {
			if pr.p.stateChanging(r) {
				calls = append(calls, scenario.Call{Tool: r.Tool})
			}
		}
	}
	// The acts the conversation makes: this request's, and its other
	// requests' (a caller who asks for both asks for each).
	done := map[string]bool{}
	for _, c := range calls {
		done[c.Tool] = true
	}
	for _, r := range pr.also {
		done[r.Tool] = true
	}
	seen := map[string]bool{}
	for _, c := range calls {
		t := pr.p.c.Tool(c.Tool)
		if t == nil || seen[c.Tool] || pr.sc.Expects != scenario.OutcomeSucceed && (t.ChangesState == nil || !*t.ChangesState) {
			continue
		}
		seen[c.Tool] = true
		verb := toolVerb(c.Tool)
		if len(verb) < 3 {
			continue
		}
		var refused string
		asked := false
		for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
			for _, s := range sentence.Split(text, -1) {
				switch withholds(s, verb) {
				case 1:
					asked = true
				case -1:
					if refused == "" && !anotherThing.MatchString(s) {
						refused = strings.TrimSpace(s)
					}
				}
			}
		}
		path := "tempting path"
		if pr.sc.Expects == scenario.OutcomeSucceed {
			path = "solution"
		}
		if refused == "" && !asked {
			refused = pr.noChange()
		}
		if refused != "" && !asked {
			return fmt.Sprintf("the caller does not want %s (%q), yet the scenario's %s makes it: the request is one nobody asked for", c.Tool, refused, path)
		}
		if back := pr.withdrawn(verb, calls); back != "" {
			return fmt.Sprintf("the caller takes the request for %s back (%q), yet the scenario's %s makes it: the request is one nobody asked for", c.Tool, back, path)
		}
		if other, said := pr.askedInstead(verb, done); other != "" && !pr.mentions(verb) {
			return fmt.Sprintf("the caller asks for %s (%q) and never for %s, yet the scenario's %s makes %s: the request is one nobody asked for", other, said, c.Tool, path, c.Tool)
		}
	}
	return ""
}

// changeVerb is the word every act is, whatever its tool is called: a
// caller who wants nothing changed ("they want nothing changed", "they do
// not want anything changed on it") withholds every act that changes state.
const changeVerb = "chang"

// anotherThing marks a sentence about something besides the request ("they
// do not want anything else changed", "not the other claim"), which
// withholds nothing of it.
var anotherThing = regexp.MustCompile(`(?i)\b(anything|something|nothing|everything)\s+else\b|\b(the|any|an|their|my|your|his|her)\s+other\b|\bbesides\b`)

// anyChange marks a change withheld whatever it is ("nothing changed",
// "anything changed", "no changes"), not a change of one thing the caller
// names ("refuel the data but not change the plan"), which withholds only
// acts on that thing, and only where their verb is said.
var anyChange = regexp.MustCompile(`(?i)\b(nothing|anything|no\s+changes?|any\s+changes?)\b`)

// noChange returns the caller's sentence that withholds any change ("" when
// none, or when a sentence of theirs asks for a change).
func (pr *proof) noChange() string {
	var refused string
	for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
		for _, s := range sentence.Split(text, -1) {
			switch withholds(s, changeVerb) {
			case 1:
				return ""
			case -1:
				if refused == "" && !anotherThing.MatchString(s) && anyChange.MatchString(s) {
					refused = strings.TrimSpace(s)
				}
			}
		}
	}
	return refused
}

// takenBack are the words by which a caller who asked for something takes
// it back: "no longer want any change", "no longer need a different class"
// (not "no longer need the car", a reason to cancel it), "would rather
// leave the class alone", "are keeping the booking".
var takenBack = regexp.MustCompile(`(?i)\bno\s+longer\s+wants?\b|\bno\s+longer\s+needs?\s+(a|an|any)\s+(different|new|other|change)\b|\brather\s+(leave|keep)\b|\bleave\s+(it|them|the\s+\w+)\s+(alone|as\s+(it|they)\s+(is|are))\b|\b(are|is|will\s+be|decided\s+on)\s+keeping\b|\bdecided\s+to\s+keep\b`)

// changedMind are the words of a change of mind, which takes a request
// back only where nothing is wanted in its place ("changed their mind and
// want it shipped to 77 Birch Lane" asks for another address).
var changedMind = regexp.MustCompile(`(?i)\bafter\s+all\b|\bchang(e|es|ed|ing)\s+(their|his|her|my|our)\s+minds?\b`)

// anyMore, with a negation, ends an earlier wish ("do not want to change
// the class any more").
var anyMore = regexp.MustCompile(`(?i)\bany\s?more\b`)

// instead marks a change of mind that asks for something else in place of
// what was asked (another value), not for nothing.
var instead = regexp.MustCompile(`(?i)\binstead\b|\bnow\s+wants?\b`)

// withdrawn returns the sentence of the instruction that takes the request
// for the act (its tool's verb) back, "" when none does: a sentence after the
// last one that asks for the act, which does not ask for it itself and names
// no record but those the acts name, and which negates the act (or ends the
// wish: "do not, after a talk with the family, want to change it any more")
// or says the caller keeps things as they are. What the caller wanted
// before and no longer does is no request.
func (pr *proof) withdrawn(verb string, calls []scenario.Call) string {
	own := map[string]bool{}
	for _, c := range calls {
		ground.AddValues(own, c.Args)
	}
	for _, r := range pr.results {
		if pr.p.stateChanging(r) {
			ground.AddValues(own, r.Args)
		}
	}
	others := map[string]bool{}
	for _, r := range pr.results {
		ground.AddValues(others, r.Args)
		ground.AddValues(others, r.Result)
	}
	namesOther := func(s string) bool {
		for v := range others {
			if !own[v] && len(v) >= 3 && strings.ContainsAny(v, "0123456789") && handedIn(v, s) {
				return true
			}
		}
		return false
	}
	back := ""
	ownText := pr.ownText()
	for _, s := range sentence.Split(pr.sc.Instruction, -1) {
		if conditional.MatchString(s) {
			continue // "If you cannot modify it, no action" says what to do if the world refuses
		}
		if ownText != nil {
			// The use case's own words say what the case is about ("a
			// claim the caller no longer wants to pursue"): they take
			// nothing back.
			s = ownText.ReplaceAllString(s, " ")
		}
		w := withholds(s, verb)
		ends := anyMore.MatchString(s) && negates(s) && mentionsIn(s, verb)
		switch {
		case w == 1 && !ends:
			back = "" // asked (again) after whatever came before
		case namesOther(s):
		case w == -1 && anotherThing.MatchString(s):
			// "they do not want anything else changed" withholds what is
			// not the request
		case w == -1 || ends:
			back = strings.TrimSpace(s)
		case takenBack.MatchString(s) || changedMind.MatchString(s) && !instead.MatchString(s) && !wantsOther(s):
			back = strings.TrimSpace(s)
		}
	}
	return back
}

// wantsOther reports whether a sentence wants something, a word of wanting
// no negation stands just before ("changed their mind and want it shipped
// to 77 Birch Lane" asks for another address, not for nothing).
func wantsOther(s string) bool {
	var words []string
	for _, w := range tokens(contracted.ReplaceAllString(s, " not")) {
		words = append(words, strings.ToLower(trimToken(w)))
	}
	for i, w := range words {
		if !wanting[w] || w == "like" {
			continue
		}
		neg := false
		for j := i - 1; j >= 0 && i-j <= 2; j-- {
			neg = neg || negation[words[j]] || words[j] == "longer"
		}
		if !neg {
			return true
		}
	}
	return false
}

// conditional opens a sentence that says what holds on a condition.
var conditional = regexp.MustCompile(`(?i)^\s*(if|unless|in\s+case|should|when|whether)\b`)

// negates reports whether a sentence holds a negation ("no" of "no longer"
// and "no one" aside).
func negates(s string) bool {
	words := tokens(contracted.ReplaceAllString(s, " not"))
	for i, w := range words {
		w = strings.ToLower(trimToken(w))
		if next := ""; w == "no" {
			if i+1 < len(words) {
				next = strings.ToLower(trimToken(words[i+1]))
			}
			if next == "longer" || next == "one" {
				continue
			}
		}
		if negation[w] {
			return true
		}
	}
	return false
}

// mentionsIn reports whether text s has a word that begins with verb.
func mentionsIn(s, verb string) bool {
	for _, w := range tokens(s) {
		if strings.HasPrefix(strings.ToLower(trimToken(w)), verb) {
			return true
		}
	}
	return false
}

// askedInstead names another act of the contract the caller asks for, and
// the sentence that asks, where that act is not among the acts the
// scenario makes (done); "" when none. It is read only where the caller's
// words never mention the scenario's own act: a caller who wants to return
// one item and exchange another asks for both. Only verbs that open a use case's text
// count as verbs ("Return some or all items…"), the act's own included: a
// tool named noun first (appointment_cancel) has no verb to read.
func (pr *proof) askedInstead(verb string, done map[string]bool) (string, string) {
	if !pr.p.opensUseCase(verb) {
		return "", ""
	}
	for _, t := range pr.p.c.Tools {
		v := toolVerb(t.Name)
		if done[t.Name] || v == verb || len(v) < 3 || t.ChangesState == nil || !*t.ChangesState || !pr.p.opensUseCase(v) {
			continue
		}
		for _, text := range []string{pr.sc.Instruction, pr.sc.Persona.Opening} {
			for _, s := range sentence.Split(text, -1) {
				if withholds(s, v) == 1 {
					return t.Name, strings.TrimSpace(s)
				}
			}
		}
	}
	return "", ""
}

// mentions reports whether the caller's words (instruction, opening) have a
// word that begins with verb.
func (pr *proof) mentions(verb string) bool {
	return mentionsIn(pr.sc.Instruction, verb) || mentionsIn(pr.sc.Persona.Opening, verb)
}

// opensUseCase reports whether verb opens the text of one of the contract's
// use cases.
func (p *Prover) opensUseCase(verb string) bool {
	for _, u := range p.c.UseCases {
		if w := strings.Fields(strings.ToLower(u.Text)); len(w) > 0 && strings.HasPrefix(w[0], verb) {
			return true
		}
	}
	return false
}

// withholds reads one sentence for the act's verb: -1 where a mention is
// negated and none asks for it, 1 where one asks for it, 0 otherwise.
func withholds(s, verb string) int {
	found := 0
	for _, part := range clause.Split(contracted.ReplaceAllString(s, " not"), -1) {
		var words []string
		for _, w := range tokens(part) {
			if w = strings.ToLower(trimToken(w)); w != "" {
				words = append(words, w)
			}
		}
		for i, w := range words {
			if !strings.HasPrefix(w, verb) {
				continue
			}
			// A negation reaches the verb over glue and words of wanting,
			// and over one other word only where a word of wanting stands
			// before it ("not want the appointment confirmed"; not "not the
			// one on file").
			negated, asked, other, wanted, question := false, false, false, false, false
			for j := i - 1; j >= 0 && i-j <= 5; j-- {
				w := words[j]
				switch {
				case negation[w]:
					negated = !other || wanted
				case wanting[w]:
					// "asks how to pay" asks a question about the act, not for it.
					asked = asked || i-j <= 3 && !question
					wanted = wanted || other
					continue
				case questionWord[w] && !other:
					other, question = true, true
					continue
				case withheldGlue[w]:
					continue
				case !other:
					other = true
					continue
				}
				break
			}
			switch {
			case asked && !negated:
				return 1
			case negated:
				found = -1
			}
		}
	}
	return found
}

// toolVerb is the first word of a tool's name, in lower case:
// cancel_pending_order, cancelOrder and cancel-order all give "cancel".
func toolVerb(tool string) string {
	var b strings.Builder
	for i, r := range tool {
		if r == '_' || r == '-' || r == ' ' || i > 0 && unicode.IsUpper(r) {
			break
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
