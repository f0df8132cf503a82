package writer_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// recorder is the builtin model with every request it was sent kept, per
// slice, in order.
type recorder struct {
	inner *builtin.Model

	mu      sync.Mutex
	reqs    map[string][]model.Request // slice -> requests
	replies map[string][]model.Message // slice -> replies
}

func (r *recorder) Name() string { return "recorder" }

func (r *recorder) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	slice := ""
	for _, m := range req.Messages {
		if b, ok := brief.Parse(m.Content); ok && m.Role == model.RoleUser {
			slice = b.Slice
			break
		}
	}
	cp := req
	cp.Messages = append([]model.Message(nil), req.Messages...)
	resp, err := r.inner.Complete(ctx, req)
	r.mu.Lock()
	r.reqs[slice] = append(r.reqs[slice], cp)
	r.replies[slice] = append(r.replies[slice], resp.Message)
	r.mu.Unlock()
	return resp, err
}

// TestSessionCompaction runs real writer sessions (suitegen run, two
// writers, real NATS and Postgres) and reads what they sent the model: once a
// scenario is kept, no later request of its slice carries the rehearsal that
// led to it, a digest names it instead, and every slice's requests begin
// with the same system prompt and tool schemas, byte for byte, before the
// slice's brief. Submissions name the rehearsal they repeat instead of
// sending its setup and calls again, and are kept all the same.
func TestSessionCompaction(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "retail"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	const asked = 12
	rec := &recorder{inner: builtin.New(c), reqs: map[string][]model.Request{}, replies: map[string][]model.Message{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A reply allowance that holds one move, so that a slice's cases are
	// written one after the other and later requests follow kept ones.
	res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: asked, Writers: 2, Out: t.TempDir(), Seed: 7, MaxTokens: 2048,
		NATSURL: testenv.NATS(t), DatabaseURL: testenv.PostgresURL(t), Client: rec})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res[0].Proved != asked {
		t.Fatalf("proved %d, asked %d", res[0].Proved, asked)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) < 2 {
		t.Fatalf("%d slices, want at least two to compare", len(rec.reqs))
	}

	var system, tools string
	compacted, named := 0, 0
	for slice, reqs := range rec.reqs {
		if slice == "" {
			t.Fatal("a request without a brief")
		}
		for _, m := range rec.replies[slice] {
			for _, tc := range m.ToolCalls {
				var a brief.SubmitArgs
				if tc.Name != brief.ToolSubmit || json.Unmarshal([]byte(tc.Arguments), &a) != nil || a.Rehearsal == 0 {
					continue
				}
				named++
				if len(a.Scenario.Setup) > 0 || len(a.Scenario.Solution) > 0 {
					t.Errorf("slice %s: a submission names rehearsal %d and sends a setup or solution too", slice, a.Rehearsal)
				}
			}
		}
		for i, req := range reqs {
			// The stable prefix: system prompt and tools, then the brief.
			ts, _ := json.Marshal(req.Tools)
			if system == "" {
				system, tools = req.Messages[0].Content, string(ts)
			}
			if req.Messages[0].Role != model.RoleSystem || req.Messages[0].Content != system {
				t.Errorf("slice %s request %d: the system prompt differs from another slice's", slice, i)
			}
			if string(ts) != tools {
				t.Errorf("slice %s request %d: the tool schemas differ from another slice's", slice, i)
			}
			if _, ok := brief.Parse(req.Messages[1].Content); !ok {
				t.Errorf("slice %s request %d: the second message is not the brief", slice, i)
			}
		}
		// When request j carries a digest request j-1 did not, the
		// rehearsals (calls and answers) request j-1 carried are absent
		// from request j and every later one.
		for j := 1; j < len(reqs); j++ {
			kept := newlyKept(reqs[j-1], reqs[j])
			if len(kept) == 0 {
				continue
			}
			compacted++
			var rehearsal []string
			for _, m := range reqs[j-1].Messages {
				for _, tc := range m.ToolCalls {
					if tc.Name == brief.ToolTry {
						rehearsal = append(rehearsal, tc.Arguments)
					}
				}
				if m.Role == model.RoleTool && m.Name == brief.ToolTry {
					rehearsal = append(rehearsal, m.Content)
				}
			}
			if len(rehearsal) == 0 {
				t.Fatalf("slice %s: %v kept without a rehearsal before it", slice, kept)
			}
			for _, later := range reqs[j:] {
				for _, m := range later.Messages {
					if slices.Contains(rehearsal, m.Content) {
						t.Fatalf("slice %s: a request after %v was kept resends a rehearsal answer", slice, kept)
					}
					for _, tc := range m.ToolCalls {
						if slices.Contains(rehearsal, tc.Arguments) {
							t.Fatalf("slice %s: a request after %v was kept resends a rehearsal call", slice, kept)
						}
					}
				}
			}
		}
	}
	if compacted == 0 {
		t.Fatal("no request showed a kept scenario; nothing was compacted")
	}
	if named == 0 {
		t.Fatal("no submission named its rehearsal")
	}
}

// newlyKept are the scenarios the digests of next name as kept and those of
// prev do not.
func newlyKept(prev, next model.Request) []string {
	seen := map[string]bool{}
	for _, n := range kept(prev) {
		seen[n] = true
	}
	var out []string
	for _, n := range kept(next) {
		if !seen[n] {
			out = append(out, n)
		}
	}
	return out
}

func kept(req model.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role != model.RoleUser {
			continue
		}
		subs, _ := brief.ParseDigest(m.Content)
		for _, s := range subs {
			if s.Kept {
				out = append(out, s.Name)
			}
		}
	}
	return out
}
