package prove

import (
	"fmt"
	"slices"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// A success on an inbound call acts for caller_id once the reference has
// identified them. When the caller's words say the person on the line is
// not that person ("an assistant who is not the renter", "who is not on the
// account") and the persona's name is not theirs either, the reference
// identifies the holder with details someone else reads out, and then acts:
// an agent that does so is the one a test must catch, so such a success is
// no proof. A guardian or a caregiver calls for someone else too, but the
// contract recognises them: the reference identifies them as well, by a
// call that passes their own name (verify_guardian, verify_caregiver).

// holderWords are the words that name the person an account belongs to
// beside those read from the contract (holderNouns).
var holderWords = []string{"holder", "owner", "cardholder", "policyholder", "accountholder", "accountholders"}

// notHolder says where a success's persona is, by the caller's own words,
// not the caller_id the reference identifies and acts for ("" otherwise):
// the instruction or opening negates a noun of the holder (see
// holderNegated), the persona's name is not every name of caller_id's row
// (personaIs), and no call of the solution that changes nothing and was
// answered ok passes a name of the persona's that the holder does not share (the reference never identifies
// the persona as someone the contract lets act for the holder).
func (p *Prover) notHolder(sc *scenario.Scenario, results []world.CallResult) string {
	cl := p.c.Caller
	if cl == nil || sc.CallerID == nil || sc.Outbound != nil || sc.Expects != scenario.OutcomeSucceed || strings.TrimSpace(sc.Persona.Name) == "" {
		return ""
	}
	step := p.identifyingStep(results)
	if step < 0 {
		return ""
	}
	id := ground.Text(sc.CallerID)
	var holder map[string]any
	for _, r := range insertedRows(sc.Setup) {
		if r.table == cl.Table && ground.Text(r.row[cl.Key]) == id {
			holder = r.row
		}
	}
	for _, row := range p.g.Rows(cl.Table) {
		if holder == nil && ground.Text(row[cl.Key]) == id {
			holder = row
		}
	}
	if holder == nil || p.personaIs(sc, holder) {
		return ""
	}
	// The persona's own names: those the holder's row does not share (the
	// first name of an ex-wife who kept the family name).
	var theirs []string
	for col, v := range holder {
		if s, ok := v.(string); ok {
			switch p.g.Renamed(cl.Table, col) {
			case "first", "last", "full":
				theirs = append(theirs, nameWords(s)...)
			}
		}
	}
	own := slices.DeleteFunc(nameWords(sc.Persona.Name), func(w string) bool { return slices.Contains(theirs, w) })
	if len(own) == 0 {
		return ""
	}
	// A call that changes nothing and takes the persona's name checks who
	// they are (verify_guardian); a write that carries it (a waiver's
	// reason naming them) checks nothing.
	for _, r := range results {
		if !r.OK || p.stateChanging(r) {
			continue
		}
		sent := map[string]bool{}
		ground.AddValues(sent, map[string]any(r.Args))
		for v := range sent {
			for _, w := range nameWords(v) {
				if slices.Contains(own, w) {
					return "" // the persona is identified themself
				}
			}
		}
	}
	said := ""
	for _, text := range []string{sc.Instruction, sc.Persona.Opening} {
		if said = holderNegated(text, p.holderNouns()); said != "" {
			break
		}
	}
	if said == "" {
		return ""
	}
	r := results[step]
	return fmt.Sprintf("the caller's words say the persona is not the holder (%q), and the persona, %s, is not %s %s, whom solution step %d (%s) identifies; no call of the solution identifies the persona themself (as a guardian or a caregiver is): the reference acts for someone on another person's details, which a right agent refuses or questions", said, sc.Persona.Name, cl.Table, id, step+1, r.Tool)
}

// identifyingStep is the index of the first solution step that identifies
// the caller: a tool of caller.from answered ok or, where no tool
// identifies the caller, a call answered ok that names a row of the
// caller's table by its key; -1 when none does.
func (p *Prover) identifyingStep(results []world.CallResult) int {
	cl := p.c.Caller
	for i, r := range results {
		if !r.OK {
			continue
		}
		if slices.Contains(cl.From, r.Tool) {
			return i
		}
		if len(cl.From) > 0 {
			continue
		}
		for name := range r.Args {
			if t, col, bound := p.c.RefOf(r.Tool, name); bound && t == cl.Table && col == cl.Key {
				return i
			}
		}
	}
	return -1
}

// holderNouns are the nouns that name whoever an account belongs to: the
// caller table's name in the singular (customers: customer), the words of
// each caller.from tool's name after its verb and before a word that says
// how (verify_renter: renter; find_patient_by_name_dob: patient), and
// holderWords.
func (p *Prover) holderNouns() map[string]bool {
	cl := p.c.Caller
	out := map[string]bool{}
	for _, w := range holderWords {
		out[w] = true
	}
	out[singular(strings.ToLower(cl.Table))] = true
	for _, tool := range cl.From {
		words := contract.NameWords(tool)
		for _, w := range words[min(1, len(words)):] {
			if how[w] {
				break
			}
			out[w] = true
		}
	}
	return out
}

// how are the words after which a tool's name says how it identifies, not
// whom.
var how = map[string]bool{"by": true, "with": true, "from": true, "via": true, "using": true, "and": true, "for": true}

// singular is a table's name for one of its rows.
func singular(s string) string {
	switch {
	case strings.HasSuffix(s, "ies"):
		return strings.TrimSuffix(s, "ies") + "y"
	case strings.HasSuffix(s, "ses"):
		return strings.TrimSuffix(s, "es")
	}
	return strings.TrimSuffix(s, "s")
}

// holderNegated finds, in text, a clause that denies someone is the
// holder: a negation followed within four words by one of nouns ("not the
// renter", "is not an account holder"), or by "account" after "on" ("not on
// the account", "isn't listed on this account"). A possessive is no holder
// ("not the renter's car" speaks of the car). A clause that says the
// caller acts "on behalf of" someone denies it as well. The clause is
// returned, "" when none.
func holderNegated(text string, nouns map[string]bool) string {
	for _, s := range sentence.Split(contracted.ReplaceAllString(strings.ReplaceAll(text, "’", "'"), " not"), -1) {
		for _, part := range clause.Split(s, -1) {
			words := nameWords(part)
			for i, w := range words {
				if w == "behalf" && i > 0 && words[i-1] == "on" {
					return strings.TrimSpace(part) // "calls on behalf of her boss"
				}
				if !negation[w] || w == "no" {
					continue
				}
				on := false
				for _, x := range words[i+1 : min(len(words), i+5)] {
					on = on || x == "on"
					if nouns[x] || nouns[strings.TrimSuffix(x, "s")] || on && x == "account" {
						return strings.TrimSpace(part)
					}
				}
			}
		}
	}
	return ""
}
