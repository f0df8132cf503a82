package ledger

import (
	"fmt"
	"slices"
)

// RunState is where a run is in its lifecycle. The roles move their own run:
//
//	planned ─► writing ─► reviewing ─► done
//	              │           │
//	              ├──► failed ◄┤
//	              └─► cancelled ◄┘ (also from planned)
//
// A planner moves a run it planned to writing, and when its rounds are over
// to reviewing (the ask is met) or failed (it is not, and nothing is left to
// deal). The reviewer moves a reviewing run to done or failed. A run its user
// stops is cancelled, and a cancelled run resumes to writing. Done and failed
// are final: a process started again on a finished run (a retried Job)
// reports how it ended and deals nothing.
type RunState string

// Run states.
const (
	RunPlanned   RunState = "planned"
	RunWriting   RunState = "writing"
	RunReviewing RunState = "reviewing"
	RunDone      RunState = "done"
	RunFailed    RunState = "failed"
	RunCancelled RunState = "cancelled"
)

// runMoves lists, per state, the states a run may move to from it.
var runMoves = map[RunState][]RunState{
	RunPlanned:   {RunWriting, RunFailed, RunCancelled},
	RunWriting:   {RunReviewing, RunFailed, RunCancelled},
	RunReviewing: {RunDone, RunFailed, RunCancelled},
	RunCancelled: {RunWriting},
	RunDone:      nil,
	RunFailed:    nil,
}

// Known reports whether s is a run state.
func (s RunState) Known() bool { _, ok := runMoves[s]; return ok }

// Final reports whether a run in s is over for good: nothing moves it again.
func (s RunState) Final() bool { return s == RunDone || s == RunFailed }

// Live reports whether a run in s is being planned, written or reviewed; a
// run that is not is written no more unless it is resumed.
func (s RunState) Live() bool { return s == RunPlanned || s == RunWriting || s == RunReviewing }

// To checks a move from s to next. Staying in a state is always allowed, so a
// role that repeats its move after a restart succeeds; any other move not in
// the lifecycle is a *TransitionError.
func (s RunState) To(next RunState) error {
	if !next.Known() {
		return fmt.Errorf("ledger: unknown run state %q", next)
	}
	if s == next || slices.Contains(runMoves[s], next) {
		return nil
	}
	return &TransitionError{Of: "run", From: string(s), To: string(next)}
}

// BucketState is where a bucket is between rounds:
//
//	open ─claim─► claimed ─fold─► done | open | blocked
//	done ─raise─► open
//
// A planner claims open buckets for a slice; folding settles every bucket of
// a finished slice from the journal (done when it has its want, blocked when
// its attempts ran out, open otherwise); a top-up raises the want of an open
// or done bucket, which reopens a done one.
type BucketState string

// Bucket states.
const (
	BucketOpen    BucketState = "open"
	BucketClaimed BucketState = "claimed"
	BucketDone    BucketState = "done"
	BucketBlocked BucketState = "blocked"
)

var bucketMoves = map[BucketState][]BucketState{
	BucketOpen:    {BucketClaimed},
	BucketClaimed: {BucketDone, BucketOpen, BucketBlocked},
	BucketDone:    {BucketOpen},
	BucketBlocked: nil,
}

// Known reports whether s is a bucket state.
func (s BucketState) Known() bool { _, ok := bucketMoves[s]; return ok }

// To checks a move from s to next, as RunState.To does.
func (s BucketState) To(next BucketState) error {
	if !next.Known() {
		return fmt.Errorf("ledger: unknown bucket state %q", next)
	}
	if s == next || slices.Contains(bucketMoves[s], next) {
		return nil
	}
	return &TransitionError{Of: "bucket", From: string(s), To: string(next)}
}

// settle is a claimed bucket's state once its slice has finished: done with
// its want credited, else blocked when this attempt was its last, else open
// for another round. attempts counts this one.
func settle(done, want, attempts, maxAttempts int) BucketState {
	switch {
	case done >= want:
		return BucketDone
	case attempts >= maxAttempts:
		return BucketBlocked
	}
	return BucketOpen
}

// SliceState is where a slice is: published until a writer finishes it (done)
// or the queue, a writer or the planner gives up on it (dead). A dead slice
// whose work is acked after all becomes done: its writes did commit.
type SliceState string

// Slice states.
const (
	SlicePublished SliceState = "published"
	SliceDone      SliceState = "done"
	SliceDead      SliceState = "dead"
)

var sliceMoves = map[SliceState][]SliceState{
	SlicePublished: {SliceDone, SliceDead},
	SliceDead:      {SliceDone},
	SliceDone:      nil,
}

// Known reports whether s is a slice state.
func (s SliceState) Known() bool { _, ok := sliceMoves[s]; return ok }

// Finished reports whether a slice in s counts toward its round's completion.
func (s SliceState) Finished() bool { return s == SliceDone || s == SliceDead }

// To checks a move from s to next, as RunState.To does.
func (s SliceState) To(next SliceState) error {
	if !next.Known() {
		return fmt.Errorf("ledger: unknown slice state %q", next)
	}
	if s == next || slices.Contains(sliceMoves[s], next) {
		return nil
	}
	return &TransitionError{Of: "slice", From: string(s), To: string(next)}
}

// from lists the states a slice may move to next from, itself excluded.
func (next SliceState) from() []string {
	var out []string
	for s, tos := range sliceMoves {
		if slices.Contains(tos, next) {
			out = append(out, string(s))
		}
	}
	slices.Sort(out)
	return out
}

// SliceKind says whether a slice comes from the plan's rounds or from the
// reviewer's gap rounds.
type SliceKind string

// Slice kinds.
const (
	SliceWork SliceKind = "work"
	SliceGap  SliceKind = "gap"
)

// Origin says who put a bucket on the canvas.
type Origin string

// Bucket origins.
const (
	OriginPlan   Origin = "plan"   // derived by the planner
	OriginWriter Origin = "writer" // reported by a writer (report_bucket)
	OriginReview Origin = "review" // added by the reviewer
)

// TransitionError is a move the lifecycle does not allow, e.g. a finished run
// moved back to writing.
type TransitionError struct {
	Of       string // "run", "bucket" or "slice"
	ID       string // which one, when known
	From, To string
}

func (e *TransitionError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("ledger: %s %s cannot move from %s to %s", e.Of, e.ID, e.From, e.To)
	}
	return fmt.Sprintf("ledger: a %s cannot move from %s to %s", e.Of, e.From, e.To)
}
