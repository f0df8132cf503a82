package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
)

// solver finds, for a use case's acting tool, the calls that perform it and
// the rows it can be performed on, by rehearsal.
type solver struct {
	g          *ground.Graph
	r          ground.Rehearser
	workers    int // rows rehearsed at once (runRows)
	bs         ground.Bindings
	unanswered map[string]string
	wrote      map[string]bool // per tool answered ok, whether it wrote (ground.Grounding.Wrote)
	max        int
	// solved caches a solution per acting tool: use cases that end with
	// the same tool share it.
	solved  map[string]solution
	rules   RuleJudge // nil: rule checks are not read
	mutants Mutants   // nil: refusal levels keep the sample's order
	// messages are the refusal branches' messages by place (refusals);
	// argChecks the places of its argument checks (argumentCheck).
	once      sync.Once
	messages  map[string]string
	argChecks map[string]bool
}

// solution is what the solver learnt of one acting tool.
type solution struct {
	table   string
	chain   []string // precondition tools, in call order
	levels  []level
	axis    *Axis
	choices map[string]Choice // template key -> how its case fills arguments
	callers []string          // caller keys for cases about shared rows
	owner   string            // the target's owner its cases' callers are (Spec.Owner)
	why     string            // when there are no levels: why not
	// answered: the act answered ok on some row; refusalsOnly says why not
	// when it never did (the plan then holds refusals only).
	answered     bool
	refusalsOnly string
	// everyRow are the rules whose checks failed on every row the world
	// carried the act out on: no success of the act keeps them, as played.
	everyRow []string
	// spares are, per branch a level already deals, a level pushLevels
	// found for it too: its cases stand in for that level's when none of
	// the level's own would bite (teethFirst).
	spares map[string]level
}

// further lists the tools of a use case (tools) that check something more
// before its act than the act's own requires: a tool that changes nothing,
// whose requirements the act's chains meet, and that takes the details of
// a record (a guardian's name and date of birth) of a table whose key the
// act takes in an argument it does not require (guardian_id). A use case
// that names such a check ("a parent books for a child") is served by acts
// that pass it; the contract's requires, written for every booking, cannot
// say so.
func (sv *solver) further(tool *contract.Tool, tools []string) []string {
	c := sv.g.C
	held := map[string]bool{}
	for _, ch := range Chains(c, tool.Name) {
		for _, t := range ch {
			held[t] = true
		}
	}
	keyed := sv.keyedTables(tool)
	var out []string
	for _, name := range tools {
		t := c.Tool(name)
		if t == nil || name == tool.Name || held[name] || t.EndsConversation || Changes(c, t, sv.wrote) {
			continue
		}
		met := true
		for _, r := range t.Requires {
			met = met && slices.ContainsFunc(r.AnyOf, func(a string) bool { return held[a] })
		}
		details := false
		for _, p := range t.ParamNames() {
			if bd, ok := sv.bs.Of(name, p); ok && keyed[bd.Table] && bd.Column != sv.g.PK(bd.Table) {
				details = true
			}
		}
		if met && details {
			out = append(out, name)
		}
	}
	return out
}

// checkedRows are the rows of table a further check can pass on, in seed
// order, at most the sample's size: those a record of a table whose details
// it takes refers to (the patients a guardian is on file for), or those
// whose caller is tied to a record of a table whose key the act takes
// optionally (a prescription whose patient has a caregiver on file, through
// the authorizations that name both: tiedToCaller).
func (sv *solver) checkedRows(tool *contract.Tool, table string, further []string) []ground.Row {
	g := sv.g
	var of []string
	for _, name := range further {
		for _, p := range g.C.Tool(name).ParamNames() {
			if bd, ok := sv.bs.Of(name, p); ok && bd.Table != "" && bd.Table != table && !slices.Contains(of, bd.Table) {
				of = append(of, bd.Table)
			}
		}
	}
	keyed := sv.keyedTables(tool)
	var out []ground.Row
	for _, row := range g.Rows(table) {
		if len(out) >= sv.max {
			break
		}
		if slices.ContainsFunc(of, func(x string) bool {
			return slices.ContainsFunc(g.FKs(x), func(fk ground.FK) bool {
				return fk.RefTable == table && len(g.Where(x, fk.Column, row[fk.RefColumn])) > 0
			}) || keyed[x] && sv.tiedToCaller(table, row, x)
		}) {
			out = append(out, row)
		}
	}
	return out
}

// keyedTables are the tables whose key the act takes in an argument it does
// not require (a caregiver's id on a patient's refill), of a record the case
// names. An argument grounded to a fresh value is never filled with the
// record a check answers with: a check that serves only it would verify
// someone else (a proxy) on a call whose act is then the caller's own.
func (sv *solver) keyedTables(tool *contract.Tool) map[string]bool {
	keyed := map[string]bool{}
	req := tool.Required()
	for _, p := range tool.ParamNames() {
		if bd, ok := sv.bs.Of(tool.Name, p); ok && bd.Table != "" && bd.How != ground.Fresh && !slices.Contains(req, p) && bd.Column == sv.g.PK(bd.Table) {
			keyed[bd.Table] = true
		}
	}
	return keyed
}

// tiedToCaller reports whether a row of table x hangs off row's caller (the
// row itself, of the caller's table, or the caller it refers to): x refers
// to the caller, or a table that refers to both the caller and x holds a
// row for them. A parent many rows share (a store) ties nothing to a case.
func (sv *solver) tiedToCaller(table string, row ground.Row, x string) bool {
	g := sv.g
	cl := g.C.Caller
	if cl == nil || x == cl.Table {
		return false
	}
	var callers []any
	if table == cl.Table {
		callers = append(callers, row[cl.Key])
	}
	for _, up := range g.FKs(table) {
		if up.RefTable == cl.Table && up.RefColumn == cl.Key {
			callers = append(callers, row[up.Column])
		}
	}
	for _, v := range callers {
		if v == nil {
			continue
		}
		for _, t := range g.C.Tables {
			var toX []string // t's columns naming a row of x ("" for x itself)
			if t.Name == x {
				toX = []string{""}
			}
			for _, fk := range g.FKs(t.Name) {
				if fk.RefTable == x {
					toX = append(toX, fk.Column)
				}
			}
			for _, fk := range g.FKs(t.Name) {
				if fk.RefTable != cl.Table || fk.RefColumn != cl.Key || len(toX) == 0 {
					continue
				}
				for _, r := range g.Where(t.Name, fk.Column, v) {
					if slices.ContainsFunc(toX, func(col string) bool { return col == "" || r[col] != nil }) {
						return true
					}
				}
			}
		}
	}
	return false
}

// maxChains bounds the precondition chains tried for one tool.
const maxChains = 16

// solve rehearses the acting tool, after each way of meeting its requires,
// on sampled rows of its target table, picks the way whose preconditions
// answer ok on most rows, and groups the rows by the low-cardinality column
// that best separates "answered" from "refused". Without such a column,
// every row is one level whose outcome is the majority.
//
// further are checks the use case adds after the act's own preconditions
// (solver.further): every chain holds them, in order, before the act.
func (sv *solver) solve(ctx context.Context, tool *contract.Tool, further []string) (solution, error) {
	key := strings.Join(append([]string{tool.Name}, further...), "+")
	for _, b := range sv.bs.For(tool.Name) {
		if b.Keep {
			key += "|keep " + b.Param // a use case that keeps it plays the act otherwise
		}
	}
	if sol, ok := sv.solved[key]; ok {
		return sol, nil
	}
	sol, err := sv.solveOnce(ctx, tool, further)
	if err == nil && sv.solved != nil {
		sv.solved[key] = sol
	}
	return sol, err
}

func (sv *solver) solveOnce(ctx context.Context, tool *contract.Tool, further []string) (solution, error) {
	sol, err := sv.solveAs(ctx, tool, further, "")
	if err != nil || sol.answered {
		return sol, err
	}
	// A record with several owners (a parcel's sender and recipient) is
	// its first owner's by default; an act that never answers ok for that
	// one is played for each other, and the first it answers for is the
	// one its cases' callers are.
	if roles := sv.g.OwnerRoles(sol.table); len(roles) > 1 {
		for _, role := range roles[1:] {
			alt, err := sv.solveAs(ctx, tool, further, role)
			if err != nil {
				return sol, err
			}
			if alt.answered {
				return alt, nil
			}
		}
	}
	return sol, nil
}

// solveAs is solveOnce with the cases' callers taken through role, a column
// of OwnerRoles ("": each row's first owner).
func (sv *solver) solveAs(ctx context.Context, tool *contract.Tool, further []string, role string) (solution, error) {
	g := sv.g
	sol := solution{table: sv.targetTable(tool), choices: map[string]Choice{}, owner: role}
	if sol.table == "" || len(g.Rows(sol.table)) == 0 || g.PK(sol.table) == "" {
		sol.why = fmt.Sprintf("its acting tool %s names no record of a table with rows and a single-column key, and there is no caller table", tool.Name)
		if b := sv.firstUnbound(tool.Name); b != "" {
			sol.why = b
		}
		return sol, nil
	}
	chains := Chains(g.C, tool.Name)
	var checked []ground.Row
	if len(further) > 0 {
		// Without a row the check can pass on, the use case is planned
		// as the act's own.
		checked = sv.checkedRows(tool, sol.table, further)
	}
	if len(checked) > 0 {
		for i := range chains {
			chains[i] = appendNew(slices.Clone(chains[i]), further...)
		}
	}
	sc := sv.sampleCases(tool, sol.table, chains)
	sc.role = role
	if len(checked) > 0 {
		sc.rows = checked
	}
	best, lastErr, err := sv.bestChain(ctx, tool, chains, sc)
	if err != nil {
		return sol, err
	}
	if best < 0 {
		// The preconditions may hold only on rows few have (a parcel
		// with a customs charge): those found are looked at first.
		for _, ch := range chains {
			more, err := sv.answeringRows(ctx, tool, ch, sc, true)
			if err != nil {
				return sol, err
			}
			if len(more) > 0 {
				sc.rows = append(more, sc.rows...)
				if best, lastErr, err = sv.bestChain(ctx, tool, chains, sc); err != nil {
					return sol, err
				}
				break
			}
		}
	}
	if best < 0 {
		sol.why = sv.chainWhy(tool, chains, lastErr)
		return sol, nil
	}
	sol.chain = chains[best]
	played, err := sv.playRows(ctx, tool, &sol, sc, lastErr)
	if err != nil {
		return sol, err
	}
	if !sol.answered {
		// The act may answer ok only on rows in a state few hold (a trip
		// completed in the last week and not yet rated), which the sample
		// missed: those it finds are played with the sample.
		more, err := sv.answeringRows(ctx, tool, sol.chain, sc, false)
		if err != nil {
			return sol, err
		}
		if len(more) > 0 {
			sol = solution{table: sol.table, chain: sol.chain, choices: map[string]Choice{}, owner: sol.owner}
			sc.rows = append(slices.Clip(sc.rows), more...)
			if played, err = sv.playRows(ctx, tool, &sol, sc, lastErr); err != nil {
				return sol, err
			}
		}
	}
	if len(played.keys) == 0 {
		sol.why = fmt.Sprintf("no row of %s made %s answer (ok or refused) after %s: %s", sol.table, tool.Name, chainText(sol.chain), clip(played.lastErr))
		if played.lastErr == "" {
			sol.why = fmt.Sprintf("the arguments of %s could not be filled from any row of %s", tool.Name, sol.table)
		}
		if b := sv.firstUnbound(tool.Name); b != "" {
			sol.why += "; " + b
		}
		return sol, nil
	}
	if sol.levels, sol.axis, err = sv.axisLevels(ctx, tool, sol, sc, played); err != nil {
		return sol, err
	}
	for i := range sol.levels {
		sol.levels[i].refusal = sv.refusals()[sol.levels[i].branch]
	}
	sol.levels = sv.branchLevels(sol.levels, sol.table, played, g.C.HandlerSource(tool))
	if sol.levels, err = sv.choiceLevels(ctx, tool, sol, sc, played); err != nil {
		return sol, err
	}
	if sol.levels, err = sv.valueLevels(ctx, tool, sol, sc, played); err != nil {
		return sol, err
	}
	if sol.levels, err = sv.leaveLevels(ctx, tool, sol, sc, played); err != nil {
		return sol, err
	}
	if sol.levels, err = sv.againLevels(ctx, tool, sol, sc, played); err != nil {
		return sol, err
	}
	if sol.levels, sol.spares, err = sv.pushLevels(ctx, tool, sol, sc, played); err != nil {
		return sol, err
	}
	sol.levels = sv.withoutArgumentChecks(sol.levels, sol.spares)
	if err := sv.teethFirst(ctx, tool, sol, sc, played); err != nil {
		return sol, err
	}
	if len(sc.callers) > 0 {
		sol.callers = played.callers()
	}
	why, err := sv.mintable(ctx, tool, &sol)
	if err != nil {
		return sol, err
	}
	if len(sol.levels) == 0 {
		sol.why = why
	}
	if !sol.answered {
		if b := sv.firstUnbound(tool.Name); b != "" {
			sol.refusalsOnly = b
		} else {
			sol.refusalsOnly = fmt.Sprintf("%s answered ok on no row", tool.Name)
		}
		if len(sol.levels) == 0 {
			sol.why += "; and " + sol.refusalsOnly
		}
	}
	return sol, nil
}

// Bounds of answeringRows: the rows it plays, and the rows it adds.
const (
	rarerRows    = 160
	rarerAnswers = 3
)

// answeringRows plays the act after chain on rows of the table the sample
// left out, spread over it, and returns the first few it answers ok on
// (with prereqOnly, the first few the preconditions answer ok on).
func (sv *solver) answeringRows(ctx context.Context, tool *contract.Tool, chain []string, sc sampledCases, prereqOnly bool) ([]ground.Row, error) {
	pk := sv.g.PK(sc.table)
	sampled := map[string]bool{}
	for _, r := range sc.rows {
		sampled[ground.Text(r[pk])] = true
	}
	rest := sc
	rest.rows = nil
	for _, r := range sv.g.Sample(sc.table, rarerRows) {
		if !sampled[ground.Text(r[pk])] {
			rest.rows = append(rest.rows, r)
		}
	}
	if len(rest.rows) == 0 {
		return nil, nil
	}
	steps, err := sv.runRows(ctx, tool, chain, rest, len(rest.rows), prereqOnly)
	if err != nil {
		return nil, err
	}
	var out []ground.Row
	for i, st := range steps {
		if st.prereqOK && (prereqOnly || st.act.OK) && len(out) < rarerAnswers {
			out = append(out, rest.rows[i])
		}
	}
	return out, nil
}

// sampledCases are the rows of a tool's table a solution is probed on, and
// the callers they are played for.
type sampledCases struct {
	table   string
	rows    []ground.Row
	callers []ground.Row // none: each row's own caller
	role    string       // the owner a row's caller is (ground.Graph.OwnerRoles); "": its first
	g       *ground.Graph
}

// sampleCases samples the rows of table to probe tool on. A case about a
// shared record (a product, a notice) has a caller of its own only when
// someone must be identified or is named: the act requires something, or
// takes an argument from the caller's rows.
func (sv *solver) sampleCases(tool *contract.Tool, table string, chains [][]string) sampledCases {
	g := sv.g
	sc := sampledCases{table: table, rows: g.Sample(table, sv.max), g: g}
	cl := g.C.Caller
	if cl != nil && g.Shared(table, sc.rows[0]) && (len(chains) > 1 || len(chains[0]) > 0 || sv.usesTable(tool.Name, cl.Table)) {
		sc.callers = g.Sample(cl.Table, 8)
	}
	return sc
}

// caller is the caller row i is played for, nil for the row's own.
func (sc sampledCases) caller(i int) ground.Row {
	if len(sc.callers) == 0 {
		return nil
	}
	return sc.callers[i%len(sc.callers)]
}

// bound is the case of row i of the sample.
func (sc sampledCases) bound(i int) ground.Bound {
	b := sc.g.SeedCaseAs(sc.table, sc.rows[i], sc.caller(i), sc.role)
	b.Ordinal = i
	b.Person = ground.Person{First: "Probe", Last: "Caller", Number: 1}
	return b
}

// bestChain is the index of the chain whose preconditions answer ok on most
// of the first rows (-1: none), and the last error a precondition gave.
func (sv *solver) bestChain(ctx context.Context, tool *contract.Tool, chains [][]string, sc sampledCases) (int, string, error) {
	best, bestN, lastErr := -1, 0, ""
	for ci, ch := range chains {
		n := 0
		steps, err := sv.runRows(ctx, tool, ch, sc, min(len(sc.rows), 6), true)
		if err != nil {
			return best, lastErr, err
		}
		for _, st := range steps {
			if st.prereqOK {
				n++
			} else if st.err != "" {
				lastErr = st.err
			}
		}
		if n > bestN {
			best, bestN = ci, n
		}
	}
	return best, lastErr, nil
}

// rowOutcomes is what playing the chosen chain on every sampled row gave.
type rowOutcomes struct {
	keys     []string            // the rows that answered, in sample order
	outcome  map[string]string   // row key -> succeed | refuse
	branch   map[string]string   // row key -> the refusal branch it took (refused rows)
	index    map[string]int      // row key -> its place in the sample
	read     map[string][]string // row key -> the arguments the act read
	callerOf map[string]string   // row key -> the caller it was played for
	broken   map[string][]string // row key -> the rules its act broke (rows that succeeded)
	lastErr  string
}

// succeeded are the first n rows the act succeeded on, in sample order.
func (ro rowOutcomes) succeeded(n int) []string {
	var out []string
	for _, k := range ro.keys {
		if ro.outcome[k] == "succeed" && len(out) < n {
			out = append(out, k)
		}
	}
	return out
}

// playRows plays sol's chain then the act on every sampled row: each row's
// outcome, with the row choice that gets there (into sol.choices).
func (sv *solver) playRows(ctx context.Context, tool *contract.Tool, sol *solution, sc sampledCases, lastErr string) (rowOutcomes, error) {
	pk := sv.g.PK(sol.table)
	ro := rowOutcomes{outcome: map[string]string{}, branch: map[string]string{}, index: map[string]int{}, read: map[string][]string{}, callerOf: map[string]string{}, broken: map[string][]string{}, lastErr: lastErr}
	steps, err := sv.runRows(ctx, tool, sol.chain, sc, len(sc.rows), false)
	if err != nil {
		return ro, err
	}
	broken := ro.broken
	for i, r := range sc.rows {
		st := steps[i]
		if !st.prereqOK {
			if st.err != "" {
				ro.lastErr = st.err
			}
			continue
		}
		key := ground.Text(r[pk])
		switch {
		case st.act.OK:
			ro.outcome[key] = "succeed"
			sol.answered = true
			if broken[key], err = sv.rulesBroken(ctx, nil, st.calls, sc.bound(i).Caller); err != nil {
				return ro, err
			}
		case st.act.Refused && !st.act.Invalid:
			ro.outcome[key] = "refuse"
			ro.branch[key] = st.act.Branch
		default:
			ro.lastErr = st.act.Error
			continue
		}
		if ch := (Choice{Variant: st.variant, Ordinal: st.ordinal}); ch != (Choice{}) {
			sol.choices[key] = ch
		}
		if len(sc.callers) > 0 {
			ro.callerOf[key] = ground.Text(sc.caller(i)[sv.g.C.Caller.Key])
		}
		ro.keys = append(ro.keys, key)
		ro.index[key] = i
		ro.read[key] = st.act.Read
	}
	if !sol.answered {
		if err := sv.worldRecord(ctx, tool, sol, sc, &ro); err != nil {
			return ro, err
		}
	}
	if err := sv.akinRecord(ctx, tool, sol, sc, &ro); err != nil {
		return ro, err
	}
	sol.everyRow = ruleRefusals(ro, broken)
	return ro, nil
}

// akinRecord runs when a rule's check failed on every row the act
// succeeded on, and the act takes a sibling of the case's row (another
// member to give points to): the sibling the case picks by its parent
// (the caller's tier) may be what the rule forbids (someone outside the
// caller's household). Each such row is played with the records most like
// the case's own instead (ground.SwapAkin, at most akinTries of them), and
// the first on which the act still succeeds and no rule breaks is the
// row's choice. The choice that broke the rule stays one choiceLevels
// tries, and a refusal on the rule when the world carries it out.
func (sv *solver) akinRecord(ctx context.Context, tool *contract.Tool, sol *solution, sc sampledCases, ro *rowOutcomes) error {
	if len(ruleRefusals(ro.copyOutcomes(), ro.broken)) == 0 {
		return nil
	}
	var tables []string
	for _, bd := range sv.bs.For(tool.Name) {
		if bd.Source == ground.FromSibling && bd.Table != "" && !slices.Contains(tables, bd.Table) {
			tables = append(tables, bd.Table)
		}
	}
	for _, k := range ro.keys {
		if ro.outcome[k] != "succeed" || len(ro.broken[k]) == 0 {
			continue
		}
	tables:
		for _, t := range tables {
			b := sc.bound(ro.index[k])
			sol.choices[k].Apply(&b)
			b.Outside, b.Swap = t, ground.SwapAkin
			for other := range min(sv.g.AkinRows(t, b), akinTries) {
				ch := sol.choices[k]
				ch.Outside, ch.Swap, ch.Other = t, ground.SwapAkin, other
				pl, built, err := sv.playChoice(ctx, tool, sol, sc, ro.index[k], ch)
				if err != nil {
					return err
				}
				if !built {
					break
				}
				if !pl.ok() {
					continue
				}
				broken, err := sv.rulesBroken(ctx, nil, pl.calls, pl.bound.Caller)
				if err != nil {
					return err
				}
				if len(broken) > 0 {
					continue
				}
				ro.broken[k], ro.read[k], sol.choices[k] = nil, pl.ans[len(pl.ans)-1].Read, ch
				break tables
			}
		}
	}
	return nil
}

// akinTries bounds the records most like the case's own akinRecord plays
// a row with.
const akinTries = 4

// played is a case's chain as a rehearsal answered it.
type played struct {
	bound ground.Bound
	calls []scenario.Call
	ans   []ground.Answer
}

// ok reports every call answered, and answered ok.
func (pl played) ok() bool { return len(pl.ans) == len(pl.calls) && allOK(pl.ans) }

// playChoice rehearses row i's case of sc with choice ch applied. built is
// false when no chain can be made with ch (nor with a later choice of its
// kind: the caller stops trying them).
func (sv *solver) playChoice(ctx context.Context, tool *contract.Tool, sol *solution, sc sampledCases, i int, ch Choice) (played, bool, error) {
	pl := played{bound: sc.bound(i)}
	ch.Apply(&pl.bound)
	calls, ok := Chain(sv.g, tool, sol.chain, pl.bound, sv.bs)
	if !ok {
		return pl, false, nil
	}
	pl.calls = calls
	ans, err := sv.r.Rehearse(ctx, nil, calls)
	pl.ans = ans
	return pl, true, err
}

// copyOutcomes is ro with an outcome and branch map of its own, for
// ruleRefusals to mark without changing ro.
func (ro rowOutcomes) copyOutcomes() rowOutcomes {
	ro.outcome, ro.branch = maps.Clone(ro.outcome), maps.Clone(ro.branch)
	return ro
}

// worldTries bounds the world's rows worldRecord tries, spread over the
// table, for one row and one table.
const worldTries = 16

// worldRecord runs when the act answered ok on no row: on each row it
// refused, the record its arguments name of a table no one owns (a slot, a
// flight) is taken from the world's rows instead of the case's, and a row
// the act then answers ok on succeeds with that choice. The records a case
// reaches are those its own rows lead to (the slots of a child's past
// visits); without this, a use case whose rows happen to reach none that
// can be booked holds refusals only.
func (sv *solver) worldRecord(ctx context.Context, tool *contract.Tool, sol *solution, sc sampledCases, ro *rowOutcomes) error {
	var outs []outsideTable
	for _, o := range sv.outsideTables(tool, sol.table) {
		if o.world {
			outs = append(outs, o)
		}
	}
rows:
	for _, k := range ro.keys {
		if ro.outcome[k] != "refuse" {
			continue
		}
		for _, o := range outs {
			n := len(sv.g.Rows(o.table))
			for other := 0; other < n; other += max(1, n/worldTries) {
				ch := sol.choices[k]
				ch.Outside, ch.Swap, ch.Other = o.table, ground.SwapWorld, other
				pl, built, err := sv.playChoice(ctx, tool, sol, sc, ro.index[k], ch)
				if err != nil {
					return err
				}
				if !built {
					break
				}
				if !pl.ok() {
					continue
				}
				if ro.broken[k], err = sv.rulesBroken(ctx, nil, pl.calls, pl.bound.Caller); err != nil {
					return err
				}
				ro.outcome[k], ro.read[k], sol.choices[k], sol.answered = "succeed", pl.ans[len(pl.ans)-1].Read, ch, true
				delete(ro.branch, k)
				continue rows
			}
		}
	}
	return nil
}

// callers are the distinct callers of the rows that succeeded, or of every
// row that answered when none did.
func (ro rowOutcomes) callers() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range ro.keys {
		if c := ro.callerOf[k]; c != "" && !seen[c] && ro.outcome[k] == "succeed" {
			seen[c] = true
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		for _, k := range ro.keys {
			if c := ro.callerOf[k]; c != "" && !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// lookups picks the use case's retrieval tools a solution calls between its
// preconditions and its act: tools of the use case that change nothing,
// whose own requires the chain meets, that are not one of the chain's
// alternatives, and that answer ok, with the act still answering as before,
// on the first cases of the plan. Of the tools that identify the caller
// (caller.from) it takes one: they are ways to find the same person, and a
// caller identifies themselves once.
func (sv *solver) lookups(ctx context.Context, tool *contract.Tool, tools []string, sol solution) ([]string, error) {
	if len(sol.levels) == 0 {
		return nil, nil
	}
	c := sv.g.C
	alt := map[string]bool{}
	for _, name := range append(append([]string{}, sol.chain...), tool.Name) {
		if t := c.Tool(name); t != nil {
			for _, r := range t.Requires {
				for _, a := range r.AnyOf {
					alt[a] = true
				}
			}
		}
	}
	var out []string
	for _, name := range tools {
		t := c.Tool(name)
		if t == nil || name == tool.Name || alt[name] || containsKey(sol.chain, name) || t.EndsConversation {
			continue
		}
		if Changes(c, t, sv.wrote) || c.Identifies(name) && slices.ContainsFunc(append(slices.Clone(sol.chain), out...), c.Identifies) {
			continue
		}
		met := true
		for _, r := range t.Requires {
			any := false
			for _, a := range r.AnyOf {
				any = any || containsKey(sol.chain, a) || containsKey(out, a)
			}
			met = met && any
		}
		if !met {
			continue
		}
		ok, err := sv.lookupHolds(ctx, tool, sol, append(append([]string{}, out...), name))
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, name)
		}
	}
	return out, nil
}

// lookupHolds rehearses chain, lookups and act on the first templates of
// the plan's levels: every lookup must answer ok and the act as the level
// says, on most of them.
func (sv *solver) lookupHolds(ctx context.Context, tool *contract.Tool, sol solution, lookups []string) (bool, error) {
	return sv.chainHolds(ctx, tool, sol, append(slices.Clone(sol.chain), lookups...))
}

// identities are the tools of caller.from that may stand in for the one the
// solution's chain identifies the caller with: alternatives of one
// requirement of the chain or the act ("verify by code, or by the date of
// the last trip"), needing nothing else, with which chain, lookups and act
// hold as the plan's levels say. Cases take them in turn, so a suite
// identifies callers every way the contract offers, and meets each way's
// refusals.
func (sv *solver) identities(ctx context.Context, tool *contract.Tool, sol solution, lookups []string) ([]string, error) {
	c := sv.g.C
	if c.Caller == nil || len(sol.levels) == 0 {
		return nil, nil
	}
	at := slices.IndexFunc(sol.chain, c.Identifies)
	if at < 0 {
		return nil, nil
	}
	var out []string
	for _, name := range c.Caller.From {
		t := c.Tool(name)
		if t == nil || slices.Contains(sol.chain, name) || len(t.Requires) > 0 || slices.Contains(lookups, name) || !sv.together(tool, sol.chain, sol.chain[at], name) {
			continue
		}
		chain := slices.Clone(sol.chain)
		chain[at] = name
		ok, err := sv.chainHolds(ctx, tool, sol, append(chain, lookups...))
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, name)
		}
	}
	return out, nil
}

// together reports whether a and b are alternatives of one requirement of
// the act or of a tool of its chain: either meets it.
func (sv *solver) together(tool *contract.Tool, chain []string, a, b string) bool {
	for _, name := range append(slices.Clone(chain), tool.Name) {
		t := sv.g.C.Tool(name)
		if t == nil {
			continue
		}
		for _, r := range t.Requires {
			if slices.Contains(r.AnyOf, a) && slices.Contains(r.AnyOf, b) {
				return true
			}
		}
	}
	return false
}

// chainHolds rehearses the calls of chain, then the act, on the first
// templates of the plan's levels: every call before the act must answer ok
// and the act as the level says, on most of them.
func (sv *solver) chainHolds(ctx context.Context, tool *contract.Tool, sol solution, chain []string) (bool, error) {
	g := sv.g
	pk := g.PK(sol.table)
	tried, held := 0, 0
	for _, lv := range sol.levels {
		for i, key := range lv.templates {
			if i >= 2 {
				break
			}
			target := g.Find(sol.table, pk, key)
			var caller ground.Row
			if cl := g.C.Caller; cl != nil && len(sol.callers) > 0 {
				caller = g.Find(cl.Table, cl.Key, sol.callers[i%len(sol.callers)])
			}
			b := g.SeedCaseAs(sol.table, target, caller, sol.owner)
			sol.choices[key].Apply(&b)
			calls, ok := Chain(g, tool, chain, b, sv.bs)
			if !ok {
				return false, nil
			}
			ans, err := sv.r.Rehearse(ctx, nil, calls)
			if err != nil {
				return false, err
			}
			tried++
			good := len(ans) == len(calls)
			for _, a := range ans[:len(ans)-1] {
				good = good && a.OK
			}
			last := ans[len(ans)-1]
			if good && (lv.outcome == "succeed" && last.OK || lv.outcome == "refuse" && last.Refused && !last.Invalid) {
				held++
			}
		}
	}
	return tried > 0 && held*2 > tried, nil
}

// probeWorkers is how many sampled rows are rehearsed at once. Each row's
// play is independent of the others (its own copy, rolled back), and a
// play mostly waits on the world's round trips.
const probeWorkers = 4

// runRows runs chain then tool on the first n sampled rows, several rows
// at a time; steps are in sample order, so what the caller folds from them
// does not depend on which row finished first.
func (sv *solver) runRows(ctx context.Context, tool *contract.Tool, chain []string, sc sampledCases, n int, prereqOnly bool) ([]step, error) {
	steps := make([]step, n)
	errs := make([]error, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, min(sv.workers, n)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				steps[i], errs[i] = sv.run(ctx, tool, chain, sc.bound(i), prereqOnly)
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	// The first row that failed of itself, in sample order (the others may
	// only have been cancelled because of it).
	var first error
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
		if first == nil {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return steps, nil
}

// step is how one rehearsed chain went.
type step struct {
	calls    []scenario.Call // as played, the act last
	prereqOK bool
	act      ground.Answer
	variant  int
	ordinal  int
	err      string // the first precondition's refusal, when one refused
}

// run rehearses chain then tool on a case, trying the row choices the case
// has (Bound.Variant) until the preconditions answer ok (and, unless
// prereqOnly, the act answers ok). Another choice is tried only when the
// refusing call read an argument filled from a table the case reaches
// several rows of: nothing else changes with it.
func (sv *solver) run(ctx context.Context, tool *contract.Tool, chain []string, b ground.Bound, prereqOnly bool) (step, error) {
	variants := min(b.Variants(), 4)
	ordinal := b.Ordinal
	var best step
	found := false
	for v := 0; v < variants; v++ {
		for o := 0; o < choiceTries; o++ {
			b.Variant, b.Ordinal = v, ordinal+o
			calls, ok := Chain(sv.g, tool, chain, b, sv.bs)
			if !ok {
				if !found {
					best = step{err: fmt.Sprintf("the arguments of %s could not be filled from the case", chainText(append(append([]string{}, chain...), tool.Name)))}
				}
				break
			}
			ans, err := sv.r.Rehearse(ctx, nil, calls)
			if err != nil {
				return step{}, err
			}
			if len(ans) != len(calls) {
				break
			}
			st := step{calls: calls, prereqOK: true, act: ans[len(ans)-1], variant: v, ordinal: ordinal + o}
			refusing := len(ans) - 1
			for i, a := range ans[:len(ans)-1] {
				if !a.OK {
					st.prereqOK = false
					st.err = fmt.Sprintf("%s: %s", calls[i].Tool, a.Error)
					refusing = i
					break
				}
			}
			if st.prereqOK && (prereqOnly || st.act.OK) {
				return st, nil
			}
			if !found || st.prereqOK && !best.prereqOK {
				best, found = st, true
			}
			rows, choices := sv.reads(calls[refusing].Tool, ans[refusing], b)
			if !choices {
				if !rows {
					return best, nil // nothing a choice changes was read
				}
				break // another row choice may help; another ordinal not
			}
		}
	}
	return best, nil
}

// choiceTries is how many ordinals (enum values, shared rows, siblings) a
// refused call is tried with before the refusal counts as the record's.
const choiceTries = 3

// reads reports whether a refused call read an argument whose value comes
// from a table the case reaches several rows of (rows), or one the
// ordinal chooses (choices: an enum, a sibling, a shared row).
func (sv *solver) reads(tool string, a ground.Answer, b ground.Bound) (rows, choices bool) {
	t := sv.g.C.Tool(tool)
	for _, bd := range sv.bs.For(tool) {
		read := false
		for _, r := range a.Read {
			read = read || r == bd.Param
		}
		if !read && !a.Invalid {
			continue
		}
		switch {
		case bd.Source == ground.FromSibling || bd.Source == ground.FromShared && len(bd.Picks) > 1,
			bd.How == ground.ByEnum && t != nil && len(t.Enum(bd.Param)) > 1:
			choices = true
		case bd.Source == ground.FromCase && bd.Table != "" && bd.Table != b.Table && len(b.Rows[bd.Table]) > 1:
			rows = true
		}
	}
	return rows, choices
}

// mintable checks that a case at each level can be minted: the setup of the
// first templates runs, and the chain still answers as the level says.
// Templates whose copy the world refuses are dropped; a level left with
// none is dropped. It returns why, when every level went.
func (sv *solver) mintable(ctx context.Context, tool *contract.Tool, sol *solution) (string, error) {
	g := sv.g
	cl := g.C.Caller
	pk := g.PK(sol.table)
	var why string
	var kept []level
	changes := tool.ChangesState != nil && *tool.ChangesState
	for _, lv := range sol.levels {
		var ok []string
		checked := 0
		for i, key := range lv.templates {
			if checked >= 3 && len(ok) > 0 {
				ok = append(ok, lv.templates[i:]...)
				break
			}
			checked++
			target := g.Find(sol.table, pk, key)
			var caller ground.Row
			if len(sol.callers) > 0 && cl != nil {
				caller = g.Find(cl.Table, cl.Key, sol.callers[i%len(sol.callers)])
			}
			p := ground.Person{First: "Probe", Last: "Caller", Number: 1, Index: 0}
			s, b, err := g.CaseAs(sol.table, target, caller, p, sol.owner)
			if err != nil {
				why = fmt.Sprintf("no case of %s could be minted: %v", sol.table, err)
				continue
			}
			lv.choice(*sol, key).Apply(&b)
			priorAt := len(s.Statements)
			if pr := lv.prior[key]; len(pr) > 0 {
				s.Statements = append(slices.Clone(s.Statements), s.Carry(g, pr)...)
			}
			calls, filled := Chain(g, tool, sol.chain, b, sv.bs)
			if !filled {
				why = fmt.Sprintf("the arguments of %s could not be filled for a minted %s%s", tool.Name, sol.table, prefix("; ", sv.firstUnbound(tool.Name)))
				continue
			}
			// As the writer will: a row the act once added is the case's.
			g.AlignAdded(s.Statements[priorAt:], calls[len(calls)-1], sv.bs, p)
			ans, changed, err := sv.rehearseEffect(ctx, s.Statements, calls, lv.outcome == "succeed" && changes)
			var se *scenario.SetupError
			if errors.As(err, &se) {
				why = fmt.Sprintf("every minted copy broke a constraint: setup statement %d (%s): %v", se.Index+1, se.SQL, se.Err)
				continue
			}
			if err != nil {
				return "", err
			}
			good := len(ans) == len(calls)
			for _, a := range ans[:len(ans)-1] {
				good = good && a.OK
			}
			last := ans[len(ans)-1]
			switch {
			case good && lv.outcome == "succeed" && last.OK && !changed:
				// A success that writes what is already there is no
				// success: the prover refuses it as no effect.
				why = fmt.Sprintf("%s answers ok on a minted copy of %s %s but changes nothing", tool.Name, sol.table, key)
			case good && strings.HasPrefix(lv.branch, RuleRefusal):
				if !last.OK {
					why = fmt.Sprintf("a minted copy of %s %s did not answer ok as the seed row did (%s)", sol.table, key, clip(firstError(ans)))
					continue
				}
				broken, err := sv.rulesBroken(ctx, s.Statements, calls, s.Caller)
				if err != nil {
					return "", err
				}
				if !slices.Contains(broken, strings.TrimPrefix(lv.branch, RuleRefusal)) {
					why = fmt.Sprintf("a minted copy of %s %s keeps rule %s, which the seed row broke", sol.table, key, strings.TrimPrefix(lv.branch, RuleRefusal))
					continue
				}
				ok = append(ok, key)
			case good && lv.branch != "" && last.Refused && last.Branch != lv.branch:
				why = fmt.Sprintf("a minted copy of %s %s was refused at %s, not at %s as the seed row was", sol.table, key, last.Branch, lv.branch)
			case good && (lv.outcome == "succeed" && last.OK || lv.outcome == "refuse" && last.Refused && !last.Invalid):
				ok = append(ok, key)
			default:
				why = fmt.Sprintf("a minted copy of %s %s did not answer as the seed row did (%s)", sol.table, key, clip(firstError(ans)))
			}
		}
		if len(ok) > 0 {
			lv.templates = ok
			kept = append(kept, lv)
		}
	}
	sol.levels = kept
	return why, nil
}

// effectRehearser is a rehearser that also says whether the calls changed
// the world.
type effectRehearser interface {
	RehearseEffect(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, bool, error)
}

// rehearseEffect rehearses calls after setup and, when asked to and the
// rehearser can tell, whether they changed any row; changed is true when
// it cannot tell.
func (sv *solver) rehearseEffect(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, ask bool) ([]ground.Answer, bool, error) {
	if er, ok := sv.r.(effectRehearser); ok && ask {
		return er.RehearseEffect(ctx, setup, calls)
	}
	ans, err := sv.r.Rehearse(ctx, setup, calls)
	return ans, true, err
}

func firstError(ans []ground.Answer) string {
	for _, a := range ans {
		if !a.OK {
			return a.Error
		}
	}
	return ""
}

func prefix(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func chainText(chain []string) string {
	if len(chain) == 0 {
		return "no precondition"
	}
	return strings.Join(chain, " then ")
}

// chainWhy says why no way of meeting a tool's requires held on any row.
func (sv *solver) chainWhy(tool *contract.Tool, chains [][]string, lastErr string) string {
	var parts []string
	for _, ch := range chains {
		for _, t := range append(append([]string{}, ch...), tool.Name) {
			if b := sv.firstUnbound(t); b != "" {
				parts = append(parts, b)
			}
		}
	}
	s := fmt.Sprintf("the requires chain of %s cannot be met: no way of calling %s answered ok on any row", tool.Name, strings.Join(chainNames(chains), " or "))
	if len(chains) == 1 && len(chains[0]) == 0 {
		s = fmt.Sprintf("%s cannot be called on any row", tool.Name)
	}
	if lastErr != "" {
		s += " (last: " + clip(lastErr) + ")"
	}
	if len(parts) > 0 {
		s += "; " + strings.Join(dedupe(parts), "; ")
	}
	return s
}

func chainNames(chains [][]string) []string {
	var out []string
	for _, ch := range chains {
		out = append(out, chainText(ch))
	}
	return out
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// usesTable reports whether a tool takes an argument from a table's rows.
func (sv *solver) usesTable(tool, table string) bool {
	for _, b := range sv.bs.For(tool) {
		if b.Table == table && b.Source == ground.FromCase {
			return true
		}
	}
	return false
}

// firstUnbound names the first argument of a tool no column grounds.
func (sv *solver) firstUnbound(tool string) string {
	for _, b := range sv.bs.For(tool) {
		if b.How == ground.Unbound {
			return fmt.Sprintf("argument %s.%s could not be grounded (%s)", tool, b.Param, ground.XRefHint(sv.g.C, b))
		}
	}
	if why, ok := sv.unanswered[tool]; ok {
		return fmt.Sprintf("%s never answered ok on the world (%s)", tool, clip(why))
	}
	return ""
}

// targetTable is the table the acting tool's first record argument names,
// or the caller table when it names none.
func (sv *solver) targetTable(t *contract.Tool) string {
	g := sv.g
	for _, name := range t.ParamNames() {
		tb, _, ok := g.RecordParam(sv.bs, t, name)
		if !ok {
			continue
		}
		if b, _ := sv.bs.Of(t.Name, name); b.Source == ground.FromShared || b.Source == ground.FromSibling {
			continue
		}
		if g.C.Table(tb) != nil && len(g.Rows(tb)) > 0 && g.PK(tb) != "" {
			return tb
		}
	}
	if g.C.Caller != nil {
		return g.C.Caller.Table
	}
	return ""
}

// Chains lists the ways of meeting a tool's requires: for each requirement
// one of its tools, each with its own requires met first, as call
// sequences (deepest first), the contract's first choices first.
func Chains(c *contract.Contract, tool string) [][]string {
	var walk func(name string, depth int, seen map[string]bool) [][]string
	walk = func(name string, depth int, seen map[string]bool) [][]string {
		t := c.Tool(name)
		if t == nil || depth > 6 {
			return [][]string{nil}
		}
		out := [][]string{nil}
		for _, r := range t.Requires {
			if len(r.AnyOf) == 0 {
				continue
			}
			var next [][]string
			for _, prefixChain := range out {
				met := false
				for _, alt := range r.AnyOf {
					met = met || containsKey(prefixChain, alt)
				}
				if met {
					next = append(next, prefixChain)
					continue
				}
				for _, alt := range r.AnyOf {
					if seen[alt] {
						continue
					}
					s2 := map[string]bool{alt: true}
					for k := range seen {
						s2[k] = true
					}
					for _, sub := range walk(alt, depth+1, s2) {
						ch := appendNew(append([]string{}, prefixChain...), sub...)
						if !containsKey(ch, alt) {
							ch = append(ch, alt)
						}
						next = append(next, ch)
						if len(next) >= maxChains {
							break
						}
					}
				}
			}
			if len(next) > 0 {
				out = next
			}
		}
		return out
	}
	chains := walk(tool, 0, map[string]bool{tool: true})
	// Shortest first, then as listed.
	sort.SliceStable(chains, func(i, j int) bool { return len(chains[i]) < len(chains[j]) })
	var out [][]string
	seen := map[string]bool{}
	for _, ch := range chains {
		k := strings.Join(ch, ",")
		if !seen[k] {
			seen[k] = true
			out = append(out, ch)
		}
		if len(out) >= maxChains {
			break
		}
	}
	return out
}

func appendNew(xs []string, ys ...string) []string {
	for _, y := range ys {
		if !containsKey(xs, y) {
			xs = append(xs, y)
		}
	}
	return xs
}

// Chain is the call sequence that performs a tool for a case: the
// precondition tools of chain, in order, then the tool itself, each filled
// from the case; an argument a requirement says must be the same
// ({tool: a, same: [x]}) is copied from the call that requires it.
func Chain(g *ground.Graph, tool *contract.Tool, chain []string, b ground.Bound, bs ground.Bindings) ([]scenario.Call, bool) {
	var calls []scenario.Call
	for _, name := range append(append([]string{}, chain...), tool.Name) {
		t := g.C.Tool(name)
		if t == nil {
			return nil, false
		}
		args, ok := g.Fill(t, b, bs)
		if !ok {
			return nil, false
		}
		if name == tool.Name && (t.ChangesState == nil || *t.ChangesState) {
			// An act that sets what is already there changes nothing,
			// unless the case asks for that value.
			stated := map[string]any{}
			for p, v := range args {
				if bd, ok := bs.Of(name, p); ok && b.States(bd, v) {
					stated[p] = v
				}
			}
			args = g.Renew(t, g.Freshen(t, args, b), b, bs)
			maps.Copy(args, stated)
		}
		if name == tool.Name && b.Leave != "" {
			delete(args, b.Leave)
		}
		calls = append(calls, scenario.Call{Tool: name, Args: args})
	}
	// Later calls set the same arguments of the calls they require.
	for j := len(calls) - 1; j >= 0; j-- {
		t := g.C.Tool(calls[j].Tool)
		for _, r := range t.Requires {
			for _, same := range r.Same {
				v, has := calls[j].Args[same]
				if !has {
					continue
				}
				for i := 0; i < j; i++ {
					if containsKey(r.AnyOf, calls[i].Tool) {
						calls[i].Args[same] = v
					}
				}
			}
		}
	}
	return calls, true
}

// levels groups rows by the low-cardinality column whose levels each give
// one outcome, with both outcomes present; without one, the rows that
// succeed are one level (or, when none does, those refused). Never a column that holds a person's detail
// (a name, a phone): that is who, not a state, and a minted case takes
// another. Of columns that split as many rows, the one the acting tool's
// code names (it reads it to decide), then one whose levels a CHECK lists,
// then the one with fewest levels, then the first in the schema: what a
// column is called never decides.
func levels(g *ground.Graph, table string, keys []string, outcome, branch map[string]string, code string, skip ...string) ([]level, *Axis) {
	var best []level
	bestCol, bestPure, bestRank := "", 0, 0
	cols := g.LowCardinality(table, 8)
	t := g.C.Table(table)
	var names []string
	if t != nil {
		for _, c := range t.Columns {
			if _, ok := cols[c.Name]; ok {
				names = append(names, c.Name)
			}
		}
	}
	rank := func(col string, ls []level) int {
		r := 0
		if regexp.MustCompile(`\b` + regexp.QuoteMeta(col) + `\b`).MatchString(code) {
			r += 2000
		}
		for _, ck := range t.ChecksOn(col) {
			if ck.Op == "in" {
				r += 1000
				break
			}
		}
		return r - len(ls)
	}
	for _, col := range names {
		if g.Renamed(table, col) != "" || slices.Contains(skip, col) {
			continue // a person's name or number is who, not a state: a minted case takes another
		}
		ls, pure, ok := columnLevels(g, table, col, cols[col], keys, outcome, branch)
		if !ok {
			continue
		}
		if r := rank(col, ls); best == nil || pure > bestPure || pure == bestPure && r > bestRank {
			best, bestCol, bestPure, bestRank = ls, col, pure, r
		}
	}
	if best != nil {
		ax := &Axis{Table: table, Column: bestCol, Levels: map[string]string{}}
		for _, l := range best {
			ax.Levels[l.level] = l.outcome
		}
		return best, ax
	}
	return noAxis(keys, outcome), nil
}

// axisTries bounds the columns axisLevels tries before it plans without
// an axis, and axisChecks the refused rows it checks each on.
const (
	axisTries  = 3
	axisChecks = 2
)

// axisLevels are the levels of the column that decides the act's answer
// (levels), checked by behaviour: a column whose levels split the sample's
// outcomes only by chance (a nickname shared by two rows refused for
// their slots) does not decide them. On a few rows of its refusal levels,
// the row is given a succeeding level's value (an UPDATE in the
// rehearsal's setup) and the act rehearsed again; when none of them
// answers otherwise, the next column is tried, and after axisTries the
// plan has no axis. A row the schema will not let take the value says
// nothing either way.
func (sv *solver) axisLevels(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes) ([]level, *Axis, error) {
	g := sv.g
	code := g.C.HandlerSource(tool)
	var skip []string
	for range axisTries {
		ls, ax := levels(g, sol.table, played.keys, played.outcome, played.branch, code, skip...)
		if ax == nil {
			return ls, nil, nil
		}
		decides, err := sv.decides(ctx, tool, sol, sc, played, ls)
		if err != nil || decides {
			return ls, ax, err
		}
		skip = append(skip, ax.Column)
	}
	return noAxis(played.keys, played.outcome), nil, nil
}

// decides reports whether giving a refused row of ls a succeeding level's
// value changes the act's answer on some row (or no row can tell).
func (sv *solver) decides(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes, ls []level) (bool, error) {
	var col, good string // the column, and a row at a succeeding level
	for _, lv := range ls {
		if lv.outcome == "succeed" && len(lv.templates) > 0 {
			col, good = lv.column, lv.templates[0]
			break
		}
	}
	t := sv.g.C.Table(sol.table)
	pk := sv.g.PK(sol.table)
	if col == "" || t == nil || pk == "" || t.Column(col) == nil {
		return true, nil
	}
	// The refused row takes the succeeding row's value, as the database
	// holds it.
	set := fmt.Sprintf("UPDATE %s SET %s = (SELECT %s FROM %s WHERE %s::text = $1) WHERE %s::text = $2", t.Name, col, col, t.Name, pk, pk)
	checked := 0
	for _, lv := range ls {
		for _, k := range lv.templates {
			if lv.outcome != "refuse" || checked >= axisChecks {
				break
			}
			b := sc.bound(played.index[k])
			sol.choices[k].Apply(&b)
			calls, ok := Chain(sv.g, tool, sol.chain, b, sv.bs)
			if !ok {
				continue
			}
			ans, err := sv.r.Rehearse(ctx, []scenario.Statement{{SQL: set, Args: []any{good, k}}}, calls)
			if se := (*scenario.SetupError)(nil); errors.As(err, &se) {
				return true, nil // the schema will not say
			}
			if err != nil {
				return false, err
			}
			checked++
			if len(ans) != len(calls) {
				return true, nil
			}
			if act := ans[len(ans)-1]; !act.Refused || act.Branch != played.branch[k] {
				return true, nil
			}
		}
	}
	return checked == 0, nil
}

// columnLevels splits the answered rows by their value of col: the levels
// every row of which has one outcome, and how many rows those hold. ok is
// false when the levels do not tell two outcomes apart. A refusal level
// whose rows were all refused at one branch names it.
func columnLevels(g *ground.Graph, table, col string, values []string, keys []string, outcome, branch map[string]string) (ls []level, pure int, ok bool) {
	pk := g.PK(table)
	byLevel := map[string][]string{}
	outs := map[string]map[string]bool{}
	ways := map[string]map[string]bool{}
	for _, k := range keys {
		r := g.Find(table, pk, k)
		lv := ground.Text(r[col])
		byLevel[lv] = append(byLevel[lv], k)
		if outs[lv] == nil {
			outs[lv], ways[lv] = map[string]bool{}, map[string]bool{}
		}
		outs[lv][outcome[k]] = true
		ways[lv][branch[k]] = true
	}
	kinds := map[string]bool{}
	for _, lv := range values {
		if len(outs[lv]) != 1 {
			continue
		}
		pure += len(byLevel[lv])
		for o := range outs[lv] {
			kinds[o] = true
			l := level{column: col, level: lv, outcome: o, templates: byLevel[lv]}
			if o == "refuse" && len(ways[lv]) == 1 {
				for b := range ways[lv] {
					l.branch = b
				}
			}
			ls = append(ls, l)
		}
	}
	return ls, pure, len(kinds) >= 2
}

// branchLevels adds a refusal level for each refusal branch of the act
// that some answered row takes and no refusal level already deals: each
// distinct way the world says no gets its own cases, not only the branch
// the axis column happens to separate. The level keeps a column of its own
// when one tells its rows from the rows that succeed.
func (sv *solver) branchLevels(ls []level, table string, played rowOutcomes, code string) []level {
	// Refusals no column splits are dealt branch by branch below.
	ls = slices.DeleteFunc(slices.Clone(ls), func(lv level) bool {
		return lv.outcome == "refuse" && lv.column == "" &&
			!slices.ContainsFunc(lv.templates, func(k string) bool { return played.branch[k] == "" })
	})
	dealt := map[string]bool{}
	for _, lv := range ls {
		if lv.outcome != "refuse" {
			continue
		}
		for _, k := range lv.templates {
			dealt[played.branch[k]] = true
		}
	}
	byBranch := map[string][]string{}
	var succeeded []string
	for _, k := range played.keys {
		switch b := played.branch[k]; {
		case played.outcome[k] == "succeed":
			succeeded = append(succeeded, k)
		case b != "" && !dealt[b]:
			byBranch[b] = append(byBranch[b], k)
		}
	}
	for _, b := range slices.Sorted(maps.Keys(byBranch)) {
		lv := level{outcome: "refuse", templates: byBranch[b], branch: b, refusal: sv.refusals()[b]}
		keys := append(slices.Clone(succeeded), byBranch[b]...)
		outcome := map[string]string{}
		for _, k := range keys {
			outcome[k] = played.outcome[k]
		}
		if sub, ax := levels(sv.g, table, keys, outcome, played.branch, code); ax != nil {
			for _, s := range sub {
				if s.outcome == "refuse" {
					lv.column, lv.level, lv.templates = s.column, s.level, s.templates
					break
				}
			}
		}
		ls = append(ls, lv)
	}
	return ls
}

// ruleRefusals makes a refusal of each row the world carried the act out
// on but a rule forbids, by the first rule it breaks. A rule the act broke
// on every such row is about the conversation (who was identified, what
// was said first), not the record: it makes no row a refusal, and is
// returned.
func ruleRefusals(ro rowOutcomes, broken map[string][]string) (everyRow []string) {
	ok, by := 0, map[string]int{}
	for _, k := range ro.keys {
		if ro.outcome[k] != "succeed" {
			continue
		}
		ok++
		for _, r := range broken[k] {
			by[r]++
		}
	}
	for r, n := range by {
		if n == ok {
			everyRow = append(everyRow, r)
		}
	}
	slices.Sort(everyRow)
	for _, k := range ro.keys {
		if ro.outcome[k] != "succeed" {
			continue
		}
		for _, r := range broken[k] {
			if by[r] < ok {
				// The world carries it out, a rule forbids it: a refusal.
				ro.outcome[k], ro.branch[k] = "refuse", RuleRefusal+r
				break
			}
		}
	}
	return everyRow
}

// rulesBroken are the rules the calls break, played after setup as the
// caller of that row; none when the solver reads no rules.
func (sv *solver) rulesBroken(ctx context.Context, setup []scenario.Statement, calls []scenario.Call, caller ground.Row) ([]string, error) {
	if sv.rules == nil {
		return nil, nil
	}
	var key any
	if cl := sv.g.C.Caller; cl != nil && caller != nil {
		key = caller[cl.Key]
	}
	broken, err := sv.rules.RulesBroken(ctx, setup, calls, key)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return broken, nil
}

// teethRows bounds the templates of a refusal level teethFirst rehearses.
const teethRows = 6

// teethFirst puts first, in each refusal level, the templates whose act the
// world would carry out were the branch that refuses it removed (as
// adequacy removes it). A case another branch would refuse anyway is still
// a right refusal, but proves nothing of its own branch: an agent that
// ignored that branch's rule would be refused all the same. The level and
// its want do not change, only which of its rows come first; but a level
// none of whose first rows bites, even with the settings soleCause finds,
// is replaced by the spare pushLevels found for its branch where one of
// that spare's rows bites.
func (sv *solver) teethFirst(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes) error {
	if sv.mutants == nil {
		return nil
	}
	for i := range sol.levels {
		lv := &sol.levels[i]
		if lv.outcome != "refuse" {
			continue
		}
		teeth, calls, ats, err := sv.biting(ctx, tool, sol, sc, played, lv)
		if err != nil {
			return err
		}
		bites := func() bool { return slices.ContainsFunc(lv.templates, func(k string) bool { return teeth[k] }) }
		// setApart tries find on the level's first templates, until one
		// bites.
		setApart := func(find func(k string) (bool, error)) error {
			for _, k := range lv.templates[:min(len(lv.templates), soleRows)] {
				if bites() {
					return nil
				}
				if calls[k] == nil || ats[k] == "" || strings.HasPrefix(ats[k], RuleRefusal) {
					continue
				}
				var err error
				if teeth[k], err = find(k); err != nil {
					return err
				}
			}
			return nil
		}
		if err := setApart(func(k string) (bool, error) { return sv.soleCause(ctx, tool, sol, lv, k, ats[k], calls[k]) }); err != nil {
			return err
		}
		if sp, ok := sol.spares[lv.branch]; ok && lv.branch != "" && !bites() {
			// A level none of whose cases bites gives way to the cases a
			// setting or an added row found for its branch, where one of
			// them bites: a title already reserved on the card, where
			// each seed row that holds one is also on the shelf at the
			// pickup branch.
			spTeeth, spCalls, spAts, err := sv.biting(ctx, tool, sol, sc, played, &sp)
			if err != nil {
				return err
			}
			if slices.ContainsFunc(sp.templates, func(k string) bool { return spTeeth[k] }) {
				*lv, teeth, calls, ats = sp, spTeeth, spCalls, spAts
			}
		}
		// Last, another choice of the act's other arguments.
		if err := setApart(func(k string) (bool, error) { return sv.soleChoice(ctx, tool, sol, sc, played, lv, k, ats[k]) }); err != nil {
			return err
		}
		slices.SortStableFunc(lv.templates, func(a, b string) int {
			return b2i(teeth[b]) - b2i(teeth[a])
		})
	}
	return nil
}

// soleOrdinals bounds the other ordinals soleChoice tries per variant, and
// soleVariants the variants.
const (
	soleOrdinals = 8
	soleVariants = 2
	// solePinned bounds the rows the act succeeds on whose records
	// soleChoice pins (pinned).
	solePinned = 3
)

// soleChoice gives a template of a refusal level another choice of the
// act's other arguments (another slot, another visit type), where the world
// still refuses at the level's branch and the world without that branch
// carries the act out: a booking refused for the patient's account, before
// the slot is read, made on a slot the patient could otherwise book. The
// branch is then the case's sole cause. It reports whether one was found.
func (sv *solver) soleChoice(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes, lv *level, k, at string) (bool, error) {
	idx, ok := played.index[k]
	if !ok {
		return false, nil
	}
	base := lv.choice(sol, k)
	// The choices the act succeeds with on other rows first (the slot and
	// visit type a booking went through with), then others in turn.
	var cands []Choice
	add := func(ch Choice) {
		if ch != base && !slices.Contains(cands, ch) {
			cands = append(cands, ch)
		}
	}
	// First the very record of a table no one owns (the slot) a success
	// took, with that success's other choices (its visit type): the
	// case's own ordinals reach other records than another row's do.
	for _, r := range played.succeeded(solePinned) {
		for _, ch := range sv.pinned(tool, sol, sc, played, r) {
			add(ch)
		}
	}
	for _, r := range played.succeeded(len(played.keys)) {
		add(sol.choices[r])
	}
	variants := min(sc.bound(idx).Variants(), soleVariants)
	for v := range variants {
		for o := range soleOrdinals {
			ch := base
			ch.Variant, ch.Ordinal = (base.Variant+v)%variants, base.Ordinal+o+1
			cands = append(cands, ch)
		}
	}
	for _, ch := range cands {
		b := sc.bound(idx)
		ch.Apply(&b)
		cs, ok := Chain(sv.g, tool, sol.chain, b, sv.bs)
		if !ok {
			continue
		}
		still, err := sv.refusedAt(ctx, lv.prior[k], cs, at)
		if err != nil {
			return false, err
		}
		bite := false
		if still {
			if bite, err = sv.bites(ctx, at, cs, lv.prior[k]...); err != nil {
				return false, err
			}
		}
		if !bite {
			continue
		}
		// A map of its own: another level, or a cached solution, may hold
		// the one it had.
		own := map[string]Choice{}
		if lv.choices != nil {
			maps.Copy(own, lv.choices)
		} else {
			maps.Copy(own, sol.choices)
		}
		own[k] = ch
		lv.choices = own
		return true, nil
	}
	return false, nil
}

// pinned are the choices that make a case take the very records of tables
// no one owns that row r's successful act takes (ground.SwapWorld), one
// table at a time, with r's other choices.
func (sv *solver) pinned(tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes, r string) []Choice {
	idx, ok := played.index[r]
	if !ok {
		return nil
	}
	b := sc.bound(idx)
	sol.choices[r].Apply(&b)
	calls, ok := Chain(sv.g, tool, sol.chain, b, sv.bs)
	if !ok {
		return nil
	}
	act := calls[len(calls)-1]
	var out []Choice
	for _, o := range sv.outsideTables(tool, sol.table) {
		v, given := act.Args[o.param]
		if !o.world || !given {
			continue
		}
		for i, row := range sv.g.Rows(o.table) {
			if ground.Text(row[o.column]) == ground.Text(v) {
				ch := sol.choices[r]
				ch.Outside, ch.Swap, ch.Other = o.table, ground.SwapWorld, i
				out = append(out, ch)
				break
			}
		}
	}
	return out
}

// biting rehearses the first templates of a refusal level with the branch
// that refuses each removed (bites): teeth says which would then be carried
// out, calls and ats each one's calls and branch.
func (sv *solver) biting(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes, lv *level) (teeth map[string]bool, calls map[string][]scenario.Call, ats map[string]string, err error) {
	teeth, calls, ats = map[string]bool{}, map[string][]scenario.Call{}, map[string]string{}
	for _, k := range lv.templates[:min(len(lv.templates), teethRows)] {
		at := lv.branch
		if at == "" {
			at = played.branch[k]
		}
		ats[k] = at
		idx, ok := played.index[k]
		if !ok {
			continue
		}
		b := sc.bound(idx)
		lv.choice(sol, k).Apply(&b)
		cs, ok := Chain(sv.g, tool, sol.chain, b, sv.bs)
		if !ok {
			continue
		}
		if teeth[k], err = sv.bites(ctx, at, cs, lv.prior[k]...); err != nil {
			return nil, nil, nil, err
		}
		calls[k] = cs
	}
	return teeth, calls, ats, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// choiceRows bounds the rows whose other choices choiceLevels rehearses,
// and worldCases those of them it rehearses with the world's neighbours of
// their record of a table no one owns (ground.Graph.Neighbours).
const (
	choiceRows = 4
	worldCases = 2
)

// choiceLevels adds a refusal level for each way the world says no to the
// act on a row only under another choice of its arguments: another of the
// caller's payment methods, another variant, another enum value, or a
// record that is someone else's (another customer's card or order). The
// caller asks for that choice, and the world refuses it at a branch of its
// own, or carries it out where a rule forbids it. No level is added for a
// way a level already deals.
func (sv *solver) choiceLevels(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes) ([]level, error) {
	ls := sol.levels
	dealt := dealtWays(ls, played)
	outside := sv.outsideTables(tool, sol.table)
	found := map[string]map[Choice]*choiceLevel{} // by way, then by where its cases take records
	for i, k := range played.succeeded(choiceRows) {
		b := sc.bound(played.index[k])
		for _, ch := range sv.otherChoices(tool, b, played.read[k], sol.choices[k], outside, i < worldCases) {
			bb := b
			ch.Apply(&bb)
			calls, ok := Chain(sv.g, tool, sol.chain, bb, sv.bs)
			if !ok {
				continue
			}
			ans, err := sv.r.Rehearse(ctx, nil, calls)
			if err != nil {
				return ls, err
			}
			if len(ans) != len(calls) || !allOK(ans[:len(ans)-1]) {
				continue
			}
			way := ""
			switch act := ans[len(ans)-1]; {
			case act.Refused && !act.Invalid && ch.Outside != "":
				// The calls before the act may already touch the record
				// taken from outside (a look-up of someone else's order):
				// where they break a rule the row's own choice keeps, an
				// honest agent refuses there, on the rule, and never
				// reaches the world's branch; the prover holds a reference
				// to every rule, so no case refused at that branch can be
				// written, and the level is the rule's.
				broken, err := sv.rulesBroken(ctx, nil, calls[:len(calls)-1], bb.Caller)
				if err != nil {
					return ls, err
				}
				way = act.Branch
				for _, r := range broken {
					if !slices.Contains(played.broken[k], r) {
						way = RuleRefusal + r
						break
					}
				}
			case act.Refused && !act.Invalid:
				way = act.Branch
			case act.OK:
				// Carried out: a refusal when it breaks a rule the row's
				// own choice keeps.
				broken, err := sv.rulesBroken(ctx, nil, calls, bb.Caller)
				if err != nil {
					return ls, err
				}
				for _, r := range broken {
					if !slices.Contains(played.broken[k], r) {
						way = RuleRefusal + r
						break
					}
				}
			}
			if way == "" || dealt[way] {
				continue
			}
			group := Choice{Outside: ch.Outside, Swap: ch.Swap} // a level's cases all ask about whose record alike
			if found[way] == nil {
				found[way] = map[Choice]*choiceLevel{}
			}
			cl := found[way][group]
			if cl == nil {
				cl = &choiceLevel{level: level{outcome: "refuse", branch: way, refusal: sv.refusals()[way], choices: map[string]Choice{}, elsewhere: sv.elsewhere(ch, sol.table)},
					teeth: map[string]bool{}, order: len(found[way])}
				found[way][group] = cl
			}
			if _, ok := cl.choices[k]; ok && cl.teeth[k] {
				continue
			}
			teeth, err := sv.bites(ctx, way, calls)
			if err != nil {
				return ls, err
			}
			if _, ok := cl.choices[k]; !ok {
				cl.templates = append(cl.templates, k)
			} else if !teeth {
				continue
			}
			cl.choices[k], cl.teeth[k] = ch, teeth
		}
	}
	for _, way := range slices.Sorted(maps.Keys(found)) {
		// Of the ways to ask for a refusal there, the one whose cases the
		// branch alone refuses most often.
		var best *choiceLevel
		for _, cl := range found[way] {
			if best == nil || cl.bitten() > best.bitten() || cl.bitten() == best.bitten() && cl.order < best.order {
				best = cl
			}
		}
		ls = append(ls, best.level)
	}
	return ls, nil
}

// leaveTries bounds the rehearsals of the act without one argument, per
// argument.
const leaveTries = 16

// leaveTemplates bounds the cases of one level that leaves an argument out.
const leaveTemplates = 4

// leaveLevels adds a refusal level for each way the world says no to the
// act without an argument its schema does not require, which a succeeding
// case fills with a record: a minor who calls alone names no guardian, and
// the world that books for a guardian's child refuses the child alone. Only
// an argument that names a record is left out (one the caller may have no
// record to name); a flag or a free text left out would leave the request
// unsaid instead.
func (sv *solver) leaveLevels(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes) ([]level, error) {
	ls := sol.levels
	dealt := dealtWays(ls, played)
	req := tool.Required()
	found := map[string]*level{}
	var ways []string
	tries := map[string]int{}
	for _, k := range played.keys {
		if played.outcome[k] != "succeed" {
			continue
		}
		b := sc.bound(played.index[k])
		ch := sol.choices[k]
		ch.Apply(&b)
		calls, ok := Chain(sv.g, tool, sol.chain, b, sv.bs)
		if !ok {
			continue
		}
		full := calls[len(calls)-1].Args
		for _, n := range slices.Sorted(maps.Keys(full)) {
			if _, _, record := sv.g.RecordParam(sv.bs, tool, n); !record || slices.Contains(req, n) || tool.LogOnlyParam(n) || tries[n] >= leaveTries {
				continue
			}
			tries[n]++
			lb := b
			lb.Leave = n
			lcalls, ok := Chain(sv.g, tool, sol.chain, lb, sv.bs)
			if !ok {
				continue
			}
			ans, err := sv.r.Rehearse(ctx, nil, lcalls)
			if err != nil {
				return ls, err
			}
			if len(ans) != len(lcalls) || !allOK(ans[:len(ans)-1]) {
				continue
			}
			act := ans[len(ans)-1]
			if !act.Refused || act.Invalid || dealt[act.Branch] || shows(ans[:len(ans)-1], ground.Text(full[n])) {
				continue // an agent passes what an earlier answer hands it
			}
			lv := found[act.Branch]
			if lv == nil {
				lv = &level{outcome: "refuse", branch: act.Branch, refusal: sv.refusals()[act.Branch], choices: map[string]Choice{}}
				found[act.Branch] = lv
				ways = append(ways, act.Branch)
			} else if lv.choices[lv.templates[0]].Leave != n || len(lv.templates) >= leaveTemplates || slices.Contains(lv.templates, k) {
				continue // a level leaves one argument out, as a brief deals it
			}
			lch := ch
			lch.Leave = n
			lv.templates = append(lv.templates, k)
			lv.choices[k] = lch
		}
	}
	for _, w := range ways {
		ls = append(ls, *found[w])
	}
	return ls, nil
}

// shows reports whether some answer holds v as a scalar value, at any
// depth.
func shows(ans []ground.Answer, v string) bool {
	var walk func(x any) bool
	walk = func(x any) bool {
		switch x := x.(type) {
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case nil:
		default:
			return ground.Text(x) == v
		}
		return false
	}
	for _, a := range ans {
		var doc any
		if a.OK && json.Unmarshal(a.Result, &doc) == nil && walk(doc) {
			return true
		}
	}
	return false
}

// dealtWays are the ways to refuse the levels already deal: their branch,
// and the branch each refusal template took.
func dealtWays(ls []level, played rowOutcomes) map[string]bool {
	dealt := map[string]bool{}
	for _, lv := range ls {
		if lv.branch != "" {
			dealt[lv.branch] = true
		}
		for _, k := range lv.templates {
			if lv.outcome == "refuse" && played.branch[k] != "" {
				dealt[played.branch[k]] = true
			}
		}
	}
	return dealt
}

// writesRehearser is a rehearser that also returns statements that write
// what the calls wrote (probe.Rehearser is one).
type writesRehearser interface {
	RehearseWrites(ctx context.Context, setup []scenario.Statement, calls []scenario.Call) ([]ground.Answer, []scenario.Statement, error)
}

// againLevels adds a refusal level for each way the world says no to the
// act asked for once it is done: on a row the act succeeds on, the world
// the act leaves (its writes, which the case's setup carries) refuses the
// same request at a branch no level deals yet — a second callback while
// one is booked, an order's items modified a second time, a payment
// request while one awaits payment. No seed row need hold that state; the
// act makes it.
func (sv *solver) againLevels(ctx context.Context, tool *contract.Tool, sol solution, sc sampledCases, played rowOutcomes) ([]level, error) {
	ls := sol.levels
	wr, ok := sv.r.(writesRehearser)
	if !ok {
		return ls, nil
	}
	dealt := dealtWays(ls, played)
	found := map[string]*level{}
	for _, k := range played.succeeded(choiceRows) {
		b := sc.bound(played.index[k])
		sol.choices[k].Apply(&b)
		calls, ok := Chain(sv.g, tool, sol.chain, b, sv.bs)
		if !ok {
			continue
		}
		ans, writes, err := wr.RehearseWrites(ctx, nil, calls)
		if err != nil {
			return ls, err
		}
		if len(writes) == 0 || len(ans) != len(calls) || !allOK(ans) {
			continue
		}
		again, err := sv.r.Rehearse(ctx, writes, calls)
		if se := (*scenario.SetupError)(nil); errors.As(err, &se) {
			continue // the writes do not replay as statements
		}
		if err != nil {
			return ls, err
		}
		if len(again) != len(calls) || !allOK(again[:len(again)-1]) {
			continue
		}
		act := again[len(again)-1]
		if !act.Refused || act.Invalid || act.Branch == "" || dealt[act.Branch] {
			continue
		}
		if writes, err = sv.ownWrites(ctx, writes, calls, b.Caller, act.Branch); err != nil {
			return ls, err
		}
		lv := found[act.Branch]
		if lv == nil {
			lv = &level{outcome: "refuse", branch: act.Branch, refusal: sv.refusals()[act.Branch], prior: map[string][]scenario.Statement{}}
			found[act.Branch] = lv
		}
		lv.templates = append(lv.templates, k)
		lv.prior[k] = writes
	}
	for _, way := range slices.Sorted(maps.Keys(found)) {
		ls = append(ls, *found[way])
	}
	return ls, nil
}

// ownWrites are the writes an act made that a case may hold as done
// already: those on another caller's records (the points a transfer
// credited to its recipient) left out, when the act is still refused at
// branch without them. A setup may change only the caller's rows and
// those the case names by key (the prover's setup-overreach), and what
// refuses the act again is what it did to the caller's own (the balance it
// spent). All of them when the refusal needs the others too.
func (sv *solver) ownWrites(ctx context.Context, writes []scenario.Statement, calls []scenario.Call, caller ground.Row, branch string) ([]scenario.Statement, error) {
	cl := sv.g.C.Caller
	if cl == nil || caller == nil {
		return writes, nil
	}
	me := ground.Text(caller[cl.Key])
	var own []scenario.Statement
	for _, st := range writes {
		if !slices.ContainsFunc(st.Args, func(a any) bool {
			return a != nil && ground.Text(a) != me && sv.g.Find(cl.Table, cl.Key, a) != nil
		}) {
			own = append(own, st)
		}
	}
	if len(own) == len(writes) || len(own) == 0 {
		return writes, nil
	}
	again, err := sv.r.Rehearse(ctx, own, calls)
	if se := (*scenario.SetupError)(nil); errors.As(err, &se) {
		return writes, nil
	}
	if err != nil {
		return nil, err
	}
	if len(again) != len(calls) || !allOK(again[:len(again)-1]) {
		return writes, nil
	}
	if act := again[len(again)-1]; !act.Refused || act.Invalid || act.Branch != branch {
		return writes, nil
	}
	return own, nil
}

// choiceLevel is a refusal level choiceLevels is gathering, with which of
// its templates have teeth (sv.bites), and when it was found among the
// levels of its way.
type choiceLevel struct {
	level
	teeth map[string]bool
	order int
}

func (cl *choiceLevel) bitten() int {
	n := 0
	for _, t := range cl.teeth {
		n += b2i(t)
	}
	return n
}

// bites reports whether the world would carry out calls, after setup, were the refusal
// branch at (file:line) removed, as adequacy removes it: whether a case
// refused there proves something of that branch, rather than of another
// that would refuse it anyway. False for a rule's refusal, or without
// mutants.
func (sv *solver) bites(ctx context.Context, at string, calls []scenario.Call, setup ...scenario.Statement) (bool, error) {
	if sv.mutants == nil || at == "" || strings.HasPrefix(at, RuleRefusal) {
		return false, nil
	}
	r, err := sv.mutants.Without(at)
	if err != nil || r == nil {
		return false, err
	}
	ans, err := r.Rehearse(ctx, setup, calls)
	if se := (*scenario.SetupError)(nil); errors.As(err, &se) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return len(ans) == len(calls) && allOK(ans), nil
}

// otherChoices are the choices other than at (the one the row succeeds
// with) that can change the act's answer on case b: other variants when
// the act read a row choice, other ordinals when it read a value choice,
// and, for each table of outside, its record taken from outside the case
// (where the act takes a sibling, also the case's own row and another it
// holds; of a table no one owns, when world, each of the world's rows
// that differ from the case's own in one trait); for a fresh value, one
// that is not new; for a number, several times it.
func (sv *solver) otherChoices(tool *contract.Tool, b ground.Bound, read []string, at Choice, outside []outsideTable, world bool) []Choice {
	rows, choices := sv.reads(tool.Name, ground.Answer{Read: read}, b)
	variants, ordinals := 1, 1
	if rows {
		variants = min(b.Variants(), 4)
	}
	if choices {
		ordinals = choiceTries
	}
	var out []Choice
	for v := range variants {
		for o := range ordinals {
			ch := Choice{Variant: v, Ordinal: b.Ordinal + o}
			if ch == at || v == 0 && o == 0 && at == (Choice{}) {
				continue // the choice the row succeeds with
			}
			out = append(out, ch)
		}
	}
	out = append(out, sv.dayChoices(tool, b, at)...)
	for _, o := range outside {
		base := at
		if base == (Choice{}) {
			base.Ordinal = b.Ordinal
		}
		var swaps []Choice // each with only Swap and Other set
		switch {
		case o.more:
			for i := range ground.Mores {
				swaps = append(swaps, Choice{Swap: ground.SwapMore, Other: i})
			}
		case o.again:
			swaps = []Choice{{Swap: ground.SwapUnchanged}}
		case o.fresh:
			swaps = []Choice{{Swap: ground.SwapTaken}, {Swap: ground.SwapUnchanged}}
		case o.sibling:
			swaps = []Choice{{Swap: ground.SwapStranger}, {Swap: ground.SwapItself}, {Swap: ground.SwapHeld}}
		case !o.world:
			swaps = []Choice{{Swap: ground.SwapStranger}}
		}
		if o.world && world {
			for _, i := range sv.neighbours(tool, b, at, o) {
				swaps = append(swaps, Choice{Swap: ground.SwapWorld, Other: i})
			}
		}
		for _, sw := range swaps {
			ch := base
			ch.Outside, ch.Swap, ch.Other = o.table, sw.Swap, sw.Other
			out = append(out, ch)
		}
	}
	return out
}

// dayChoices are, for an act with a day argument the world's clock
// grounds (a start date, a visit's day) or writes from its format, no
// column holding it (an incident's date), the other days a caller may ask
// for (ground.SwapDay): each of ground.DayOffsets from the clock, then the
// day before and the day after each date the case's own record holds (a
// policy's start and end). The caller states the day, so a refusal of it
// is the world saying no to the request itself: the tempting act is the
// caller's own, and an agent that carries it out faithfully meets it.
func (sv *solver) dayChoices(tool *contract.Tool, b ground.Bound, at Choice) []Choice {
	t := sv.g.C.Table(b.Table)
	if t == nil || !slices.ContainsFunc(tool.ParamNames(), func(p string) bool {
		bd, ok := sv.bs.Of(tool.Name, p)
		if !ok || !ground.DayParam(tool, p) {
			return false
		}
		return bd.How == ground.FromClock && len(bd.Picks) > 0 || bd.How == ground.FromPattern
	}) {
		return nil
	}
	base := at
	if base == (Choice{}) {
		base.Ordinal = b.Ordinal
	}
	base.Outside, base.Swap = b.Table, ground.SwapDay
	var out []Choice
	for i := range ground.DayOffsets {
		ch := base
		ch.Other = i
		out = append(out, ch)
	}
	row := b.Pick(b.Table)
	for i, c := range t.Columns {
		if !dateType(c.Type) || row == nil || row[c.Name] == nil {
			continue
		}
		for dir := range 2 {
			ch := base
			ch.Other = len(ground.DayOffsets) + 2*i + dir
			out = append(out, ch)
		}
	}
	return out
}

// neighbours are the world's rows of o's table (by their place in the
// seed) that differ in one trait from the one case b takes under choice at
// (ground.Graph.Neighbours).
func (sv *solver) neighbours(tool *contract.Tool, b ground.Bound, at Choice, o outsideTable) []int {
	at.Apply(&b)
	args, _ := sv.g.Fill(tool, b, sv.bs)
	own := sv.g.Find(o.table, o.column, args[o.param])
	return sv.g.Neighbours(o.table, own)
}

// outsideTables are the tables whose records the act takes by key from
// outside the case (ground.Graph.Outsider): owned tables, where a caller
// can name a record that is not theirs; tables the act takes a sibling of
// the case's row from (a variant to swap to), where the caller can name
// one under another parent; and other tables no one owns (a slot, a
// flight), where the caller can name any of the world's. Never the
// caller's own table, whose rows the caller identifies by as themselves,
// nor the case's own. And the tables of arguments that take a fresh value
// (a new email), whose value the caller may ask for is one another row
// holds or the one the case's row holds already (of a column not unique in
// its table, only the latter); and of numbers an
// argument takes from a column (an amount), which the caller may ask for
// several times over.
func (sv *solver) outsideTables(tool *contract.Tool, table string) []outsideTable {
	var out []outsideTable
	cl := sv.g.C.Caller
	for _, p := range tool.ParamNames() {
		bd, ok := sv.bs.Of(tool.Name, p)
		if ok && bd.Table == "" && bd.How != ground.ByEnum && bd.How != ground.Fresh && numeric(tool, p) && table != "" {
			// A number no column grounds (an amount to refund): asked over
			// as the case's own record's.
			if !slices.ContainsFunc(out, func(x outsideTable) bool { return x.table == table && x.more }) {
				out = append(out, outsideTable{table: table, param: p, more: true})
			}
			continue
		}
		if !ok || bd.Table == "" || bd.How == ground.ByEnum || bd.How == ground.Unbound {
			continue
		}
		o := outsideTable{table: bd.Table, param: p, column: bd.Column, sibling: bd.Source == ground.FromSibling}
		unique := sv.g.C.Table(bd.Table).IsUnique(bd.Column)
		switch {
		case !unique && bd.How != ground.Fresh && numeric(tool, p):
			o.more = true
		case !unique && bd.How == ground.Fresh:
			// Not unique in the table, but maybe among one owner's
			// records: a policy's member id already on file.
			o.fresh, o.again = true, true
		case !unique:
			continue
		case bd.How == ground.Fresh:
			o.fresh = true
		case cl != nil && bd.Table == cl.Table:
			continue
		case o.sibling:
			// Of a table no one owns, also any of the world's.
			o.world = !sv.g.OwnedTable(bd.Table)
		case sv.g.OwnedTable(bd.Table):
			if bd.Source == ground.FromShared {
				continue
			}
		case bd.Table == table:
			continue
		default:
			o.world = true
		}
		if !slices.ContainsFunc(out, func(x outsideTable) bool { return x.table == o.table && x.fresh == o.fresh && x.more == o.more }) {
			out = append(out, o)
		}
	}
	return out
}

// elsewhere says what the record a choice takes from outside the case is
// to the case, for a level's angle; "" for a choice within it. table is
// the case's own.
func (sv *solver) elsewhere(ch Choice, table string) string {
	t := strings.ReplaceAll(ch.Outside, "_", " ")
	switch {
	case ch.Outside == "":
		return ""
	case ch.Swap == ground.SwapPast:
		way, col := "above", ""
		if ch.Other%2 == 1 {
			way = "below"
		}
		if tb := sv.g.C.Table(table); tb != nil && ch.Other >= 0 && ch.Other/2 < len(tb.Columns) {
			col = strings.ReplaceAll(tb.Columns[ch.Other/2].Name, "_", " ")
		}
		return fmt.Sprintf("a value %s the %s the case's record holds", way, col)
	case ch.Swap == ground.SwapItself:
		return "the record of " + t + " the case already names"
	case ch.Swap == ground.SwapHeld:
		return "another record of " + t + " the case already holds"
	case ch.Swap == ground.SwapWorld:
		return "another of the world's records of " + t
	case ch.Swap == ground.SwapTaken:
		return "a value of " + t + " another record already holds"
	case ch.Swap == ground.SwapUnchanged:
		return "the value of " + t + " the case's record already holds"
	case ch.Swap == ground.SwapMore:
		return fmt.Sprintf("%g times the amount of %s the case's record holds", ground.Mores[ch.Other], t)
	case ch.Swap == ground.SwapDay && ch.Other < len(ground.DayOffsets):
		return fmt.Sprintf("a day %d days from today, as the caller asks", ground.DayOffsets[ch.Other])
	case ch.Swap == ground.SwapDay:
		k, way, col := ch.Other-len(ground.DayOffsets), "before", ""
		if k%2 == 1 {
			way = "after"
		}
		if tb := sv.g.C.Table(table); tb != nil && k/2 < len(tb.Columns) {
			col = strings.ReplaceAll(tb.Columns[k/2].Name, "_", " ")
		}
		return fmt.Sprintf("the day %s the %s the case's record holds, as the caller asks", way, col)
	case sv.g.OwnedTable(ch.Outside):
		return "someone else's record of " + t
	}
	return "a record of " + t + " under another parent"
}

// outsideTable is a table whose record the act may take from outside the
// case; sibling when the act takes a sibling of the case's row of it, so
// it may also take that row itself or another the case holds; world when
// no one owns it, so it may take any of the world's; fresh when an
// argument takes a fresh value of its column; more when it takes a number
// from it. param is the argument that
// takes it, by column.
type outsideTable struct {
	table, param, column        string
	sibling, world, fresh, more bool
	// again: a fresh value of a column not unique in its table, asked
	// for only as the case's own record already holds it.
	again bool
}

// numeric reports an argument the tool's schema types as a number.
func numeric(t *contract.Tool, p string) bool {
	typ, _ := t.Param(p)["type"].(string)
	return typ == "number" || typ == "integer"
}

func allOK(ans []ground.Answer) bool {
	for _, a := range ans {
		if !a.OK {
			return false
		}
	}
	return true
}

// refusals are the contract's refusal branches' messages by place
// (file:line), read once: how a branch level tells a writer what the world
// says.
func (sv *solver) refusals() map[string]string {
	sv.once.Do(func() {
		sv.messages = map[string]string{}
		sv.argChecks = map[string]bool{}
		bs, err := script.Branches(sv.g.C)
		if err != nil {
			return // a contract that does not parse plans nothing anyway
		}
		for _, b := range bs {
			sv.messages[b.At()] = refusalText(b.Message)
			if b.Class == script.ClassArgument {
				sv.argChecks[b.At()] = true
			}
		}
	})
	return sv.messages
}

// argumentCheck reports whether the branch at place is an argument check:
// only a request that itself states a wrong value reaches it, whatever the
// world holds, so a refusal level aimed at it would tempt the agent with a
// request the caller has no reason to make (an e-mailed transcript with no
// address to send it to).
func (sv *solver) argumentCheck(at string) bool {
	sv.refusals()
	return sv.argChecks[at]
}

// withoutArgumentChecks drops the refusal levels, and the spares, at an
// argument check: the plan aims no case at one.
func (sv *solver) withoutArgumentChecks(levels []level, spares map[string]level) []level {
	levels = slices.DeleteFunc(levels, func(lv level) bool {
		return lv.outcome == "refuse" && sv.argumentCheck(lv.branch)
	})
	maps.DeleteFunc(spares, func(at string, lv level) bool {
		return sv.argumentCheck(at) || sv.argumentCheck(lv.branch)
	})
	return levels
}

// refusalText is a refusal's literal format with its verbs blanked: what
// the world says, without the values of one case.
func refusalText(format string) string {
	return strings.TrimSpace(verb.ReplaceAllString(format, "…"))
}

var verb = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)

// clipRunes is s cut to at most n runes, with an ellipsis when cut.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// noAxis is the level of a table no column splits: the rows that succeeded,
// or, when none did, those refused.
func noAxis(keys []string, outcome map[string]string) []level {
	var ok, refused []string
	for _, k := range keys {
		if outcome[k] == "succeed" {
			ok = append(ok, k)
		} else {
			refused = append(refused, k)
		}
	}
	var out []level
	if len(ok) > 0 {
		out = append(out, level{outcome: "succeed", templates: ok})
	}
	if len(refused) > 0 && len(ok) == 0 {
		out = append(out, level{outcome: "refuse", templates: refused})
	}
	return out
}
