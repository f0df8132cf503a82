package refresh

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
)

// OutcomeFile is where an update, an extension or a revision says what it
// did, beside report.json (restated for the suite as it then is).
const OutcomeFile = "refresh.json"

// HistoryFile is where a revision keeps the versions it replaced, beside
// the suite (suite.HistoryFile).
const HistoryFile = suite.HistoryFile

// Modes of an Outcome.
const (
	ModeUpdate = "update"
	ModeInto   = "into"
	ModeRevise = "revise"
)

// Outcome is refresh.json: what the last update or extension of a suite did.
type Outcome struct {
	Mode string `json:"mode"`
	// Run is the run whose scenarios were folded in ("" when none was
	// needed).
	Run      string     `json:"run"`
	Recorded string     `json:"recorded_contract_sha256"`
	Contract string     `json:"contract_sha256"`
	Asked    int        `json:"asked"`
	Replaced []Replaced `json:"replaced"`
	Added    []Added    `json:"added"`
	NotKept  []NotKept  `json:"not_kept"`
	// PassedOver are the run's scenarios an extension did not add, with why
	// (they repeat the suite, or do not prove).
	PassedOver []NotKept `json:"passed_over,omitempty"`
}

// Replaced is a stale scenario written again under its name. OldBranch is
// set when the branch could not be kept (the replacement's differs).
type Replaced struct {
	Name      string `json:"name"`
	UseCase   string `json:"use_case"`
	Branch    string `json:"branch"`
	OldBranch string `json:"old_branch,omitempty"`
	Bucket    string `json:"bucket"`
	// Ask is what a revision was asked.
	Ask string `json:"ask,omitempty"`
}

// Added is a scenario an extension added.
type Added struct {
	Name    string `json:"name"`
	UseCase string `json:"use_case"`
	Branch  string `json:"branch"`
	Bucket  string `json:"bucket"`
}

// NotKept is a stale scenario an update could not write again: it leaves
// the suite, and Reason says why.
type NotKept struct {
	Name    string `json:"name"`
	UseCase string `json:"use_case"`
	Branch  string `json:"branch"`
	Reason  string `json:"reason"`
}

// ErrStaleSuite is a suite an extension refuses: some of its scenarios no
// longer prove (update it first).
var ErrStaleSuite = errors.New("the suite has stale scenarios")

// ShortError is an extension that found fewer new scenarios than asked.
type ShortError struct{ Added, Asked int }

func (e *ShortError) Error() string {
	return fmt.Sprintf("%d of %d new scenario(s) added: the plan's buckets hold no more that differ from the suite's", e.Added, e.Asked)
}

// angleOf is the angle a branch was written for ("ANGLE, case K", as
// writers name branches), or the whole branch.
func angleOf(branch string) string {
	i := strings.LastIndex(branch, ", case ")
	if i <= 0 {
		return branch
	}
	k := branch[i+len(", case "):]
	if k == "" || strings.Trim(k, "0123456789") != "" {
		return branch
	}
	return branch[:i]
}

// caseOf is K of a branch ending ", case K", else 0.
func caseOf(branch string) int {
	i := strings.LastIndex(branch, ", case ")
	if i <= 0 {
		return 0
	}
	k, err := strconv.Atoi(branch[i+len(", case "):])
	if err != nil || k < 0 {
		return 0
	}
	return k
}

// fit is how well bucket b of a scenario's use case suits a scenario of
// branch and bucket id (old, when known, is the scenario): its angle first,
// then its bucket id, then its outcome and kind, then a bucket with a want.
func fit(b plan.Bucket, branch, bucket string, old *scenario.Scenario) int {
	sc := 0
	if b.Angle == angleOf(branch) {
		sc += 8
	}
	if b.ID == bucket {
		sc += 4
	}
	if old != nil && b.Outcome == old.Expects && b.Kind == old.Kind {
		sc += 2
	}
	if b.Want > 0 {
		sc++
	}
	return sc
}

// taken is what the suite's scenarios already hold: names, (use case,
// branch) pairs and the codes handed to callers.
type taken struct {
	names, branches, codes map[string]string
}

func newTaken() *taken {
	return &taken{names: map[string]string{}, branches: map[string]string{}, codes: map[string]string{}}
}

func (t *taken) add(sc *scenario.Scenario, codes []string) {
	t.names[sc.Name] = sc.Name
	t.branches[sc.UseCase+"\x00"+sc.Branch] = sc.Name
	for _, c := range codes {
		t.codes[c] = sc.Name
	}
}

// clash names what sc would repeat of the suite, or "".
func (t *taken) clash(sc *scenario.Scenario, codes []string) string {
	if other, ok := t.names[sc.Name]; ok {
		return "its name is " + other + "'s"
	}
	if other, ok := t.branches[sc.UseCase+"\x00"+sc.Branch]; ok {
		return fmt.Sprintf("its (use case, branch) is %s's", other)
	}
	for _, c := range codes {
		if other, ok := t.codes[c]; ok {
			return fmt.Sprintf("its code %s is %s's", c, other)
		}
	}
	return ""
}

// keptOf is what the suite's scenarios that stay hold.
func keptOf(w *suite.Written, rep Report, leaving map[string]bool) *taken {
	t := newTaken()
	for i := range w.Scenarios {
		sc := &w.Scenarios[i]
		if !leaving[sc.Name] {
			t.add(sc, rep.codes[sc.Name])
		}
	}
	return t
}

// Update replaces the stale scenarios of a suite: Narrow trims the new
// contract's plan to the buckets that write their replacements, Finish picks
// the replacements from what the run proved and writes them.
type Update struct {
	w        *suite.Written
	c        *contract.Contract
	rep      Report
	byBucket map[string][]Stale
	notKept  []NotKept
	// rev, for a revision, is what was asked: the scenarios to replace are
	// then the chosen ones (in rep.Stale), each by a scenario of a bucket
	// rev.Ask scores, never of its own branch.
	rev *revision
	// end is one past the last suite-wide index the narrowed plan deals;
	// index.json's NextIndex is raised to it.
	end int
}

// NewUpdate prepares the update of w, checked against c (rep).
func NewUpdate(w *suite.Written, c *contract.Contract, rep Report) *Update {
	return &Update{w: w, c: c, rep: rep, byBucket: map[string][]Stale{}}
}

// Stale is how many scenarios the update replaces or drops.
func (u *Update) Stale() int { return len(u.rep.Stale) }

func (u *Update) scenario(name string) *scenario.Scenario {
	for i := range u.w.Scenarios {
		if u.w.Scenarios[i].Name == name {
			return &u.w.Scenarios[i]
		}
	}
	return nil
}

// Narrow gives each stale scenario the bucket of pl that writes its
// replacement — the one of its use case and angle, else of its bucket id,
// else of its outcome and kind, else any of its use case — and keeps only
// those buckets, each at least as large as what it replaces. A stale
// scenario of a use case the contract or the plan no longer has is not kept.
func (u *Update) Narrow(pl *plan.Plan) error {
	gaps := map[string]string{}
	for _, g := range pl.Gaps {
		gaps[g.UseCase] = g.Reason
	}
	for _, s := range u.rep.Stale {
		old := u.scenario(s.Name)
		if u.c.UseCase(s.UseCase) == nil {
			u.notKept = append(u.notKept, NotKept{s.Name, s.UseCase, s.Branch, fmt.Sprintf("use case %s is no longer in the contract", s.UseCase)})
			continue
		}
		best, score := -1, -1
		for i, b := range pl.Buckets {
			if b.UseCase != s.UseCase {
				continue
			}
			if u.rev != nil {
				if sc := u.rev.ask.score(b, old); sc > score {
					best, score = i, sc
				}
				continue
			}
			if sc := fit(b, s.Branch, s.Bucket, old); sc > score {
				best, score = i, sc
			}
		}
		if best < 0 && u.rev != nil {
			// Refused before anything is spent.
			return &AskError{Ask: string(u.rev.ask), Why: fmt.Sprintf("the plan has no bucket of use case %s that %s %s (%s)", s.UseCase, u.rev.ask.does(), s.Name, old.Kind+", expects "+old.Expects)}
		}
		if best < 0 {
			why := fmt.Sprintf("the plan has no bucket for use case %s", s.UseCase)
			if g, ok := gaps[s.UseCase]; ok {
				why += ": " + g
			}
			u.notKept = append(u.notKept, NotKept{s.Name, s.UseCase, s.Branch, why})
			continue
		}
		id := pl.Buckets[best].ID
		u.byBucket[id] = append(u.byBucket[id], s)
	}
	// The suite's recorded NextIndex covers what its runs' top-ups dealt
	// past the plan, which the plan derived again does not hold.
	next := max(len(u.w.Scenarios), u.w.Index.NextIndex)
	for _, b := range pl.Buckets {
		next = max(next, b.Spec.End(max(b.Want, b.Spec.Capacity)))
	}
	var keep []plan.Bucket
	for _, b := range pl.Buckets {
		if n := len(u.byBucket[b.ID]); n > 0 {
			// The whole bucket is written again: its case k is the stale
			// scenario's case k when the plan still holds.
			want := max(b.Want, n)
			if u.rev == nil {
				for _, s := range u.byBucket[b.ID] {
					if b.Angle == angleOf(s.Branch) {
						want = max(want, caseOf(s.Branch))
					}
				}
			}
			if want > b.Want && u.rev == nil {
				// Cases past the plan's want were a top-up's in the
				// suite's run, at indices the plan derived again does not
				// hold (its Index would deal them the plan's own): they
				// take fresh ones past the suite's.
				b.Spec.Spans = append(slices.Clone(b.Spec.Spans), plan.Span{K: b.Want, Index: next})
				next += want - b.Want
			}
			b.Want = want
			if u.rev != nil {
				// A revision wants cases past those the suite may hold
				// of the bucket, at suite-wide indices (which deal callers
				// and minted codes) past every index of the plan and the
				// suite, as an extension's: buckets whose cases shared
				// indices would race for the same codes, and which won
				// would depend on the number of writers. Nor is any bucket
				// topped up: another bucket's extra cases revise none of
				// the scenarios placed in this one.
				b.Want += n
				b.Spec.Base, b.Spec.Sized, b.Spec.Capacity, b.Spec.TopUp, b.Spec.Spans = next, b.Want, b.Want, 0, nil
				b.Spec.Ask, b.Spec.Noisy = u.rev.text, u.rev.ask == AskNoisier
				next += b.Want
			}
			keep = append(keep, b)
			u.end = max(u.end, b.Spec.End(b.Want))
		}
	}
	pl.Buckets = keep
	return nil
}

// Finish picks, for each stale scenario Narrow placed, a scenario of the
// run (fresh) of its bucket — the one of its branch first — that proves
// under the stale scenario's name and repeats nothing of the suite, then
// writes the replacements, removes what could not be kept, and records the
// contract's hash and the outcome. Every other file is left as it is.
func (u *Update) Finish(ctx context.Context, p Prover, run string, fresh []scenario.Scenario) (Outcome, error) {
	mode := ModeUpdate
	if u.rev != nil {
		mode = ModeRevise
	}
	out := Outcome{Mode: mode, Run: run, Recorded: u.rep.Recorded, Contract: u.c.SHA256, Asked: len(u.rep.Stale),
		Replaced: []Replaced{}, Added: []Added{}, NotKept: append([]NotKept{}, u.notKept...)}
	leaving := map[string]bool{}
	for _, s := range u.rep.Stale {
		leaving[s.Name] = true
	}
	t := keptOf(u.w, u.rep, leaving)
	used := map[int]bool{}
	got := map[string]*scenario.Scenario{}
	why := map[string]string{}
	bucketOf := map[string]string{}
	for id, ss := range u.byBucket {
		for _, s := range ss {
			bucketOf[s.Name] = id
		}
	}
	// Two passes: first every scenario's own branch (the plan still holds),
	// then the bucket's other scenarios for those left, so that one's
	// fallback never takes another's own branch.
	passes := []bool{true, false}
	if u.rev != nil {
		passes = []bool{false} // a revision is another scenario
	}
	for _, sameBranch := range passes {
		for _, s := range u.rep.Stale {
			bucket := bucketOf[s.Name]
			if bucket == "" || got[s.Name] != nil {
				continue // not placed (in notKept already), or done
			}
			if why[s.Name] == "" {
				why[s.Name] = fmt.Sprintf("the run proved no scenario of bucket %s", bucket)
			}
			for i := range fresh {
				if used[i] || fresh[i].Bucket != bucket || (fresh[i].Branch == s.Branch) != sameBranch {
					continue
				}
				sc := fresh[i]
				sc.Name = s.Name
				v, err := p.Prove(ctx, &sc)
				if err != nil {
					return out, fmt.Errorf("refresh: prove %s: %w", sc.Name, err)
				}
				if !v.Kept {
					why[s.Name] = fmt.Sprintf("bucket %s's scenario %s does not prove under the name %s: %s", bucket, fresh[i].Name, s.Name, v.Refusals[0])
					continue
				}
				if c := t.clash(&sc, v.Codes); c != "" {
					why[s.Name] = fmt.Sprintf("bucket %s's scenarios all repeat the suite (%s: %s)", bucket, fresh[i].Name, c)
					continue
				}
				used[i] = true
				t.add(&sc, v.Codes)
				got[s.Name] = &sc
				break
			}
		}
	}
	replaced := map[string]*scenario.Scenario{}
	for _, s := range u.rep.Stale {
		if bucketOf[s.Name] == "" {
			continue
		}
		sc := got[s.Name]
		if sc == nil && u.rev != nil {
			out.NotKept = append(out.NotKept, NotKept{s.Name, s.UseCase, s.Branch, "not revised, kept as it was: " + why[s.Name]})
			continue
		}
		if sc == nil {
			out.NotKept = append(out.NotKept, NotKept{s.Name, s.UseCase, s.Branch, why[s.Name]})
			continue
		}
		replaced[s.Name] = sc
		r := Replaced{Name: s.Name, UseCase: sc.UseCase, Branch: sc.Branch, Bucket: sc.Bucket}
		if sc.Branch != s.Branch {
			r.OldBranch = s.Branch
		}
		if u.rev != nil {
			r.Ask = u.rev.text
		}
		out.Replaced = append(out.Replaced, r)
	}
	if u.rev != nil {
		// The suite keeps the old versions too (history.jsonl), written
		// before any file they come from is replaced.
		var vs []suite.Version
		for _, e := range u.w.Index.Scenarios {
			if _, ok := replaced[e.Name]; ok {
				vs = append(vs, suite.Version{Name: e.Name, Ask: u.rev.text, Run: run, Old: u.w.Raw[e.Name]})
			}
		}
		if err := suite.AppendHistory(u.w.Dir, vs); err != nil {
			return out, err
		}
	}
	idx := u.w.Index
	idx.ContractSHA256 = u.c.SHA256
	idx.NextIndex = max(idx.NextIndex, u.end)
	idx.Scenarios = []suite.IndexEntry{}
	for _, e := range u.w.Index.Scenarios {
		if sc, ok := replaced[e.Name]; ok {
			if u.rev != nil && u.rev.keep != nil {
				// The old version goes to the history before its file is
				// replaced.
				if err := u.rev.keep(e.Name, u.w.Raw[e.Name]); err != nil {
					return out, err
				}
			}
			if err := suite.WriteScenario(u.w.Dir, sc); err != nil {
				return out, err
			}
			e = suite.IndexEntry{Name: sc.Name, UseCase: sc.UseCase, Branch: sc.Branch, Bucket: sc.Bucket}
		} else if leaving[e.Name] && u.rev == nil {
			if err := suite.RemoveScenario(u.w.Dir, e.Name); err != nil {
				return out, err
			}
			continue
		}
		idx.Scenarios = append(idx.Scenarios, e)
	}
	sortNotKept(out.NotKept)
	if err := suite.WriteIndex(u.w.Dir, idx); err != nil {
		return out, err
	}
	return out, suite.WriteJSON(filepath.Join(u.w.Dir, OutcomeFile), out)
}

func sortNotKept(ns []NotKept) {
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].Name < ns[j].Name })
}

// Extend adds scenarios to a suite: Narrow trims the plan (derived for the
// suite's size plus the addition) to the buckets the suite fills least,
// Finish picks from what the run proved those that repeat nothing of the
// suite and writes them. No existing scenario file changes.
type Extend struct {
	w     *suite.Written
	c     *contract.Contract
	rep   Report
	n     int
	order []string // the kept buckets, gaps first
	end   int      // as Update's
}

// NewExtend prepares adding n scenarios to w, checked against c (rep). A
// suite with stale scenarios is refused (ErrStaleSuite).
func NewExtend(w *suite.Written, c *contract.Contract, rep Report, n int) (*Extend, error) {
	if len(rep.Stale) > 0 {
		return nil, fmt.Errorf("%w (%d of %d); run with --update first", ErrStaleSuite, len(rep.Stale), rep.Checked)
	}
	return &Extend{w: w, c: c, rep: rep, n: n}, nil
}

// Narrow keeps the buckets whose want the suite fills least, those of the
// use cases the suite holds fewest scenarios of first, until they leave
// room for twice the addition (replacements for what repeats the suite);
// when the gaps leave less, another whole use of the buckets the suite
// fills joins them, in the same order.
// Each kept bucket is another use of its templates, as the plan lays out
// uses: its angle names the use (so its branches are new), its templates
// start past those the suite's cases of it took, and its suite-wide
// indices (which deal callers and minted codes) start past every index the
// plan holds.
func (x *Extend) Narrow(pl *plan.Plan) error {
	have, perUseCase, angles := map[string]int{}, map[string]int{}, map[string]bool{}
	for _, sc := range x.w.Scenarios {
		have[sc.UseCase+"\x00"+angleOf(sc.Branch)]++
		perUseCase[sc.UseCase]++
		angles[sc.UseCase+"\x00"+angleOf(sc.Branch)] = true
	}
	type gap struct {
		b    plan.Bucket
		have int
	}
	var gs []gap
	next := 0
	for _, b := range pl.Buckets {
		next = max(next, b.Spec.End(max(b.Want, b.Spec.Capacity)))
		if h := have[b.UseCase+"\x00"+b.Angle]; b.Want > h {
			gs = append(gs, gap{b, h})
		}
	}
	next = max(next, len(x.w.Scenarios), x.w.Index.NextIndex)
	less := func(a plan.Bucket, ha int, b plan.Bucket, hb int) bool {
		if pa, pb := perUseCase[a.UseCase], perUseCase[b.UseCase]; pa != pb {
			return pa < pb
		}
		if ha != hb {
			return ha < hb
		}
		return a.Ord < b.Ord
	}
	sort.SliceStable(gs, func(i, j int) bool { return less(gs[i].b, gs[i].have, gs[j].b, gs[j].have) })
	var keep []plan.Bucket
	kept := map[string]bool{}
	room := 0
	take := func(b plan.Bucket, have, want int) {
		angle := b.Angle
		b.Want = want
		if t := b.Spec.Templates; len(t) > 0 {
			shift := have % len(t)
			b.Spec.Templates = append(slices.Clone(t[shift:]), t[:shift]...)
		}
		for u := 2; ; u++ {
			a := fmt.Sprintf("%s (use %d)", angle, u)
			if !angles[b.UseCase+"\x00"+a] {
				b.Angle, angles[b.UseCase+"\x00"+a] = a, true
				break
			}
		}
		b.Spec.Base, b.Spec.Sized, b.Spec.Capacity, b.Spec.TopUp, b.Spec.Spans = next, b.Want, b.Want, 0, nil
		next += b.Want
		keep = append(keep, b)
		kept[b.ID] = true
		x.order = append(x.order, b.ID)
		room += b.Want
	}
	for _, g := range gs {
		if room >= 2*x.n {
			break
		}
		take(g.b, g.have, g.b.Want-g.have)
	}
	if room < 2*x.n {
		// The gaps leave too little room (some are buckets that never
		// prove, which the suite's run topped up elsewhere): another whole
		// use of the buckets the suite fills, in the same order, as the
		// plan lays out uses when an ask outgrows them.
		full := make([]gap, 0, len(pl.Buckets))
		for _, b := range pl.Buckets {
			if !kept[b.ID] && b.Want > 0 {
				full = append(full, gap{b, have[b.UseCase+"\x00"+b.Angle]})
			}
		}
		sort.SliceStable(full, func(i, j int) bool { return less(full[i].b, full[i].have, full[j].b, full[j].have) })
		for _, g := range full {
			if room >= 2*x.n || (pl.Most > 0 && next+g.b.Want > pl.Most) {
				break
			}
			take(g.b, g.have, g.b.Want)
		}
	}
	x.end = next
	pl.Buckets = keep
	return nil
}

// Finish adds up to n of the run's scenarios (fresh), taking one from each
// bucket in gap order in turn, each proved and repeating nothing of the
// suite, and writes them and the index. Fewer than n is a *ShortError after
// what was found is written.
func (x *Extend) Finish(ctx context.Context, p Prover, run string, fresh []scenario.Scenario) (Outcome, error) {
	out := Outcome{Mode: ModeInto, Run: run, Recorded: x.rep.Recorded, Contract: x.c.SHA256, Asked: x.n,
		Replaced: []Replaced{}, Added: []Added{}, NotKept: []NotKept{}}
	t := keptOf(x.w, x.rep, nil)
	byBucket := map[string][]int{}
	for i := range fresh {
		byBucket[fresh[i].Bucket] = append(byBucket[fresh[i].Bucket], i)
	}
	var added []*scenario.Scenario
	for len(added) < x.n {
		progressed := false
		for _, id := range x.order {
			if len(added) == x.n {
				break
			}
			for len(byBucket[id]) > 0 {
				i := byBucket[id][0]
				byBucket[id] = byBucket[id][1:]
				sc := fresh[i]
				v, err := p.Prove(ctx, &sc)
				if err != nil {
					return out, fmt.Errorf("refresh: prove %s: %w", sc.Name, err)
				}
				why := t.clash(&sc, v.Codes)
				if !v.Kept {
					why = v.Refusals[0].String()
				}
				if why != "" {
					out.PassedOver = append(out.PassedOver, NotKept{sc.Name, sc.UseCase, sc.Branch, why})
					continue
				}
				t.add(&sc, v.Codes)
				added = append(added, &sc)
				progressed = true
				break
			}
		}
		if !progressed {
			break
		}
	}
	idx := x.w.Index
	idx.ContractSHA256 = x.c.SHA256
	idx.NextIndex = max(idx.NextIndex, x.end)
	idx.Scenarios = append([]suite.IndexEntry{}, x.w.Index.Scenarios...)
	for _, sc := range added {
		if err := suite.WriteScenario(x.w.Dir, sc); err != nil {
			return out, err
		}
		idx.Scenarios = append(idx.Scenarios, suite.IndexEntry{Name: sc.Name, UseCase: sc.UseCase, Branch: sc.Branch, Bucket: sc.Bucket})
		out.Added = append(out.Added, Added{Name: sc.Name, UseCase: sc.UseCase, Branch: sc.Branch, Bucket: sc.Bucket})
	}
	if err := suite.WriteIndex(x.w.Dir, idx); err != nil {
		return out, err
	}
	if err := suite.WriteJSON(filepath.Join(x.w.Dir, OutcomeFile), out); err != nil {
		return out, err
	}
	if len(added) < x.n {
		return out, &ShortError{Added: len(added), Asked: x.n}
	}
	return out, nil
}
