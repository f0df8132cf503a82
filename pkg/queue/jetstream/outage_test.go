package jetstream

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/suitegen/suitegen/pkg/outage"
)

// TestClassify: the queue marks its NATS outages for outage.Is by the
// error's type (a connection state, a JetStream API code), never its text,
// and leaves every other error as it is.
func TestClassify(t *testing.T) {
	yes := []error{
		fmt.Errorf("queue: fetch: %w", nats.ErrConnectionReconnecting),
		fmt.Errorf("queue: stream: %w", nats.ErrNoResponders),
		fmt.Errorf("queue: in progress: %w", nats.ErrTimeout),
		fmt.Errorf("queue: stream: %w", natsjs.ErrJetStreamNotEnabled),
		fmt.Errorf("queue: stream: %w", &natsjs.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}),
		fmt.Errorf("queue: stream: %w", &natsjs.APIError{Code: 500, ErrorCode: 10006, Description: "JetStream not in clustered mode"}),
		fmt.Errorf("queue: stream: %w", &natsjs.APIError{Code: 400, ErrorCode: 10005, Description: "insufficient resources"}),
	}
	no := []error{
		nil,
		errors.New("nats: no responders available for request"),
		fmt.Errorf("queue: stream: %w", natsjs.ErrStreamNotFound),
		fmt.Errorf("queue: stream: %w", &natsjs.APIError{Code: 400, ErrorCode: 10058, Description: "stream name already in use"}),
		fmt.Errorf("queue: %w", nats.ErrBadSubject),
	}
	for _, err := range yes {
		if outage.Is(err) {
			t.Errorf("outage.Is(%v) before the queue marks it: the outage package reads NATS errors itself", err)
		}
		got := classify(err)
		if !outage.Is(got) || !errors.Is(got, err) {
			t.Errorf("classify(%v) = %v, want it marked an outage and still wrapping it", err, got)
		}
		if again := classify(got); again != got {
			t.Errorf("classify marks %v twice", err)
		}
	}
	for _, err := range no {
		if got := classify(err); got != err || outage.Is(got) {
			t.Errorf("classify(%v) = %v, want it unchanged and no outage", err, got)
		}
	}
}
