package prove

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// A caller may ask for an act on a condition of an amount: "they only want
// the change if the new total stays under $300", "as long as it costs at
// most 500"; or of a date the act sends: "only if the visit is before
// 2026-03-16" (dateUnmet). When the world's answers show the amount the condition names
// on the wrong side of its bound, a right agent does not act (or asks
// first), so a success whose solution acts anyway is no proof
// (condition-unmet). The amount is read from the answers by the words
// before the bound: a numeric field whose name shares one of them (total,
// cost), from the act's own answer (the new total) or else the last
// look-up before it (a quote).

// onCondition marks a sentence that makes the wish itself conditional ("they
// only want the change if …", "as long as …"); a sentence that says what
// to do on a condition ("if and only if the price is above $500, drop the
// second passenger") branches the request instead, and is not read.
var onCondition = regexp.MustCompile(`(?i)^\s*\S.*\bonly\s+(want|wants|wanted|need|needs|agree|agrees|accept|accepts|go\s+ahead)\b.*\bif\b|\bas\s+long\s+as\b|\bprovided\s+(that\s+)?(the|it|its|their)\b|\bon\s+condition\b`)

// bound is a comparison with a number: "under $300", "no more than 1,200".
var bound = regexp.MustCompile(`(?i)\b(under|below|less\s+than|lower\s+than|cheaper\s+than|no\s+more\s+than|not\s+more\s+than|at\s+most|over|above|more\s+than|higher\s+than|at\s+least|no\s+less\s+than)\s+[$£€]?\s?(\d[\d,]*(?:\.\d+)?)`)

// conditionUnmet says, for a success, where the caller's condition on an
// amount fails in the solution's answers while the solution acts ("" when
// it holds, no sentence sets one, or no answer shows the amount).
func (pr *proof) conditionUnmet() string {
	sc := pr.sc
	if sc.Expects != scenario.OutcomeSucceed {
		return ""
	}
	act := -1
	for i, r := range pr.results {
		if r.OK && pr.p.stateChanging(r) {
			act = i
		}
	}
	if act < 0 {
		return ""
	}
	for _, text := range []string{sc.Instruction, sc.Persona.Opening} {
		for _, s := range fullStop.Split(text, -1) {
			if !onCondition.MatchString(s) {
				continue
			}
			if msg := pr.dateUnmet(act, s); msg != "" {
				return msg
			}
			m := bound.FindStringSubmatchIndex(s)
			if m == nil {
				continue
			}
			limit, err := strconv.ParseFloat(strings.ReplaceAll(s[m[4]:m[5]], ",", ""), 64)
			if err != nil {
				continue
			}
			op := strings.ToLower(strings.Join(strings.Fields(s[m[2]:m[3]]), " "))
			nouns := amountWords(s[:m[0]])
			step, key, v, ok := pr.amountShown(act, nouns)
			if !ok || holdsBound(op, v, limit) {
				continue
			}
			return fmt.Sprintf("the caller wants the act only on a condition (%q), yet solution step %d (%s) shows %s %s, and the solution acts (step %d, %s): a right agent that reads the amount does not carry the act out, or asks first", strings.TrimSpace(s), step+1, pr.results[step].Tool, key, strconv.FormatFloat(v, 'f', -1, 64), act+1, pr.results[act].Tool)
		}
	}
	return ""
}

// amountWords are the words of a condition before its bound that may name
// the amount (three letters or more: new, total, cost).
func amountWords(s string) []string {
	var out []string
	for _, w := range tokens(s) {
		if w = strings.ToLower(trimToken(w)); len(w) >= 3 && !wanting[w] {
			out = append(out, w)
		}
	}
	return out
}

// amountShown is the numeric field of the act's answer, else of the last
// answer before it, whose name has a word of four letters or more akin to
// one of words (the field sharing the most of them: new_total before
// old_total for "the new total"): the step, the field's name and its value.
func (pr *proof) amountShown(act int, words []string) (int, string, float64, bool) {
	akin := func(kw string) bool {
		for _, w := range words {
			if len(kw) >= 3 && (strings.HasPrefix(w, kw) || strings.HasPrefix(kw, w) && len(w) >= 4) || money[w] && money[kw] {
				return true
			}
		}
		return false
	}
	for i := act; i >= 0; i-- {
		r := pr.results[i]
		if !r.OK || i < act && pr.p.stateChanging(r) {
			continue
		}
		key, v, best := "", 0.0, 0
		eachKeyed(r.Result, func(k string, x any) {
			f, isNum := number(x)
			if s, isStr := x.(string); isStr {
				g, err := strconv.ParseFloat(strings.TrimLeft(s, "$£€"), 64)
				f, isNum = g, err == nil
			}
			if !isNum {
				return
			}
			score, named := 0, false
			for _, kw := range contract.NameWords(k) {
				if akin(kw) {
					score++
					named = named || len(kw) >= 4
				}
			}
			if named && (score > best || score == best && k < key) {
				key, v, best = k, f, score
			}
		})
		if best > 0 {
			return i, key, v, true
		}
	}
	return 0, "", 0, false
}

// money are words for an amount to pay, each standing for the others: "if
// it costs under $5" names a daily_price.
var money = map[string]bool{"cost": true, "costs": true, "price": true, "prices": true, "priced": true, "rate": true,
	"rates": true, "fee": true, "fees": true, "charge": true, "charges": true, "total": true, "amount": true, "pay": true}

// holdsBound reports whether v keeps the bound op limit.
func holdsBound(op string, v, limit float64) bool {
	switch op {
	case "over", "above", "more than", "higher than":
		return v > limit
	case "at least", "no less than":
		return v >= limit
	case "at most", "no more than", "not more than":
		return v <= limit
	}
	return v < limit // under, below, less than, lower than, cheaper than
}

// dateBound is a comparison with a date: "before 2026-03-16", "no later than
// 2026-04-01".
var dateBound = regexp.MustCompile(`(?i)\b(on\s+or\s+before|on\s+or\s+after|no\s+later\s+than|not\s+later\s+than|no\s+earlier\s+than|not\s+earlier\s+than|before|after|by)\s+(\d{4}-\d{2}-\d{2})\b`)

// dateUnmet reads a condition on a date ("only if the visit is before
// 2026-03-16") against the date the act sends: the act's date argument
// whose name shares a word with the words before the bound, or its only
// one. A date is the caller's condition on what the act does, so it is read
// from the act's arguments, not from an answer.
func (pr *proof) dateUnmet(act int, s string) string {
	m := dateBound.FindStringSubmatchIndex(s)
	if m == nil {
		return ""
	}
	op := strings.ToLower(strings.Join(strings.Fields(s[m[2]:m[3]]), " "))
	limit := s[m[4]:m[5]]
	r := pr.results[act]
	words := amountWords(s[:m[0]])
	var dates, named []string
	for _, n := range sortedArgs(r.Args) {
		v, ok := r.Args[n].(string)
		if !ok || !isoDate.MatchString(v) {
			continue
		}
		dates = append(dates, n)
		for _, kw := range contract.NameWords(n) {
			for _, w := range words {
				if len(kw) >= 4 && strings.HasPrefix(w, kw) {
					named = append(named, n)
				}
			}
		}
	}
	if len(named) == 0 && len(dates) == 1 {
		named = dates
	}
	for _, n := range named {
		v := r.Args[n].(string)
		if holdsDate(op, v, limit) {
			continue
		}
		return fmt.Sprintf("the caller wants the act only on a condition (%q), yet solution step %d (%s) sends %s %s, and the solution acts: a right agent keeps to the condition, or asks first", strings.TrimSpace(s), act+1, r.Tool, n, v)
	}
	return ""
}

// holdsDate reports whether the date v keeps the bound op limit (both
// written YYYY-MM-DD, so they compare as text).
func holdsDate(op, v, limit string) bool {
	switch op {
	case "before":
		return v < limit
	case "after":
		return v > limit
	case "on or after", "no earlier than", "not earlier than":
		return v >= limit
	}
	return v <= limit // by, on or before, no later than
}
