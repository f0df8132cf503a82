package jetstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/testenv"
)

// BenchmarkRoundTrip measures one slice's trip through the queue: publish,
// fetch exactly one, double ack.
func BenchmarkRoundTrip(b *testing.B) {
	cfg := testConfig(testenv.NATS(b))
	cfg.AckWait = time.Minute
	q := connect(b, cfg)
	s := newSlice("bench", 0)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.ID = fmt.Sprintf("bench/1/%d", i)
		if _, err := q.Publish(ctx, s); err != nil {
			b.Fatal(err)
		}
		d, err := q.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Ack(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
