package outage_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/outage"
)

// TestRetry: an outage, or a try's own request timeout, is tried again
// until it answers; any other error ends it at once; a single try when no
// timeout is given; the last error once the timeout is spent.
func TestRetry(t *testing.T) {
	b := outage.Backoff{First: time.Millisecond, Max: 2 * time.Millisecond, Timeout: time.Hour}
	noResponders := errors.New("nats: no responders available for request")
	down := fmt.Errorf("stream: %w", &outage.Error{Err: noResponders})
	for _, c := range []struct {
		name  string
		b     outage.Backoff
		errs  []error // the tries' errors, then nil
		tries int
		err   error
	}{
		{"answers after outages", b, []error{down, down, context.DeadlineExceeded}, 4, nil},
		{"not an outage", b, []error{down, errors.New("stream name in use with other settings")}, 2, errors.New("")},
		{"one try without a timeout", outage.Backoff{}, []error{down}, 1, down},
	} {
		tries := 0
		err := c.b.Retry(t.Context(), nil, "test", func(context.Context) error {
			tries++
			if tries <= len(c.errs) {
				return c.errs[tries-1]
			}
			return nil
		})
		if tries != c.tries || (err == nil) != (c.err == nil) {
			t.Errorf("%s: %d tries, %v; want %d tries, error %v", c.name, tries, err, c.tries, c.err != nil)
		}
	}

	// A server that never answers: the last error once the timeout is spent.
	tries := 0
	err := outage.Backoff{First: time.Millisecond, Max: time.Millisecond, Timeout: 20 * time.Millisecond}.Retry(t.Context(), nil, "test",
		func(context.Context) error { tries++; return down })
	if !errors.Is(err, noResponders) || tries < 1 {
		t.Errorf("never answering: %d tries, %v", tries, err)
	}

	// The caller's context ending ends the tries, with the last error.
	ctx, cancel := context.WithCancel(t.Context())
	err = b.Retry(ctx, nil, "test", func(context.Context) error { cancel(); return down })
	if !errors.Is(err, noResponders) {
		t.Errorf("cancelled: %v", err)
	}
}
