package stack

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
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
	if u, err := url.Parse(n.URL()); err != nil || u.Hostname() != "127.0.0.1" || u.User == nil {
		t.Fatalf("URL = %s (%v), want a token on 127.0.0.1", redact(n.URL()), err)
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

// TestNATSWantsToken: the embedded server listens on loopback only and
// takes no client without its token, which is kept (mode 0600) in the
// store dir and is the same after a restart on that store.
func TestNATSWantsToken(t *testing.T) {
	store := t.TempDir()
	n, err := StartNATS(NATSConfig{StoreDir: store, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(n.URL())
	if err != nil {
		t.Fatal(err)
	}
	tok := u.User.Username()
	if len(tok) < 32 {
		t.Fatalf("token %d characters long, want at least 32", len(tok))
	}
	bare := *u
	bare.User = nil
	if nc, err := nats.Connect(bare.String(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("a client without the token was let in")
	}
	wrong := *u
	wrong.User = url.User("not-" + tok)
	if nc, err := nats.Connect(wrong.String(), nats.MaxReconnects(0)); err == nil {
		nc.Close()
		t.Fatal("a client with a wrong token was let in")
	}
	nc, err := nats.Connect(n.URL())
	if err != nil {
		t.Fatalf("a client with the token: %v", err)
	}
	nc.Close()
	fi, err := os.Stat(filepath.Join(store, TokenFileName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v, want mode 0600", fi, err)
	}
	first := n.URL()
	n.Shutdown()
	n, err = StartNATS(NATSConfig{StoreDir: store, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Shutdown()
	if u2, _ := url.Parse(n.URL()); u2.User.Username() != tok {
		t.Errorf("restarted on the same store with another token (%s, first %s)", redact(n.URL()), redact(first))
	}
	for _, host := range []string{"0.0.0.0", "::", "10.0.0.1", "example.org"} {
		if _, err := StartNATS(NATSConfig{StoreDir: t.TempDir(), Host: host, Logger: discard}); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("Host %s: %v, want a refusal naming loopback", host, err)
		}
	}
}

func TestNATSConfigValidation(t *testing.T) {
	if _, err := StartNATS(NATSConfig{}); err == nil || !strings.Contains(err.Error(), "StoreDir") {
		t.Fatalf("empty config: %v, want an error naming StoreDir", err)
	}
}
