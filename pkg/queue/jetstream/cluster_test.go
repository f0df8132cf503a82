package jetstream

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
	natsjs "github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/suitegen/suitegen/pkg/metrics"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// cluster is three in-process NATS servers with JetStream, routed to each
// other on loopback ports, each with its own store in a temp dir.
type cluster struct {
	servers []*server.Server
	opts    []*server.Options
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	ports := make([]int, n)
	var routes []*url.URL
	for i := range ports {
		ports[i] = freePort(t)
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", ports[i])})
	}
	c := &cluster{}
	for i := 0; i < n; i++ {
		o := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
			Cluster: server.ClusterOpts{Name: "suitegen-test", Host: "127.0.0.1", Port: ports[i]},
			Routes:  routes,
		}
		s, err := server.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		c.servers = append(c.servers, s)
		c.opts = append(c.opts, o)
	}
	t.Cleanup(func() {
		for _, s := range c.servers {
			s.Shutdown()
			s.WaitForShutdown()
		}
	})
	for _, s := range c.servers {
		if !s.ReadyForConnections(30 * time.Second) {
			t.Fatal("a cluster server did not become ready")
		}
	}
	// JetStream answers once the servers have elected a meta leader.
	nc, err := nats.Connect(c.url())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := natsjs.New(nc)
	deadline := time.Now().Add(testenv.Patience)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		_, err := js.AccountInfo(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster's JetStream never answered: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return c
}

func (c *cluster) url() string {
	var urls []string
	for _, s := range c.servers {
		if s.Running() {
			urls = append(urls, s.ClientURL())
		}
	}
	return strings.Join(urls, ",")
}

// TestReplicatedQueue: against a 3-server cluster, Replicas 3 puts the
// stream and consumer on all three servers; the queue keeps publishing and
// delivering with one server gone; and a process connecting with another
// replica count leaves the stream and consumer as they are.
func TestReplicatedQueue(t *testing.T) {
	c := startCluster(t, 3)
	cfg := testConfig(c.url())
	cfg.Replicas = 3
	q := connect(t, cfg)
	si, err := q.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if si.Config.Replicas != 3 || si.Cluster == nil || len(si.Cluster.Replicas) != 2 {
		t.Fatalf("stream: replicas %d, cluster %+v; want 3 (a leader and 2 replicas)", si.Config.Replicas, si.Cluster)
	}
	ci, err := q.cons.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ci.Config.Replicas != 3 || ci.Cluster == nil || len(ci.Cluster.Replicas) != 2 {
		t.Fatalf("consumer: replicas %d, cluster %+v; want 3", ci.Config.Replicas, ci.Cluster)
	}

	// A process configured for 1 replica connects: nothing is reset.
	one := cfg
	one.Replicas = 1
	one.MaxDeliver = 7
	q1 := connect(t, one)
	if q1.Config().Replicas != 3 || q1.Config().MaxDeliver != cfg.MaxDeliver {
		t.Errorf("the second process reports replicas %d, max deliver %d; want the server's 3 and %d", q1.Config().Replicas, q1.Config().MaxDeliver, cfg.MaxDeliver)
	}
	if si, _ := q.stream.Info(t.Context()); si.Config.Replicas != 3 {
		t.Errorf("a connecting process reset the stream's replicas to %d", si.Config.Replicas)
	}
	if ci, _ := q.cons.Info(t.Context()); ci.Config.Replicas != 3 || ci.Config.MaxDeliver != cfg.MaxDeliver {
		t.Errorf("a connecting process changed the consumer: replicas %d, max deliver %d", ci.Config.Replicas, ci.Config.MaxDeliver)
	}

	// One server goes: the other two still hold a quorum of every replica
	// group, so slices published before and after are delivered.
	publish(t, q, newSlice("r1", 1))
	victim := 0
	if si.Cluster != nil {
		for i, s := range c.servers {
			if s.Name() == si.Cluster.Leader {
				victim = i // the stream's leader: the hardest one to lose
			}
		}
	}
	c.servers[victim].Shutdown()
	c.servers[victim].WaitForShutdown()
	survivors := c.url()
	cfg.URL = survivors
	// The survivors elect new leaders first; until then the stream cannot
	// be looked up, so connecting is retried as publishing is below.
	var q2 *Queue
	var connErr error
	for deadline := time.Now().Add(testenv.Patience); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		q2, connErr = Connect(ctx, cfg)
		cancel()
		if connErr == nil {
			break
		}
	}
	if connErr != nil {
		t.Fatalf("connect with a server gone: %v", connErr)
	}
	t.Cleanup(q2.Close)
	var pubErr error
	for deadline := time.Now().Add(testenv.Patience); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		_, pubErr = q2.Publish(ctx, newSlice("r1", 2))
		cancel()
		if pubErr == nil {
			break
		}
	}
	if pubErr != nil {
		t.Fatalf("publish with a server gone: %v", pubErr)
	}
	got := map[string]bool{}
	for len(got) < 2 {
		d := next(t, q2, 60*time.Second)
		got[d.Slice.ID] = true
		if err := d.Ack(t.Context()); err != nil {
			t.Fatalf("ack with a server gone: %v", err)
		}
	}
	if !got["r1/1/1"] || !got["r1/1/2"] {
		t.Fatalf("delivered %v, want both slices", got)
	}
}

// TestReplicasMoreThanServers: asking for more replicas than the cluster
// has servers fails at Connect with the server's reason.
func TestReplicasMoreThanServers(t *testing.T) {
	c := startCluster(t, 3)
	cfg := testConfig(c.url())
	cfg.Stream, cfg.Replicas = "TOO_MANY", 5
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if q, err := Connect(ctx, cfg); err == nil {
		q.Close()
		t.Fatal("5 replicas on 3 servers connected")
	} else if !strings.Contains(err.Error(), "TOO_MANY") {
		t.Errorf("error does not name the stream: %v", err)
	}
}

// TestConsumerRidesOutLeaderLoss: a consumer is working through a replicated
// (R3) stream when the server leading the stream and the consumer, the one
// the consumer is connected to, shuts down while the consumer holds a slice. The consumer
// reconnects to a survivor, acks that slice (Ack's retries ride out the
// election) and goes on receiving; at the end every slice
// was acked exactly once: none lost, none delivered again after the server
// confirmed its ack, nothing left on the stream or the consumer.
func TestConsumerRidesOutLeaderLoss(t *testing.T) {
	const slices = 60
	c := startCluster(t, 3)
	cfg := testConfig(c.url())
	cfg.Replicas = 3
	// Long enough that an election does not make every held slice come back.
	cfg.AckWait = 5 * time.Second
	pub := connect(t, cfg)
	for i := 1; i <= slices; i++ {
		publish(t, pub, newSlice("lead", i))
	}
	si, err := pub.stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var leader *server.Server
	urls := []string{}
	for _, s := range c.servers {
		if si.Cluster != nil && s.Name() == si.Cluster.Leader {
			leader = s
			urls = append([]string{s.ClientURL()}, urls...)
		} else {
			urls = append(urls, s.ClientURL())
		}
	}
	if leader == nil {
		t.Fatalf("no stream leader reported: %+v", si.Cluster)
	}
	// The consumer is led from the same server, so the ack of the held
	// slice below has lost its consumer leader as well.
	leadsConsumer := func() bool {
		ci, err := pub.cons.Info(t.Context())
		return err == nil && ci.Cluster != nil && ci.Cluster.Leader == leader.Name()
	}
	for deadline := time.Now().Add(testenv.Patience); !leadsConsumer(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the consumer's leadership never moved to %s", leader.Name())
		}
		req := fmt.Sprintf(`{"placement":{"preferred":%q}}`, leader.Name())
		subj := fmt.Sprintf("$JS.API.CONSUMER.LEADER.STEPDOWN.%s.%s", pub.cfg.Stream, pub.cfg.Consumer)
		if _, err := pub.Conn().Request(subj, []byte(req), 5*time.Second); err != nil {
			t.Logf("consumer leader stepdown: %v", err)
		}
	}
	// The consumer's connection is to the leader, so losing it also costs
	// the consumer its connection.
	ccfg, m := counted(cfg)
	ccfg.URL = strings.Join(urls, ",")
	q, err := Connect(t.Context(), ccfg, nats.DontRandomize())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	if got := q.Conn().ConnectedServerName(); got != leader.Name() {
		t.Fatalf("the consumer is connected to %s, want the stream leader %s", got, leader.Name())
	}

	acked := map[string]int{}    // acks the server confirmed, per slice
	afterAck := map[string]int{} // deliveries of a slice already acked
	deliveries := map[string]int{}
	var transient, ackFailed int
	killed, held := false, ""
	deadline := time.Now().Add(testenv.Patience)
	for len(acked) < slices {
		if time.Now().After(deadline) {
			t.Fatalf("after %s, %d of %d slices acked (%d transient errors)", testenv.Patience, len(acked), slices, transient)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		d, err := q.Next(ctx)
		cancel()
		if err != nil {
			// Fetches meet the lost connection and the election: the
			// writer backs off and asks again, and so does this consumer.
			transient++
			time.Sleep(100 * time.Millisecond)
			continue
		}
		id := d.Slice.ID
		deliveries[id]++
		if acked[id] > 0 {
			afterAck[id]++
		}
		if !killed && len(acked) == slices/4 {
			// Between a slice's receipt and its ack: the ack meets the
			// lost connection and the election.
			held = id
			leader.Shutdown()
			leader.WaitForShutdown()
			killed = true
		}
		if err := d.Ack(t.Context()); err != nil {
			ackFailed++ // not confirmed: the server redelivers it
			continue
		}
		acked[id]++
	}
	for i := 1; i <= slices; i++ {
		id := newSlice("lead", i).ID
		if acked[id] != 1 {
			t.Errorf("slice %s acked %d times", id, acked[id])
		}
	}
	if len(afterAck) > 0 {
		t.Errorf("delivered again after a confirmed ack: %v", afterAck)
	}
	if got := q.Conn().ConnectedServerName(); got == leader.Name() {
		t.Errorf("the consumer is still connected to %s", got)
	}
	waitPending(t, q, 0, 0)
	// A work queue drops what was acked: nothing is left on the stream.
	for deadline := time.Now().Add(testenv.Patience); ; time.Sleep(100 * time.Millisecond) {
		info, err := q.stream.Info(t.Context())
		if err == nil && info.State.Msgs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream still holds messages: %v %+v", err, info)
		}
	}
	redelivered := 0
	for _, n := range deliveries {
		redelivered += n - 1
	}
	// Whether the held slice's ack met the election depends on how fast
	// the survivors elect: printed, not asserted.
	v := m.For("lead").AcksRetried
	t.Logf("%d slices, leader %s shut down after %d acks holding %s; %d fetch errors, %d acks unconfirmed, %d redeliveries; acks retried: %v confirmed, %v gave up",
		slices, leader.Name(), slices/4, held, transient, ackFailed, redelivered,
		testutil.ToFloat64(v.WithLabelValues(metrics.AckConfirmed)), testutil.ToFloat64(v.WithLabelValues(metrics.AckGaveUp)))
}
