package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/model"
	oai "github.com/suitegen/suitegen/pkg/model/openai"
	"github.com/suitegen/suitegen/pkg/providersim"
	"github.com/suitegen/suitegen/pkg/ratelimit"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// The quota matrix drives the shared limiter with synthetic writer
// processes (this test binary re-executed as TestLoadProcess), each holding
// conversations that grow turn by turn the way a writer's session does,
// against provider-sim behind the counting proxy. It measures the limiter,
// not the pipeline: sessions are sized exactly and nothing but the limiter
// and the provider paces them.

// session is the shape of a conversation: its opening prompt, what each turn
// adds, how many turns, and the reply allowance of every request.
type session struct {
	Name              string
	Open, Step, Turns int
	Allowance         int
	ReplyTokens       int // what the simulated model writes back
}

var (
	smallSession = session{Name: "small", Open: 1200, Step: 300, Turns: 8, Allowance: 256, ReplyTokens: 60}
	largeSession = session{Name: "large", Open: 8000, Step: 2000, Turns: 10, Allowance: 2048, ReplyTokens: 400}
)

// loadSpec is what one load process is told.
type loadSpec struct {
	URL, Database, Key   string
	RPM, TPM             int
	Window, For          time.Duration
	Session              session
	Conversations, Index int
}

// loadResult is what a load process reports on its last line.
type loadResult struct {
	Admitted, RateLimited, TooLarge, Failed int
	Waited                                  time.Duration
}

// words is n tokens of text by model.CountTokens ("word " is one token).
func words(n int) string { return strings.Repeat("word ", max(n, 0)) }

// echo answers every request with ReplyTokens tokens of text.
type echo struct{ reply string }

func (e echo) Name() string { return "sim-load" }
func (e echo) Complete(context.Context, model.Request) (model.Response, error) {
	return model.Response{Message: model.Message{Role: model.RoleAssistant, Content: e.reply}}, nil
}

// TestLoadProcess is a synthetic writer process when SUITEGEN_LOAD holds its
// spec; otherwise it does nothing.
func TestLoadProcess(t *testing.T) {
	raw := os.Getenv("SUITEGEN_LOAD")
	if raw == "" {
		t.Skip("a load process of the quota matrix")
	}
	var spec loadSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), spec.For)
	defer cancel()
	pool, err := pgxpool.New(context.Background(), spec.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	lim, err := ratelimit.New(context.Background(), ratelimit.Config{Key: spec.Key, RPM: spec.RPM, TPM: spec.TPM, Window: spec.Window, Pool: pool})
	if err != nil {
		t.Fatal(err)
	}
	c, err := oai.New(oai.Config{BaseURL: spec.URL + "/v1", Model: "sim-load", Limiter: lim, Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		res loadResult
		wg  sync.WaitGroup
	)
	for range spec.Conversations {
		wg.Go(func() {
			for ctx.Err() == nil {
				msgs := []model.Message{{Role: model.RoleSystem, Content: words(spec.Session.Open)}}
				for turn := 0; turn < spec.Session.Turns && ctx.Err() == nil; turn++ {
					if turn > 0 {
						msgs = append(msgs, model.Message{Role: model.RoleUser, Content: words(spec.Session.Step)})
					}
					resp, err := c.Complete(ctx, model.Request{Messages: msgs, MaxTokens: spec.Session.Allowance})
					mu.Lock()
					res.Waited += resp.Timing.LimiterWait
					mu.Unlock()
					if ctx.Err() != nil {
						return
					}
					if ce, ok := model.IsFatal(err); ok && ce.Kind == model.KindQuotaTooSmall {
						mu.Lock()
						res.TooLarge++
						mu.Unlock()
						break // as a writer ends the slice: a fresh, short session next
					}
					if rl, ok := model.IsRateLimited(err); ok {
						mu.Lock()
						res.RateLimited++
						mu.Unlock()
						time.Sleep(rl.RetryAfter)
						continue
					}
					if err != nil {
						mu.Lock()
						res.Failed++
						mu.Unlock()
						time.Sleep(time.Second)
						continue
					}
					mu.Lock()
					res.Admitted++
					mu.Unlock()
					msgs = append(msgs, resp.Message)
				}
			}
		})
	}
	wg.Wait()
	b, _ := json.Marshal(res)
	fmt.Printf("\nLOAD-RESULT %s\n", b)
}

// matrixCell is one measurement of the matrix.
type matrixCell struct {
	RPM, TPM  int
	Session   session
	Processes int
}

func (c matrixCell) String() string {
	tpm := fmt.Sprint(c.TPM)
	switch {
	case c.TPM%1_000_000 == 0:
		tpm = fmt.Sprintf("%dM", c.TPM/1_000_000)
	case c.TPM%1000 == 0:
		tpm = fmt.Sprintf("%dk", c.TPM/1000)
	}
	return fmt.Sprintf("rpm%d-tpm%s-%s-%dp", c.RPM, tpm, c.Session.Name, c.Processes)
}

// matrix is the benchmark matrix: quotas from 60 to 10,000 requests and 20k
// to 2M tokens per minute, small and large sessions, and 1, 3 and 8 writer
// processes where the quota is the kind the pipeline targets.
func matrix() []matrixCell {
	var out []matrixCell
	for _, q := range []struct {
		rpm, tpm int
		procs    []int
	}{
		{500, 200_000, []int{1, 3, 8}},
		{600, 30_000, []int{1, 3, 8}},
		{10_000, 2_000_000, []int{1, 3, 8}},
		{60, 20_000, []int{3}},
		{10_000, 20_000, []int{3}},
		{60, 2_000_000, []int{3}},
	} {
		for _, s := range []session{smallSession, largeSession} {
			for _, p := range q.procs {
				out = append(out, matrixCell{RPM: q.rpm, TPM: q.tpm, Session: s, Processes: p})
			}
		}
	}
	return out
}

// TestQuotaMatrix (SUITEGEN_BENCH=1; QUOTA_CELLS=name,name… runs some) runs
// each cell for a warm-up window and QUOTA_WINDOWS measured ones (default 2)
// of one minute and logs a line per cell for docs/BENCHMARKS.md. Every cell
// must see no 429.
func TestQuotaMatrix(t *testing.T) {
	if os.Getenv("SUITEGEN_BENCH") == "" {
		t.Skip("SUITEGEN_BENCH=1 runs the quota matrix (about 80 minutes)")
	}
	windows := 2
	if v := os.Getenv("QUOTA_WINDOWS"); v != "" {
		fmt.Sscan(v, &windows)
	}
	only := map[string]bool{}
	for _, c := range strings.Split(os.Getenv("QUOTA_CELLS"), ",") {
		if c != "" {
			only[c] = true
		}
	}
	db := testenv.PostgresURL(t)
	for _, cell := range matrix() {
		if len(only) > 0 && !only[cell.String()] {
			continue
		}
		t.Run(cell.String(), func(t *testing.T) {
			window := time.Minute
			sim, err := providersim.New(providersim.Config{RPM: cell.RPM, TPM: cell.TPM, Window: window, Latency: 100 * time.Millisecond,
				LatencyJitter: 30 * time.Millisecond, Model: echo{words(cell.Session.ReplyTokens)}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			addr, err := sim.Start(ctx)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			defer func() { cancel(); _ = sim.Wait() }()
			proxy := newCountingProxy(t, "http://"+addr)
			run := time.Duration(windows+1)*window + 20*time.Second
			var procs []*exec.Cmd
			var outs []*lockedOutput
			for i := 0; i < cell.Processes; i++ {
				spec, _ := json.Marshal(loadSpec{URL: proxy.url, Database: db, Key: "matrix|" + cell.String(), RPM: cell.RPM, TPM: cell.TPM,
					Window: window, For: run, Session: cell.Session, Conversations: 1, Index: i})
				cmd := exec.Command(os.Args[0], "-test.run", "^TestLoadProcess$", "-test.v", "-test.timeout", "0")
				cmd.Env = append(os.Environ(), "SUITEGEN_LOAD="+string(spec))
				out := &lockedOutput{}
				cmd.Stdout, cmd.Stderr = out, out
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				procs, outs = append(procs, cmd), append(outs, out)
			}
			var total loadResult
			for i, cmd := range procs {
				err := cmd.Wait()
				line := outs[i].lastResult()
				var r loadResult
				if line == "" || json.Unmarshal([]byte(line), &r) != nil {
					t.Fatalf("load process %d: %v\n%s", i, err, outs[i].String())
				}
				total.Admitted += r.Admitted
				total.RateLimited += r.RateLimited
				total.TooLarge += r.TooLarge
				total.Failed += r.Failed
				total.Waited += r.Waited
			}
			ms := proxy.minutes(window)
			if len(ms) < windows+1 {
				t.Fatalf("only %d whole windows: %v", len(ms), ms)
			}
			var tok, req float64
			var tot second
			for _, m := range ms[1 : windows+1] {
				tok += float64(m.QuotaTokens)
				req += float64(m.Admitted)
				tot.add(m)
			}
			for i, m := range ms {
				t.Logf("window %d: %v", i, m)
			}
			all := proxy.totals()
			busy := total.Waited.Seconds() / (run.Seconds() * float64(cell.Processes))
			t.Logf("MATRIX | %d | %d | %s | %d | %.1f%% | %.1f%% | %d | %d | %d | %.0f%% |", cell.RPM, cell.TPM, cell.Session.Name, cell.Processes,
				100*tok/float64(windows)/float64(cell.TPM), 100*req/float64(windows)/float64(cell.RPM), tot.Requests, all.RateLimited, total.TooLarge, 100*busy)
			if all.RateLimited != 0 || total.RateLimited != 0 {
				t.Errorf("%d requests answered 429 (the processes saw %d), want none", all.RateLimited, total.RateLimited)
			}
			if total.Failed != 0 {
				t.Errorf("%d requests failed", total.Failed)
			}
		})
	}
}

// lockedOutput collects a process's output.
type lockedOutput struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedOutput) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedOutput) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedOutput) lastResult() string {
	s := l.String()
	i := strings.LastIndex(s, "LOAD-RESULT ")
	if i < 0 {
		return ""
	}
	line := s[i+len("LOAD-RESULT "):]
	if j := strings.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	return line
}
