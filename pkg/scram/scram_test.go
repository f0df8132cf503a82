package scram

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"regexp"
	"strings"
	"testing"
)

// The SCRAM-SHA-256 exchange of RFC 7677, section 3: a verifier made from
// its password and salt must let the server check that client's proof and
// sign as that server did.
func TestVerifierMatchesRFC7677(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	v, err := verifier("pencil", salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`^SCRAM-SHA-256\$4096:W22ZaJ0SNY7soEsUEjb6gQ==\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$`).FindStringSubmatch(v)
	if m == nil {
		t.Fatalf("verifier %q is not in PostgreSQL's form", v)
	}
	stored, _ := base64.StdEncoding.DecodeString(m[1])
	server, _ := base64.StdEncoding.DecodeString(m[2])
	nonce := "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
	auth := "n=user,r=rOprNGfwEbeRWgbNEkqO,r=" + nonce + ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=" + nonce
	proof, _ := base64.StdEncoding.DecodeString("dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
	sig := mac(stored, auth)
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ sig[i]
	}
	if got := sha256.Sum256(clientKey); !hmac.Equal(got[:], stored) {
		t.Error("the RFC's client proof does not verify against StoredKey")
	}
	if got := base64.StdEncoding.EncodeToString(mac(server, auth)); got != "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=" {
		t.Errorf("server signature %s, want the RFC's", got)
	}
}

func TestVerifierSaltsAndPasswords(t *testing.T) {
	a, err := Verifier("x")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Verifier("x")
	if a == b {
		t.Error("two verifiers of one password share a salt")
	}
	if strings.Contains(a, "'") {
		t.Errorf("verifier %q needs quoting", a)
	}
	p, err := Password()
	if err != nil || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(p) {
		t.Errorf("Password() = %q, %v", p, err)
	}
	if q, _ := Password(); q == p {
		t.Error("two passwords alike")
	}
}
