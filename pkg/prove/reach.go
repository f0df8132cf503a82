package prove

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// An agent can only name a caller's record it has been told about: the
// caller hands it (instruction, opening), or an earlier answer on the same
// path shows it. A call that names someone's order nobody mentioned is one no
// agent would make; a refusal grounded on it (someone else's processed
// order, an item of another order) or a success that acts on it proves
// nothing about the case. Records the setup creates for the case are the
// caller's own and may be named; reference data nobody owns (a product, a
// variant) is public.

// handed reports whether the caller is handed v: it appears, as a whole
// token, in the instruction or the opening. A code of digits counts as said
// the way people say one on a call too: in groups ("465 363", "465-363") or
// digit by digit in words ("four six five, three six three"); a code with a
// leading "#" without it; a date in words (saysDate).
func handed(sc *scenario.Scenario, v string) bool {
	return handedIn(v, sc.Instruction, sc.Persona.Opening)
}

// handedIn reports whether one of texts hands v, as handed reads it.
func handedIn(v string, texts ...string) bool {
	if strings.TrimSpace(v) == "" {
		return false
	}
	var says func(text string) bool
	switch {
	case isNumber(v):
		// A number is said as a number: 2 is not said by "2.5", and 2.5 is
		// said by "$2.50".
		says = func(text string) bool { return saysNumber(text, v) }
	default:
		re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(v) + `($|[^A-Za-z0-9_])`)
		says = re.MatchString
	}
	code := len(v) >= 3 && strings.Trim(v, "0123456789") == ""
	var spaced *regexp.Regexp
	if code {
		spaced = regexp.MustCompile(`(^|[^0-9])` + strings.Join(strings.Split(v, ""), `[\s.,-]*`) + `($|[^0-9])`)
	}
	for _, text := range texts {
		if says(text) || saysDate(text, v) || code && spaced.MatchString(spokenDigits(text)) {
			return true
		}
	}
	// A code is said without the sign the world writes before it: "order
	// W1021" is #W1021.
	if rest := strings.TrimLeft(v, "#"); rest != v && len(rest) >= 3 && strings.ContainsAny(rest, "0123456789") {
		return handedIn(rest, texts...)
	}
	return false
}

// numberToken is a number as written in text: digits, thousands set apart
// by commas, a decimal part.
var numberToken = regexp.MustCompile(`\d+(?:,\d{3})*(?:\.\d+)?`)

// saysNumber reports whether text writes the number v (JSON text).
func saysNumber(text, v string) bool {
	want, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return false
	}
	for _, at := range numberToken.FindAllStringIndex(text, -1) {
		if glued(text, at[0]) {
			continue // part of a word or code: the 4 of "last4", the 1082 of "L1082"
		}
		tok := text[at[0]:at[1]]
		if got, err := strconv.ParseFloat(strings.ReplaceAll(tok, ",", ""), 64); err == nil && got == want {
			return true
		}
	}
	return slices.Contains(wordNumbers(text), want)
}

// numberWord are the numbers a caller says in words, two to nineteen, the
// tens and a dozen. "one" is left out: it is most often a pronoun ("the one
// on file", "one of their orders", "no one"), and reading it as 1 would
// hand a 1 nobody asked for.
var numberWord = map[string]float64{"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
	"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
	"seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "dozen": 12}

// unitWord are the units that follow a ten in a number of two words
// ("twenty-one", "forty five"); here "one" is a number.
var unitWord = map[string]float64{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9}

// wordNumbers are the numbers text says in words (numberWord), a ten and a
// unit joined by a hyphen or a space read as one number: "twenty-five" is
// 25, not 20 and 5.
func wordNumbers(text string) []float64 {
	var out []float64
	fields := strings.Fields(strings.ToLower(text))
	for i := 0; i < len(fields); i++ {
		bare := strings.TrimRight(fields[i], `.,;:!?)"'”`)
		w := strings.TrimLeft(bare, `("'“`)
		ended := bare != fields[i] // a comma or a stop ends the number
		if ten, unit, ok := strings.Cut(w, "-"); ok {
			if t, u := numberWord[ten], unitWord[unit]; t >= 20 && u > 0 {
				out = append(out, t+u)
			}
			continue
		}
		n, ok := numberWord[w]
		if !ok {
			continue
		}
		if n >= 20 && !ended && i+1 < len(fields) {
			next := strings.TrimRight(fields[i+1], `.,;:!?)"'”`)
			if u := unitWord[next]; u > 0 {
				out, i = append(out, n+u), i+1
				continue
			}
		}
		out = append(out, n)
	}
	return out
}

// glued reports a number at i of text that a letter, a digit or an
// underscore stands right before: a piece of a word, not a number said.
func glued(text string, i int) bool {
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return i > 0 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}

// isoDate is a calendar date as worlds store one.
var isoDate = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})$`)

// monthDay, dayMonth and slashDate find a date said the ways people say one:
// "June 15, 1985", "15th of June 1985", "Apr. 6th" (no year), "6/15/1985",
// "15.06.1985".
var (
	monthWord = `(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?`
	dayPart   = `(\d{1,2})(?:st|nd|rd|th)?`
	yearPart  = `(?:,?\s*(\d{4}))?`
	monthDay  = regexp.MustCompile(`(?i)\b` + monthWord + `\s+` + dayPart + `\b` + yearPart)
	dayMonth  = regexp.MustCompile(`(?i)\b` + dayPart + `\s+(?:of\s+)?` + monthWord + `\b` + yearPart)
	slashDate = regexp.MustCompile(`\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b`)
)

// saysDate reports whether text says the calendar date v (YYYY-MM-DD) in
// words or in a common numeric form. A date said without a year is the date
// when its month and day are: the caller who says "April 6th" means the one
// the world holds, as an agent would take it.
func saysDate(text, v string) bool {
	m := isoDate.FindStringSubmatch(v)
	return m != nil && slices.Contains(datesIn(text, atoi(m[1])), v)
}

// datesIn are the calendar dates text says (YYYY-MM-DD), a date said
// without a year taken in year; a numeric date whose day and month could be
// either way round is both.
func datesIn(text string, year int) []string {
	var out []string
	add := func(y, mo, d int) {
		if mo >= 1 && mo <= 12 && d >= 1 && d <= 31 {
			out = append(out, fmt.Sprintf("%04d-%02d-%02d", y, mo, d))
		}
	}
	yearOr := func(s string) int {
		if s == "" {
			return year
		}
		return atoi(s)
	}
	for _, f := range monthDay.FindAllStringSubmatch(text, -1) {
		add(yearOr(f[3]), monthOf(f[1]), atoi(f[2]))
	}
	for _, f := range dayMonth.FindAllStringSubmatch(text, -1) {
		add(yearOr(f[3]), monthOf(f[2]), atoi(f[1]))
	}
	for _, f := range slashDate.FindAllStringSubmatch(text, -1) {
		y, a, b := atoi(f[3]), atoi(f[1]), atoi(f[2])
		add(y, a, b)
		if a != b {
			add(y, b, a)
		}
	}
	return out
}

// monthOf is the number of a month's name (0 when it is none).
func monthOf(w string) int {
	w = strings.ToLower(strings.TrimSuffix(w, "."))
	for i, n := range []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"} {
		if strings.HasPrefix(w, n) {
			return i + 1
		}
	}
	return 0
}

// atoi is a run of digits as a number (0 when it is none).
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// digitWord is a digit said as a word; digitOf its digit.
var (
	digitWord = regexp.MustCompile(`(?i)\b(zero|one|two|three|four|five|six|seven|eight|nine)\b`)
	digitOf   = map[string]string{"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4",
		"five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9"}
)

// spokenDigits is text with each digit said as a word written as the digit.
func spokenDigits(text string) string {
	return digitWord.ReplaceAllStringFunc(text, func(w string) string { return digitOf[strings.ToLower(w)] })
}

// leaves adds every scalar of a JSON document (a result) to set, as text.
func leaves(set map[string]bool, raw json.RawMessage) {
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return
	}
	ground.AddValues(set, doc)
}

// created are the values the setup puts in each table.column ("table.column"
// -> values); a statement that is not a plain insert puts its every argument
// everywhere (its effect is not read from its text).
func created(setup []scenario.Statement) (map[string]map[string]bool, map[string]bool) {
	typed := map[string]map[string]bool{}
	loose := map[string]bool{}
	for _, st := range setup {
		rows, plain := plainRows([]scenario.Statement{st})
		if !plain {
			for _, a := range st.Args {
				ground.AddValues(loose, a)
			}
			continue
		}
		for _, r := range rows {
			for col, v := range r.row {
				k := r.table + "." + col
				if typed[k] == nil {
					typed[k] = map[string]bool{}
				}
				ground.AddValues(typed[k], v)
			}
		}
	}
	return typed, loose
}

// unreachable checks the calls of path from index from to to (exclusive):
// each value of an argument that names a row of a caller's table must be
// handed to the caller, created by the setup in that column, or a value of an
// earlier ok result on the path. It says which is not ("" when all are).
func (pr *proof) unreachable(path []world.CallResult, from, to int, label string) string {
	typed, loose := created(pr.sc.Setup)
	seen := map[string]bool{}
	if ob := pr.sc.Outbound; ob != nil {
		// The agent placed the call: it dialled the callee about the
		// purpose record, so both are on its screen before anyone speaks.
		ground.AddValues(seen, pr.sc.CallerID)
		for _, v := range ob.Record {
			ground.AddValues(seen, v)
		}
	}
	// An ask's missing step is what the caller would give when asked: any
	// value of their own row, as the setup creates it (their contact phone
	// as well as a line's), is theirs to give.
	own := map[string]bool{}
	if label == "missing" {
		own = pr.ownValues()
	}
	for i := 0; i < to && i < len(path); i++ {
		r := path[i]
		if i >= from {
			if msg := pr.unreachableArgs(r, typed, loose, seen, own); msg != "" {
				return fmt.Sprintf("%s step %d (%s) %s, which the caller is never handed (instruction, opening), the setup does not create and no earlier answer on that path shows: no agent could make that call", label, i-from+1, r.Tool, msg)
			}
		}
		if r.OK {
			leaves(seen, r.Result)
		}
	}
	return ""
}

func (pr *proof) unreachableArgs(r world.CallResult, typed map[string]map[string]bool, loose, seen, own map[string]bool) string {
	t := pr.p.c.Tool(r.Tool)
	if t == nil {
		return ""
	}
	names := make([]string, 0, len(r.Args))
	for n := range r.Args {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		table, col, ok := pr.p.c.RefOf(t.Name, n)
		if !ok {
			table, col, ok = pr.keyHolding(r.Args[n])
		}
		if !ok || !pr.p.g.OwnedTable(table) {
			continue
		}
		vals := map[string]bool{}
		ground.AddValues(vals, r.Args[n])
		sorted := make([]string, 0, len(vals))
		for v := range vals {
			sorted = append(sorted, v)
		}
		sort.Strings(sorted)
		for _, v := range sorted {
			if v == "" || seen[v] || typed[table+"."+col][v] || loose[v] || own[v] || handed(pr.sc, v) {
				continue
			}
			return fmt.Sprintf("names %s %q (a %s row)", n, v, table)
		}
	}
	return ""
}

// keyHolding is the record an argument bound to no column names all the
// same (a look-up of "any record by its id"): the owned table whose
// one-column primary key holds the text v, in the seed. Only text of three
// characters or more is taken for a key: a short number is a count as often
// as an id.
func (pr *proof) keyHolding(v any) (table, col string, ok bool) {
	s, isText := v.(string)
	if !isText || len(s) < 3 || refPattern.MatchString(s) {
		return "", "", false
	}
	for _, t := range pr.p.c.Tables {
		if len(t.PrimaryKey) == 1 && pr.p.g.OwnedTable(t.Name) && pr.p.g.Holds(t.Name, t.PrimaryKey[0], s) {
			return t.Name, t.PrimaryKey[0], true
		}
	}
	return "", "", false
}

// ownValues are the values of the caller's row that a plain insert of the
// setup creates (none when the setup does not create the caller).
func (pr *proof) ownValues() map[string]bool {
	own := map[string]bool{}
	cl := pr.p.c.Caller
	rows, _ := plainRows(pr.sc.Setup)
	if cl == nil || pr.sc.CallerID == nil {
		return own
	}
	id := ground.Text(pr.sc.CallerID)
	for _, r := range rows {
		if r.table == cl.Table && ground.Text(r.row[cl.Key]) == id {
			for _, v := range r.row {
				ground.AddValues(own, v)
			}
		}
	}
	return own
}

// vagueOutputs refuses an output that is not a whole value of a solution
// result (a status, an amount, an id the agent reads out), or that is too
// short to tell a reply that says it from one that does not: "5" or "a" is
// in almost any reply.
func vagueOutputs(sc *scenario.Scenario, results []world.CallResult) []Refusal {
	values := map[string]bool{}
	for _, r := range results {
		if r.OK {
			leaves(values, r.Result)
		}
	}
	lower := map[string]bool{}
	for v := range values {
		lower[strings.ToLower(strings.TrimSpace(v))] = true
	}
	var rs []Refusal
	for _, o := range sc.Outputs {
		o := strings.ToLower(strings.TrimSpace(o))
		switch {
		case len([]rune(o)) < 3:
			rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeVagueOutput, Message: fmt.Sprintf("output %q is too short to tell a reply that says it from one that does not", o)})
		case !lower[o] || o == "true" || o == "false":
			rs = append(rs, Refusal{Gate: GateGrounding, Code: CodeVagueOutput, Message: fmt.Sprintf("output %q is not a whole value of a solution result (a status, an amount, an id the agent reads out): a reply would contain it by chance", o)})
		}
	}
	return rs
}
