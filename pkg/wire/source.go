package wire

import (
	"context"

	"github.com/suitegen/suitegen/pkg/queue/jetstream"
	"github.com/suitegen/suitegen/pkg/writer"
)

// WriterSource is the shared slice queue as a writer's Source: the writer
// sees slices and deliveries, never the queue's connection.
func WriterSource(q *jetstream.Queue) writer.Source {
	return writer.SourceFunc(func(ctx context.Context) (writer.Delivery, error) {
		d, err := q.Next(ctx)
		if err != nil {
			return nil, err
		}
		return jetstream.Work{Delivery: d}, nil
	})
}
