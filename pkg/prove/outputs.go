package prove

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/world"
)

// An output is what the agent must say, and what it says about the world
// must be true when it says it after the work is done. A value read before
// the act that the act then changed (the order's "pending" once it is
// cancelled, the old balance once it is paid from) is an answer the agent
// reads in a result, and a wrong one to give: a reply that reports the world
// as it is now fails the scenario. So an output is stale when every place a
// result shows it is a cell of a record the solution changed away from it.
// A value some other record shows, or a record the solution left as it was,
// still holds, and keeps the output.

// staleOutput names the first output every showing of which is a cell the
// solution later changed, with the record and column ("" when none is).
func staleOutput(outputs []string, results []world.CallResult, changed world.StateDiff) string {
	if len(outputs) == 0 || changed.Empty() {
		return ""
	}
	for _, o := range outputs {
		want := strings.ToLower(strings.TrimSpace(o))
		stale, fresh := "", false
		for _, r := range results {
			var doc any
			if !r.OK || json.Unmarshal(r.Result, &doc) != nil {
				continue
			}
			showings(doc, nil, want, func(field string, rec map[string]any) {
				if where := changedAway(changed, field, want, rec); where != "" {
					stale = where
				} else {
					fresh = true
				}
			})
		}
		if stale != "" && !fresh {
			return fmt.Sprintf("output %q is %s as it was before the solution changed it: the world no longer holds it after the work, so a reply that reports the world as it is fails", o, stale)
		}
	}
	return ""
}

// showings calls show for each field of an object in doc whose scalar value
// is want (lower case), with the object's fields over those of the objects
// around it: an item inside an order carries the order's key.
func showings(doc any, around map[string]any, want string, show func(field string, rec map[string]any)) {
	switch x := doc.(type) {
	case map[string]any:
		rec := make(map[string]any, len(around)+len(x))
		for k, v := range around {
			rec[k] = v
		}
		for k, v := range x {
			switch v.(type) {
			case map[string]any, []any:
			default:
				rec[k] = v
			}
		}
		for k, v := range x {
			switch v.(type) {
			case map[string]any, []any:
				showings(v, rec, want, show)
			case nil:
			default:
				if strings.ToLower(strings.TrimSpace(ground.Text(v))) == want {
					show(k, rec)
				}
			}
		}
	case []any:
		for _, e := range x {
			showings(e, around, want, show)
		}
	}
}

// changedAway names the cell ("the status of orders (order_id #W1)") that
// held want before the solution and holds something else after it, when
// rec is that cell's row as it was: rec carries some of the row's key, all
// of it alike, and every other column of the row it carries is as the row
// was (a flight of a reservation shown without its position is still that
// flight). A result may name a column otherwise than the table does (an
// appointment's id as appointment_id): a key is then carried by its value,
// when that value tells records apart (has a letter, or five characters),
// and the cell is any column of the row that held want ("" when no such
// cell).
func changedAway(d world.StateDiff, field, want string, rec map[string]any) string {
	for _, t := range d.Tables {
		for _, c := range t.Changed {
			key, byName, ok := shownAs(c, rec)
			if !ok {
				continue
			}
			for _, col := range slices.Sorted(maps.Keys(c.Before)) {
				if byName && col != field ||
					strings.ToLower(strings.TrimSpace(ground.Text(c.Before[col]))) != want ||
					strings.ToLower(strings.TrimSpace(ground.Text(c.After[col]))) == want {
					continue
				}
				return fmt.Sprintf("the %s of %s (%s)", col, t.Table, key)
			}
		}
	}
	return ""
}

// shownAs reports whether rec shows row c as it was before the change,
// whether it carries the row's key under the key's own names, and the key
// as text ("order_id #W1").
func shownAs(c world.RowChange, rec map[string]any) (string, bool, bool) {
	var key []string
	keyed, byName := 0, true
	for _, k := range slices.Sorted(maps.Keys(c.Key)) {
		kv := ground.Text(c.Key[k])
		key = append(key, k+" "+kv)
		rv, ok := rec[k]
		if !ok {
			continue
		}
		if ground.Text(rv) != kv {
			return "", false, false
		}
		keyed++
	}
	if keyed == 0 && len(c.Key) == 1 {
		for _, kv := range c.Key {
			kv := ground.Text(kv)
			if len(kv) < 5 && strings.IndexFunc(kv, unicode.IsLetter) < 0 {
				break
			}
			for _, rv := range rec {
				if ground.Text(rv) == kv {
					keyed, byName = 1, false
					break
				}
			}
		}
	}
	if keyed == 0 {
		return "", false, false
	}
	if keyed < len(c.Key) {
		for col, was := range c.Before {
			if rv, ok := rec[col]; ok && ground.Text(rv) != ground.Text(was) {
				return "", false, false
			}
		}
	}
	return strings.Join(key, ", "), byName, true
}

// An output is also what the agent must tell this caller. A detail of one
// other person (another customer's date of birth on the reservation the
// caller asks about, another rider's e-mail) is one a right agent keeps to
// itself: a scenario that demands it demands a disclosure. A detail is a
// value the world holds on the records of exactly one person; a value held
// for several people (a status, a city) describes no one, and one held by
// reference data nobody owns or by a record of the caller's is theirs to
// hear.

// disclosedOutput names the first output the world (seed and setup) holds
// only on records of one person other than the caller ("" when none).
func (pr *proof) disclosedOutput() string {
	p, sc := pr.p, pr.sc
	if p.c.Caller == nil || sc.CallerID == nil || len(sc.Outputs) == 0 {
		return ""
	}
	caller := ground.Text(sc.CallerID)
	added := addedRows(sc.Setup)
	// What the solution's own writes answer with is the caller's outcome (a
	// new policy's status), whoever else's records hold it too.
	made := map[string]bool{}
	for _, r := range pr.results {
		if r.OK && p.stateChanging(r) {
			leaves(made, r.Result)
		}
	}
	for _, o := range sc.Outputs {
		o = strings.TrimSpace(o)
		owners := map[string]string{} // owner -> a table of theirs holding it
		open := made[o]
		see := func(table string, row map[string]any) {
			vals := map[string]bool{}
			ground.AddValues(vals, row)
			if !vals[o] {
				return
			}
			switch owner, owned := p.ownerOf(table, row, added, caller); {
			case !owned || owner == caller:
				open = true
			case owners[owner] == "":
				owners[owner] = table
			}
		}
		for table, rows := range added {
			for _, row := range rows {
				see(table, row)
			}
		}
		if p.seed[o] {
			for _, t := range p.c.Tables {
				for _, row := range p.g.Rows(t.Name) {
					if open || len(owners) > 1 {
						break
					}
					see(t.Name, row)
				}
			}
		}
		if len(owners) == 1 && !open {
			for owner, table := range owners {
				whose := p.c.Caller.Table + " " + owner
				if table != p.c.Caller.Table {
					whose = table + " of " + whose
				}
				return fmt.Sprintf("output %q is a detail of one other person: the world holds it only on their records (%s), never on the caller's or on reference data, and a right agent keeps it to itself", o, whose)
			}
		}
	}
	return ""
}

// replay asks again, of the world the solution left on cp, each look-up the
// solution made before its last act (an ok call that wrote nothing and does
// not end the conversation).
func (pr *proof) replay(ctx context.Context, cp *world.Copy) (map[int]world.CallResult, error) {
	last := -1
	for i, r := range pr.results {
		if r.OK && pr.p.stateChanging(r) {
			last = i
		}
	}
	out := map[int]world.CallResult{}
	for i := range last {
		r := pr.results[i]
		if t := pr.p.c.Tool(r.Tool); !r.OK || pr.p.stateChanging(r) || t == nil || t.EndsConversation {
			continue
		}
		again := cp.Call(ctx, r.Tool, r.Args)
		if again.Crash && infrastructure(again.Err) {
			return nil, again.Err
		}
		out[i] = again
	}
	return out, nil
}

// staleReplayed says where an output, or a computed one, is read from
// answers the act made stale ("" when none is): every step that shows the
// output is a look-up before the act whose answer, asked again after it, no
// longer shows it; or a computed output's sum over the answers asked again
// is no longer its value. The agent reports the world as the work left it.
func (pr *proof) staleReplayed() string {
	if len(pr.replayed) == 0 {
		return ""
	}
	for _, o := range pr.sc.Outputs {
		if strings.TrimSpace(o) == "" {
			continue
		}
		stale, fresh := -1, false
		for i, r := range pr.results {
			if !r.OK || !strings.Contains(string(r.Result), o) {
				continue
			}
			again, asked := pr.replayed[i]
			switch {
			case !asked || again.OK && strings.Contains(string(again.Result), o):
				fresh = true
			case stale < 0:
				stale = i
			}
		}
		if stale >= 0 && !fresh {
			return fmt.Sprintf("output %q is what step %d (%s) showed before the act; asked again of the world the solution leaves, it no longer shows it: a reply that reports the world as it is fails", o, stale+1, pr.results[stale].Tool)
		}
	}
	for _, cv := range pr.sc.Computed {
		now := slices.Clone(pr.results)
		moved := false
		for i, again := range pr.replayed {
			if again.OK && string(again.Result) != string(now[i].Result) {
				now[i], moved = again, true
			}
		}
		if moved && computedWrong(cv, pr.results) == "" && computedWrong(cv, now) != "" && !oldAndNew(cv, pr.results, now) {
			return fmt.Sprintf("computed output %q works from answers the act made stale: over the same look-ups asked again of the world the solution leaves, %s", cv.Value, computedWrong(cv, now))
		}
	}
	return ""
}

// oldAndNew reports whether a computed output is the difference of one
// field's value before the act and after it: one operand is read by a
// look-up the act made stale, the other (the same field) by a step the act
// left standing, and the look-up asked again shows what that step shows. The
// change the act made ("your new price is 174 more") is a figure a right
// agent says; it is read before and after the act on purpose, so the
// look-up going stale is what it measures, not a stale answer.
func oldAndNew(cv scenario.Computed, before, now []world.CallResult) bool {
	if cv.Op != "difference" || len(cv.Of) != 2 {
		return false
	}
	type operand struct {
		step  int
		field string
	}
	var ops [2]operand
	for k, ref := range cv.Of {
		head, path, ok := strings.Cut(strings.TrimPrefix(ref, "$"), ".")
		n, err := strconv.Atoi(head)
		if !strings.HasPrefix(ref, "$") || !ok || err != nil || n < 1 || n > len(before) || strings.Contains(path, "*") {
			return false
		}
		parts := strings.Split(path, ".")
		ops[k] = operand{n - 1, parts[len(parts)-1]}
	}
	if ops[0].field != ops[1].field {
		return false
	}
	stale := func(i int) bool { return string(before[i].Result) != string(now[i].Result) }
	for k := range ops {
		old, cur := ops[k], ops[1-k]
		if !stale(old.step) || stale(cur.step) {
			continue
		}
		was, _ := resolveNumbers(cv.Of[k], now)
		is, _ := resolveNumbers(cv.Of[1-k], before)
		if len(was) == 1 && len(is) == 1 && math.Abs(was[0]-is[0]) <= 0.005 {
			return true
		}
	}
	return false
}

// An output must be grounded in what the world answered. An answer that
// only hands back what the solution sent (a hand-over's summary, a note's
// text) says nothing of the world: an output shown only there is the
// reference's own wording, which no agent says word for word. It is
// grounded still when the caller says it (a date they ask for) or the world
// held it before the conversation (a record's id the act echoes).

// echoedOutput names the first output every showing of which in the
// solution's answers is an echo of an argument the solution sent, that the
// caller never says and the world (seed, setup) never held ("" when none).
// A showing is an echo when a value the answer holds takes in an argument
// value, sent at that step or before it, that holds the output.
func (p *Prover) echoedOutput(sc *scenario.Scenario, results []world.CallResult) string {
	said := strings.ToLower(sc.Instruction + "\n" + sc.Persona.Opening)
	held := map[string]bool{}
	for _, st := range sc.Setup {
		ground.AddValues(held, st.Args)
	}
	for _, o := range sc.Outputs {
		o = strings.TrimSpace(o)
		want := strings.ToLower(o)
		if want == "" || strings.Contains(said, want) || p.seed[o] || held[o] {
			continue
		}
		var sent []string // argument values sent so far that hold the output
		echo, fresh := -1, false
		for i, r := range results {
			args := map[string]bool{}
			ground.AddValues(args, r.Args)
			for a := range args {
				if a := strings.ToLower(strings.TrimSpace(a)); strings.Contains(a, want) {
					sent = append(sent, a)
				}
			}
			if !r.OK {
				continue
			}
			shown := map[string]bool{}
			leaves(shown, r.Result)
			for v := range shown {
				v := strings.ToLower(v)
				if !strings.Contains(v, want) {
					continue
				}
				if slices.ContainsFunc(sent, func(a string) bool { return strings.Contains(v, a) }) {
					if echo < 0 {
						echo = i
					}
				} else {
					fresh = true
				}
			}
		}
		if echo >= 0 && !fresh {
			return fmt.Sprintf("output %q is only what the solution itself sent, handed back by step %d (%s): the caller never says it and the world never held it, so it grounds nothing and no agent would say it word for word", o, echo+1, results[echo].Tool)
		}
	}
	return ""
}

// A number the caller says goes into a computed output only as what they
// ask about: a quantity a call sends (three tickets at the price shown), or
// one they state wanting ("what 3 extra days would cost"). A number said in
// passing ("they travel with 2 suitcases") multiplies nothing the caller
// asks for: the figure it makes is one no right agent works out.

// computedAside names the first computed output that takes a number the
// caller says only in passing: no answer shows it, no call of the solution
// sends it, and no sentence of the caller's that states it asks ("" when
// none does).
func (pr *proof) computedAside() string {
	shown, sent := map[string]bool{}, map[string]bool{}
	for _, r := range pr.results {
		leaves(shown, r.Result)
		ground.AddValues(sent, map[string]any(r.Args))
	}
	for _, cv := range pr.sc.Computed {
		for _, ref := range cv.Of {
			if strings.HasPrefix(ref, "$") || numberShown(shown, ref) || numberShown(sent, ref) || pr.wanted(ref) {
				continue
			}
			return fmt.Sprintf("computed output %q takes %s, a number the caller says only in passing: no call sends it, no answer shows it and they never ask about it, so the figure is none the agent would work out", cv.Value, ref)
		}
	}
	return ""
}
