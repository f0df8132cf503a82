package jetstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/queue"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// testConfig has a short ack wait so redelivery tests take about a second.
func testConfig(url string) queue.Config {
	return queue.Config{
		URL:        url,
		AckWait:    500 * time.Millisecond,
		MaxDeliver: 3,
		FetchWait:  250 * time.Millisecond,
	}
}

func connect(t testing.TB, cfg queue.Config) *Queue {
	t.Helper()
	q, err := Connect(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(q.Close)
	return q
}

func newSlice(run string, n int) queue.Slice {
	return queue.Slice{
		Run:     run,
		ID:      fmt.Sprintf("%s/1/%d", run, n),
		Round:   1,
		Buckets: []string{fmt.Sprintf("b%d", n)},
		Spread: queue.Spread{
			Initials:      []string{"K", "M"},
			CodePrefixes:  []string{"7"},
			Personalities: []string{"Anxious"},
			LineQualities: []string{"Weak mobile signal"},
			Spellings:     []string{"Reads codes digit by digit"},
			TalkOver:      1,
		},
		TurnBudget: 12,
		Lessons:    []string{"do not invent order ids"},
	}
}

func publish(t testing.TB, q *Queue, s queue.Slice) {
	t.Helper()
	dup, err := q.Publish(t.Context(), s)
	if err != nil {
		t.Fatalf("Publish %s: %v", s.ID, err)
	}
	if dup {
		t.Fatalf("Publish %s: unexpected duplicate", s.ID)
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
		t.Fatalf("Next: got %s (delivery %d), want nothing", d.Slice.ID, d.NumDelivered)
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
	deadline := time.Now().Add(testenv.Patience)
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
