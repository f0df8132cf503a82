package prove

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// A success's reference sends what the caller asks for. A caller who says,
// in their own words, that they want another value of an argument the act
// takes ("they want the assessor to come in the morning" where the
// reference books the afternoon; "they need the car for 3 days" where it
// books 7) is asked one thing while the reference does another: an agent
// that does as the caller says fails the checks, and one that follows the
// reference ignores the caller. A quoted value asked for by the argument's
// name that no call sends is refused here whatever the world would do with
// it (unstated-choice plays only what it takes); otherwise this reads the
// plain words: another value of the argument's enum, a number or a date
// (YYYY-MM-DD) beside a word of the argument's name, or a key-shaped text
// (otherKey),
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
	sent := sentByArg(slices.Concat(pr.results, pr.also), pr.sc.Misremembered)
	for i, r := range pr.results {
		if !r.OK || !pr.p.stateChanging(r) {
			continue
		}
		t := pr.p.c.Tool(r.Tool)
		if t == nil {
			continue
		}
		// A value the caller asks for by the argument's name in quotes
		// ("depot code \"DNOR\"") that the act does not send is the
		// caller's request ignored, whether or not the world would take it
		// (unstated-choice plays it only where it would).
		if n, q := pr.misplacedValue(r.Args, sent); n != "" {
			return fmt.Sprintf("solution step %d (%s) sends %s %s, yet the caller asks for %s %q, which no call of the conversation sends: the reference does other than the caller asks", i+1, r.Tool, n, js(r.Args[n]), n, q)
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
					if w := pr.otherKey(r.Tool, n, v, s, isUsed); w != "" {
						return fmt.Sprintf("solution step %d (%s) sends %s %s, yet the caller asks for %s %s in their own words (%q): the reference does other than the caller asks", i+1, r.Tool, n, js(r.Args[n]), n, w, strings.TrimSpace(s))
					}
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
	// The name written as one word, as the schema spells it ("countryCode").
	name[strings.ToLower(strings.Join(contract.NameWords(arg), ""))] = true
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

// isoDatesIn finds dates written YYYY-MM-DD in a text.
var isoDatesIn = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`)

// sentByArg are the values each argument name is sent with by calls, a
// misremembered fact's words beside them under "" (what the caller gets
// wrong on purpose is no request).
func sentByArg(calls []world.CallResult, misremembered []scenario.Misremembered) map[string]map[string]bool {
	sent := map[string]map[string]bool{"": {}}
	for _, c := range calls {
		for k, v := range c.Args {
			if sent[k] == nil {
				sent[k] = map[string]bool{}
			}
			ground.AddValues(sent[k], v)
		}
	}
	for _, m := range misremembered {
		sent[""][m.Said], sent[""][m.Actual] = true, true
	}
	return sent
}

// misplacedValue is an argument of args and the value the caller asks for
// it by name in quotes in a sentence of wanting (askedByName) where args
// sends another and no call sends that one for the argument; "", "" when
// none. A value the act sends that the caller states too is a choice
// between them, not read.
func (pr *proof) misplacedValue(args map[string]any, sent map[string]map[string]bool) (string, string) {
	for _, n := range slices.Sorted(maps.Keys(args)) {
		v, ok := scalarArg(args[n])
		f, isNum := number(args[n])
		if isNum {
			v, ok = strconv.FormatFloat(f, 'f', -1, 64), true
		}
		// A date's parts ("2026-04-07") say no count of 4.
		said := isNum && (saysNumber(isoDatesIn.ReplaceAllString(pr.sc.Instruction, " "), v) || saysNumber(isoDatesIn.ReplaceAllString(pr.sc.Persona.Opening, " "), v)) || !isNum && pr.stated(v)
		if !ok || said {
			continue
		}
		for _, q := range pr.askedByName(n) {
			if sent[n][q] || sent[""][q] || sameNumber(q, v) || strings.EqualFold(q, v) {
				continue
			}
			return n, q
		}
	}
	return "", ""
}

// otherKey is a key-shaped word of sentence s that the caller wants for
// argument n of tool, where the call sends v: a key of the table the
// argument refers to that the world holds (seed or setup), in a sentence
// that names the argument ("they want DNOR for the depot code"), or a word
// of v's shape (letters and digits where v has them) right beside the
// argument's name ("the country code to be ES"). The word is wanted
// (wantedAt), no call sends it (isUsed), and the sentence does not say v
// too. "" when none.
func (pr *proof) otherKey(tool, n, v, s string, isUsed func(string) bool) string {
	if t := pr.p.c.Tool(tool); t == nil || len(t.Enum(n)) > 0 || strings.ContainsFunc(v, unicode.IsSpace) || isoDate.MatchString(v) {
		return "" // an enum's other values are read above
	}
	table, col, ref := pr.p.c.RefOf(tool, n)
	words := sentenceWords(s)
	orig := sentenceTokens(s)
	if len(orig) != len(words) || slices.Contains(words, strings.ToLower(v)) {
		return ""
	}
	named := namesArg(words, n)
	for at, w := range orig {
		if strings.EqualFold(w, v) || isUsed(w) || !wantedAt(words, at) {
			continue
		}
		beside := namedBeside(words, at, n)
		held := ref && (beside || named) && pr.holdsKey(table, col, w)
		if held || beside && sameShape(w, v) && !isNumber(w) {
			return w
		}
	}
	return ""
}

// sentenceTokens are sentenceWords as written (case kept).
func sentenceTokens(s string) []string {
	var out []string
	for _, w := range tokens(contracted.ReplaceAllString(s, " not")) {
		if w = trimToken(w); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// namesArg reports whether words hold every word of the argument's name of
// three letters or more (plural or not), or the name written as one word.
func namesArg(words []string, arg string) bool {
	has := map[string]bool{}
	for _, w := range words {
		has[strings.TrimSuffix(w, "s")] = true
	}
	if has[strings.ToLower(strings.Join(contract.NameWords(arg), ""))] {
		return true
	}
	n := 0
	for _, w := range contract.NameWords(arg) {
		if len(w) > 2 {
			if !has[strings.TrimSuffix(w, "s")] {
				return false
			}
			n++
		}
	}
	return n > 0
}

// holdsKey reports whether the seed or the setup's inserts hold key in
// table.col.
func (pr *proof) holdsKey(table, col, key string) bool {
	for _, r := range insertedRows(pr.sc.Setup) {
		if r.table == table && ground.Text(r.row[col]) == key {
			return true
		}
	}
	for _, row := range pr.p.g.Rows(table) {
		if ground.Text(row[col]) == key {
			return true
		}
	}
	return false
}
