package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// SubGoalInfo is one entry of catalogue.json.
type SubGoalInfo struct {
	Name   string            `json:"name"`
	What   string            `json:"what"`
	Judged bool              `json:"judged"`
	Params map[string]string `json:"params"`
	File   string            `json:"file,omitempty"`
	// Origin is where the entry comes from: "contract", "run" (added by a
	// writer during the run) or "builtin".
	Origin string `json:"origin"`
	// Source is the Starlark of a sub-goal added during the run, so that
	// `suitegen prove --catalogue` can prove a scenario that names it.
	Source string `json:"source,omitempty"`
}

// ReportExtra is what the caller knows that the ledger does not: the
// planner's whole-plan numbers, the built-in sub-goals and faults to report.
type ReportExtra struct {
	// Cells is the number of cells in the grid; 0 counts the distinct cells of
	// the run's buckets.
	Cells int
	// Rules lists every hard rule id; RulesNamed those some bucket names
	// (an intention: the rules kept scenarios test are read from them).
	Rules, RulesNamed []string
	// GatedTools lists every precondition-gated tool; GatedToolsNamed those
	// some bucket names.
	GatedTools, GatedToolsNamed []string
	// Unplanned are the use cases the plan could not give a bucket, with
	// why, and RefusalsOnly those planned with refusals only.
	Unplanned, RefusalsOnly []UseCaseNote
	// HandlerCrashes are the places in the handlers' code that crashed on
	// calls the plan rehearsed.
	HandlerCrashes []HandlerCrash
	// BuiltinSubGoals join the catalogue after the contract's and the run's.
	BuiltinSubGoals []SubGoalInfo
	// Faults are copied into the report (e.g. "crashes": "3 handler crashes").
	Faults map[string]string
	// Reach, when set, says which refusal branches of the handlers the
	// kept scenarios reach (Coverage.HandlerBranches).
	Reach Reacher
}

// Reacher says which refusal branches of the handlers kept scenarios reach,
// taking them a page at a time (adequacy.Reached): Write holds no more of a
// suite than a page.
type Reacher interface {
	// Reach adds a page of kept scenarios.
	Reach(ctx context.Context, page []scenario.Scenario) error
	// Branches is what the pages added reach.
	Branches() *HandlerBranches
}

// HandlerBranches is how many of the handlers' refusal branches (each if
// arm whose block refuses, read from the syntax tree) the kept scenarios'
// tempting acts refuse at when the handlers run, in all and by class: rule
// branches, existence guards (reached only when a database read finds
// nothing, which no kept refusal rests on when a named record is missing)
// and argument checks (reached only by a malformed call).
type HandlerBranches struct {
	Covered         int          `json:"covered"`
	Total           int          `json:"total"`
	RuleBranches    BranchCount  `json:"rule_branches"`
	ExistenceGuards BranchCount  `json:"existence_guards"`
	ArgumentChecks  BranchCount  `json:"argument_checks"`
	Uncovered       []BranchNote `json:"uncovered"`
}

// BranchCount is how many branches of a class the kept scenarios reach,
// of how many.
type BranchCount struct {
	Covered int `json:"covered"`
	Total   int `json:"total"`
}

// BranchNote is a refusal branch (file:line), its class ("rule" or
// "existence-guard") and why no kept scenario reaches it.
type BranchNote struct {
	At    string `json:"at"`
	Class string `json:"class"`
	Why   string `json:"why"`
}

// Report is report.json.
type Report struct {
	Run       string    `json:"run"`
	Agent     string    `json:"agent"`
	State     string    `json:"state"`
	Asked     int       `json:"asked"`
	Count     int       `json:"count"`
	Coverage  Coverage  `json:"coverage"`
	Diversity Diversity `json:"diversity"`
	// Outbound is who answered the calls of outbound use cases (absent
	// when the suite has none).
	Outbound   *Outbound                 `json:"outbound,omitempty"`
	Refusals   map[string]map[string]int `json:"refusals"` // gate -> code -> n
	Blocked    []Blocked                 `json:"blocked"`
	Spend      Spend                     `json:"spend"`
	Provenance Provenance                `json:"provenance"`
	Faults     map[string]string         `json:"faults"`
	// Refreshed are the runs over the written suite that changed it since
	// (run --update, run --into, revise), oldest first: the report is then
	// the suite's as it now is (Restate).
	Refreshed []Refreshed `json:"refreshed,omitempty"`
}

// Refreshed is one run over a written suite: its mode (update, into or
// revise) and its run ("" when it wrote nothing).
type Refreshed struct {
	Mode string `json:"mode"`
	Run  string `json:"run,omitempty"`
}

// Coverage is how much of the plan the suite covers.
type Coverage struct {
	CellsCovered    int            `json:"cells_covered"`
	Cells           int            `json:"cells"`
	UseCasesPresent int            `json:"use_cases_present"`
	UseCases        int            `json:"use_cases"`
	MissingUseCases []string       `json:"missing_use_cases"`
	Outcomes        map[string]int `json:"outcomes"`
	Kinds           map[string]int `json:"kinds"`
	// MultiRequest counts the scenarios whose conversation carries several
	// requests (then); Requests counts every request of the suite, first
	// requests included (absent when no scenario has more than one). Use
	// cases, outcomes, rules and gated tools are read from every request
	// (outcomes then sum to Requests, not to the scenarios); kinds, the
	// conversation's, from each scenario.
	MultiRequest int `json:"multi_request,omitempty"`
	Requests     int `json:"requests,omitempty"`
	// RulesTested are the hard rules some kept scenario tests (the rules of
	// its bucket and its own): a rule with a check only where the scenario
	// lists that check among its sub-goals. RulesJudged are rules kept
	// scenarios name in their own rules that no check proves (graded later
	// by judgement);
	// RulesUntested every rule not tested, with why. GatedToolsNamed the
	// precondition-gated tools some kept scenario calls (in its solution or
	// its tempting calls).
	RulesTested   []string   `json:"rules_tested"`
	RulesJudged   []string   `json:"rules_judged"`
	RulesUntested []RuleNote `json:"rules_untested"`
	Rules         int        `json:"rules"`
	// HandlerBranches: the refusal branches the kept scenarios reach
	// (absent when not measured).
	HandlerBranches *HandlerBranches `json:"handler_branches,omitempty"`
	GatedToolsNamed []string         `json:"gated_tools_named"`
	GatedTools      int              `json:"gated_tools"`
	// Planned is what the plan meant to cover, whether or not the suite
	// has it.
	Planned Planned `json:"planned"`
}

// RuleNote is a rule and why no kept scenario tests it.
type RuleNote struct {
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

// Planned is the plan's intentions: the rules its buckets name (by the
// words a rule shares with a bucket's tools, else spread over adversarial
// buckets: an intention, not a test, so it is not called tested;
// Coverage.RulesTested says what kept scenarios test), the gated tools
// they name, and the use cases it could not plan (or only with refusals),
// with why.
type Planned struct {
	RulesNamed      []string      `json:"rules_named"`
	GatedToolsNamed []string      `json:"gated_tools_named"`
	Unplanned       []UseCaseNote `json:"unplanned,omitempty"`
	RefusalsOnly    []UseCaseNote `json:"refusals_only,omitempty"`
	// HandlerCrashes: a crash hides the branch behind it from the plan,
	// so a rule there may go untested.
	HandlerCrashes []HandlerCrash `json:"handler_crashes,omitempty"`
}

// HandlerCrash is a place in a handler's code that crashed on calls the
// plan rehearsed with arguments the tool's params accept.
type HandlerCrash struct {
	Tool   string `json:"tool"`
	At     string `json:"at"` // file:line:column in the contract
	Reason string `json:"reason"`
	Calls  int    `json:"calls"` // how many different rehearsals crashed there
}

// UseCaseNote is a use case and why the plan could not serve it fully.
type UseCaseNote struct {
	UseCase string `json:"use_case"`
	Reason  string `json:"reason"`
}

// Diversity is how different the callers are.
type Diversity struct {
	// DistinctCallerNames counts the callers' names; CallerNameShare is
	// that count over the scenarios (1 when no two callers share a name).
	DistinctCallerNames   int     `json:"distinct_caller_names"`
	CallerNameShare       float64 `json:"caller_name_share"`
	TopPersonality        string  `json:"top_personality"`
	TopPersonalityShare   float64 `json:"top_personality_share"`
	DistinctAccents       int     `json:"distinct_accents"`
	DistinctLocations     int     `json:"distinct_locations"`
	DistinctPersonalities int     `json:"distinct_personalities"`
	// Phone is the spread of the phone-line fields (absent when no
	// scenario has one).
	Phone *PhoneSpread `json:"phone,omitempty"`
}

// PhoneSpread counts the scenarios at each value of a phone-line persona
// field: how the line sounds, what is heard around the person, how they give
// names and codes, and how many speak over the agent.
type PhoneSpread struct {
	Scenarios       int            `json:"scenarios"`
	LineQuality     map[string]int `json:"line_quality"`
	BackgroundNoise map[string]int `json:"background_noise"`
	Spelling        map[string]int `json:"spelling"`
	TalksOver       int            `json:"talks_over"`
}

// Outbound counts who answered the scenarios of outbound use cases, in all
// and per use case; Missing names each outbound use case and answer its plan
// deals that the suite has no scenario of ("use-case/answer").
type Outbound struct {
	Scenarios  int                       `json:"scenarios"`
	AnsweredBy map[string]int            `json:"answered_by"`
	ByUseCase  map[string]map[string]int `json:"by_use_case"`
	Missing    []string                  `json:"missing"`
}

// Blocked is a bucket that could not be filled, with the reason: blocked
// after its attempts, or left short when the run ended.
type Blocked struct {
	Bucket   string `json:"bucket"`
	Cell     string `json:"cell"`
	UseCase  string `json:"use_case"`
	Angle    string `json:"angle"`
	Done     int    `json:"done"`
	Want     int    `json:"want"`
	Attempts int    `json:"attempts"`
	Reason   string `json:"reason"`
	// Refusal is the bucket's most frequent refusal, with an example; nil
	// when nothing was ever refused (the slice died, or nothing was sent).
	Refusal *ledger.BucketRefusal `json:"refusal,omitempty"`
}

// Spend is the run's meter: tokens as the provider counted them (cached
// prompt tokens are inside prompt, reasoning tokens inside completion) and
// dollars at the model's price.
type Spend struct {
	PromptTokens       int64 `json:"prompt_tokens"`
	CompletionTokens   int64 `json:"completion_tokens"`
	CachedPromptTokens int64 `json:"cached_prompt_tokens"`
	ReasoningTokens    int64 `json:"reasoning_tokens"`
	PerScenarioKept    int64 `json:"per_scenario_kept"`    // all tokens / scenarios kept
	PerScenarioRefused int64 `json:"per_scenario_refused"` // all tokens / gate refusals
	// Prompt and completion tokens per kept scenario, apart.
	PromptPerKept     int64 `json:"prompt_per_kept"`
	CompletionPerKept int64 `json:"completion_per_kept"`
	// CostUSD is what the calls cost at the model's price; Priced is false
	// when some calls had no known price (their tokens are not in CostUSD).
	CostUSD        float64 `json:"cost_usd"`
	CostPerKeptUSD float64 `json:"cost_per_kept_usd"`
	// CachedShare is the share of prompt tokens the provider served from its
	// prompt cache (billed at the cached price).
	CachedShare  float64 `json:"cached_share"`
	Priced       bool    `json:"priced"`
	BudgetTokens int64   `json:"budget_tokens,omitempty"`
	BudgetUSD    float64 `json:"budget_usd,omitempty"`
}

// Provenance says what the suite was made from.
type Provenance struct {
	ContractSHA256 string `json:"contract_sha256"`
	WorldSHA256    string `json:"world_sha256"`
	Model          string `json:"model"`
	Seed           int64  `json:"seed"`
}

// Index is index.json.
type Index struct {
	Run   string `json:"run"`
	Agent string `json:"agent"`
	// ContractSHA256 is the content hash of the contract the suite was
	// written for (contract.HashFiles over its files, sorted by path); a
	// suite written before it was recorded has none (ContractUnknown).
	ContractSHA256 string `json:"contract_sha256,omitempty"`
	// NextIndex is one past the last suite-wide scenario index (which deals
	// callers and minted codes) the runs that wrote the suite dealt, top-ups
	// included: a run over the suite (run --update, run --into, revise)
	// deals its new cases from it, so they mint no code the suite holds. A
	// suite written before it was recorded has 0.
	NextIndex int          `json:"next_index,omitempty"`
	Count     int          `json:"count"`
	Scenarios []IndexEntry `json:"scenarios"`
}

// NextIndex is one past the last suite-wide index the buckets were dealt:
// the plan's and every top-up's.
func NextIndex(bs []ledger.Bucket) int {
	next := 0
	for _, b := range bs {
		next = max(next, b.Spec.End(b.Want))
	}
	return next
}

// ContractUnknown is what Index.Contract says of a suite that records no
// contract hash.
const ContractUnknown = "unknown"

// Contract is the recorded contract hash, or ContractUnknown.
func (x Index) Contract() string {
	if x.ContractSHA256 == "" {
		return ContractUnknown
	}
	return x.ContractSHA256
}

// IndexEntry names one scenario of the suite.
type IndexEntry struct {
	Name    string `json:"name"`
	UseCase string `json:"use_case"`
	Branch  string `json:"branch"`
	Bucket  string `json:"bucket"`
}

// safeName is what may become a folder name under scenarios/.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// Ledger is what Write reads of a run from the ledger (*ledger.Store).
type Ledger interface {
	Run(ctx context.Context, id string) (ledger.Run, error)
	// ScenariosAfter is a page of the run's scenarios in the suite's order,
	// from the one after the scenario named after ("" from the first).
	ScenariosAfter(ctx context.Context, run, after string, n int) ([]scenario.Scenario, error)
	Buckets(ctx context.Context, run string) ([]ledger.Bucket, error)
	SubGoals(ctx context.Context, run string) ([]ledger.SubGoal, error)
	Refusals(ctx context.Context, run string) (map[string]int, error)
	BucketRefusals(ctx context.Context, run string) (map[string]ledger.BucketRefusal, error)
	Meter(ctx context.Context, run string) (ledger.Meter, error)
}

// pageSize is how many scenarios Write holds whole at once.
var pageSize = 256

// Write writes the run's outputs under out from the ledger. c may be nil
// (no contract catalogue; use cases are then counted from the buckets).
// Scenarios whose names cannot be folder names are left out and reported as a
// fault rather than written outside scenarios/.
//
// It reads the suite a page at a time: each page's files are written and
// measured (extra.Reach) before the next is read, and only each scenario's
// Digest stays, so a suite of any size is written in memory that does not
// grow with its scenarios' bodies. kept are those digests, in the suite's
// order.
func Write(ctx context.Context, store Ledger, run string, c *contract.Contract, out string, extra ReportExtra) (rep Report, kept []scenario.Scenario, err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("suite: write %s: %w", run, err)
		}
	}()
	r, err := store.Run(ctx, run)
	if err != nil {
		return Report{}, nil, err
	}
	buckets, err := store.Buckets(ctx, run)
	if err != nil {
		return Report{}, nil, err
	}
	runGoals, err := store.SubGoals(ctx, run)
	if err != nil {
		return Report{}, nil, err
	}
	refusals, err := store.Refusals(ctx, run)
	if err != nil {
		return Report{}, nil, err
	}
	top, err := store.BucketRefusals(ctx, run)
	if err != nil {
		return Report{}, nil, err
	}
	meter, err := store.Meter(ctx, run)
	if err != nil {
		return Report{}, nil, err
	}
	if err := os.MkdirAll(filepath.Join(out, "scenarios"), 0o755); err != nil {
		return Report{}, nil, err
	}

	idx := Index{Run: r.ID, Agent: r.Agent, ContractSHA256: r.ContractSHA256, NextIndex: NextIndex(buckets),
		Scenarios: []IndexEntry{}}
	names := map[string]bool{}
	var unsafe []string
	for after := ""; ; {
		if err := ctx.Err(); err != nil {
			return Report{}, nil, err
		}
		page, err := store.ScenariosAfter(ctx, run, after, pageSize)
		if err != nil {
			return Report{}, nil, err
		}
		if len(page) == 0 {
			break
		}
		after = page[len(page)-1].Name
		safe := page[:0]
		for i := range page {
			sc := &page[i]
			if !safeName.MatchString(sc.Name) {
				unsafe = append(unsafe, fmt.Sprintf("%q", sc.Name))
				continue
			}
			if err := writeScenario(out, sc); err != nil {
				return Report{}, nil, err
			}
			names[sc.Name] = true
			idx.Scenarios = append(idx.Scenarios, IndexEntry{Name: sc.Name, UseCase: sc.UseCase, Branch: sc.Branch, Bucket: sc.Bucket})
			kept = append(kept, Digest(sc))
			safe = append(safe, *sc)
		}
		if extra.Reach != nil {
			if err := extra.Reach.Reach(ctx, safe); err != nil {
				return Report{}, nil, fmt.Errorf("handler branches: %w", err)
			}
		}
		if len(page) < pageSize {
			break
		}
	}
	idx.Count = len(kept)
	if err := removeStale(filepath.Join(out, "scenarios"), names); err != nil {
		return Report{}, nil, err
	}
	if err := WriteJSON(filepath.Join(out, "index.json"), idx); err != nil {
		return Report{}, nil, err
	}
	if err := WriteJSON(filepath.Join(out, "catalogue.json"), catalogue(c, runGoals, extra.BuiltinSubGoals)); err != nil {
		return Report{}, nil, err
	}

	reach := extra.Reach
	extra.Reach = nil // every page is measured already
	rep, err = Summarize(ctx, c, kept, Account{Run: r, Buckets: buckets, Refusals: refusals, Top: top, Meter: meter}, extra)
	if err != nil {
		return Report{}, nil, err
	}
	if reach != nil {
		rep.Coverage.HandlerBranches = reach.Branches()
	}
	if len(unsafe) > 0 {
		rep.Faults["unsafe_scenario_names"] = strings.Join(unsafe, ", ")
	}
	if err := WriteJSON(filepath.Join(out, "report.json"), rep); err != nil {
		return Report{}, nil, err
	}
	return rep, kept, nil
}

// Digest is sc cut to what a suite's report and review read of it (its
// names, outcome, bucket, caller, who answered, sub-goal names, rules and
// the tools of its calls, request by request), so a suite's worth of them
// is small: Write keeps these, not whole scenarios.
func Digest(sc *scenario.Scenario) scenario.Scenario {
	d := scenario.Scenario{Name: sc.Name, UseCase: sc.UseCase, Branch: sc.Branch, Kind: sc.Kind, Expects: sc.Expects,
		Bucket: sc.Bucket, Persona: sc.Persona, SubGoals: goalNames(sc.SubGoals), Rules: sc.Rules,
		Solution: toolsOnly(sc.Solution), Tempting: toolsOnly(sc.Tempting)}
	if sc.Outbound != nil {
		d.Outbound = &scenario.Outbound{Purpose: sc.Outbound.Purpose, AnsweredBy: sc.Outbound.AnsweredBy}
	}
	for _, r := range sc.Then {
		d.Then = append(d.Then, scenario.Request{UseCase: r.UseCase, Branch: r.Branch, Expects: r.Expects,
			Solution: toolsOnly(r.Solution), Tempting: toolsOnly(r.Tempting), SubGoals: goalNames(r.SubGoals), Rules: r.Rules})
	}
	return d
}

func toolsOnly(calls []scenario.Call) []scenario.Call {
	out := make([]scenario.Call, len(calls))
	for i, c := range calls {
		out[i].Tool = c.Tool
	}
	return out
}

func goalNames(gs []scenario.SubGoalRef) []scenario.SubGoalRef {
	out := make([]scenario.SubGoalRef, len(gs))
	for i, g := range gs {
		out[i] = scenario.SubGoalRef{Name: g.Name, Judged: g.Judged}
	}
	return out
}

// Account is what the ledger counted of a run beyond its scenarios.
type Account struct {
	Run      ledger.Run
	Buckets  []ledger.Bucket
	Refusals map[string]int // "gate/code" -> n
	Top      map[string]ledger.BucketRefusal
	Meter    ledger.Meter
}

// Summarize is report.json of the scenarios kept, with what the ledger
// counted of the run that wrote them (a) and what the caller knows beyond
// it (extra). Each scenario counts in the bucket of a.Buckets its Bucket
// names.
func Summarize(ctx context.Context, c *contract.Contract, kept []scenario.Scenario, a Account, extra ReportExtra) (Report, error) {
	r := a.Run
	faults := map[string]string{}
	for k, v := range extra.Faults {
		faults[k] = v
	}
	rep := Report{
		Run: r.ID, Agent: r.Agent, State: string(r.State), Asked: r.Asked, Count: len(kept),
		Coverage:   coverage(c, kept, a.Buckets, extra),
		Diversity:  diversity(kept),
		Outbound:   outbound(c, kept),
		Refusals:   byGate(a.Refusals),
		Blocked:    blocked(a.Buckets, a.Top, r.State.Final()),
		Spend:      spend(a.Meter, r, len(kept), a.Refusals),
		Provenance: Provenance{ContractSHA256: r.ContractSHA256, WorldSHA256: r.WorldSHA256, Model: r.Model, Seed: r.Seed},
		Faults:     faults,
	}
	if extra.Reach != nil {
		if err := extra.Reach.Reach(ctx, kept); err != nil {
			return Report{}, fmt.Errorf("handler branches: %w", err)
		}
		rep.Coverage.HandlerBranches = extra.Reach.Branches()
	}
	return rep, nil
}

// Encode is v as suitegen saves JSON (a scenario's file, and every other
// JSON file or export it writes): 2-space indented, HTML characters
// unescaped, trailing newline.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON replaces path with v as indented JSON (HTML characters as they
// are, a newline at the end), atomically as writeFile does: a reader never
// sees half a file, and an unchanged file keeps its modification time. Every
// JSON file suitegen writes goes through it.
func WriteJSON(path string, v any) error {
	b, err := Encode(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return writeFile(path, b)
}

// writeFile replaces path atomically (temp file in the same folder, then
// rename), and leaves an identical file alone so unchanged scenarios keep
// their modification times.
func writeFile(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// removeStale deletes scenario folders the ledger does not name.
func removeStale(dir string, keep map[string]bool) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if keep[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func catalogue(c *contract.Contract, run []ledger.SubGoal, builtin []SubGoalInfo) []SubGoalInfo {
	out := []SubGoalInfo{}
	seen := map[string]bool{}
	add := func(g SubGoalInfo) {
		if seen[g.Name] {
			return
		}
		seen[g.Name] = true
		if g.Params == nil {
			g.Params = map[string]string{}
		}
		out = append(out, g)
	}
	if c != nil {
		for _, g := range c.SubGoals {
			add(SubGoalInfo{Name: g.Name, What: g.What, Judged: g.Judged, Params: g.Params, File: g.File, Origin: "contract"})
		}
	}
	for _, g := range run {
		add(SubGoalInfo{Name: g.Name, What: g.What, Judged: g.Judged, Params: g.Params, Origin: "run", Source: g.Source})
	}
	for _, g := range builtin {
		g.Origin = "builtin"
		add(g)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func coverage(c *contract.Contract, scs []scenario.Scenario, buckets []ledger.Bucket, extra ReportExtra) Coverage {
	cv := Coverage{Outcomes: map[string]int{}, Kinds: map[string]int{}, MissingUseCases: []string{},
		Rules: len(sortedSet(extra.Rules)), GatedTools: len(sortedSet(extra.GatedTools)),
		Planned: Planned{RulesNamed: sortedSet(extra.RulesNamed), GatedToolsNamed: sortedSet(extra.GatedToolsNamed),
			Unplanned: extra.Unplanned, RefusalsOnly: extra.RefusalsOnly, HandlerCrashes: extra.HandlerCrashes}}
	rc := RuleCoverage(c, scs, buckets, extra.Rules)
	cv.RulesTested, cv.RulesJudged, cv.RulesUntested = rc.Tested, rc.Judged, rc.Untested
	gated := map[string]bool{}
	for _, t := range extra.GatedTools {
		gated[t] = true
	}
	present := map[string]bool{}
	var named []string
	for i := range scs {
		sc := &scs[i]
		cv.Kinds[sc.Kind]++
		if len(sc.Then) > 0 {
			cv.MultiRequest++
		}
		cv.Requests += 1 + len(sc.Then)
		// Every request counts: a use case, an outcome or a gated tool that
		// a later request exercises is exercised.
		for _, r := range sc.Requests() {
			present[r.UseCase] = true
			cv.Outcomes[r.Expects]++
			for _, call := range append(append([]scenario.Call{}, r.Solution...), r.Tempting...) {
				if gated[call.Tool] {
					named = append(named, call.Tool)
				}
			}
		}
	}
	cv.GatedToolsNamed = sortedSet(named)
	cells, covered := map[string]bool{}, map[string]bool{}
	for _, b := range buckets {
		cells[b.Cell] = true
		if b.Done > 0 {
			covered[b.Cell] = true
		}
	}
	cv.Cells, cv.CellsCovered = len(cells), len(covered)
	if extra.Cells > 0 {
		cv.Cells = extra.Cells
	}
	var all []string
	if c != nil && len(c.UseCases) > 0 {
		for _, u := range c.UseCases {
			all = append(all, u.ID)
		}
	} else {
		for _, b := range buckets {
			all = append(all, b.UseCase)
		}
	}
	all = sortedSet(all)
	cv.UseCases = len(all)
	for _, u := range all {
		if present[u] {
			cv.UseCasesPresent++
		} else {
			cv.MissingUseCases = append(cv.MissingUseCases, u)
		}
	}
	if cv.Rules < len(cv.RulesTested) {
		cv.Rules = len(cv.RulesTested)
	}
	if cv.GatedTools < len(cv.GatedToolsNamed) {
		cv.GatedTools = len(cv.GatedToolsNamed)
	}
	if cv.MultiRequest == 0 {
		cv.Requests = 0
	}
	return cv
}

func diversity(scs []scenario.Scenario) Diversity {
	var d Diversity
	if len(scs) == 0 {
		return d
	}
	names, accents, locations, personalities := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]int{}
	for _, sc := range scs {
		p := sc.Persona
		names[strings.ToLower(strings.TrimSpace(p.Name))] = true
		if p.Accent != "" {
			accents[p.Accent] = true
		}
		if p.Location != "" {
			locations[p.Location] = true
		}
		if p.Personality != "" {
			personalities[p.Personality]++
		}
	}
	d.DistinctCallerNames, d.CallerNameShare = len(names), share(len(names), len(scs))
	d.DistinctAccents, d.DistinctLocations, d.DistinctPersonalities = len(accents), len(locations), len(personalities)
	top, n := "", 0
	for k, v := range personalities {
		if v > n || (v == n && k < top) {
			top, n = k, v
		}
	}
	d.TopPersonality, d.TopPersonalityShare = top, share(n, len(scs))
	d.Phone = phoneSpread(scs)
	return d
}

func phoneSpread(scs []scenario.Scenario) *PhoneSpread {
	ps := &PhoneSpread{LineQuality: map[string]int{}, BackgroundNoise: map[string]int{}, Spelling: map[string]int{}}
	for _, sc := range scs {
		p := sc.Persona
		if p.LineQuality == "" && p.BackgroundNoise == "" && p.Spelling == "" && !p.TalksOver {
			continue
		}
		ps.Scenarios++
		for _, f := range []struct {
			m map[string]int
			v string
		}{{ps.LineQuality, p.LineQuality}, {ps.BackgroundNoise, p.BackgroundNoise}, {ps.Spelling, p.Spelling}} {
			if f.v != "" {
				f.m[f.v]++
			}
		}
		if p.TalksOver {
			ps.TalksOver++
		}
	}
	if ps.Scenarios == 0 {
		return nil
	}
	return ps
}

// outbound counts who answered each outbound scenario. The answers a use
// case must show are the four when it names a call_later tool, else the
// three others.
func outbound(c *contract.Contract, scs []scenario.Scenario) *Outbound {
	o := &Outbound{AnsweredBy: map[string]int{}, ByUseCase: map[string]map[string]int{}, Missing: []string{}}
	for _, sc := range scs {
		if sc.Outbound == nil {
			continue
		}
		o.Scenarios++
		a := string(sc.Outbound.AnsweredBy)
		o.AnsweredBy[a]++
		if o.ByUseCase[sc.UseCase] == nil {
			o.ByUseCase[sc.UseCase] = map[string]int{}
		}
		o.ByUseCase[sc.UseCase][a]++
	}
	has := o.Scenarios > 0
	if c != nil {
		for _, u := range c.UseCases {
			if !u.Outbound() {
				continue
			}
			has = true
			for _, a := range scenario.Answers {
				if a == scenario.CallLater && u.CallLater == "" {
					continue
				}
				if o.ByUseCase[u.ID][string(a)] == 0 {
					o.Missing = append(o.Missing, u.ID+"/"+string(a))
				}
			}
		}
	}
	if !has {
		return nil
	}
	return o
}

// share rounds to 4 places so the report does not print float noise.
func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(int64(float64(n)/float64(of)*10000+0.5)) / 10000
}

func byGate(refusals map[string]int) map[string]map[string]int {
	out := map[string]map[string]int{}
	for k, n := range refusals {
		gate, code, ok := strings.Cut(k, "/")
		if !ok {
			gate, code = k, ""
		}
		if out[gate] == nil {
			out[gate] = map[string]int{}
		}
		out[gate][code] += n
	}
	return out
}

// blocked lists the blocked buckets and, once the run is over, every other
// bucket it left below its want: a short suite always names its buckets.
func blocked(buckets []ledger.Bucket, top map[string]ledger.BucketRefusal, over bool) []Blocked {
	out := []Blocked{}
	for _, b := range buckets {
		if b.State == ledger.BucketBlocked || over && b.Done < b.Want {
			bl := Blocked{Bucket: b.ID, Cell: b.Cell, UseCase: b.UseCase, Angle: b.Angle, Done: b.Done, Want: b.Want, Attempts: b.Attempts, Reason: b.Notes}
			if b.State != ledger.BucketBlocked && bl.Reason == "" {
				bl.Reason = fmt.Sprintf("%d of %d written when the run's rounds ran out (%d attempts)", b.Done, b.Want, b.Attempts)
			}
			if r, ok := top[b.ID]; ok {
				bl.Refusal = &r
			}
			out = append(out, bl)
		}
	}
	return out
}

func spend(m ledger.Meter, r ledger.Run, kept int, refusals map[string]int) Spend {
	s := Spend{PromptTokens: m.PromptTokens, CompletionTokens: m.CompletionTokens, CachedPromptTokens: m.CachedPromptTokens,
		ReasoningTokens: m.ReasoningTokens, CostUSD: m.CostUSD, Priced: m.UnpricedCalls == 0 && m.Calls > 0,
		BudgetTokens: r.BudgetTokens, BudgetUSD: r.BudgetUSD}
	total := m.Tokens()
	if m.PromptTokens > 0 {
		s.CachedShare = float64(m.CachedPromptTokens) / float64(m.PromptTokens)
	}
	if kept > 0 {
		s.PerScenarioKept = total / int64(kept)
		s.PromptPerKept = m.PromptTokens / int64(kept)
		s.CompletionPerKept = m.CompletionTokens / int64(kept)
		s.CostPerKeptUSD = m.CostUSD / float64(kept)
	}
	refused := 0
	for _, n := range refusals {
		refused += n
	}
	if refused > 0 {
		s.PerScenarioRefused = total / int64(refused)
	}
	return s
}

func sortedSet(xs []string) []string {
	m := map[string]bool{}
	out := []string{}
	for _, x := range xs {
		if x != "" && !m[x] {
			m[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Rules is which hard rules kept scenarios test: Tested, Judged (named by
// kept scenarios, no check proves them) and Untested with why. report.json
// (coverage.rules_tested, rules_judged, rules_untested) and review.json
// (rule-untested) both read it, so they never disagree.
type Rules struct {
	Tested, Judged []string
	Untested       []RuleNote
}

// RuleCoverage reads the rules kept scenarios test from every request:
// a rule a request names is tested where that request lists the rule's
// check among its sub-goals; a rule only the scenario's bucket lists (put
// there by the words it shares with the bucket's tools, or spread over
// adversarial buckets) where some request of the scenario lists its check.
// ids are rule ids to account for beside the contract's.
func RuleCoverage(c *contract.Contract, scs []scenario.Scenario, buckets []ledger.Bucket, ids []string) Rules {
	rulesOf := map[string][]string{}
	for _, b := range buckets {
		rulesOf[b.ID] = b.Spec.Rules
	}
	checkOf := map[string]string{}
	known := map[string]bool{}
	if c != nil {
		for _, r := range c.Rules {
			known[r.ID], checkOf[r.ID] = true, r.Check
		}
	}
	namedBy, bucketed := map[string]int{}, map[string]int{}
	var rules, judged []string
	for i := range scs {
		reqs := scs[i].Requests()
		all := map[string]bool{}
		status := map[string]int{} // 0 named, 1 judged, 2 tested
		for _, r := range reqs {
			for _, g := range r.SubGoals {
				all[g.Name] = true
			}
		}
		own := map[string]bool{}
		for _, rl := range rulesOf[scs[i].Bucket] {
			if !known[rl] || checkOf[rl] != "" && all[checkOf[rl]] {
				status[rl] = 2
			} else if _, ok := status[rl]; !ok {
				status[rl] = -1 // only the bucket's
			}
		}
		for _, r := range reqs {
			lists := map[string]bool{}
			for _, g := range r.SubGoals {
				lists[g.Name] = true
			}
			for _, rl := range r.Rules {
				st := 0
				switch {
				case !known[rl] || checkOf[rl] != "" && lists[checkOf[rl]]:
					st = 2
				case checkOf[rl] == "":
					st = 1
				}
				status[rl] = max(status[rl], st)
				own[rl] = true
			}
		}
		for rl, st := range status {
			if own[rl] {
				namedBy[rl]++
			} else {
				bucketed[rl]++
			}
			switch st {
			case 2:
				rules = append(rules, rl)
			case 1:
				judged = append(judged, rl)
			}
		}
	}
	out := Rules{Tested: sortedSet(rules), Judged: sortedSet(judged), Untested: []RuleNote{}}
	tested := map[string]bool{}
	for _, r := range out.Tested {
		tested[r] = true
	}
	for _, r := range sortedSet(append(append([]string{}, ids...), keys(known)...)) {
		switch {
		case tested[r]:
		case namedBy[r] == 0 && bucketed[r] > 0 && checkOf[r] != "":
			out.Untested = append(out.Untested, RuleNote{r, fmt.Sprintf("no kept scenario names it; the plan put it on the buckets of %d kept scenario(s), none of which lists its check %s", bucketed[r], checkOf[r])})
		case namedBy[r] == 0 && bucketed[r] > 0:
			out.Untested = append(out.Untested, RuleNote{r, fmt.Sprintf("no kept scenario names it (the plan put it on the buckets of %d kept scenario(s)); it has no check", bucketed[r])})
		case namedBy[r] == 0:
			out.Untested = append(out.Untested, RuleNote{r, "no kept scenario names it"})
		case checkOf[r] == "":
			out.Untested = append(out.Untested, RuleNote{r, fmt.Sprintf("it has no check: %d kept scenario(s) name it, graded later by judgement, never proved by code", namedBy[r])})
		default:
			out.Untested = append(out.Untested, RuleNote{r, fmt.Sprintf("its check %s is in the sub-goals of none of the %d kept scenario(s) that name it", checkOf[r], namedBy[r])})
		}
	}
	return out
}
