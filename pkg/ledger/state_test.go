package ledger

import (
	"errors"
	"testing"
)

func TestRunLifecycle(t *testing.T) {
	allowed := map[[2]RunState]bool{
		{RunPlanned, RunWriting}: true, {RunPlanned, RunFailed}: true, {RunPlanned, RunCancelled}: true,
		{RunWriting, RunReviewing}: true, {RunWriting, RunFailed}: true, {RunWriting, RunCancelled}: true,
		{RunReviewing, RunDone}: true, {RunReviewing, RunFailed}: true, {RunReviewing, RunCancelled}: true,
		{RunCancelled, RunWriting}: true,
	}
	all := []RunState{RunPlanned, RunWriting, RunReviewing, RunDone, RunFailed, RunCancelled}
	for _, from := range all {
		for _, to := range all {
			err := from.To(to)
			want := from == to || allowed[[2]RunState{from, to}]
			var te *TransitionError
			switch {
			case want && err != nil:
				t.Errorf("%s -> %s: %v, want allowed", from, to, err)
			case !want && !errors.As(err, &te):
				t.Errorf("%s -> %s: %v, want a *TransitionError", from, to, err)
			}
		}
		if err := from.To("planning"); err == nil || errors.As(err, new(*TransitionError)) {
			t.Errorf("%s -> an unknown state: %v, want an unknown-state error", from, err)
		}
	}
	for _, s := range all {
		if s.Final() != (s == RunDone || s == RunFailed) {
			t.Errorf("%s.Final() = %v", s, s.Final())
		}
	}
}

func TestBucketAndSliceLifecycle(t *testing.T) {
	for _, c := range []struct {
		from, to BucketState
		ok       bool
	}{
		{BucketOpen, BucketClaimed, true}, {BucketClaimed, BucketDone, true}, {BucketClaimed, BucketOpen, true},
		{BucketClaimed, BucketBlocked, true}, {BucketDone, BucketOpen, true}, {BucketOpen, BucketOpen, true},
		{BucketOpen, BucketDone, false}, {BucketBlocked, BucketOpen, false}, {BucketDone, BucketClaimed, false},
		{BucketBlocked, BucketClaimed, false},
	} {
		if err := c.from.To(c.to); (err == nil) != c.ok {
			t.Errorf("bucket %s -> %s: %v, want ok=%v", c.from, c.to, err, c.ok)
		}
	}
	for _, c := range []struct {
		from, to SliceState
		ok       bool
	}{
		{SlicePublished, SliceDone, true}, {SlicePublished, SliceDead, true}, {SliceDead, SliceDone, true},
		{SliceDone, SliceDone, true}, {SliceDone, SliceDead, false}, {SliceDone, SlicePublished, false},
		{SliceDead, SlicePublished, false},
	} {
		if err := c.from.To(c.to); (err == nil) != c.ok {
			t.Errorf("slice %s -> %s: %v, want ok=%v", c.from, c.to, err, c.ok)
		}
	}
	if got := SliceDone.from(); len(got) != 2 || got[0] != "dead" || got[1] != "published" {
		t.Errorf("SliceDone.from() = %v", got)
	}
}

func TestSettle(t *testing.T) {
	for _, c := range []struct {
		done, want, attempts, max int
		want_                     BucketState
	}{
		{3, 3, 1, 3, BucketDone},
		{4, 3, 3, 3, BucketDone}, // its want credited on the last attempt
		{0, 0, 1, 3, BucketDone},
		{1, 3, 1, 3, BucketOpen},
		{1, 3, 3, 3, BucketBlocked},
		{0, 2, 4, 3, BucketBlocked},
	} {
		if got := settle(c.done, c.want, c.attempts, c.max); got != c.want_ {
			t.Errorf("settle(done %d, want %d, attempt %d of %d) = %s, want %s", c.done, c.want, c.attempts, c.max, got, c.want_)
		}
	}
}
