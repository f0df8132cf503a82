package ground

import (
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/suitegen/suitegen/pkg/contract"
)

// candidate is a column an argument's values may come from, with how much
// it looks like the argument.
type candidate struct {
	table, column string
	score         float64
	how           How
}

// words splits an identifier into lower-case singular words: "patientRef",
// "patient_ref" and "PatientRefs" are all [patient ref].
func words(s string) []string {
	out := contract.NameWords(s)
	for i, w := range out {
		out[i] = Singular(w)
	}
	return out
}

// Singular is a plural English noun made singular (policies: policy; classes:
// class; status stays status); other words are returned as they are.
func Singular(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// synonyms map words to one meaning, so "mobile" meets "phone" and
// "postcode" meets "zip".
var synonyms = map[string]string{
	"mobile": "phone", "tel": "phone", "telephone": "phone", "cell": "phone",
	"postcode": "zip", "postal": "zip",
	"surname": "last", "family": "last",
	"given": "first", "forename": "first",
	"mail": "email", "e": "email",
	"born": "birth", "birthday": "birth", "dob": "birth",
}

// idWords are words that say "the identifier of": they meet each other, and
// weigh less than a word naming what the record is.
var idWords = map[string]bool{"id": true, "ref": true, "reference": true, "no": true, "num": true, "number": true, "code": true, "key": true, "identifier": true}

func canon(w string) string {
	if s, ok := synonyms[w]; ok {
		return s
	}
	if idWords[w] {
		return "#id"
	}
	return w
}

// likeness scores how much a column looks like an argument, by words: 1 when
// every word of the argument names the column or its table.
func likeness(param, table, column string) float64 {
	pw := words(param)
	cw := words(column)
	tw := words(table)
	if len(pw) == 0 {
		return 0
	}
	has := map[string]bool{}
	for _, w := range append(append([]string{}, cw...), tw...) {
		has[canon(w)] = true
	}
	colHas := map[string]bool{}
	for _, w := range cw {
		colHas[canon(w)] = true
	}
	// An acronym meets the words it shortens: dob, date_of_birth.
	if acronym(pw) == strings.Join(cw, "") || acronym(cw) == strings.Join(pw, "") {
		return 0.95
	}
	colAcronym := acronym(cw)
	var got, weight float64
	coversColumn := false
	for _, w := range pw {
		c := canon(w)
		wt := 1.0
		if c == "#id" {
			wt = 0.5
		}
		weight += wt
		switch {
		case colHas[c] || w == colAcronym:
			got += wt
			coversColumn = coversColumn || w == colAcronym
		case has[c]:
			got += wt * 0.8
		}
	}
	score := got / weight
	// A column whose own words the argument leaves out fits less.
	missing := 0
	pHas := map[string]bool{}
	for _, w := range pw {
		pHas[canon(w)] = true
	}
	for _, w := range cw {
		if !coversColumn && !pHas[canon(w)] && !idWords[w] {
			missing++
		}
	}
	score -= 0.1 * float64(missing)
	if score < 0 {
		return 0
	}
	return score
}

// namesID reports whether an argument's words say it is an identifier.
func namesID(param string) bool {
	for _, w := range words(param) {
		if idWords[w] {
			return true
		}
	}
	return false
}

func acronym(ws []string) string {
	if len(ws) < 2 {
		return "\x00"
	}
	var b strings.Builder
	for _, w := range ws {
		b.WriteByte(w[0])
	}
	return b.String()
}

// kind is a column type's broad family.
func kind(sqlType string) string {
	t := strings.ToLower(sqlType)
	switch {
	case strings.HasPrefix(t, "bool"):
		return "bool"
	case strings.HasPrefix(t, "timestamp"):
		return "timestamp"
	case t == "date":
		return "date"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "bigint") || strings.HasPrefix(t, "smallint") || strings.Contains(t, "serial"):
		return "int"
	case strings.HasPrefix(t, "numeric") || strings.HasPrefix(t, "decimal") || strings.HasPrefix(t, "real") || strings.HasPrefix(t, "double") || strings.HasPrefix(t, "float") || t == "money":
		if strings.HasSuffix(t, ",0)") {
			return "int"
		}
		return "number"
	case strings.HasPrefix(t, "json"):
		return "json"
	case strings.HasSuffix(t, "[]"):
		return "array"
	}
	return "text"
}

// fits reports whether a column can hold an argument's values, by type,
// format and pattern (most of the seed's values must match a pattern).
func (g *Graph) fits(ps map[string]any, table string, col contract.Column) bool {
	typ, _ := ps["type"].(string)
	if typ == "array" {
		items, _ := ps["items"].(map[string]any)
		return g.fits(items, table, col)
	}
	k := kind(col.Type)
	switch typ {
	case "boolean":
		return k == "bool"
	case "integer":
		return k == "int"
	case "number":
		return k == "int" || k == "number"
	case "string", "":
		if k == "bool" || k == "json" || k == "array" {
			return false
		}
	default:
		return false
	}
	vals := g.sampleText(table, col.Name, 200)
	if len(vals) == 0 {
		return false
	}
	if k == "timestamp" && isDay(ps) {
		// A day argument (a search from one date to another) takes the
		// day of a moment the world holds (a slot's start).
		for i, v := range vals {
			if d, ok := dayOf(v); ok {
				vals[i] = d
			}
		}
		k = "date"
	}
	match := func(ok func(string) bool) bool {
		n := 0
		for _, v := range vals {
			if ok(v) {
				n++
			}
		}
		return n*5 >= len(vals)*4
	}
	if f, _ := ps["format"].(string); f != "" {
		switch f {
		case "date":
			if k != "date" && !match(func(v string) bool { _, err := time.Parse("2006-01-02", v); return err == nil }) {
				return false
			}
		case "date-time":
			if k != "timestamp" && !match(func(v string) bool { _, ok := timeOf(v); return ok }) {
				return false
			}
		case "email":
			if !match(func(v string) bool { return strings.Contains(v, "@") }) {
				return false
			}
		}
	}
	if pat, _ := ps["pattern"].(string); pat != "" {
		if re := compiled(pat); re != nil && !match(re.MatchString) {
			// A text column may still hold the argument's values at an end
			// (the last four of a licence number, a postcode's first half).
			if k != "text" || !match(func(v string) bool { _, ok := endOf(v, ps); return ok }) {
				return false
			}
		}
	}
	if k == "int" || k == "number" {
		// A string argument for a number column: only when it is a key
		// the world reads as text too.
		return g.C.Table(table).IsUnique(col.Name)
	}
	return true
}

// isDay reports whether an argument takes a calendar day: its format says
// date, or its pattern holds a day and not a moment.
func isDay(ps map[string]any) bool {
	if f, _ := ps["format"].(string); f != "" {
		return f == "date"
	}
	pat, _ := ps["pattern"].(string)
	if pat == "" {
		// Without a format or pattern, the description's example shows
		// the shape ("Date of the last trip, such as 2026-05-12").
		desc, _ := ps["description"].(string)
		m := exampleToken.FindStringSubmatch(desc)
		if m == nil {
			return false
		}
		_, err := time.Parse("2006-01-02", m[1])
		return err == nil
	}
	re := compiled(pat)
	return re != nil && re.MatchString("2026-03-10") && !re.MatchString("2026-03-10T10:00:00Z")
}

// patterns holds each params pattern compiled once: a case's every string
// argument is read against its pattern (endOf), on the path of every fill.
var patterns sync.Map // pattern -> *regexp.Regexp, or nil when it does not compile

// compiled is pat compiled, or nil when it does not compile.
func compiled(pat string) *regexp.Regexp {
	if re, ok := patterns.Load(pat); ok {
		return re.(*regexp.Regexp)
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		re = nil
	}
	patterns.Store(pat, re)
	return re
}

// endOf is the end of a stored value that an argument takes when the value
// itself does not fit the argument's pattern but its last characters do:
// the longest such ending ("K2354500" is "4500" to `^[0-9]{4}$`), as a
// caller gives the last four digits of a card or a licence; else the longest
// beginning that fits (the outward half of a postcode, "SW1A" of "SW1A
// 1AA"). A value that fits is taken whole, and an argument without a
// pattern takes no part of one.
func endOf(v string, ps map[string]any) (string, bool) {
	pat, _ := ps["pattern"].(string)
	if pat == "" {
		return "", false
	}
	re := compiled(pat)
	if re == nil || re.MatchString(v) {
		return "", false
	}
	for i := 1; i < len(v); i++ {
		if t := v[i:]; utf8.RuneStart(v[i]) && re.MatchString(t) {
			return t, true
		}
	}
	for i := len(v) - 1; i > 0; i-- {
		if h := v[:i]; utf8.RuneStart(v[i]) && re.MatchString(h) {
			return h, true
		}
	}
	return "", false
}

// partOf reports whether an argument takes only the ends of a column's values
// (endOf), not the values themselves.
func (g *Graph) partOf(ps map[string]any, table, col string) bool {
	vals := g.sampleText(table, col, 50)
	n := 0
	for _, v := range vals {
		if _, ok := endOf(v, ps); ok {
			n++
		}
	}
	return n*2 > len(vals)
}

// isMoment reports whether an argument takes a moment: its format says
// date-time.
func isMoment(ps map[string]any) bool {
	f, _ := ps["format"].(string)
	return f == "date-time"
}

// dayOf is the day of a moment written as text ("2026-03-10T10:00:00-05:00"
// is 2026-03-10, the day where it was written).
func dayOf(v string) (string, bool) {
	if len(v) < 10 || len(v) > 10 && v[10] != 'T' && v[10] != ' ' {
		return "", false
	}
	if _, err := time.Parse("2006-01-02", v[:10]); err != nil {
		return "", false
	}
	return v[:10], true
}

func (g *Graph) sampleText(table, col string, max int) []string {
	var out []string
	for _, r := range g.Rows(table) {
		if v := r[col]; v != nil {
			out = append(out, Text(v))
			if len(out) >= max {
				break
			}
		}
	}
	return out
}

// exampleToken is a value a description gives as an example ("such as
// PL-1318", "e.g. AB12"): letters and digits together, maybe joined by a
// dash.
var exampleToken = regexp.MustCompile(`(?i)(?:such as|e\.g\.|for example|like)\s+([A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)`)

// example is the value a description gives as an example, or "" when it
// gives none that mixes letters and digits: a bare number or word says
// little about which column holds it.
func example(desc string) string {
	m := exampleToken.FindStringSubmatch(desc)
	if m == nil || !strings.ContainsAny(m[1], "0123456789") || strings.Trim(m[1], "0123456789-") == "" {
		return ""
	}
	return m[1]
}

// alike reports whether v looks like the example ex: the same outline (each
// character's class, classOf, the rest kept) and the same text before its
// first digit (PL-1001 is like PL-1318; AP-1327 is not).
func alike(v, ex string) bool {
	if len(v) != len(ex) {
		return false
	}
	lead := true
	for i := 0; i < len(v); i++ {
		if v[i] >= '0' && v[i] <= '9' {
			lead = false
		}
		cv, ce := classOf(v[i]), classOf(ex[i])
		if cv != ce || (cv == 0 || lead) && v[i] != ex[i] {
			return false
		}
	}
	return true
}

// exemplified reports whether most of a column's sampled values look like
// the example ex.
func (g *Graph) exemplified(table, col, ex string) bool {
	vals := g.sampleText(table, col, 20)
	n := 0
	for _, v := range vals {
		if alike(v, ex) {
			n++
		}
	}
	return len(vals) > 0 && 2*n > len(vals)
}

var identWord = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// touched is the words of a tool's handler and the lib files it loads: the
// tables and columns its SQL names.
func (g *Graph) touched(t *contract.Tool) map[string]bool {
	return identWords(g.C.HandlerSource(t))
}

// Touches reports whether a tool's handler, or a lib file it loads, names
// word (a table or a column): only then can what the world holds there
// change its answer.
func (g *Graph) Touches(t *contract.Tool, word string) bool {
	return g.touched(t)[strings.ToLower(word)]
}

// identWords are the lower-cased identifiers of source text.
func identWords(src string) map[string]bool {
	out := map[string]bool{}
	for _, w := range identWord.FindAllString(src, -1) {
		out[strings.ToLower(w)] = true
	}
	return out
}

// candidates ranks the columns an argument's values may come from.
func (g *Graph) candidates(t *contract.Tool, param string, touched map[string]bool) []candidate {
	ps := paramSchema(t, param)
	desc, _ := ps["description"].(string)
	ex := example(desc)
	var out []candidate
	for _, tb := range g.C.Tables {
		if len(g.Rows(tb.Name)) == 0 {
			continue
		}
		for _, col := range tb.Columns {
			if !g.fits(ps, tb.Name, col) {
				continue
			}
			s := likeness(param, tb.Name, col.Name)
			if _, isFK := g.fkOf(tb.Name, col.Name); (isFK || tb.IsUnique(col.Name) && len(tb.Unique)+1 > 0 && g.PK(tb.Name) == col.Name) && !namesID(param) && likeness(param, "", col.Name) == 0 {
				// A key column is a poor home for words ("message" is not
				// the message's patient_id).
				s -= 0.3
			}
			if touched[strings.ToLower(tb.Name)] {
				s += 0.15
				if touched[strings.ToLower(col.Name)] {
					s += 0.25
				}
			}
			if isDay(ps) && (kind(col.Type) == "date" || kind(col.Type) == "timestamp") {
				// Few columns hold days: the type itself is most of the
				// likeness (date_from is a slot's start).
				s += 0.2
			}
			if ex != "" && g.exemplified(tb.Name, col.Name, ex) {
				// The description's example looks like the column's
				// values ("The policy id, such as PL-1318", PL-1001…).
				s += 0.3
			}
			if s < 0.45 {
				continue
			}
			if tb.IsUnique(col.Name) {
				s += 0.05 // a key says more than a column that repeats
			}
			out = append(out, candidate{table: tb.Name, column: col.Name, score: s, how: ByLikeness})
		}
	}
	// A foreign key's values are its parent's: the record is the parent's
	// (appointments.slot_id names a slots.slot_id).
	seen := map[string]int{}
	var merged []candidate
	for _, c := range out {
		if fk, ok := g.fkOf(c.table, c.column); ok && g.C.Table(fk.RefTable) != nil {
			c.table, c.column = fk.RefTable, fk.RefColumn
		}
		k := c.table + "." + c.column
		if i, dup := seen[k]; dup {
			if c.score > merged[i].score {
				merged[i].score = c.score
			}
			continue
		}
		seen[k] = len(merged)
		merged = append(merged, c)
	}
	out = merged
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	if len(out) > 5 {
		out = out[:5]
	}
	return out
}
