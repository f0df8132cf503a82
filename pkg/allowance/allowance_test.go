package allowance

import (
	"sync"
	"testing"
)

func TestSizeFollowsTheRepliesOfItsKind(t *testing.T) {
	s := New(2048)
	if got := s.Size("after try_calls"); got != 2048 {
		t.Fatalf("before any reply: %d, want the cap", got)
	}
	for i := range Warmup - 1 {
		s.Observe("after try_calls", s.Size("after try_calls"), 600+i)
	}
	if got := s.Size("after try_calls"); got != 2048 {
		t.Fatalf("before the warm-up is over: %d, want the cap", got)
	}
	s.Observe("after try_calls", 2048, 800)
	// 600, 601, 602, 800: the 95th percentile is 800, with the margin 1000.
	if got := s.Size("after try_calls"); got != 1000 {
		t.Fatalf("after four replies: %d, want 1000", got)
	}
	if got := s.Size("open"); got != 2048 {
		t.Fatalf("another kind: %d, want the cap", got)
	}
}

func TestSizeKeepsToFloorAndCap(t *testing.T) {
	s := New(2048)
	for range Warmup {
		s.Observe("finish", 2048, 12)
	}
	if got := s.Size("finish"); got != Floor {
		t.Fatalf("short replies: %d, want the floor %d", got, Floor)
	}
	for range Warmup {
		s.Observe("long", 2048, 1900)
	}
	if got := s.Size("long"); got != 2048 {
		t.Fatalf("long replies: %d, want the cap", got)
	}
	if got := New(100).Size("x"); got != 100 {
		t.Fatalf("a cap under the floor: %d", got)
	}
	small := New(100)
	for range Warmup {
		small.Observe("x", 100, 10)
	}
	if got := small.Size("x"); got != 100 {
		t.Fatalf("a cap under the floor bounds the floor too: %d", got)
	}
}

func TestACutReplyRestoresTheCap(t *testing.T) {
	s := New(2048)
	for range Window {
		s.Observe("submit", 2048, 400)
	}
	a := s.Size("submit")
	if a != 500 {
		t.Fatalf("sized %d, want 500", a)
	}
	// The reply used all it was given: it may have been cut.
	for range Window / 10 {
		s.Observe("submit", a, a)
	}
	if got := s.Size("submit"); got != 2048 {
		t.Fatalf("after cut replies: %d, want the cap", got)
	}
	// Old replies leave the window: it shrinks back once replies fit again.
	for range Window {
		s.Observe("submit", 2048, 400)
	}
	if got := s.Size("submit"); got != 500 {
		t.Fatalf("after replies fit again: %d, want 500", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := New(1024)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				s.Observe("k", s.Size("k"), 100+i+j%7)
			}
		}()
	}
	wg.Wait()
	if got := s.Size("k"); got < Floor || got > 1024 {
		t.Fatalf("size %d out of bounds", got)
	}
}
