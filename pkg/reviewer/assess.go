package reviewer

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
)

// Kind is the kind of a finding.
type Kind string

// Finding kinds.
const (
	UseCaseMissing    Kind = "use-case-missing"    // no scenario covers a use case
	OrdinaryPathOnly  Kind = "ordinary-path-only"  // a use case is covered only on its ordinary path
	OutcomeMissing    Kind = "outcome-missing"     // no scenario expects an outcome
	RuleUntested      Kind = "rule-untested"       // report.json lists a hard rule as untested
	GatedToolUntested Kind = "gated-tool-untested" // a precondition-gated tool appears in no scenario
	CallerNames       Kind = "caller-names"        // too few distinct caller names
	PersonalitySkew   Kind = "personality-skew"    // one personality is too many of the callers
	Accents           Kind = "accents"             // too few distinct accents
	SameTest          Kind = "same-test"           // two scenarios test the same thing
	// SuccessMissing: scenarios of a use case are kept, yet none carries
	// its act out (its success buckets blocked, short, or never dealt).
	SuccessMissing Kind = "success-missing"
)

// Finding is one thing wrong with a suite.
type Finding struct {
	Kind    Kind   `json:"kind"`
	Subject string `json:"subject,omitempty"`
	Detail  string `json:"detail"`
}

// Review is the reviewer's reading of a suite.
type Review struct {
	Findings []Finding `json:"findings"`
	// Gaps are the buckets still short of their want and not blocked.
	Gaps []string `json:"gaps"`
}

// Thresholds of the persona findings.
const (
	minDistinctNames = 0.9  // share of callers with a name no other caller has
	maxPersonality   = 0.25 // share of callers one personality may be
	minAccents       = 4    // distinct accents
	personaMinSuite  = 8    // suites smaller than this are not judged on personality and accents
)

// Assess reviews a suite as a whole: what it covers of the contract, its
// callers, and scenarios that repeat each other, with the buckets still
// short of their want. Findings are sorted by kind, each kind in the order
// its subjects appear in the contract or the suite.
func Assess(c *contract.Contract, scs []scenario.Scenario, bs []ledger.Bucket) Review {
	r := Review{Gaps: gaps(bs)}
	r.Findings = append(r.Findings, coverage(c, scs)...)
	r.Findings = append(r.Findings, untested(c, scs, bs)...)
	r.Findings = append(r.Findings, successes(c, scs, bs)...)
	r.Findings = append(r.Findings, callers(scs)...)
	r.Findings = append(r.Findings, sameTests(scs)...)
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Kind < r.Findings[j].Kind })
	return r
}

func finding(kind Kind, subject, format string, a ...any) Finding {
	return Finding{kind, subject, fmt.Sprintf(format, a...)}
}

// gaps are the buckets still short of their want that are not blocked.
func gaps(bs []ledger.Bucket) []string {
	var out []string
	for _, b := range bs {
		if b.State != ledger.BucketBlocked && b.Done < b.Want {
			out = append(out, b.ID)
		}
	}
	return out
}

// coverage: use cases no scenario covers or covers only on its ordinary
// path, and outcomes no scenario expects. Every request of a conversation
// counts: a use case or an outcome its second request exercises is covered.
func coverage(c *contract.Contract, scs []scenario.Scenario) []Finding {
	kinds := map[string]map[string]int{}
	outcomes := map[string]int{}
	for i := range scs {
		for _, s := range scs[i].Requests() {
			if kinds[s.UseCase] == nil {
				kinds[s.UseCase] = map[string]int{}
			}
			kinds[s.UseCase][s.Kind]++
			outcomes[s.Expects]++
		}
	}
	var out []Finding
	for _, u := range c.UseCases {
		k := kinds[u.ID]
		switch {
		case len(k) == 0:
			out = append(out, finding(UseCaseMissing, u.ID, "no scenario covers use case %s", u.ID))
		case len(k) == 1 && k["happy"] > 0:
			out = append(out, finding(OrdinaryPathOnly, u.ID, "use case %s is covered only on its ordinary path", u.ID))
		}
	}
	for _, o := range scenario.Outcomes {
		if outcomes[o] == 0 {
			out = append(out, finding(OutcomeMissing, o, "no scenario expects %s", o))
		}
	}
	return out
}

// successes: use cases some kept scenario covers yet none carries out,
// whether the plan dealt them successes or not, with why: every success
// bucket blocked (the first one's reason), success buckets still short, or
// none dealt. A use case kept only as refusals and asks reads as covered,
// yet nothing in the suite tests its act being done; the reason (a rule's
// check every reference breaks, say) is usually the contract's to mend. A
// use case no scenario covers is use-case-missing instead.
func successes(c *contract.Contract, scs []scenario.Scenario, bs []ledger.Bucket) []Finding {
	kept, covered := map[string]bool{}, map[string]bool{}
	for i := range scs {
		for _, s := range scs[i].Requests() {
			covered[s.UseCase] = true
			if s.Expects == scenario.OutcomeSucceed {
				kept[s.UseCase] = true
			}
		}
	}
	blocked, open, why := map[string]int{}, map[string]int{}, map[string]string{}
	for _, b := range bs {
		if b.Outcome != scenario.OutcomeSucceed || b.Want == 0 {
			continue
		}
		if b.State != ledger.BucketBlocked {
			open[b.UseCase]++
			continue
		}
		blocked[b.UseCase]++
		if why[b.UseCase] == "" {
			why[b.UseCase] = b.Notes
		}
	}
	var out []Finding
	for _, u := range c.UseCases {
		if kept[u.ID] || !covered[u.ID] {
			continue
		}
		switch n, o := blocked[u.ID], open[u.ID]; {
		case o > 0:
			out = append(out, finding(SuccessMissing, u.ID, "no kept scenario of use case %s carries its act out: %d success bucket(s) kept none and are not blocked, %d blocked", u.ID, o, n))
		case n > 0:
			out = append(out, finding(SuccessMissing, u.ID, "no kept scenario of use case %s carries its act out: its %d success bucket(s) were blocked (%s)", u.ID, n, cmp.Or(why[u.ID], "no reason recorded")))
		default:
			out = append(out, finding(SuccessMissing, u.ID, "no kept scenario of use case %s carries its act out: the plan dealt it no success (report.json coverage.planned.refusals_only says why when it knew)", u.ID))
		}
	}
	return out
}

// untested: hard rules report.json lists as untested (suite.RuleCoverage,
// so the two never disagree), with its why, and gated tools no request's
// solution or tempting calls name.
func untested(c *contract.Contract, scs []scenario.Scenario, bs []ledger.Bucket) []Finding {
	named := map[string]bool{}
	for i := range scs {
		for _, s := range scs[i].Requests() {
			for _, call := range s.Solution {
				named[call.Tool] = true
			}
			for _, call := range s.Tempting {
				named[call.Tool] = true
			}
		}
	}
	why := map[string]string{}
	for _, n := range suite.RuleCoverage(c, scs, bs, nil).Untested {
		why[n.Rule] = n.Why
	}
	var out []Finding
	for _, rl := range c.Rules {
		if w, ok := why[rl.ID]; ok {
			out = append(out, finding(RuleUntested, rl.ID, "hard rule %s is tested by no kept scenario: %s", rl.ID, w))
		}
	}
	for _, t := range c.Tools {
		if len(t.Requires) > 0 && !named[t.Name] {
			out = append(out, finding(GatedToolUntested, t.Name, "precondition-gated tool %s appears in no scenario", t.Name))
		}
	}
	return out
}

// callers: names that repeat, one personality over its share, too few
// accents.
func callers(scs []scenario.Scenario) []Finding {
	if len(scs) == 0 {
		return nil
	}
	names, pers, accents := map[string]int{}, map[string]int{}, map[string]int{}
	for _, s := range scs {
		names[s.Persona.Name]++
		pers[s.Persona.Personality]++
		accents[s.Persona.Accent]++
	}
	var out []Finding
	if share := float64(len(names)) / float64(len(scs)); share < minDistinctNames {
		out = append(out, finding(CallerNames, "", "only %.0f%% of caller names are distinct (want 90%%)", share*100))
	}
	top, n := "", 0
	for p, k := range pers {
		if k > n || (k == n && p < top) {
			top, n = p, k
		}
	}
	if len(scs) >= personaMinSuite && float64(n)/float64(len(scs)) > maxPersonality {
		out = append(out, finding(PersonalitySkew, top, "%q is %.0f%% of callers (want at most 25%%)", top, 100*float64(n)/float64(len(scs))))
	}
	if len(scs) >= personaMinSuite && len(accents) < minAccents {
		out = append(out, finding(Accents, "", "only %d distinct accents", len(accents)))
	}
	return out
}

// sameTests: a scenario with the caller and, request by request, the use
// case, outcome and solution tools of an earlier one tests the same thing.
func sameTests(scs []scenario.Scenario) []Finding {
	var out []Finding
	seen := map[string]string{}
	for i := range scs {
		s := &scs[i]
		var parts []string
		for _, r := range s.Requests() {
			tools := make([]string, len(r.Solution))
			for i, call := range r.Solution {
				tools[i] = call.Tool
			}
			parts = append(parts, r.UseCase+"|"+r.Expects+"|"+strings.Join(tools, ","))
		}
		key := s.Persona.Name + "|" + strings.Join(parts, "||")
		if other, ok := seen[key]; ok {
			out = append(out, finding(SameTest, s.Name, "%s tests the same thing as %s", s.Name, other))
		}
		seen[key] = s.Name
	}
	return out
}
