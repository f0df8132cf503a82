// Package ledgertest is the ledger in memory, for the tests of the
// roles that use it (pkg/planner, pkg/writer, pkg/reviewer): the methods of
// *ledger.Store their interfaces name, with the same rules. Its contract
// test runs one table of ledger behaviours against both this Ledger and a
// *ledger.Store on Postgres, so a role test on the fake means what it would
// on the ledger. Production code never imports it.
//
// Beyond the Store's methods a Ledger has the few a test needs to set the
// scene (UpdateRun, Credit, as a direct write to the database would) and to
// stage faults (Fail, Calls).
package ledgertest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/scenario"
)

// Ledger is the ledger of every run in memory. The zero value is empty and
// ready to use; it is safe for concurrent use.
type Ledger struct {
	mu        sync.Mutex
	runs      map[string]*run
	spend     map[string][]ledger.Call // by run: spend has no run it must belong to
	contracts map[string]map[string][]byte
	faults    map[string]*fault
	calls     map[string]int
}

// run is one run's rows.
type run struct {
	r       ledger.Run
	buckets []ledger.Bucket // Done is derived from scenarios on every read
	slices  []ledger.Slice
	// deliveries are the recorded deliveries of each slice, by slice id.
	deliveries map[string][]ledger.DeliveryRecord
	scenarios  []journalled
	codes      map[string]string // code -> scenario name
	refusals   []refusal
	subgoals   map[string]ledger.SubGoal
	plan       []byte // as JSON, as the store keeps it
}

type journalled struct {
	name, bucket, useCase, branch string
	slice                         string
	sum, content                  string
	body                          []byte
}

type refusal struct {
	bucket, gate, code, message string
}

type fault struct {
	n   int // calls left to fail; < 0: every call
	err error
}

// New returns an empty ledger.
func New() *Ledger { return &Ledger{} }

// enter counts a call of method and returns the fault staged for it, if
// any. The caller holds l.mu.
func (l *Ledger) enter(method string) error {
	if l.calls == nil {
		l.calls = map[string]int{}
	}
	l.calls[method]++
	f := l.faults[method]
	if f == nil || f.n == 0 {
		return nil
	}
	if f.n > 0 {
		f.n--
	}
	return f.err
}

// Fail makes the next n calls of the named method (e.g. "FinishSlice") fail
// with err before they touch anything, as a database that is down or shuts
// down would; n < 0 fails every call until Fail is called again.
func (l *Ledger) Fail(method string, n int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.faults == nil {
		l.faults = map[string]*fault{}
	}
	l.faults[method] = &fault{n: n, err: err}
}

// Calls counts the calls of the named method so far, failed ones included.
func (l *Ledger) Calls(method string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[method]
}

// UpdateRun changes a run's record as an UPDATE of its row would, past the
// lifecycle's checks: for a test that needs a run in a given state or with
// given caps.
func (l *Ledger) UpdateRun(id string, fn func(*ledger.Run)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	rn := l.runs[id]
	if rn == nil {
		return fmt.Errorf("ledgertest: run %s: %w", id, ledger.ErrNotFound)
	}
	fn(&rn.r)
	rn.r.ID = id
	return nil
}

// Credit journals n made-up scenarios of a bucket of a run (as writers
// proving them would), through Journal, so the bucket's Done grows by n.
func (l *Ledger) Credit(ctx context.Context, runID, bucket string, n int) error {
	for range n {
		l.mu.Lock()
		k := 0
		if rn := l.runs[runID]; rn != nil {
			k = len(rn.scenarios)
		}
		l.mu.Unlock()
		name := fmt.Sprintf("%s-%s-%d", runID, bucket, k)
		sc := &scenario.Scenario{Name: name, Bucket: bucket, UseCase: "credited", Branch: name, Kind: "happy",
			Expects: "succeed", Instruction: "credited " + name, MaxTurns: 1}
		if _, err := l.Journal(ctx, runID, sc, "credit", "credit", nil); err != nil {
			return fmt.Errorf("ledgertest: credit %s/%s: %w", runID, bucket, err)
		}
	}
	return nil
}

// errNoRun is a write that needs its run (a foreign key in Postgres).
func errNoRun(id string) error {
	return fmt.Errorf("run %s does not exist: %w", id, ledger.ErrNotFound)
}

// roundTrip gives v as the database gives it back: through its JSON.
func roundTrip[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(b, &out)
	return out, err
}

// SaveContract stores a contract's files under its hash; a hash already
// stored is left as it is.
func (l *Ledger) SaveContract(_ context.Context, sha, agent string, files map[string][]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("SaveContract"); err != nil {
		return err
	}
	if l.contracts == nil {
		l.contracts = map[string]map[string][]byte{}
	}
	if _, ok := l.contracts[sha]; !ok {
		l.contracts[sha] = maps.Clone(files)
	}
	return nil
}

// SavePlan stores the plan a run was derived with; a run keeps its first.
func (l *Ledger) SavePlan(_ context.Context, run string, p *plan.Plan) error {
	js, err := json.Marshal(p)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("SavePlan"); err != nil {
		return err
	}
	rn := l.runs[run]
	if rn == nil {
		return fmt.Errorf("ledgertest: run %s: %w", run, ledger.ErrNotFound)
	}
	if rn.plan == nil {
		rn.plan = js
	}
	return nil
}

// Plan is the plan stored for a run, or ledger.ErrNotFound.
func (l *Ledger) Plan(_ context.Context, run string) (*plan.Plan, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Plan"); err != nil {
		return nil, err
	}
	rn := l.runs[run]
	if rn == nil || rn.plan == nil {
		return nil, fmt.Errorf("ledgertest: run %s: plan: %w", run, ledger.ErrNotFound)
	}
	var p plan.Plan
	if err := json.Unmarshal(rn.plan, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ContractFiles returns the files stored under a contract hash, or
// ledger.ErrNotFound.
func (l *Ledger) ContractFiles(_ context.Context, sha string) (map[string][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("ContractFiles"); err != nil {
		return nil, err
	}
	files, ok := l.contracts[sha]
	if !ok {
		return nil, fmt.Errorf("ledgertest: contract %s: %w", sha, ledger.ErrNotFound)
	}
	return maps.Clone(files), nil
}

// CreateRun records a run, idempotently on its ID.
func (l *Ledger) CreateRun(_ context.Context, r ledger.Run) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("CreateRun"); err != nil {
		return false, err
	}
	if r.ID == "" {
		return false, errors.New("ledgertest: Run.ID is required")
	}
	if r.Asked < 0 {
		return false, fmt.Errorf("ledgertest: Run.Asked %d is negative", r.Asked)
	}
	r.State = cmp.Or(r.State, ledger.RunPlanned)
	if !r.State.Known() {
		return false, fmt.Errorf("ledgertest: run %s: unknown state %q", r.ID, r.State)
	}
	cfg, err := roundTrip(r.Config)
	if err != nil {
		return false, fmt.Errorf("ledgertest: run %s: config: %w", r.ID, err)
	}
	if _, ok := l.runs[r.ID]; ok {
		return false, nil
	}
	r.Config, r.CreatedAt, r.FinishedAt = cfg, time.Now(), nil
	if l.runs == nil {
		l.runs = map[string]*run{}
	}
	l.runs[r.ID] = &run{r: r, codes: map[string]string{}, subgoals: map[string]ledger.SubGoal{}}
	return true, nil
}

// Run returns one run, or ledger.ErrNotFound.
func (l *Ledger) Run(_ context.Context, id string) (ledger.Run, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Run"); err != nil {
		return ledger.Run{}, err
	}
	rn := l.runs[id]
	if rn == nil {
		return ledger.Run{}, fmt.Errorf("ledgertest: run %s: %w", id, ledger.ErrNotFound)
	}
	return rn.r, nil
}

// MoveRun moves a run along its lifecycle (ledger.RunState.To), stamping
// finished_at on a final state and clearing it on any other; it returns the
// state the run was in.
func (l *Ledger) MoveRun(_ context.Context, id string, to ledger.RunState, message string) (ledger.RunState, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("MoveRun"); err != nil {
		return "", err
	}
	rn := l.runs[id]
	if rn == nil {
		return "", fmt.Errorf("ledgertest: move run %s to %s: %w", id, to, ledger.ErrNotFound)
	}
	from := rn.r.State
	if err := from.To(to); err != nil {
		if te, ok := errors.AsType[*ledger.TransitionError](err); ok {
			te.ID = id
		}
		return from, fmt.Errorf("ledgertest: move run %s to %s: %w", id, to, err)
	}
	rn.r.State, rn.r.Message = to, message
	switch {
	case !to.Final():
		rn.r.FinishedAt = nil
	case rn.r.FinishedAt == nil:
		now := time.Now()
		rn.r.FinishedAt = &now
	}
	return from, nil
}

// SetRound records the planning round a run is in.
func (l *Ledger) SetRound(_ context.Context, id string, round int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("SetRound"); err != nil {
		return err
	}
	rn := l.runs[id]
	if rn == nil {
		return fmt.Errorf("ledgertest: run %s: %w", id, ledger.ErrNotFound)
	}
	rn.r.Round = round
	return nil
}

// SpendCall records one model call.
func (l *Ledger) SpendCall(_ context.Context, c ledger.Call) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("SpendCall"); err != nil {
		return err
	}
	if c.Prompt < 0 || c.Completion < 0 || c.CachedPrompt < 0 || c.Reasoning < 0 || c.CostUSD < 0 {
		return fmt.Errorf("ledgertest: spend in run %s: negative counts (%d, %d, %d, %d, $%v)", c.Run, c.Prompt, c.Completion, c.CachedPrompt, c.Reasoning, c.CostUSD)
	}
	c.Outcome = cmp.Or(c.Outcome, "ok")
	if l.spend == nil {
		l.spend = map[string][]ledger.Call{}
	}
	l.spend[c.Run] = append(l.spend[c.Run], c)
	return nil
}

// Meter totals a run's spend.
func (l *Ledger) Meter(_ context.Context, id string) (ledger.Meter, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Meter"); err != nil {
		return ledger.Meter{}, err
	}
	return l.meter(id), nil
}

func (l *Ledger) meter(id string) ledger.Meter {
	var m ledger.Meter
	for _, c := range l.spend[id] {
		m.Calls++
		m.PromptTokens += int64(c.Prompt)
		m.CachedPromptTokens += int64(c.CachedPrompt)
		m.CompletionTokens += int64(c.Completion)
		m.ReasoningTokens += int64(c.Reasoning)
		m.CostUSD += c.CostUSD
		if !c.Priced && c.Prompt+c.Completion > 0 {
			m.UnpricedCalls++
		}
	}
	if rn := l.runs[id]; rn != nil {
		m.Kept = int64(len(rn.scenarios))
	}
	return m
}

// Budget reads a run's meter against its caps; the meter of a run without a
// cap is not read.
func (l *Ledger) Budget(_ context.Context, r ledger.Run) (ledger.Budget, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := ledger.Budget{Cap: r.BudgetTokens, CapUSD: r.BudgetUSD}
	if err := l.enter("Budget"); err != nil {
		return b, err
	}
	if b.Cap <= 0 && b.CapUSD <= 0 {
		return b, nil
	}
	m := l.meter(r.ID)
	b.Spent, b.SpentUSD = m.Tokens(), m.CostUSD
	return b, nil
}

// row gives b as the ledger stores it for run id: defaults filled in, axes
// and spec as their JSON gives them back, Done left to reads.
func row(id string, b ledger.Bucket) (ledger.Bucket, error) {
	b.RunID, b.Done = id, 0
	b.State = cmp.Or(b.State, ledger.BucketOpen)
	if !b.State.Known() {
		return b, fmt.Errorf("unknown state %q", b.State)
	}
	b.Origin = cmp.Or(b.Origin, ledger.OriginPlan)
	if b.Axes == nil {
		b.Axes = map[string]string{}
	}
	var err error
	if b.Axes, err = roundTrip(b.Axes); err != nil {
		return b, err
	}
	if b.Spec, err = roundTrip(b.Spec); err != nil {
		return b, err
	}
	return b, nil
}

// PutBuckets inserts a plan's buckets; buckets already present are left as
// they are.
func (l *Ledger) PutBuckets(_ context.Context, id string, bs []ledger.Bucket) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("PutBuckets"); err != nil {
		return err
	}
	rows := make([]ledger.Bucket, 0, len(bs))
	for _, b := range bs {
		if b.ID == "" {
			return fmt.Errorf("ledgertest: put buckets of run %s: bucket at ord %d has no ID", id, b.Ord)
		}
		if b.Want < 0 {
			return fmt.Errorf("ledgertest: put buckets of run %s: bucket %s: Want %d is negative", id, b.ID, b.Want)
		}
		r, err := row(id, b)
		if err != nil {
			return fmt.Errorf("ledgertest: put buckets of run %s: bucket %s: %w", id, b.ID, err)
		}
		rows = append(rows, r)
	}
	rn := l.runs[id]
	if rn == nil {
		if len(rows) == 0 {
			return nil
		}
		return fmt.Errorf("ledgertest: put buckets of run %s: %w", id, errNoRun(id))
	}
	for _, b := range rows {
		if rn.bucket(b.ID) == nil {
			rn.buckets = append(rn.buckets, b)
		}
	}
	return nil
}

func (rn *run) bucket(id string) *ledger.Bucket {
	for i := range rn.buckets {
		if rn.buckets[i].ID == id {
			return &rn.buckets[i]
		}
	}
	return nil
}

// read is a bucket as a read returns it: Done counted from the journal.
func (rn *run) read(b ledger.Bucket) ledger.Bucket {
	b.Axes = maps.Clone(b.Axes)
	b.Done = 0
	for _, sc := range rn.scenarios {
		if sc.bucket == b.ID {
			b.Done++
		}
	}
	return b
}

// sorted is the run's buckets in (ord, id) order.
func (rn *run) sorted() []*ledger.Bucket {
	out := make([]*ledger.Bucket, len(rn.buckets))
	for i := range rn.buckets {
		out[i] = &rn.buckets[i]
	}
	slices.SortStableFunc(out, func(a, b *ledger.Bucket) int {
		return cmp.Or(cmp.Compare(a.Ord, b.Ord), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// Buckets returns a run's buckets in ord order, Done counted from the
// journal.
func (l *Ledger) Buckets(_ context.Context, id string) ([]ledger.Bucket, error) {
	return l.buckets("Buckets", id, func(string) bool { return true })
}

// BucketsOf returns the buckets of a run that ids name, in ord order, Done
// counted; an id the run does not have is left out.
func (l *Ledger) BucketsOf(_ context.Context, id string, ids []string) ([]ledger.Bucket, error) {
	return l.buckets("BucketsOf", id, func(b string) bool { return slices.Contains(ids, b) })
}

func (l *Ledger) buckets(op, id string, keep func(string) bool) ([]ledger.Bucket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter(op); err != nil {
		return nil, err
	}
	rn := l.runs[id]
	if rn == nil {
		return nil, nil
	}
	var out []ledger.Bucket
	for _, b := range rn.sorted() {
		if keep(b.ID) {
			out = append(out, rn.read(*b))
		}
	}
	return out, nil
}

// AddBucket records a bucket a writer reported, with the next ord and id
// "b<ord>", or returns the bucket of the same use case, cell, angle,
// outcome and overlay already there.
func (l *Ledger) AddBucket(_ context.Context, id string, b ledger.Bucket) (ledger.Bucket, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("AddBucket"); err != nil {
		return ledger.Bucket{}, err
	}
	if b.Origin == "" || b.Origin == ledger.OriginPlan {
		b.Origin = ledger.OriginWriter
	}
	if b.Want < 0 {
		return ledger.Bucket{}, fmt.Errorf("ledgertest: add bucket to run %s: Want %d is negative", id, b.Want)
	}
	rn := l.runs[id]
	if rn == nil {
		return ledger.Bucket{}, fmt.Errorf("ledgertest: add bucket to run %s: run %s: %w", id, id, ledger.ErrNotFound)
	}
	ord := 0
	for _, x := range rn.sorted() {
		if x.UseCase == b.UseCase && x.Cell == b.Cell && x.Angle == b.Angle && x.Outcome == b.Outcome && x.Overlay == b.Overlay {
			return rn.read(*x), nil
		}
		ord = max(ord, x.Ord+1)
	}
	for rn.bucket("b"+strconv.Itoa(ord)) != nil {
		ord++ // a planner's id happened to be "b<ord>" with another ord
	}
	b.Ord, b.ID = ord, "b"+strconv.Itoa(ord)
	r, err := row(id, b)
	if err != nil {
		return ledger.Bucket{}, fmt.Errorf("ledgertest: add bucket to run %s: %w", id, err)
	}
	rn.buckets = append(rn.buckets, r)
	return rn.read(r), nil
}

// Raise sets open or done buckets' wants and specs and leaves them open,
// all or nothing; a claimed, blocked or missing bucket is
// ledger.ErrNotFound.
func (l *Ledger) Raise(_ context.Context, id string, rs ...ledger.Raising) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Raise"); err != nil {
		return err
	}
	specs := make([]plan.Spec, len(rs))
	for i, r := range rs {
		sp, err := roundTrip(r.Spec)
		if err != nil {
			return fmt.Errorf("ledgertest: raise in run %s: %s: %w", id, r.ID, err)
		}
		specs[i] = sp
		var b *ledger.Bucket
		if rn := l.runs[id]; rn != nil {
			b = rn.bucket(r.ID)
		}
		if b == nil || (b.State != ledger.BucketOpen && b.State != ledger.BucketDone) || b.ClaimedBy != "" {
			return fmt.Errorf("ledgertest: raise in run %s: %s: %w", id, r.ID, ledger.ErrNotFound)
		}
	}
	for i, r := range rs {
		b := l.runs[id].bucket(r.ID)
		b.Want, b.Spec, b.State = r.Want, specs[i], ledger.BucketOpen
	}
	return nil
}

// Slices lists a run's slices of one round (-1: every round), by round and
// id.
func (l *Ledger) Slices(_ context.Context, id string, round int) ([]ledger.Slice, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Slices"); err != nil {
		return nil, err
	}
	rn := l.runs[id]
	if rn == nil {
		return nil, nil
	}
	var out []ledger.Slice
	for _, s := range rn.slices {
		if round < 0 || s.Round == round {
			s.BucketIDs = slices.Clone(s.BucketIDs)
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b ledger.Slice) int { return cmp.Or(cmp.Compare(a.Round, b.Round), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// ClaimSlice records a slice and claims its buckets, all or nothing; a
// slice already recorded is left as it is, its buckets untouched.
func (l *Ledger) ClaimSlice(_ context.Context, sl ledger.Slice) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("ClaimSlice"); err != nil {
		return err
	}
	if sl.RunID == "" || sl.ID == "" {
		return errors.New("ledgertest: claim slice: RunID and ID are required")
	}
	if len(sl.BucketIDs) == 0 {
		return fmt.Errorf("ledgertest: claim slice %s: no buckets", sl.ID)
	}
	fail := func(err error) error {
		return fmt.Errorf("ledgertest: claim slice %s of run %s: %w", sl.ID, sl.RunID, err)
	}
	rn := l.runs[sl.RunID]
	if rn == nil {
		return fail(errNoRun(sl.RunID))
	}
	if slices.ContainsFunc(rn.slices, func(s ledger.Slice) bool { return s.ID == sl.ID }) {
		return nil
	}
	ids := slices.Clone(sl.BucketIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	open := 0
	for _, id := range ids {
		if b := rn.bucket(id); b != nil && b.State == ledger.BucketOpen {
			open++
		}
	}
	if open != len(ids) {
		return fail(fmt.Errorf("%d of its %d buckets exist and are open", open, len(ids)))
	}
	for _, id := range ids {
		b := rn.bucket(id)
		b.State, b.ClaimedBy = ledger.BucketClaimed, sl.ID
	}
	rn.slices = append(rn.slices, ledger.Slice{RunID: sl.RunID, ID: sl.ID, Round: sl.Round, Kind: cmp.Or(sl.Kind, ledger.SliceWork),
		BucketIDs: slices.Clone(sl.BucketIDs), State: ledger.SlicePublished, CreatedAt: time.Now()})
	return nil
}

// RedealSlice records sl and moves to it the claims of its buckets, all held
// by the dead slice dead, all or nothing; false, changing nothing, when that
// slice is not dead; true for a slice already recorded.
func (l *Ledger) RedealSlice(_ context.Context, dead string, sl ledger.Slice) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("RedealSlice"); err != nil {
		return false, err
	}
	if sl.RunID == "" || sl.ID == "" || dead == "" {
		return false, errors.New("ledgertest: redeal slice: RunID, ID and the dead slice are required")
	}
	if len(sl.BucketIDs) == 0 {
		return false, fmt.Errorf("ledgertest: redeal slice %s: no buckets", sl.ID)
	}
	fail := func(err error) error {
		return fmt.Errorf("ledgertest: redeal slice %s of run %s: %w", sl.ID, sl.RunID, err)
	}
	rn := l.runs[sl.RunID]
	if rn == nil {
		return false, fail(errNoRun(sl.RunID))
	}
	i := slices.IndexFunc(rn.slices, func(s ledger.Slice) bool { return s.ID == dead })
	if i < 0 {
		return false, fail(fmt.Errorf("slice %s: %w", dead, ledger.ErrNotFound))
	}
	switch {
	case slices.ContainsFunc(rn.slices, func(s ledger.Slice) bool { return s.ID == sl.ID }):
		return true, nil
	case rn.slices[i].State != ledger.SliceDead:
		return false, nil
	}
	ids := slices.Clone(sl.BucketIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, id := range ids {
		if b := rn.bucket(id); b == nil || b.State != ledger.BucketClaimed || b.ClaimedBy != dead {
			return false, fail(fmt.Errorf("bucket %s is not held by dead slice %s", id, dead))
		}
	}
	for _, id := range ids {
		rn.bucket(id).ClaimedBy = sl.ID
	}
	rn.slices = append(rn.slices, ledger.Slice{RunID: sl.RunID, ID: sl.ID, Round: sl.Round, Kind: cmp.Or(sl.Kind, ledger.SliceWork),
		BucketIDs: slices.Clone(sl.BucketIDs), State: ledger.SlicePublished, CreatedAt: time.Now()})
	return true, nil
}

// FinishSlice moves a slice from published to done or dead (dead to done
// too), recording the writer, the reason and the deliveries; finishing it
// again in its state changes nothing, and a done slice cannot die.
func (l *Ledger) FinishSlice(_ context.Context, id, slice string, to ledger.SliceState, writer, reason string, deliveries int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("FinishSlice"); err != nil {
		return err
	}
	if !to.Finished() {
		return fmt.Errorf("ledgertest: finish slice %s: state %q is neither done nor dead", slice, to)
	}
	var s *ledger.Slice
	if rn := l.runs[id]; rn != nil {
		if i := slices.IndexFunc(rn.slices, func(s ledger.Slice) bool { return s.ID == slice }); i >= 0 {
			s = &rn.slices[i]
		}
	}
	if s == nil {
		return fmt.Errorf("ledgertest: finish slice %s of run %s: %w", slice, id, ledger.ErrNotFound)
	}
	if err := s.State.To(to); err != nil {
		if te, ok := errors.AsType[*ledger.TransitionError](err); ok {
			te.ID = id + "/" + slice
		}
		return err
	}
	if s.State == to {
		return nil // the first finish is kept
	}
	s.State, s.Writer, s.Reason, s.Deliveries = to, writer, reason, max(s.Deliveries, deliveries)
	if s.FinishedAt == nil {
		now := time.Now()
		s.FinishedAt = &now
	}
	return nil
}

// Fold settles every bucket claimed by a finished slice of the run from the
// journal, as ledger.Store.Fold does: done at its want, else its attempts
// grow (not for a dead slice) and it is blocked (with its most frequent
// refusal, or the slice's dead reason, as notes) once they, or the dead
// slices that single it out (Deaths), reach maxAttempts, else reopened.
func (l *Ledger) Fold(_ context.Context, id string, maxAttempts int) (ledger.FoldResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Fold"); err != nil {
		return ledger.FoldResult{}, err
	}
	if maxAttempts < 1 {
		return ledger.FoldResult{}, fmt.Errorf("ledgertest: fold run %s: maxAttempts %d < 1", id, maxAttempts)
	}
	rn := l.runs[id]
	if rn == nil {
		return ledger.FoldResult{}, fmt.Errorf("ledgertest: fold run %s: run %s: %w", id, id, ledger.ErrNotFound)
	}
	type settled struct {
		b        *ledger.Bucket
		state    ledger.BucketState
		attempts int
		refused  int
		notes    string
	}
	var res ledger.FoldResult
	var todo []settled
	for _, b := range rn.sorted() {
		i := slices.IndexFunc(rn.slices, func(s ledger.Slice) bool { return b.ClaimedBy != "" && s.ID == b.ClaimedBy })
		if i < 0 {
			continue
		}
		sl := rn.slices[i]
		if !sl.State.Finished() {
			if sl.State == ledger.SlicePublished {
				res.InFlight++
			}
			continue
		}
		done := rn.read(*b).Done
		// As the Store: a dead slice is no attempt of the bucket's; the
		// dead slices that single it out block it on their own.
		attempts, deaths := b.Attempts, rn.deaths()[b.ID]
		if done < b.Want && sl.State != ledger.SliceDead {
			attempts++
		}
		next := settle(done, b.Want, max(attempts, deaths), maxAttempts)
		if err := b.State.To(next); err != nil {
			return ledger.FoldResult{}, fmt.Errorf("ledgertest: fold run %s: bucket %s: %w", id, b.ID, err)
		}
		refused, top := rn.topRefusal(b.ID)
		notes := b.Notes
		if next == ledger.BucketBlocked {
			notes = cmp.Or(top, sl.Reason, ledger.Unrefused(done, b.Want, max(attempts, deaths)))
		}
		todo = append(todo, settled{b: b, state: next, attempts: attempts, refused: refused, notes: notes})
	}
	// All or nothing, as the one transaction of the Store.
	for _, s := range todo {
		s.b.ClaimedBy, s.b.Refused, s.b.Attempts, s.b.State, s.b.Notes = "", s.refused, s.attempts, s.state, s.notes
		switch s.state {
		case ledger.BucketDone:
			res.Done = append(res.Done, s.b.ID)
		case ledger.BucketBlocked:
			res.Blocked = append(res.Blocked, s.b.ID)
		default:
			res.Reopened = append(res.Reopened, s.b.ID)
		}
	}
	return res, nil
}

// Deaths counts, for each bucket with any, the dead slices that single it
// out, as ledger.Store.Deaths does: slices of that bucket alone that
// journalled nothing of it.
func (l *Ledger) Deaths(_ context.Context, id string) (map[string]int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Deaths"); err != nil {
		return nil, err
	}
	rn := l.runs[id]
	if rn == nil {
		return map[string]int{}, nil
	}
	return rn.deaths(), nil
}

func (rn *run) deaths() map[string]int {
	out := map[string]int{}
	for _, d := range rn.slices {
		if d.State != ledger.SliceDead || len(d.BucketIDs) != 1 || rn.bucket(d.BucketIDs[0]) == nil {
			continue
		}
		b := d.BucketIDs[0]
		if !slices.ContainsFunc(rn.scenarios, func(j journalled) bool { return j.slice == d.ID && j.bucket == b }) {
			out[b]++
		}
	}
	return out
}

// settle is a claimed bucket's state once its slice has finished.
func settle(done, want, attempts, maxAttempts int) ledger.BucketState {
	switch {
	case done >= want:
		return ledger.BucketDone
	case attempts >= maxAttempts:
		return ledger.BucketBlocked
	}
	return ledger.BucketOpen
}

// topRefusal counts a bucket's refusals and names its most frequent kind
// ("gate/code: latest message of the kind"; ties by gate and code).
func (rn *run) topRefusal(bucket string) (int, string) {
	type kind struct{ gate, code string }
	count := map[kind]int{}
	latest := map[kind]string{}
	total := 0
	for _, r := range rn.refusals {
		if r.bucket != bucket {
			continue
		}
		k := kind{r.gate, r.code}
		count[k]++
		latest[k] = r.message
		total++
	}
	if total == 0 {
		return 0, ""
	}
	kinds := slices.Collect(maps.Keys(count))
	slices.SortFunc(kinds, func(a, b kind) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a.gate, b.gate), cmp.Compare(a.code, b.code))
	})
	k := kinds[0]
	return total, k.gate + "/" + k.code + ": " + latest[k]
}

// Refuse records a gate refusal of a scenario a writer submitted.
func (l *Ledger) Refuse(_ context.Context, id, slice, bucket, gate, code, message string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Refuse"); err != nil {
		return err
	}
	rn := l.runs[id]
	if rn == nil {
		return fmt.Errorf("ledgertest: refuse in run %s slice %s: %w", id, slice, errNoRun(id))
	}
	rn.refusals = append(rn.refusals, refusal{bucket: bucket, gate: gate, code: code, message: message})
	return nil
}

// Refusals counts a run's gate refusals by "gate/code".
func (l *Ledger) Refusals(_ context.Context, id string) (map[string]int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Refusals"); err != nil {
		return nil, err
	}
	out := map[string]int{}
	if rn := l.runs[id]; rn != nil {
		for _, r := range rn.refusals {
			out[r.gate+"/"+r.code]++
		}
	}
	return out, nil
}

// BucketRefusals returns, per bucket of a run, its most frequent refusal
// (ties by gate and code) out of all of its refusals, with the smallest
// message of that kind as its example.
func (l *Ledger) BucketRefusals(_ context.Context, id string) (map[string]ledger.BucketRefusal, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("BucketRefusals"); err != nil {
		return nil, err
	}
	type kind struct{ bucket, gate, code string }
	count := map[kind]int{}
	example := map[kind]string{}
	of := map[string]int{}
	if rn := l.runs[id]; rn != nil {
		for _, r := range rn.refusals {
			k := kind{r.bucket, r.gate, r.code}
			if _, seen := example[k]; !seen || r.message < example[k] {
				example[k] = r.message
			}
			count[k]++
			of[r.bucket]++
		}
	}
	out := map[string]ledger.BucketRefusal{}
	for k, n := range count {
		top, ok := out[k.bucket]
		if ok && cmp.Or(cmp.Compare(top.Count, n), cmp.Compare(k.gate, top.Gate), cmp.Compare(k.code, top.Code)) > 0 {
			continue // top is more frequent, or as frequent and first by gate and code
		}
		out[k.bucket] = ledger.BucketRefusal{Gate: k.gate, Code: k.code, Count: n, Of: of[k.bucket], Example: example[k]}
	}
	return out, nil
}

// TopRefusals lists a run's most frequent refusal reasons, most frequent
// first, ties by gate and code, each with its smallest message.
func (l *Ledger) TopRefusals(_ context.Context, id string, limit int) ([]ledger.Reason, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("TopRefusals"); err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, fmt.Errorf("ledgertest: refusal reasons of run %s: limit %d is negative", id, limit)
	}
	rn := l.runs[id]
	if rn == nil {
		return nil, nil
	}
	byKind := map[[2]string]*ledger.Reason{}
	for _, r := range rn.refusals {
		k := [2]string{r.gate, r.code}
		if x := byKind[k]; x != nil {
			x.Count++
			x.Example = min(x.Example, r.message)
			continue
		}
		byKind[k] = &ledger.Reason{Gate: r.gate, Code: r.code, Count: 1, Example: r.message}
	}
	var out []ledger.Reason
	for _, r := range byKind {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b ledger.Reason) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Gate, b.Gate), cmp.Compare(a.Code, b.Code))
	})
	return out[:min(limit, len(out))], nil
}

// Journal credits one proved scenario, idempotently: ledger.Credited for a
// new one, ledger.Already for the same scenario again, or a
// *ledger.ConflictError, writing nothing, when its name, content, branch or
// one of its codes is another scenario's.
func (l *Ledger) Journal(_ context.Context, id string, sc *scenario.Scenario, slice, writer string, codes []string) (ledger.JournalResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Journal"); err != nil {
		return 0, err
	}
	e, err := ledger.Encode(sc)
	if err != nil {
		return 0, err
	}
	body, sum, content := e.Body, e.Sum, e.Content
	rn := l.runs[id]
	if rn == nil {
		return 0, fmt.Errorf("ledgertest: journal %s in run %s: %w", sc.Name, id, errNoRun(id))
	}
	for _, x := range rn.scenarios {
		if x.name == sc.Name {
			if x.sum == sum || x.content == content {
				return ledger.Already, nil
			}
			return 0, &ledger.ConflictError{Kind: ledger.ConflictName, Other: sc.Name}
		}
	}
	for _, x := range rn.scenarios {
		if x.content == content || x.sum == sum {
			return 0, &ledger.ConflictError{Kind: ledger.ConflictContent, Other: x.name}
		}
	}
	for _, x := range rn.scenarios {
		if x.useCase == sc.UseCase && x.branch == sc.Branch {
			return 0, &ledger.ConflictError{Kind: ledger.ConflictBranch, Other: x.name}
		}
	}
	codes = sortedUnique(codes)
	for _, code := range codes {
		if other, taken := rn.codes[code]; taken {
			return 0, &ledger.ConflictError{Kind: ledger.ConflictCode, Other: other, Code: code}
		}
	}
	for _, code := range codes {
		rn.codes[code] = sc.Name
	}
	rn.scenarios = append(rn.scenarios, journalled{name: sc.Name, bucket: sc.Bucket, useCase: sc.UseCase, branch: sc.Branch,
		slice: slice, sum: sum, content: content, body: body})
	return ledger.Credited, nil
}

func sortedUnique(xs []string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// Scenarios returns a run's credited scenarios ordered by (bucket ord,
// name), scenarios of unknown buckets last.
func (l *Ledger) Scenarios(ctx context.Context, id string) ([]scenario.Scenario, error) {
	return l.ScenariosAfter(ctx, id, "", 0)
}

// ScenariosAfter is the next page of Scenarios: at most n (all when n <= 0)
// from the one after the scenario named after ("" from the first; none when
// the run has no scenario of that name).
func (l *Ledger) ScenariosAfter(_ context.Context, id, after string, n int) ([]scenario.Scenario, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Scenarios"); err != nil {
		return nil, err
	}
	rn := l.runs[id]
	if rn == nil {
		return nil, nil
	}
	js := slices.Clone(rn.scenarios)
	ord := func(j journalled) (int, bool) {
		if b := rn.bucket(j.bucket); b != nil {
			return b.Ord, true
		}
		return 0, false
	}
	slices.SortStableFunc(js, func(a, b journalled) int {
		oa, ka := ord(a)
		ob, kb := ord(b)
		switch {
		case ka && !kb:
			return -1
		case !ka && kb:
			return 1
		}
		return cmp.Or(cmp.Compare(oa, ob), cmp.Compare(a.name, b.name))
	})
	if after != "" {
		i := slices.IndexFunc(js, func(j journalled) bool { return j.name == after })
		if i < 0 {
			return nil, nil
		}
		js = js[i+1:]
	}
	if n > 0 && len(js) > n {
		js = js[:n]
	}
	var out []scenario.Scenario
	for _, j := range js {
		sc, err := scenario.Decode(j.body)
		if err != nil {
			return nil, fmt.Errorf("ledgertest: scenarios of run %s: %w", id, err)
		}
		out = append(out, *sc)
	}
	return out, nil
}

// Count is the number of credited scenarios of a run.
func (l *Ledger) Count(_ context.Context, id string) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("Count"); err != nil {
		return 0, err
	}
	if rn := l.runs[id]; rn != nil {
		return len(rn.scenarios), nil
	}
	return 0, nil
}

// AddSubGoal records a run-time sub-goal; idempotent on name (the first
// wins).
func (l *Ledger) AddSubGoal(_ context.Context, id string, g ledger.SubGoal) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("AddSubGoal"); err != nil {
		return false, err
	}
	if g.Name == "" {
		return false, fmt.Errorf("ledgertest: add sub-goal to run %s: no name", id)
	}
	rn := l.runs[id]
	if rn == nil {
		return false, fmt.Errorf("ledgertest: add sub-goal %s to run %s: %w", g.Name, id, errNoRun(id))
	}
	if _, ok := rn.subgoals[g.Name]; ok {
		return false, nil
	}
	if g.Params == nil {
		g.Params = map[string]string{}
	}
	g.Params = maps.Clone(g.Params)
	rn.subgoals[g.Name] = g
	return true, nil
}

// SubGoals lists a run's run-time sub-goals by name.
func (l *Ledger) SubGoals(_ context.Context, id string) ([]ledger.SubGoal, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("SubGoals"); err != nil {
		return nil, err
	}
	rn := l.runs[id]
	if rn == nil {
		return nil, nil
	}
	var out []ledger.SubGoal
	for _, name := range slices.Sorted(maps.Keys(rn.subgoals)) {
		g := rn.subgoals[name]
		g.Params = maps.Clone(g.Params)
		out = append(out, g)
	}
	return out, nil
}

// BeginDelivery records that a writer began delivery n of a slice and
// returns the slice's charges, as ledger.Store.BeginDelivery does.
func (l *Ledger) BeginDelivery(_ context.Context, id, slice string, n int, _ string) (ledger.Charges, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("BeginDelivery"); err != nil {
		return ledger.Charges{}, err
	}
	return l.delivery(id, slice, n, ledger.DeliveryBegan)
}

// EndDelivery records how delivery n of a slice ended and returns the
// slice's charges, as ledger.Store.EndDelivery does.
func (l *Ledger) EndDelivery(_ context.Context, id, slice string, n int, _ string, outcome ledger.DeliveryOutcome, _ string) (ledger.Charges, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.enter("EndDelivery"); err != nil {
		return ledger.Charges{}, err
	}
	if outcome != ledger.DeliveryFailed && outcome != ledger.DeliveryReleased {
		return ledger.Charges{}, fmt.Errorf("ledgertest: end delivery %d of slice %s: outcome %q is neither failed nor released", n, slice, outcome)
	}
	return l.delivery(id, slice, n, outcome)
}

func (l *Ledger) delivery(id, slice string, n int, outcome ledger.DeliveryOutcome) (ledger.Charges, error) {
	if n < 1 {
		return ledger.Charges{}, fmt.Errorf("ledgertest: delivery %d < 1", n)
	}
	rn := l.runs[id]
	if rn == nil || !slices.ContainsFunc(rn.slices, func(s ledger.Slice) bool { return s.ID == slice }) {
		return ledger.Charges{}, fmt.Errorf("ledgertest: delivery %d of slice %s of run %s: slice unknown: %w", n, slice, id, ledger.ErrNotFound)
	}
	now := 0
	for _, x := range rn.scenarios {
		if x.slice == slice {
			now++
		}
	}
	if rn.deliveries == nil {
		rn.deliveries = map[string][]ledger.DeliveryRecord{}
	}
	recs := rn.deliveries[slice]
	switch i := slices.IndexFunc(recs, func(r ledger.DeliveryRecord) bool { return r.Delivery == n }); {
	case i < 0:
		recs = append(recs, ledger.DeliveryRecord{Delivery: n, Outcome: outcome, Journalled: now})
	case recs[i].Outcome == ledger.DeliveryBegan && outcome != ledger.DeliveryBegan:
		recs[i].Outcome = outcome
	}
	rn.deliveries[slice] = recs
	var upTo []ledger.DeliveryRecord
	for _, r := range recs {
		if r.Delivery <= n {
			upTo = append(upTo, r)
		}
	}
	return ledger.ChargesOf(upTo, n, now), nil
}
