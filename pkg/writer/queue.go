package writer

import (
	"context"

	"github.com/suitegen/suitegen/pkg/queue"
)

// Queue is the shared slice queue as a writer's Source.
func Queue(q *queue.Queue) Source { return queueSource{q} }

type queueSource struct{ q *queue.Queue }

func (s queueSource) Next(ctx context.Context) (Delivery, error) {
	d, err := s.q.Next(ctx)
	if err != nil {
		return nil, err
	}
	return queueDelivery{d}, nil
}

// queueDelivery is a *queue.Delivery with its fields as methods.
type queueDelivery struct{ *queue.Delivery }

func (d queueDelivery) Slice() queue.Slice { return d.Delivery.Slice }
func (d queueDelivery) Attempt() int       { return int(d.NumDelivered) }
