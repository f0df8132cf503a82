package queue

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Defaults applied by Config.withDefaults.
const (
	DefaultStream        = "SUITEGEN_SLICES"
	DefaultConsumer      = "writers"
	DefaultSubjectPrefix = "suitegen.slices"
	DefaultAckWait       = 60 * time.Second
	// DefaultMaxDeliver is the server's backstop: writers end a slice on
	// what its deliveries charge it in the ledger (at most 5 failures, 10
	// writers lost before it progressed), well before this many.
	DefaultMaxDeliver    = 30
	DefaultMaxAckPending = 1024
	DefaultReplicas      = 1
	DefaultDuplicates    = 20 * time.Minute
	DefaultFetchWait     = 5 * time.Second
	DefaultOpTimeout     = 5 * time.Second
)

// Storage is where the stream keeps its slices.
type Storage int

// Storage kinds. The zero value, file storage, survives a server restart.
const (
	FileStorage Storage = iota
	MemoryStorage
)

// DefaultURL is the NATS server a Config without URL reaches.
const DefaultURL = "nats://127.0.0.1:4222"

// Config describes the stream, the shared consumer and how to reach them.
// The stream and consumer settings take effect when Connect creates them;
// a process that finds them already there keeps the server's settings (and
// warns about each one that differs), so a connecting process never resets
// an operator's change.
type Config struct {
	// URL of the NATS server(s), comma separated. Default DefaultURL.
	URL string
	// Stream is the JetStream stream name. Default DefaultStream.
	Stream string
	// Consumer is the durable pull consumer shared by all writers.
	// Default DefaultConsumer.
	Consumer string
	// SubjectPrefix: slices of run R travel on "<SubjectPrefix>.<R>".
	// Default DefaultSubjectPrefix.
	SubjectPrefix string
	// AckWait is how long a delivery may go without Ack or InProgress before
	// it is redelivered. Default DefaultAckWait.
	AckWait time.Duration
	// MaxDeliver bounds deliveries of one slice: past it the server gives
	// up on the slice whatever its writers did. Writers end a slice sooner,
	// on what its deliveries charge it (pkg/writer, charge.go), so this is
	// a backstop. Default DefaultMaxDeliver.
	MaxDeliver int
	// MaxAckPending bounds slices held at once across all writers.
	// Default DefaultMaxAckPending.
	MaxAckPending int
	// Replicas of the stream and consumer: how many servers of a NATS
	// cluster hold each slice (3 survives the loss of one server). At most
	// the cluster's size. Default DefaultReplicas.
	Replicas int
	// Duplicates is the window in which a republished slice id is dropped.
	// Default DefaultDuplicates.
	Duplicates time.Duration
	// Storage of the stream; the zero value is file storage, which survives
	// a server restart.
	Storage Storage
	// FetchWait is how long one pull request waits on the server before Next
	// issues another. It bounds how long Close can wait for an abandoned pull.
	// Default DefaultFetchWait.
	FetchWait time.Duration
	// OpTimeout bounds acks and management calls whose context has no
	// deadline. Default DefaultOpTimeout.
	OpTimeout time.Duration
	// StartupTimeout is how long Connect keeps trying while the server is
	// out of reach or its JetStream not ready (no responders, a request
	// timing out, a cluster without leaders). 0: one try.
	StartupTimeout time.Duration

	// CredsFile is a NATS user credentials file (JWT and NKey seed, as nsc
	// writes them), passed as nats.UserCredentials. Empty: none.
	CredsFile string
	// TLSCAFile is a PEM bundle of roots the server certificate must chain
	// to (nats.RootCAs). Setting it, or a client certificate, turns TLS on;
	// a tls:// URL does too, verified against the system roots.
	TLSCAFile string
	// TLSCertFile and TLSKeyFile are a PEM client certificate and key for
	// mutual TLS (nats.ClientCert); both or neither.
	TLSCertFile, TLSKeyFile string

	// Acks, when set, is told how each ack that met a transient failure
	// ended (Delivery.Ack): a writer's queue reports them to its metrics.
	// Nil: they are only logged.
	Acks AckReporter
}

// AckReporter hears how each ack that met a transient failure ended:
// confirmed on a later try, or given up unconfirmed (tries, the ack window
// or the caller's context ran out, or a later failure was not transient).
// A writer's metrics satisfy it (metrics.Metrics.AckRetried).
type AckReporter interface {
	AckRetried(run string, confirmed bool)
}

// WithDefaults is c with every unset field at its default.
func (c Config) WithDefaults() Config {
	if c.URL == "" {
		c.URL = DefaultURL
	}
	if c.Stream == "" {
		c.Stream = DefaultStream
	}
	if c.Consumer == "" {
		c.Consumer = DefaultConsumer
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = DefaultSubjectPrefix
	}
	if c.AckWait == 0 {
		c.AckWait = DefaultAckWait
	}
	if c.MaxDeliver == 0 {
		c.MaxDeliver = DefaultMaxDeliver
	}
	if c.MaxAckPending == 0 {
		c.MaxAckPending = DefaultMaxAckPending
	}
	if c.Replicas == 0 {
		c.Replicas = DefaultReplicas
	}
	if c.Duplicates == 0 {
		c.Duplicates = DefaultDuplicates
	}
	if c.FetchWait == 0 {
		c.FetchWait = DefaultFetchWait
	}
	if c.OpTimeout == 0 {
		c.OpTimeout = DefaultOpTimeout
	}
	return c
}

// Validate reports every invalid field of c after defaults are applied,
// each error naming its field.
func (c Config) Validate() error {
	c = c.WithDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("queue config: %s: %s", field, fmt.Sprintf(format, args...)))
	}
	if !validName(c.Stream) {
		bad("Stream", "%q is not a valid stream name (no spaces, dots, '*', '>', path separators)", c.Stream)
	}
	if !validName(c.Consumer) {
		bad("Consumer", "%q is not a valid consumer name (no spaces, dots, '*', '>', path separators)", c.Consumer)
	}
	if !validSubject(c.SubjectPrefix) {
		bad("SubjectPrefix", "%q is not a literal subject (dot-separated non-empty tokens, no wildcards)", c.SubjectPrefix)
	}
	if c.AckWait < 100*time.Millisecond {
		bad("AckWait", "%v is below the 100ms minimum", c.AckWait)
	}
	if c.MaxDeliver < 1 {
		bad("MaxDeliver", "%d must be at least 1 (unbounded redelivery is not allowed)", c.MaxDeliver)
	}
	if c.MaxAckPending < 1 {
		bad("MaxAckPending", "%d must be at least 1", c.MaxAckPending)
	}
	if c.Replicas < 1 || c.Replicas > 5 {
		bad("Replicas", "%d must be between 1 and 5", c.Replicas)
	}
	if c.Duplicates < time.Second {
		bad("Duplicates", "%v is below the 1s minimum", c.Duplicates)
	}
	if c.Storage != FileStorage && c.Storage != MemoryStorage {
		bad("Storage", "unknown storage type %d", c.Storage)
	}
	if c.FetchWait < 10*time.Millisecond {
		bad("FetchWait", "%v is below the 10ms minimum", c.FetchWait)
	}
	if c.OpTimeout <= 0 {
		bad("OpTimeout", "%v must be positive", c.OpTimeout)
	}
	if c.StartupTimeout < 0 {
		bad("StartupTimeout", "%v must not be negative", c.StartupTimeout)
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		bad("TLSCertFile", "a client certificate needs both TLSCertFile and TLSKeyFile")
	}
	for field, path := range map[string]string{"CredsFile": c.CredsFile, "TLSCAFile": c.TLSCAFile, "TLSCertFile": c.TLSCertFile, "TLSKeyFile": c.TLSKeyFile} {
		if path == "" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			bad(field, "%v", err)
		}
	}
	return errors.Join(errs...)
}

// Subject is the subject slices of run travel on.
func (c Config) Subject(run string) string {
	return c.WithDefaults().SubjectPrefix + "." + run
}

// validName follows the JetStream rules for stream and consumer names.
func validName(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\r\n.*>/\\")
}

// ValidToken reports one literal subject token (a run id travels as one).
func ValidToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\r\n.*>")
}

func validSubject(s string) bool {
	for tok := range strings.SplitSeq(s, ".") {
		if !ValidToken(tok) {
			return false
		}
	}
	return true
}
