package plan

import (
	"fmt"
	"slices"
	"sort"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Coverage is what a plan says about itself against things outside it.
type Coverage struct {
	Cells         int            `json:"cells"`
	CellsCovered  int            `json:"cells_covered"`
	UseCases      int            `json:"use_cases"`
	UseCasesIn    int            `json:"use_cases_planned"`
	Rules         int            `json:"rules"`
	RulesTested   int            `json:"rules_tested"`
	Gated         int            `json:"gated_tools"`
	GatedNamed    int            `json:"gated_tools_named"`
	Outcomes      map[string]int `json:"outcomes"`
	Kinds         map[string]int `json:"kinds"`
	UntestedRules []string       `json:"untested_rules,omitempty"`
	UnnamedGated  []string       `json:"unnamed_gated_tools,omitempty"`
}

// Measure computes a plan's coverage.
func (p *Plan) Measure(c *contract.Contract) Coverage {
	cv := Coverage{Cells: len(p.Cells), UseCases: len(c.UseCases), Rules: len(c.Rules),
		Outcomes: map[string]int{}, Kinds: map[string]int{}}
	cells, ucs, rules, named := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, b := range p.Buckets {
		if b.Want == 0 {
			continue
		}
		cells[b.Cell] = true
		ucs[b.UseCase] = true
		for _, r := range b.Spec.Rules {
			rules[r] = true
		}
		// Every tool a bucket's scenarios may call: its chain, the ways
		// it identifies callers, its lookups, an outbound call's tools for
		// a missed call and a call put off.
		sp := b.Spec
		if b.Outcome != "escalate" {
			sp.Handoff = "" // a hand-off only an escalation makes
		}
		for _, t := range specTools(sp) {
			named[t] = true
		}
		cv.Outcomes[b.Outcome] += b.Want
		cv.Kinds[b.Kind] += b.Want
	}
	for _, cell := range p.Cells {
		if cells[cell.ID()] {
			cv.CellsCovered++
		}
	}
	cv.UseCasesIn = len(ucs)
	for _, r := range c.Rules {
		if rules[r.ID] {
			cv.RulesTested++
		} else {
			cv.UntestedRules = append(cv.UntestedRules, r.ID)
		}
	}
	for _, t := range c.Tools {
		if len(t.Requires) == 0 {
			continue
		}
		cv.Gated++
		if named[t.Name] {
			cv.GatedNamed++
		} else {
			cv.UnnamedGated = append(cv.UnnamedGated, t.Name)
		}
	}
	sort.Strings(cv.UnnamedGated)
	return cv
}

// Check returns what makes a plan unusable: no bucket at all.
func (p *Plan) Check(c *contract.Contract) []string {
	if len(p.Buckets) == 0 {
		return []string{"no bucket: no use case has a tool that can be rehearsed on the world"}
	}
	return nil
}

// Shortfalls are the whole-plan checks the plan misses: cell coverage under
// 40%, a precondition-gated tool or a hard rule no bucket names, no success
// or no refusal dealt. A run goes on all the same (a contract is the user's,
// and a suite of what can be proved beats none); they are said where the
// user sees them (validate, the planner's log), and what no kept scenario
// reaches is in report.json and review.json.
func (p *Plan) Shortfalls(c *contract.Contract) []string {
	var out []string
	cv := p.Measure(c)
	if cv.Cells > 0 && cv.CellsCovered*100 < cv.Cells*40 {
		out = append(out, fmt.Sprintf("cell coverage %d of %d is under 40%%", cv.CellsCovered, cv.Cells))
	}
	// A tool a use case lists is unnamed because that use case has no
	// bucket (its own warning says why): asking to list it misleads.
	listedIn := map[string][]string{}
	for _, u := range c.UseCases {
		for _, t := range u.Tools {
			listedIn[t] = append(listedIn[t], u.ID)
		}
	}
	var unlisted, listed []string
	var ucs []string
	for _, t := range cv.UnnamedGated {
		if len(listedIn[t]) == 0 {
			unlisted = append(unlisted, t)
			continue
		}
		listed = append(listed, t)
		for _, u := range listedIn[t] {
			if !slices.Contains(ucs, u) {
				ucs = append(ucs, u)
			}
		}
	}
	if len(unlisted) > 0 {
		out = append(out, fmt.Sprintf("tools with requires that no use case's scenarios call, so no scenario tests them: %v (list them in a use case's tools)", unlisted))
	}
	if len(listed) > 0 {
		out = append(out, fmt.Sprintf("tools with requires that no scenario calls, so none tests them: %v; the use cases that list them have no bucket that calls them: %v (see why for each)", listed, ucs))
	}
	if len(cv.UntestedRules) > 0 {
		out = append(out, fmt.Sprintf("rules with a check that no case of the plan tests: %v", cv.UntestedRules))
	}
	out = append(out, p.offPurpose(c)...)
	for _, o := range []string{"succeed", "refuse"} {
		if cv.Outcomes[o] == 0 {
			out = append(out, fmt.Sprintf("no case expects %q", o))
		}
	}
	return out
}

// offPurpose says, for each outbound use case dealt calls the callee does
// not take or puts off, whose act takes no argument that names a record of
// its purpose table (its key, or a column of it that alone is unique and
// references what the argument names): the prover keeps no such scenario
// (tempting-off-purpose), since the tempting act must be about the record
// the call is about. The cure is the contract's: make purpose the table the
// act names.
func (p *Plan) offPurpose(c *contract.Contract) []string {
	var out []string
	seen := map[string]bool{}
	for _, b := range p.Buckets {
		a, sp := b.Spec.Answer, b.Spec
		if a == "" || a == scenario.RightPerson || sp.Purpose == "" || seen[b.UseCase] {
			continue
		}
		seen[b.UseCase] = true
		var named []string
		names := false
		for _, bd := range sp.Binds.For(sp.Tool) {
			if bd.Table == "" {
				continue
			}
			named = append(named, bd.Table)
			names = names || namesPurpose(c, sp.Purpose, bd.Table, bd.Column)
		}
		if names {
			continue
		}
		slices.Sort(named)
		named = slices.Compact(named)
		out = append(out, fmt.Sprintf("outbound use case %s: its act %s takes no argument that names a %s record (it names %v), so no call answered by someone else, a voicemail box or a callee who asks to be called later can be kept (tempting-off-purpose); make purpose the table the act names (docs/contract.md, purpose)", b.UseCase, sp.Tool, sp.Purpose, named))
	}
	return out
}

// namesPurpose reports whether a value of table.column names a row of
// purpose: it is purpose's own column, or purpose has a column that alone
// is unique (its key included) and references table.column.
func namesPurpose(c *contract.Contract, purpose, table, column string) bool {
	if table == purpose {
		return true
	}
	t := c.Table(purpose)
	if t == nil {
		return false
	}
	sets := t.Unique
	if len(t.PrimaryKey) == 1 {
		sets = append(sets, t.PrimaryKey)
	}
	for _, u := range sets {
		if len(u) != 1 {
			continue
		}
		if col := t.Column(u[0]); col != nil && col.References == table+"."+column {
			return true
		}
	}
	return false
}
