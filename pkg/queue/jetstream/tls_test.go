package jetstream

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/suitegen/suitegen/pkg/queue"
)

// pki is a throwaway CA with a server and a client certificate, written as
// PEM files the way a Kubernetes secret mounts them.
type pki struct {
	dir                            string
	caFile, serverCert, serverKey  string
	clientCert, clientKey, otherCA string
	serverTLS                      *tls.Config
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir()}
	ca, caKey := selfSigned(t, "suitegen test CA")
	p.caFile = p.write(t, "ca.crt", "CERTIFICATE", ca.Raw)
	other, _ := selfSigned(t, "someone else's CA")
	p.otherCA = p.write(t, "other-ca.crt", "CERTIFICATE", other.Raw)

	sDER, sKey := leaf(t, ca, caKey, "nats", x509.ExtKeyUsageServerAuth)
	p.serverCert = p.write(t, "server.crt", "CERTIFICATE", sDER)
	p.serverKey = p.writeKey(t, "server.key", sKey)
	cDER, cKey := leaf(t, ca, caKey, "writer", x509.ExtKeyUsageClientAuth)
	p.clientCert = p.write(t, "client.crt", "CERTIFICATE", cDER)
	p.clientKey = p.writeKey(t, "client.key", cKey)

	pair, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	p.serverTLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: roots,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	return p
}

func selfSigned(t *testing.T, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

func leaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, use x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{use},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

func (p *pki) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *pki) writeKey(t *testing.T, name string, key *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return p.write(t, name, "EC PRIVATE KEY", der)
}

// startTLSNATS runs a JetStream server that speaks only TLS and requires a
// client certificate from the test CA.
func startTLSNATS(t *testing.T, p *pki) string {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		ServerName: "suitegen-tls", Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
		TLS: true, TLSVerify: true, TLSConfig: p.serverTLS, TLSTimeout: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("TLS NATS server did not start")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return "tls://" + srv.Addr().String()
}

// TestConnectTLS: queue.Connect reaches a TLS-only, client-certificate
// JetStream server through the config's CA, cert and key files, and moves a
// slice over it; without the right CA or without a client certificate it
// does not connect.
func TestConnectTLS(t *testing.T) {
	p := newPKI(t)
	url := startTLSNATS(t, p)

	cfg := testConfig(url)
	cfg.TLSCAFile, cfg.TLSCertFile, cfg.TLSKeyFile = p.caFile, p.clientCert, p.clientKey
	q := connect(t, cfg)
	if !q.Conn().TLSRequired() {
		t.Error("connection does not report TLS")
	}
	if _, err := q.Conn().TLSConnectionState(); err != nil {
		t.Errorf("no TLS state on the connection: %v", err)
	}
	publish(t, q, newSlice("tlsrun", 1))
	d := next(t, q, 5*time.Second)
	if d.Slice.Run != "tlsrun" {
		t.Fatalf("got slice of run %q", d.Slice.Run)
	}
	if err := d.Ack(t.Context()); err != nil {
		t.Fatalf("Ack over TLS: %v", err)
	}

	bad := map[string]queue.Config{}
	noClient := testConfig(url)
	noClient.TLSCAFile = p.caFile
	bad["without a client certificate"] = noClient
	wrongCA := testConfig(url)
	wrongCA.TLSCAFile, wrongCA.TLSCertFile, wrongCA.TLSKeyFile = p.otherCA, p.clientCert, p.clientKey
	bad["trusting another CA"] = wrongCA
	for what, c := range bad {
		c.OpTimeout = 2 * time.Second
		q, err := Connect(t.Context(), c, noReconnect()...)
		if err == nil {
			q.Close()
			t.Errorf("connected %s", what)
		}
	}
}

// TestConfigTLSValidate: a certificate without its key, and files that do
// not exist, are refused by Validate naming the field.
func TestConfigTLSValidate(t *testing.T) {
	p := newPKI(t)
	cases := map[string]queue.Config{
		"TLSCertFile": {TLSCertFile: p.clientCert},
		"TLSCAFile":   {TLSCAFile: filepath.Join(p.dir, "missing.crt")},
		"CredsFile":   {CredsFile: filepath.Join(p.dir, "missing.creds")},
	}
	for field, c := range cases {
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate(%s) = %v, want an error naming %s", field, err, field)
		}
	}
	ok := queue.Config{TLSCAFile: p.caFile, TLSCertFile: p.clientCert, TLSKeyFile: p.clientKey}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(complete TLS config) = %v", err)
	}
}

// TestRedactURL: a password or token in the NATS URL never reaches an error.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"nats://alice:s3cret@host:4222":             "nats://alice:xxxxx@host:4222",
		"nats://TOKENVALUE@host:4222":               "nats://xxxxx@host:4222",
		"nats://a:pw1@h1:4222,nats://b:pw2@h2:4222": "nats://a:xxxxx@h1:4222,nats://b:xxxxx@h2:4222",
		"tls://127.0.0.1:4222":                      "tls://127.0.0.1:4222",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
	_, err := Connect(t.Context(), queue.Config{URL: "nats://alice:s3cret@127.0.0.1:1", OpTimeout: time.Second}, noReconnect()...)
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Connect error %v: want an error without the password", err)
	}
}

// noReconnect makes a failed first connection fail fast.
func noReconnect() []nats.Option {
	return []nats.Option{nats.Timeout(2 * time.Second), nats.RetryOnFailedConnect(false)}
}
