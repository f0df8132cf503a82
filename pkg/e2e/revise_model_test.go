package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/suitegen/suitegen/pkg/provider"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/refresh"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestReviseThroughAModel: a revision written by a model (provider-sim,
// which plays the builtin writer behind an OpenAI-compatible API) takes an
// ask in the user's own words, outside the builtin's vocabulary; the words
// reach the model in the requests it is sent, every chosen scenario is
// replaced by one that passes every gate, and every other file stays
// byte-identical.
func TestReviseThroughAModel(t *testing.T) {
	t.Parallel()
	dir := examples(t, "retail")
	base, _ := runSuite(t, dir, 8, 1)
	w, err := suite.Read(base)
	if err != nil {
		t.Fatal(err)
	}
	var chosen []string
	for _, sc := range w.Scenarios {
		if sc.Expects == "succeed" && len(chosen) < 2 {
			chosen = append(chosen, sc.Name)
		}
	}
	if len(chosen) < 2 {
		t.Fatalf("the suite has %d successes to revise", len(chosen))
	}

	const ask = "a caller who keeps changing their mind about the details"
	_, counted := simBehind(t, dir, providersim.Config{})
	target, err := url.Parse(counted.url)
	if err != nil {
		t.Fatal(err)
	}
	// The words are looked for in the bodies as they went out.
	var requests, carried atomic.Int64
	fwd := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/chat/completions") {
			requests.Add(1)
			if bytes.Contains(body, []byte(ask)) {
				carried.Add(1)
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		fwd.ServeHTTP(rw, r)
	}))
	defer front.Close()

	out := t.TempDir()
	if err := os.CopyFS(out, os.DirFS(base)); err != nil {
		t.Fatal(err)
	}
	before := tree(t, out)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: 1, Writers: 1, Seed: 7, Rounds: 1,
		Revise: run.Revision{Dir: out, Only: chosen, Ask: ask},
		Model:  "sim-writer", Provider: provider.Settings{BaseURL: front.URL + "/v1", APIKey: "sim-key"},
		NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t)})
	if err != nil {
		t.Fatalf("revise through a model: %v", err)
	}
	if requests.Load() == 0 || carried.Load() == 0 {
		t.Errorf("%d of %d requests to the model carried the ask's words", carried.Load(), requests.Load())
	}
	after := tree(t, out)
	var o refresh.Outcome
	if err := json.Unmarshal(after[refresh.OutcomeFile], &o); err != nil {
		t.Fatal(err)
	}
	if len(o.Replaced) != len(chosen) {
		t.Fatalf("%d of %d scenarios replaced (not kept: %v)", len(o.Replaced), len(chosen), o.NotKept)
	}
	touched := map[string]bool{}
	for _, name := range chosen {
		touched[filepath.ToSlash(filepath.Join("scenarios", name, "scenario.json"))] = true
	}
	for p, b := range before {
		switch {
		case touched[p]:
			if bytes.Equal(after[p], b) {
				t.Errorf("%s was chosen and is unchanged", p)
			}
		case strings.HasPrefix(p, "scenarios/") && !bytes.Equal(after[p], b):
			t.Errorf("%s was not chosen and changed", p)
		}
	}
	t.Logf("%d requests, %d with the ask's words; replaced %v", requests.Load(), carried.Load(), o.Replaced)
}
