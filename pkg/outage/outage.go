// Package outage tells an outage of the servers suitegen depends on (the
// PostgreSQL ledger and worlds, the NATS JetStream queue) from every other
// failure. An outage says nothing about the work that met it: the same work
// succeeds once the servers answer again, so the caller waits and retries
// instead of blaming (or spending) the work.
//
// The classification is by the error's behaviour, never its text: the
// driver's own retry verdict, SQLSTATE classes, network errors, NATS
// connection states and JetStream API codes.
package outage

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/suitegen/suitegen/pkg/script"
)

// Is reports whether err is an outage: the database or the queue out of
// reach, shutting down, starting up, failing over or out of resources, or a
// transaction the server aborted only because of concurrent ones. A handler
// stopped by one of its Starlark limits is the contract's doing, whatever the
// connection did after, and never an outage; nor is the end of a context,
// whatever it interrupted: only its owner knows whether it set the deadline
// for the server's sake or its own.
func Is(err error) bool {
	if err == nil || errors.Is(err, script.ErrLimit) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return Code(pgErr.Code)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, pgconn.ErrConnClosed) {
		return true
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connErr) || errors.As(err, &netErr) || pgconn.SafeToRetry(err) {
		return true
	}
	return queue(err)
}

// Code reports an SQLSTATE of an outage: connection exceptions (class 08),
// the server shutting down, starting up or ending the session (57P01,
// 57P02, 57P03, 57P05), insufficient resources (class 53: disk full, out of
// memory, too many connections), a write sent to a server that has become a
// standby (25006, during a failover), and transactions aborted by concurrent
// ones (40001 serialization failure, 40P01 deadlock), which succeed when
// tried again.
func Code(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "57P05", "25006", "40001", "40P01":
		return true
	}
	return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53")
}

// JetStream API error codes of a cluster that is not ready: no peers to
// place on, not active, not assigned, no meta leader, not the leader, a
// stream or consumer offline.
var clusterNotReady = map[jetstream.ErrorCode]bool{
	10005: true, // JSClusterNoPeersErr
	10006: true, // JSClusterNotActiveErr
	10007: true, // JSClusterNotAssignedErr
	10008: true, // JSClusterNotAvailErr
	10009: true, // JSClusterNotLeaderErr
	10118: true, // JSStreamOfflineErr
	10119: true, // JSConsumerOfflineErr
}

// queue reports a NATS connection that is down or reconnecting, a request
// nobody answered in time, and a JetStream API that is not ready (503, a
// cluster electing).
func queue(err error) bool {
	for _, e := range []error{nats.ErrConnectionClosed, nats.ErrConnectionReconnecting, nats.ErrDisconnected,
		nats.ErrNoServers, nats.ErrNoResponders, nats.ErrTimeout, nats.ErrStaleConnection,
		jetstream.ErrNoStreamResponse, jetstream.ErrJetStreamNotEnabled} {
		if errors.Is(err, e) {
			return true
		}
	}
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.Code == 503 || api.Code == 504 || clusterNotReady[api.ErrorCode]
	}
	return false
}
