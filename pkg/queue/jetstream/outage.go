package jetstream

import (
	"errors"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/suitegen/suitegen/pkg/outage"
)

// classify marks an error of the queue's that is an outage (unavailable) as
// one for outage.Is; every other error, and nil, is returned as it is.
func classify(err error) error {
	var marked *outage.Error
	if err == nil || errors.As(err, &marked) || !unavailable(err) {
		return err
	}
	return &outage.Error{Err: err}
}

// JetStream API error codes of a cluster that is not ready: no peers to
// place on, not active, not assigned, no meta leader, not the leader, a
// stream or consumer offline.
var clusterNotReady = map[natsjs.ErrorCode]bool{
	10005: true, // JSClusterNoPeersErr
	10006: true, // JSClusterNotActiveErr
	10007: true, // JSClusterNotAssignedErr
	10008: true, // JSClusterNotAvailErr
	10009: true, // JSClusterNotLeaderErr
	10118: true, // JSStreamOfflineErr
	10119: true, // JSConsumerOfflineErr
}

// unavailable reports a NATS connection that is down or reconnecting, a request
// nobody answered in time, and a JetStream API that is not ready (503, a
// cluster electing).
func unavailable(err error) bool {
	for _, e := range []error{nats.ErrConnectionClosed, nats.ErrConnectionReconnecting, nats.ErrDisconnected,
		nats.ErrNoServers, nats.ErrNoResponders, nats.ErrTimeout, nats.ErrStaleConnection,
		natsjs.ErrNoStreamResponse, natsjs.ErrJetStreamNotEnabled} {
		if errors.Is(err, e) {
			return true
		}
	}
	var api *natsjs.APIError
	if errors.As(err, &api) {
		return api.Code == 503 || api.Code == 504 || clusterNotReady[api.ErrorCode]
	}
	return false
}
