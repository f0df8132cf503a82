package testenv

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSCluster gives the test n JetStream servers routed to each other on
// loopback ports, each with its own store, shut down at cleanup. It returns
// a client URL listing every server, once the cluster's JetStream answers
// (its meta leader is elected).
func NATSCluster(t testing.TB, n int) string {
	t.Helper()
	// Every route port at once, so no two servers are handed the same one.
	var routes []*url.URL
	var held []net.Listener
	ports := make([]int, n)
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("testenv: nats cluster: %v", err)
		}
		held = append(held, ln)
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", ports[i])})
	}
	// The stores first: a cleanup runs after every one registered later, and
	// the servers must be down before their stores are removed (a server
	// still writing one fails the removal).
	stores := make([]string, n)
	for i := range stores {
		stores[i] = t.TempDir()
	}
	var servers []*server.Server
	t.Cleanup(func() {
		for _, s := range servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	})
	for i := range n {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: stores[i], NoLog: true, NoSigs: true,
			Cluster: server.ClusterOpts{Name: "testenv", Host: "127.0.0.1", Port: ports[i]},
			Routes:  routes,
		}
		s, err := server.NewServer(o)
		if err != nil {
			t.Fatalf("testenv: nats cluster: %v", err)
		}
		servers = append(servers, s)
	}
	// The route ports are let go only now, just before the servers bind them.
	for _, ln := range held {
		ln.Close()
	}
	for _, s := range servers {
		go s.Start()
	}
	var urls []string
	for _, s := range servers {
		if !s.ReadyForConnections(30 * time.Second) {
			t.Fatal("testenv: nats cluster: a server did not become ready")
		}
		urls = append(urls, s.ClientURL())
	}
	u := strings.Join(urls, ",")
	nc, err := nats.Connect(u)
	if err != nil {
		t.Fatalf("testenv: nats cluster: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("testenv: nats cluster: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			return u
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: nats cluster: JetStream never answered: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
