// Package queue is what the work queue carries from the planner and
// reviewer to stateless writers: a Slice, its wire form, and the queue's
// configuration and errors. The queue itself, on NATS JetStream, is
// pkg/queue/jetstream; the roles import this package for the slice and
// never link the NATS client.
//
// The queue only moves work; Postgres is the source of truth. What travels
// is a Slice, a hand-written type: the generated protobuf messages
// (proto/suitegenv1) are its wire form (Encode, Decode) and no one else's.
package queue
