package stack

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func jsConnect(t *testing.T, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	return nc, js
}

// Publish, consume one, leave one; restart on the same store; the unacked
// message must still be there (file storage really on disk).
func TestNATSJetStreamRoundTripAndRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	store := t.TempDir()
	n, err := StartNATS(NATSConfig{StoreDir: store, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(n.URL(), "nats://127.0.0.1:") {
		t.Fatalf("URL = %s", n.URL())
	}
	nc, js := jsConnect(t, n.URL())
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "SLICES", Subjects: []string{"slices.>"}, Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"one", "two"} {
		if _, err := js.Publish(ctx, "slices.new", []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "w", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if string(msg.Data()) != "one" {
		t.Fatalf("first message %q", msg.Data())
	}
	if err := msg.DoubleAck(ctx); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	n.Shutdown()
	n.Shutdown() // idempotent

	n, err = StartNATS(NATSConfig{StoreDir: store, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	nc, js = jsConnect(t, n.URL())
	defer nc.Close()
	cons, err = js.Consumer(ctx, "SLICES", "w")
	if err != nil {
		t.Fatal(err)
	}
	msg, err = cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if string(msg.Data()) != "two" {
		t.Fatalf("after restart got %q, want two", msg.Data())
	}
	if err := msg.DoubleAck(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestNATSConfigValidation(t *testing.T) {
	if _, err := StartNATS(NATSConfig{}); err == nil || !strings.Contains(err.Error(), "StoreDir") {
		t.Fatalf("empty config: %v, want an error naming StoreDir", err)
	}
}
