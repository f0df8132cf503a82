package ratelimit

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/model"
	oai "github.com/suitegen/suitegen/pkg/model/openai"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// gate holds every request, before a byte of it is written, until the test
// lets it go.
type gate struct {
	base    http.RoundTripper
	entered chan struct{}
	release chan struct{}
}

func (g *gate) RoundTrip(r *http.Request) (*http.Response, error) {
	g.entered <- struct{}{}
	<-g.release
	return g.base.RoundTrip(r)
}

// The provider counts a request from when it arrives: a request held after
// its admission (connection setup, a slow dial) counts in the shared window
// from its write, not from its admission. The request is held until the
// database's clock has been read; the admission's stamp must not be earlier.
func TestAdmissionCountsFromTheWrite(t *testing.T) {
	t.Parallel()
	pool := testenv.Postgres(t)
	// A window of an hour: nothing leaves it while the test runs.
	l := newLimiter(t, Config{Key: "stamp", RPM: 600, TPM: 600_000, Window: time.Hour, Pool: pool})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":2,"total_tokens":13}}`)
	}))
	defer srv.Close()
	g := &gate{base: &http.Transport{DisableKeepAlives: true}, entered: make(chan struct{}), release: make(chan struct{})}
	c, err := oai.New(oai.Config{BaseURL: srv.URL, APIKey: "sk-test", Model: "m", Limiter: l, HTTPClient: &http.Client{Transport: g}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := c.Complete(ctx, model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}, MaxTokens: 100})
		done <- err
	}()
	<-g.entered
	var admittedAt, heldUntil time.Time
	var sent bool
	if err := pool.QueryRow(ctx, `SELECT at, sent FROM ratelimit_admissions WHERE key_hash = $1 AND requests = 1`, l.hash).Scan(&admittedAt, &sent); err != nil {
		t.Fatal(err)
	}
	if sent {
		t.Fatal("the admission is stamped as sent before its request was written")
	}
	if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&heldUntil); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var at time.Time
	var tokens float64
	if err := pool.QueryRow(ctx, `SELECT at, sent, tokens FROM ratelimit_admissions WHERE key_hash = $1 AND requests = 1`, l.hash).Scan(&at, &sent, &tokens); err != nil {
		t.Fatal(err)
	}
	if !sent || !at.After(heldUntil) {
		t.Fatalf("admitted at %s, held until %s, counted from %s (sent %v): want from the write, after the hold",
			admittedAt.Format(time.RFC3339Nano), heldUntil.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano), sent)
	}
	if tokens != 111 {
		t.Fatalf("settled to %v tokens, want 111 (prompt + allowance)", tokens)
	}
}

// age moves every admission of l back by d: time passing, without waiting.
func age(t *testing.T, l *Limiter, d time.Duration) {
	t.Helper()
	if _, err := l.cfg.Pool.Exec(context.Background(),
		`UPDATE ratelimit_admissions SET at = at - make_interval(secs => $2) WHERE key_hash = $1`, l.hash, d.Seconds()); err != nil {
		t.Fatal(err)
	}
}

func tokensUsed(t *testing.T, l *Limiter) float64 {
	t.Helper()
	q, err := l.Available(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return q.TokensUsed
}

// An admission whose request has not been written yet may still reach the
// provider, so it is held a window longer than a written one; once written it
// counts from the write, even when it had already left the window.
func TestUnsentAdmissionIsHeld(t *testing.T) {
	t.Parallel()
	window := time.Minute
	l := newLimiter(t, Config{Key: "held", TPM: 10_000, Window: window, Pool: testenv.Postgres(t)})
	ctx := context.Background()
	written, err := l.Wait(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if err := written.Sent(ctx); err != nil {
		t.Fatal(err)
	}
	pending, err := l.Wait(ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if used := tokensUsed(t, l); used != 1100 {
		t.Fatalf("%v tokens in the window, want 1100", used)
	}
	// A window and a half later: the written one has left, the pending one
	// is held.
	age(t, l, window*3/2)
	if used := tokensUsed(t, l); used != 1000 {
		t.Fatalf("%v tokens in the window a window and a half on, want the pending 1000 only", used)
	}
	// Its request is written now: it counts from now, a whole window more.
	if err := pending.Sent(ctx); err != nil {
		t.Fatal(err)
	}
	age(t, l, window*3/4)
	if used := tokensUsed(t, l); used != 1000 {
		t.Fatalf("%v tokens in the window under a window after the write, want 1000", used)
	}
	if err := pending.Settle(ctx, 900, model.Limits{}); err != nil {
		t.Fatal(err)
	}
	if used := tokensUsed(t, l); used != 900 {
		t.Fatalf("%v tokens after settling to 900", used)
	}
	age(t, l, window/2)
	if used := tokensUsed(t, l); used != 0 {
		t.Fatalf("%v tokens over a window after the write, want none", used)
	}

	// One never written is forgotten two windows after its admission; if its
	// request is written after all, it counts again from then.
	late, err := l.Wait(ctx, 500)
	if err != nil {
		t.Fatal(err)
	}
	age(t, l, 2*window+time.Second)
	if used := tokensUsed(t, l); used != 0 {
		t.Fatalf("%v tokens two windows after an unwritten admission, want none", used)
	}
	if err := late.Sent(ctx); err != nil {
		t.Fatal(err)
	}
	if used := tokensUsed(t, l); used != 500 {
		t.Fatalf("%v tokens once the late request is written, want 500", used)
	}
}
