package queue

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/proto/suitegenv1"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// testConfig has a short ack wait so redelivery tests take about a second.
func testConfig(url string) Config {
	return Config{
		URL:        url,
		AckWait:    500 * time.Millisecond,
		MaxDeliver: 3,
		FetchWait:  250 * time.Millisecond,
	}
}

func connect(t testing.TB, cfg Config) *Queue {
	t.Helper()
	q, err := Connect(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(q.Close)
	return q
}

func newSlice(run string, n int) *suitegenv1.Slice {
	return &suitegenv1.Slice{
		RunId:   run,
		SliceId: fmt.Sprintf("%s/1/%d", run, n),
		Round:   1,
		Kind:    suitegenv1.Slice_KIND_WORK,
		Contract: &suitegenv1.ContractRef{
			Agent:  "shop-support",
			Sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		},
		Buckets: []*suitegenv1.BucketAssignment{{
			BucketId: fmt.Sprintf("b%d", n),
			Cell:     "cancel-order",
			UseCase:  "cancel-order",
			Angle:    "order already shipped",
			Outcome:  "refuse",
			Axes:     map[string]string{"order.status": "delivered", "payment": "card"},
			Want:     3,
		}},
		Spread: &suitegenv1.CallerSpread{
			NameInitials:  []string{"K", "M"},
			CodePrefixes:  []string{"7"},
			Personalities: []string{"Anxious"},
		},
		TurnBudget:  12,
		Seed:        int64(n),
		Lessons:     []string{"do not invent order ids"},
		CreatedUnix: 1773158400,
	}
}

func publish(t testing.TB, q *Queue, s *suitegenv1.Slice) {
	t.Helper()
	dup, err := q.Publish(t.Context(), s)
	if err != nil {
		t.Fatalf("Publish %s: %v", s.GetSliceId(), err)
	}
	if dup {
		t.Fatalf("Publish %s: unexpected duplicate", s.GetSliceId())
	}
}

// next calls Next with a deadline so a missing message fails the test
// instead of hanging it.
func next(t testing.TB, q *Queue, within time.Duration) *Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	d, err := q.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return d
}

// expectNothing asserts that no delivery arrives within d.
func expectNothing(t testing.TB, q *Queue, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), within)
	defer cancel()
	d, err := q.Next(ctx)
	if err == nil {
		t.Fatalf("Next: got %s (delivery %d), want nothing", d.Slice.GetSliceId(), d.NumDelivered)
	}
	if ctx.Err() == nil {
		t.Fatalf("Next: %v, want deadline", err)
	}
}

func pending(t testing.TB, q *Queue) (uint64, uint64) {
	t.Helper()
	n, a, err := q.Pending(t.Context())
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	return n, a
}

// waitPending polls Pending until it reports want: the server updates a
// consumer's counts shortly after a publish, not within it.
func waitPending(t testing.TB, q *Queue, wantPending, wantAck uint64) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		n, a := pending(t, q)
		if n == wantPending && a == wantAck {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending=%d ackPending=%d, want %d and %d", n, a, wantPending, wantAck)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
