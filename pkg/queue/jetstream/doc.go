// Package jetstream is the JetStream work queue that carries slices from the
// planner and reviewer to stateless writers.
//
// One work-queue stream holds the slices of every run on subjects
// "<prefix>.<run>"; one durable pull consumer is shared by all writers, so a
// slice goes to exactly one writer at a time. The slice id is the Nats-Msg-Id,
// so a planner that replays its publishes after a crash adds nothing.
//
// The queue only moves work; Postgres is the source of truth. What travels
// is a queue.Slice in its wire form (queue.Slice.Encode, queue.Decode). A
// writer:
//
//	d, err := q.Next(ctx)         // one message, when it is ready to start on it
//	stop := d.Heartbeat(ctx, 0)   // InProgress well inside AckWait while it works
//	... journal proved scenarios in the ledger ...
//	d.Ack(ctx)                    // after the ledger commit; waits for the server's confirmation,
//	                              // sending it again through a leader change (Ack)
//
// Next fetches exactly one message per call and never prefetches: a message
// sitting in a client buffer behind a slow slice would age out of its ack
// wait and be delivered twice. Provider tokens are taken later, per model
// call, while the heartbeat keeps the delivery alive.
//
// A slice that keeps failing is redelivered until MaxDeliver, a backstop:
// callers usually end a slice sooner on their own count of its failures,
// and on the final delivery (Delivery.Last) at the latest they record it as
// dead in the ledger and Term it, so exhausted slices count toward
// completion instead of vanishing.
// DeadLetters reports exhaustion the caller did not see (a writer that died
// holding the final delivery).
package jetstream
