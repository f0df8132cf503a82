package prove

import (
	"fmt"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// A success's reference sends what the caller asks for. A caller who says,
// in their own words, that they want another value of an argument the act
// takes ("they want the assessor to come in the morning" where the
// reference books the afternoon; "they need the car for 3 days" where it
// books 7) is asked one thing while the reference does another: an agent
// that does as the caller says fails the checks, and one that follows the
// reference ignores the caller. Quoted values are read by unstated-choice
// (played against the world); this reads the plain words: another value of
// the argument's enum, or a number or a date (YYYY-MM-DD) beside a word of
// the argument's name,
// stated in a sentence with a word of wanting, in a clause that does not
// negate it ("not the morning", "rather than 3 days", "from card"), in a
// sentence that does not also state the value sent (a choice between them),
// and that no call of the conversation sends and no misremembered fact names
// (nor, for a number, an answer shows).

// notWanted are the words that, in a clause before a value, say the caller
// does not want it (beside negation): what they move away from or set
// against what they want.
var notWanted = map[string]bool{"than": true, "from": true, "instead": true, "except": true,
	"without": true, "unlike": true, "replace": true, "replacing": true, "currently": true, "now": true, "was": true, "were": true}

// contradicted returns why a success's reference sends a value other than
// the one the caller asks for in their own words ("" when none).
func (pr *proof) contradicted() string {
	if pr.sc.Expects != scenario.OutcomeSucceed {
		return ""
	}
	// A number an answer shows (a count, an amount) may be what the caller
	// speaks of; an enum value an answer shows is often an option offered
	// (a free slot) or what the record holds, which the caller may want
	// changed, so only the words around it tell (notWanted).
	used, shown := map[string]bool{}, map[string]bool{}
	for _, r := range slices.Concat(pr.results, pr.also) {
		ground.AddValues(used, map[string]any(r.Args))
		leaves(shown, r.Result)
	}
	for v := range shown {
		if isNumber(v) {
			used[v] = true
		}
	}
	for _, c := range pr.sc.Solution {
		ground.AddValues(used, map[string]any(c.Args))
	}
	for _, m := range pr.sc.Misremembered {
		used[m.Said], used[m.Actual] = true, true
	}
	isUsed := func(v string) bool {
		if used[v] {
			return true
		}
		for u := range used {
			if isNumber(v) && numberEqual(u, v) || !isNumber(v) && strings.EqualFold(u, v) {
				return true
			}
		}
		return false
	}
	sentences := pr.plainSentences()
	for i, r := range pr.results {
		if !r.OK || !pr.p.stateChanging(r) {
			continue
		}
		t := pr.p.c.Tool(r.Tool)
		if t == nil {
			continue
		}
		for _, n := range sortedArgs(r.Args) {
			v, ok := scalarArg(r.Args[n])
			if !ok || v == "" || t.LogOnlyParam(n) {
				continue
			}
			var others []string
			if enum := t.Enum(n); len(enum) > 0 {
				for _, x := range enum {
					if e, ok := x.(string); ok && e != v && !isUsed(e) {
						others = append(others, e)
					}
				}
			}
			for _, s := range sentences {
				words := sentenceWords(s)
				if !slices.ContainsFunc(words, func(w string) bool { return wanting[w] }) {
					continue
				}
				for _, w := range others {
					if at := wordsAt(words, spokenWords(strings.ToLower(w))); at >= 0 && wantedAt(words, at) && wordsAt(words, spokenWords(strings.ToLower(v))) < 0 {
						return fmt.Sprintf("solution step %d (%s) sends %s %s, yet the caller asks for %s %s in their own words (%q): the reference does other than the caller asks", i+1, r.Tool, n, js(r.Args[n]), n, js(w), strings.TrimSpace(s))
					}
				}
				if isoDate.MatchString(v) {
					// Another date beside a word of the argument's name
					// ("they want the stop date 2026-04-23" where it sends
					// the 21st).
					for at, w := range words {
						if !isoDate.MatchString(w) || w == v || isUsed(w) || !namedBeside(words, at, n) || !wantedAt(words, at) || slices.Contains(words, v) {
							continue
						}
						return fmt.Sprintf("solution step %d (%s) sends %s %s, yet the caller asks for %s %s in their own words (%q): the reference does other than the caller asks", i+1, r.Tool, n, js(r.Args[n]), n, w, strings.TrimSpace(s))
					}
					continue
				}
				if !isNumber(v) {
					continue
				}
				for at, w := range words {
					if !isNumber(w) || numberEqual(w, v) || isUsed(w) || !namedBeside(words, at, n) || !wantedAt(words, at) || slices.ContainsFunc(words, func(x string) bool { return numberEqual(x, v) }) {
						continue
					}
					return fmt.Sprintf("solution step %d (%s) sends %s %s, yet the caller asks for %s %s in their own words (%q): the reference does other than the caller asks", i+1, r.Tool, n, js(r.Args[n]), n, w, strings.TrimSpace(s))
				}
			}
		}
	}
	return ""
}

// plainSentences are the caller's sentences (instruction, opening) in their
// own words: the use case's own text and quoted values taken out (a quoted
// value is unstated-choice's to read, and a quoted text, a summary or a
// file name, is a value of its own, not words of the caller's), and a
// sentence that tells what the caller wanted before left out.
func (pr *proof) plainSentences() []string {
	var out []string
	for _, text := range pr.callerWords() {
		text = saidQuoted.ReplaceAllString(text, " ")
		for _, s := range fullStop.Split(text, -1) {
			if strings.TrimSpace(s) != "" && !wantedBefore(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// sentenceWords are s's words in lower case, a negation written short read
// as "not".
func sentenceWords(s string) []string {
	var words []string
	for _, w := range tokens(contracted.ReplaceAllString(s, " not")) {
		if w = strings.ToLower(trimToken(w)); w != "" {
			words = append(words, w)
		}
	}
	return words
}

// wordsAt is where the run of words want starts in words, -1 when nowhere.
func wordsAt(words, want []string) int {
	if len(want) == 0 {
		return -1
	}
	for i := 0; i+len(want) <= len(words); i++ {
		if slices.Equal(words[i:i+len(want)], want) {
			return i
		}
	}
	return -1
}

// wantedAt reports whether the word at i is wanted by the caller: a word of
// wanting (not someone else's) stands before it in the sentence, is not
// negated, and no negation or word of moving away stands in the two words
// before the value.
func wantedAt(words []string, at int) bool {
	want := -1
	for j := at - 1; j >= 0; j-- {
		if wanting[words[j]] && !(j > 0 && someoneElse[strings.TrimSuffix(strings.TrimSuffix(words[j-1], "'s"), "s")]) {
			want = j
			break
		}
	}
	if want < 0 {
		return false
	}
	// "do not want the morning": the wish negated.
	for j := max(want-2, 0); j < want; j++ {
		if negation[words[j]] {
			return false
		}
	}
	// "not the morning", "from card to direct debit", "rather than 3 days":
	// the value set against the wish by the words just before it.
	for j := max(want+1, at-2); j < at; j++ {
		if negation[words[j]] || notWanted[words[j]] || words[j] == "or" {
			return false
		}
	}
	return true
}

// namedBeside reports whether a word next to position at is a word of the
// argument's name ("3 days", "days 3" for days; "2 nights" for num_nights),
// plural or not, or one that at most two linking words part from it before
// the value ("limit to be 300").
func namedBeside(words []string, at int, arg string) bool {
	name := map[string]bool{}
	for _, w := range contract.NameWords(arg) {
		if len(w) > 2 {
			name[strings.TrimSuffix(w, "s")] = true
		}
	}
	for _, j := range []int{at - 1, at + 1} {
		if j >= 0 && j < len(words) && name[strings.TrimSuffix(words[j], "s")] {
			return true
		}
	}
	// The name, then words that only link it to the value: "the new limit
	// to be 300", "the collection date set to 2026-04-03".
	j := at - 1
	for k := 0; k < 2 && j >= 0 && linking[words[j]]; k++ {
		j--
	}
	return j >= 0 && j < at-1 && name[strings.TrimSuffix(words[j], "s")]
}

// linking are words that tie an argument's name to the value after it.
var linking = map[string]bool{"to": true, "be": true, "of": true, "is": true, "set": true, "as": true}
