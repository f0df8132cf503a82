package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	natsjs "github.com/nats-io/nats.go/jetstream"

	"github.com/suitegen/suitegen/pkg/outage"
	"github.com/suitegen/suitegen/pkg/queue"
)

// Queue is one process's handle on the shared slice queue. It is safe for
// concurrent use; each writer goroutine calls Next for itself.
type Queue struct {
	cfg        queue.Config
	log        *slog.Logger
	nc         *nats.Conn
	js         natsjs.JetStream
	stream     natsjs.Stream
	cons       natsjs.Consumer
	maxDeliver uint64

	closeOnce sync.Once
	closed    chan struct{}
	// wg counts goroutines the Queue owns: drains of abandoned pulls and
	// delivery heartbeats. Close waits for them before closing the conn.
	// spawnMu orders wg.Add against Close's Wait.
	spawnMu sync.Mutex
	wg      sync.WaitGroup
}

// Connect dials NATS and creates the stream and the shared durable consumer
// from cfg when they are missing. An existing stream or consumer is left as
// it is, whatever cfg says (an operator may have changed it, e.g. raised its
// replicas): Connect logs a warning naming each setting that differs, and
// the Queue's Config reports the server's values. It is idempotent and safe
// to call from many processes at once. opts are applied after the queue's own defaults
// (unlimited reconnects, each loss and return logged, then the credential and TLS files cfg names), so
// they can override them.
//
// While the server is out of reach, or JetStream does not answer (a cluster
// electing its leaders, a request timing out), Connect tries again with
// backoff for up to StartupTimeout (outage.Backoff); any other error ends it
// at once.
func Connect(ctx context.Context, cfg queue.Config, opts ...nats.Option) (*Queue, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := slog.Default().With("component", "queue", "stream", cfg.Stream)
	// The connection's losses and returns are logged: they are the only
	// trace of a server gone, since the client rides them out by itself.
	all := append([]nats.Option{nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err != nil {
				log.Warn("queue: disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("queue: reconnected", "server", nc.ConnectedUrlRedacted())
		}),
	}, options(cfg)...)
	all = append(all, opts...)
	var q *Queue
	err := outage.Backoff{First: 250 * time.Millisecond, Max: 5 * time.Second, Timeout: cfg.StartupTimeout}.Retry(ctx, log, "queue: connect",
		func(ctx context.Context) error {
			nc, err := nats.Connect(cfg.URL, all...)
			if err != nil {
				return classify(fmt.Errorf("queue: connect %s: %w", redactURL(cfg.URL), err))
			}
			if q, err = open(ctx, nc, cfg); err != nil {
				nc.Close()
				return classify(err)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return q, nil
}

func open(ctx context.Context, nc *nats.Conn, cfg queue.Config) (*Queue, error) {
	js, err := natsjs.New(nc, natsjs.WithDefaultTimeout(cfg.OpTimeout))
	if err != nil {
		return nil, fmt.Errorf("queue: jetstream: %w", err)
	}
	q := &Queue{cfg: cfg, log: slog.Default().With("component", "queue", "stream", cfg.Stream), nc: nc, js: js, closed: make(chan struct{})}

	scfg := natsjs.StreamConfig{
		Name:        cfg.Stream,
		Description: "suitegen slices (work queue)",
		Subjects:    []string{cfg.SubjectPrefix + ".*"},
		Retention:   natsjs.WorkQueuePolicy,
		Storage:     storage(cfg.Storage),
		Replicas:    cfg.Replicas,
		Duplicates:  cfg.Duplicates,
	}
	// Two processes starting together may both miss the stream and both
	// create it; the loser's create fails and a retry finds it.
	for attempt := 0; ; attempt++ {
		q.stream, err = ensureStream(ctx, js, scfg, q.log)
		if err == nil || attempt == 2 || !errors.Is(err, natsjs.ErrStreamNameAlreadyInUse) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("queue: stream %s: %w", cfg.Stream, err)
	}

	ccfg := natsjs.ConsumerConfig{
		Durable:       cfg.Consumer,
		Description:   "suitegen writers (shared)",
		DeliverPolicy: natsjs.DeliverAllPolicy,
		AckPolicy:     natsjs.AckExplicitPolicy,
		AckWait:       cfg.AckWait,
		MaxDeliver:    cfg.MaxDeliver,
		MaxAckPending: cfg.MaxAckPending,
		Replicas:      cfg.Replicas,
	}
	for attempt := 0; ; attempt++ {
		q.cons, err = ensureConsumer(ctx, js, cfg.Stream, ccfg, q.log)
		if err == nil || attempt == 2 || !errors.Is(err, natsjs.ErrConsumerExists) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("queue: consumer %s: %w", cfg.Consumer, err)
	}
	// Heartbeats, Last() and the caller's timings must agree with the
	// server, which holds whatever config the stream and consumer were
	// created or changed with.
	have := q.cons.CachedInfo().Config
	q.cfg.AckWait, q.cfg.MaxDeliver, q.cfg.MaxAckPending = have.AckWait, have.MaxDeliver, have.MaxAckPending
	q.cfg.Replicas = q.stream.CachedInfo().Config.Replicas
	q.maxDeliver = uint64(have.MaxDeliver)
	return q, nil
}

// Config returns the effective configuration (defaults applied).
func (q *Queue) Config() queue.Config { return q.cfg }

// Conn returns the underlying connection, e.g. for metrics on it. It is owned
// by the Queue: do not close it.
func (q *Queue) Conn() *nats.Conn { return q.nc }

// Close stops the Queue's heartbeats, waits for abandoned pulls to drain
// (at most FetchWait plus a second), and closes the connection. Deliveries
// not yet acked are redelivered after AckWait.
func (q *Queue) Close() {
	q.closeOnce.Do(func() {
		q.spawnMu.Lock()
		close(q.closed)
		q.spawnMu.Unlock()
		q.wg.Wait()
		q.nc.Close()
	})
}

// spawn runs f on a goroutine Close waits for; it reports false, running
// nothing, once the Queue is closing.
func (q *Queue) spawn(f func()) bool {
	q.spawnMu.Lock()
	defer q.spawnMu.Unlock()
	if q.isClosed() {
		return false
	}
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		f()
	}()
	return true
}

func (q *Queue) isClosed() bool {
	select {
	case <-q.closed:
		return true
	default:
		return false
	}
}

// opContext applies OpTimeout when ctx has no deadline of its own.
func (q *Queue) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, q.cfg.OpTimeout)
}

// Publish puts a slice on the queue with its slice id as the message id.
// duplicate is true when the server already had that id inside the
// Duplicates window, in which case nothing was added.
func (q *Queue) Publish(ctx context.Context, s queue.Slice) (duplicate bool, err error) {
	defer func() { err = classify(err) }()
	if q.isClosed() {
		return false, queue.ErrClosed
	}
	if err := s.Check(); err != nil {
		return false, fmt.Errorf("%w: %w", queue.ErrInvalidSlice, err)
	}
	data, err := s.Encode()
	if err != nil {
		return false, fmt.Errorf("queue: marshal slice %s: %w", s.ID, err)
	}
	ctx, cancel := q.opContext(ctx)
	defer cancel()
	ack, err := q.js.Publish(ctx, q.cfg.Subject(s.Run), data,
		natsjs.WithMsgID(s.ID), natsjs.WithExpectStream(q.cfg.Stream))
	if err != nil {
		return false, fmt.Errorf("queue: publish slice %s: %w", s.ID, err)
	}
	return ack.Duplicate, nil
}

// Next blocks until it holds exactly one delivery or ctx ends. Call it only
// when the work can start at once: the delivery's ack wait is already
// running (Heartbeat extends it while the work goes on).
//
// A message that is not a usable slice is terminated and reported as a
// *BadMessageError; the caller counts it and calls Next again. Other errors
// are transport or server failures; the caller backs off and retries.
func (q *Queue) Next(ctx context.Context) (_ *Delivery, err error) {
	defer func() { err = classify(err) }()
	for {
		if q.isClosed() {
			return nil, queue.ErrClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wait := q.cfg.FetchWait
		if dl, ok := ctx.Deadline(); ok {
			// Do not leave a pull outstanding past the caller's deadline.
			wait = min(wait, max(time.Until(dl), 10*time.Millisecond))
		}
		batch, err := q.cons.Fetch(1, natsjs.FetchMaxWait(wait))
		if err != nil {
			return nil, fmt.Errorf("queue: fetch: %w", err)
		}
		select {
		case msg, ok := <-batch.Messages():
			if ok {
				return q.deliver(ctx, msg)
			}
			if err := batch.Error(); err != nil && !retryableFetchErr(err) {
				return nil, fmt.Errorf("queue: fetch: %w", err)
			}
		case <-ctx.Done():
			q.abandon(batch)
			return nil, ctx.Err()
		case <-q.closed:
			q.abandon(batch)
			return nil, queue.ErrClosed
		}
	}
}

// retryableFetchErr: the pull expired or the server had nothing; pull again.
func retryableFetchErr(err error) bool {
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, natsjs.ErrNoMessages) ||
		errors.Is(err, natsjs.ErrNoHeartbeat) || errors.Is(err, context.DeadlineExceeded)
}

// abandon hands a pull the caller gave up on to a goroutine that releases
// whatever still arrives for it, so the message is redelivered at once
// instead of after AckWait.
// If the Queue is closing, the message waits out its ack wait instead.
func (q *Queue) abandon(batch natsjs.MessageBatch) {
	q.spawn(func() {
		for msg := range batch.Messages() {
			if err := msg.Nak(); err != nil {
				q.log.Warn("release of abandoned pull failed; redelivered after ack wait", "subject", msg.Subject(), "err", err)
			}
		}
	})
}

func (q *Queue) deliver(ctx context.Context, msg natsjs.Msg) (*Delivery, error) {
	meta, err := msg.Metadata()
	if err != nil {
		// Without metadata there is no ack subject to speak of; the server
		// redelivers after AckWait and MaxDeliver ends it.
		return nil, fmt.Errorf("queue: message metadata: %w", err)
	}
	d := &Delivery{
		NumDelivered: meta.NumDelivered,
		StreamSeq:    meta.Sequence.Stream,
		q:            q,
		ack:          replyAcker{nc: q.nc, reply: msg.Reply()},
		// The server started the ack wait when it sent the message, a
		// little before this.
		extended: time.Now(),
	}
	s, err := queue.Decode(msg.Subject(), msg.Headers().Get(natsjs.MsgIDHeader), msg.Data())
	if err != nil {
		bad := &queue.BadMessageError{StreamSeq: d.StreamSeq, Subject: msg.Subject(), Err: err}
		q.log.Warn("terminating bad message", "seq", bad.StreamSeq, "subject", bad.Subject, "reason", err)
		if terr := d.Term(ctx, "bad message: "+err.Error()); terr != nil {
			return nil, fmt.Errorf("%w (and term failed: %w)", bad, terr)
		}
		return nil, bad
	}
	d.Slice = s
	return d, nil
}

// Ready reports whether the queue answers: the connection is up and
// JetStream serves the shared consumer's information (a cluster without a
// leader for it does not). ctx bounds the request (OpTimeout without a
// deadline).
func (q *Queue) Ready(ctx context.Context) (err error) {
	defer func() { err = classify(err) }()
	if q.isClosed() {
		return queue.ErrClosed
	}
	if st := q.nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("queue: connection %s: %w", st, nats.ErrDisconnected)
	}
	ctx, cancel := q.opContext(ctx)
	defer cancel()
	if _, err := q.cons.Info(ctx); err != nil {
		return fmt.Errorf("queue: consumer info: %w", err)
	}
	return nil
}

// Pending reports the consumer's lag: slices not yet delivered, and slices
// delivered but not yet acked.
func (q *Queue) Pending(ctx context.Context) (numPending, ackPending uint64, err error) {
	defer func() { err = classify(err) }()
	ctx, cancel := q.opContext(ctx)
	defer cancel()
	info, err := q.cons.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("queue: consumer info: %w", err)
	}
	return info.NumPending, uint64(info.NumAckPending), nil
}

// Purge drops every message of run still on the queue, including exhausted
// ones, e.g. once the run is finished or cancelled.
func (q *Queue) Purge(ctx context.Context, run string) (err error) {
	defer func() { err = classify(err) }()
	if !queue.ValidToken(run) {
		return fmt.Errorf("%w: run %q is not a subject token", queue.ErrInvalidSlice, run)
	}
	ctx, cancel := q.opContext(ctx)
	defer cancel()
	if err := q.stream.Purge(ctx, natsjs.WithPurgeSubject(q.cfg.Subject(run))); err != nil {
		return fmt.Errorf("queue: purge run %s: %w", run, err)
	}
	return nil
}

// Lookup reads the slice stored at a stream sequence (as reported by
// DeadLetters) without consuming it.
func (q *Queue) Lookup(ctx context.Context, streamSeq uint64) (_ queue.Slice, err error) {
	defer func() { err = classify(err) }()
	ctx, cancel := q.opContext(ctx)
	defer cancel()
	raw, err := q.stream.GetMsg(ctx, streamSeq)
	if err != nil {
		return queue.Slice{}, fmt.Errorf("queue: get message %d: %w", streamSeq, err)
	}
	s, err := queue.Decode(raw.Subject, raw.Header.Get(natsjs.MsgIDHeader), raw.Data)
	if err != nil {
		return queue.Slice{}, &queue.BadMessageError{StreamSeq: streamSeq, Subject: raw.Subject, Err: err}
	}
	return s, nil
}

// maxDeliveriesAdvisory is the part of the server's
// io.nats.jetstream.advisory.v1.max_deliver event we read.
type maxDeliveriesAdvisory struct {
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// DeadLetters calls fn with the stream sequence of every slice the server
// gives up on after MaxDeliver deliveries, until ctx ends or the Queue
// closes. It reports exhaustion nobody recorded (a writer that died holding
// the final delivery); a slice a writer terminated itself is not reported.
// fn runs on one goroutine, one event at a time; use Lookup to read the slice.
// Advisories are core NATS messages: any sent while nobody listens are lost.
func (q *Queue) DeadLetters(ctx context.Context, fn func(streamSeq uint64)) (err error) {
	defer func() { err = classify(err) }()
	if q.isClosed() {
		return queue.ErrClosed
	}
	subject := fmt.Sprintf("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.%s.%s", q.cfg.Stream, q.cfg.Consumer)
	sub, err := q.nc.Subscribe(subject, func(m *nats.Msg) {
		var adv maxDeliveriesAdvisory
		if err := json.Unmarshal(m.Data, &adv); err != nil || adv.StreamSeq == 0 {
			q.log.Warn("unreadable max-deliveries advisory", "err", err)
			return
		}
		fn(adv.StreamSeq)
	})
	if err != nil {
		return fmt.Errorf("queue: subscribe %s: %w", subject, err)
	}
	// The server must know of the interest before the caller relies on it.
	if err := q.nc.Flush(); err != nil {
		_ = sub.Unsubscribe()
		return fmt.Errorf("queue: subscribe %s: %w", subject, err)
	}
	context.AfterFunc(ctx, func() { _ = sub.Unsubscribe() })
	return nil
}

// redactURL drops any password from NATS URLs (comma separated) so errors
// and logs never carry it.
func redactURL(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil {
			parts[i] = "<unparsable url>"
			continue
		}
		if u.User != nil {
			// A user without a password is a token (nats://TOKEN@host).
			if _, ok := u.User.Password(); ok {
				u.User = url.UserPassword(u.User.Username(), "xxxxx")
			} else {
				u.User = url.User("xxxxx")
			}
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}

// ensureStream returns the stream, creating it when it is missing. An
// existing stream is never updated: a setting that differs from want is
// logged, not reset.
func ensureStream(ctx context.Context, js natsjs.JetStream, want natsjs.StreamConfig, log *slog.Logger) (natsjs.Stream, error) {
	consumerMu.Lock()
	defer consumerMu.Unlock()
	st, err := js.Stream(ctx, want.Name)
	if err == nil {
		have := st.CachedInfo().Config
		warnDiffs(log, "stream", want.Name, []diff{
			{"replicas", have.Replicas, want.Replicas},
			{"retention", have.Retention, want.Retention},
			{"storage", have.Storage, want.Storage},
			{"duplicates", have.Duplicates, want.Duplicates},
			{"subjects", strings.Join(have.Subjects, ","), strings.Join(want.Subjects, ",")},
		})
		return st, nil
	}
	if !errors.Is(err, natsjs.ErrStreamNotFound) {
		return nil, err
	}
	return js.CreateStream(ctx, want)
}

// consumerMu serialises consumer creation within a process: nats-server
// v2.15 races with itself (its file store) when one server handles two
// create requests for the same consumer at once, which an in-process
// server in `suitegen run` would do as its writers connect.
var consumerMu sync.Mutex

// ensureConsumer returns the durable consumer, creating it when it is
// missing. An existing consumer is never updated; differences are logged.
func ensureConsumer(ctx context.Context, js natsjs.JetStream, stream string, want natsjs.ConsumerConfig, log *slog.Logger) (natsjs.Consumer, error) {
	consumerMu.Lock()
	defer consumerMu.Unlock()
	c, err := js.Consumer(ctx, stream, want.Durable)
	if err == nil {
		have := c.CachedInfo().Config
		replicas := have.Replicas
		if replicas == 0 {
			replicas = want.Replicas // 0: the stream's, checked there
		}
		warnDiffs(log, "consumer", want.Durable, []diff{
			{"replicas", replicas, want.Replicas},
			{"ack_wait", have.AckWait, want.AckWait},
			{"max_deliver", have.MaxDeliver, want.MaxDeliver},
			{"max_ack_pending", have.MaxAckPending, want.MaxAckPending},
			{"ack_policy", have.AckPolicy, want.AckPolicy},
			{"deliver_policy", have.DeliverPolicy, want.DeliverPolicy},
		})
		return c, nil
	}
	if !errors.Is(err, natsjs.ErrConsumerNotFound) {
		return nil, err
	}
	return js.CreateConsumer(ctx, stream, want)
}

type diff struct {
	setting    string
	have, want any
}

func warnDiffs(log *slog.Logger, kind, name string, ds []diff) {
	for _, d := range ds {
		if fmt.Sprint(d.have) != fmt.Sprint(d.want) {
			attrs := []any{"setting", d.setting, "server", fmt.Sprint(d.have), "config", fmt.Sprint(d.want)}
			if kind == "consumer" {
				attrs = append(attrs, "consumer", name) // the stream is on the logger already
			}
			log.Warn("queue: the existing "+kind+" differs from this process's config and is left as it is", attrs...)
		}
	}
}

// options are the connection options the config's credential and TLS
// files imply. The files are read when the connection is made.
func options(c queue.Config) []nats.Option {
	var opts []nats.Option
	if c.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	}
	if c.TLSCAFile != "" {
		opts = append(opts, nats.RootCAs(c.TLSCAFile))
	}
	if c.TLSCertFile != "" {
		opts = append(opts, nats.ClientCert(c.TLSCertFile, c.TLSKeyFile))
	}
	return opts
}

// storage is the stream's storage type for the config's.
func storage(s queue.Storage) natsjs.StorageType {
	if s == queue.MemoryStorage {
		return natsjs.MemoryStorage
	}
	return natsjs.FileStorage
}
