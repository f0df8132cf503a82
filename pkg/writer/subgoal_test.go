package writer_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/builtin"
	"github.com/suitegen/suitegen/pkg/cli"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	goodGoal   = "calls_counted"
	brokenGoal = "always_raises"
	// A check with teeth in every outcome, given the solution's length:
	// doing nothing, or the tempting path, makes another number of calls.
	goodSource = `what = "The agent made exactly params count tool calls"
params = {"count": "int"}

def check(world, calls, params):
    if len(calls) != params["count"]:
        return "the agent made %d calls, not %d" % (len(calls), params["count"])
    return None
`
	brokenSource = `what = "Deliberately broken: its check raises"
params = {}

def check(world, calls, params):
    fail("this check is broken on purpose")
`
)

// step is one call of the fixed script and what its answer must say.
type step struct {
	name, args string
	want       []string // substrings of the answer
}

// script is the fixed sequence the first session plays before the builtin
// policy takes over: valid and invalid adds and reports.
var script = []step{
	{brief.ToolAddSubGoal, js(map[string]string{"name": goodGoal, "source": goodSource}), []string{`"added":"calls_counted"`, `"count":"int"`}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": goodGoal, "source": goodSource}), []string{`"already":true`}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": goodGoal, "source": goodSource + "\n# changed\n"}), []string{`"code":"taken"`, "other source"}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": "no_colon", "source": "what = \"x\"\nparams = {}\nlimit = 1 +* 2\ndef check(world, calls, params):\n    return None\n"}), []string{`"code":"invalid"`, "subgoals/no_colon.star:3:", "subgoal-syntax"}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": "bad_type", "source": "what = \"x\"\nparams = {\"n\": \"integer\"}\ndef check(world, calls, params):\n    return None\n"}), []string{`"code":"invalid"`, "subgoals/bad_type.star:2:", "subgoal-bad-params", `param \"n\"`}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": "no_check", "source": "what = \"x\"\nparams = {}\n"}), []string{`"code":"invalid"`, "subgoal-no-check"}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": "top_raises", "source": "what = \"x\"\nparams = {}\nx = 1 // 0\ndef check(world, calls, params):\n    return None\n"}), []string{`"code":"invalid"`, "subgoals/top_raises.star:3:"}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": "Bad-Name", "source": goodSource}), []string{`"code":"invalid"`, "must match"}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": "called", "source": goodSource}), []string{`"code":"taken"`, "built-in"}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": "trip_cancelled", "source": goodSource}), []string{`"code":"taken"`, "contract's catalogue"}},
	{brief.ToolAddSubGoal, js(map[string]string{"name": brokenGoal, "source": brokenSource}), []string{`"added":"always_raises"`}},
	{brief.ToolReportBucket, js(map[string]string{"use_case": "cancel-trip", "angle": "rider cancels twice in a row", "outcome": "refuse", "overlay": "pressure", "why": "no bucket repeats a cancel"}), []string{`"bucket":"b`, `"want":0`}},
	{brief.ToolReportBucket, js(map[string]string{"use_case": "cancel-trip", "angle": "rider cancels twice in a row", "outcome": "refuse", "overlay": "pressure", "why": "no bucket repeats a cancel"}), []string{`"bucket":"b`}},
	{brief.ToolReportBucket, js(map[string]string{"use_case": "cancel-trip", "angle": strings.Repeat("a", 91), "outcome": "refuse", "overlay": "none", "why": "w"}), []string{`"code":"invalid"`, "over 90"}},
	{brief.ToolReportBucket, js(map[string]string{"use_case": "cancel-trip", "angle": "a", "outcome": "refuse", "overlay": "sarcasm", "why": "w"}), []string{`"code":"invalid"`, "overlay"}},
	{brief.ToolReportBucket, js(map[string]string{"use_case": "fly-a-plane", "angle": "a", "outcome": "refuse", "overlay": "none", "why": "w"}), []string{`"code":"invalid"`, "use_case"}},
	{brief.ToolReportBucket, js(map[string]string{"use_case": "cancel-trip", "angle": "a", "outcome": "maybe", "overlay": "none", "why": "w"}), []string{`"code":"invalid"`, "outcome"}},
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// scripted is a model.Client that plays a fixed sequence of tool calls in the
// first session it sees, then lets the builtin policy write: every scenario
// the builtin submits after the add names the added sub-goal, and the first
// one is also submitted once with the broken sub-goal. The builtin sees the
// conversation without the scripted calls, so its policy is undisturbed.
type scripted struct {
	inner *builtin.Model

	mu      sync.Mutex
	owner   string            // the slice that plays the script
	answers map[string]string // scripted call id -> the writer's answer
	orig    map[string]string // slice/call id -> the builtin's own arguments
	broken  bool              // the broken submission was made
	played  bool              // the owner played the script
	// brokenRefused is what the digest that replaced the broken
	// submission's turns said about it (gate/code).
	brokenRefused []string
	added         chan struct{}   // closed once the good sub-goal is in the run
	slices        map[string]bool // slices whose submissions named the added sub-goal
}

func newScripted(c *contract.Contract) *scripted {
	return &scripted{inner: builtin.New(c), answers: map[string]string{}, orig: map[string]string{},
		added: make(chan struct{}), slices: map[string]bool{}}
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	var b brief.Brief
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			if bb, ok := brief.Parse(m.Content); ok {
				b = bb
				break
			}
		}
	}
	// The builtin's view: scripted calls and their answers left out, its own
	// submissions as it made them.
	var view []model.Message
	for _, m := range req.Messages {
		if subs, ok := brief.ParseDigest(m.Content); ok && m.Role == model.RoleUser {
			s.digested(subs)
		}
		if m.Role == model.RoleTool && strings.HasPrefix(m.ToolCallID, "script_") {
			s.answer(m.ToolCallID, m.Content)
			continue
		}
		if m.Role == model.RoleAssistant && len(m.ToolCalls) > 0 {
			var own []model.ToolCall
			for _, tc := range m.ToolCalls {
				if strings.HasPrefix(tc.ID, "script_") {
					continue
				}
				if o, ok := s.original(b.Slice + "/" + tc.ID); ok {
					tc.Arguments = o
				}
				own = append(own, tc)
			}
			if len(own) == 0 {
				continue
			}
			m.ToolCalls = own
		}
		view = append(view, m)
	}
	s.mu.Lock()
	if s.owner == "" {
		s.owner = b.Slice
	}
	owner := s.owner == b.Slice
	play := owner && !s.played
	s.played = s.played || owner
	s.mu.Unlock()
	if play {
		// The owner's first move: the whole script in one turn.
		msg := model.Message{Role: model.RoleAssistant}
		for i, st := range script {
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: "script_" + itoa(i), Name: st.name, Arguments: st.args})
		}
		return model.Response{Message: msg, Usage: model.Usage{PromptTokens: 1, CompletionTokens: 1}}, nil
	}
	if !owner {
		// Other sessions write once the sub-goal is in the run, so that their
		// writers must read it from the ledger.
		select {
		case <-s.added:
		case <-ctx.Done():
			return model.Response{}, ctx.Err()
		case <-time.After(60 * time.Second):
		}
	}
	vreq := req
	vreq.Messages = view
	resp, err := s.inner.Complete(ctx, vreq)
	if err != nil || len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Name != brief.ToolSubmit {
		return resp, err
	}
	tc := resp.Message.ToolCalls[0]
	var a brief.SubmitArgs
	if err := json.Unmarshal([]byte(tc.Arguments), &a); err != nil {
		return resp, nil
	}
	if a.Rehearsal > 0 {
		// The submission names its rehearsal: spell its setup and solution
		// out, which the added sub-goal's parameter counts.
		a.Scenario.Setup, a.Scenario.Solution = rehearsal(req.Messages, a.Rehearsal)
		a.Rehearsal = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var calls []model.ToolCall
	if owner && !s.broken {
		s.broken = true
		bad := a
		bad.Scenario.Name += "-broken"
		bad.Scenario.SubGoals = append(append([]scenario.SubGoalRef{}, a.Scenario.SubGoals...), scenario.SubGoalRef{Name: brokenGoal})
		calls = append(calls, model.ToolCall{ID: "script_broken", Name: brief.ToolSubmit, Arguments: js(bad)})
	}
	a.Scenario.SubGoals = append(a.Scenario.SubGoals, scenario.SubGoalRef{Name: goodGoal, Params: map[string]any{"count": len(a.Scenario.Solution)}})
	s.orig[b.Slice+"/"+tc.ID] = tc.Arguments
	s.slices[b.Slice] = true
	tc.Arguments = js(a)
	resp.Message.ToolCalls = append(calls, tc)
	return resp, nil
}

// rehearsal is the setup and calls of the rehearsal numbered n in msgs.
func rehearsal(msgs []model.Message, n int) ([]scenario.Statement, []scenario.Call) {
	args := map[string]string{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			args[tc.ID] = tc.Arguments
		}
		var r brief.TryResult
		if m.Role != model.RoleTool || m.Name != brief.ToolTry || json.Unmarshal([]byte(m.Content), &r) != nil || r.Rehearsal != n {
			continue
		}
		var a brief.TryArgs
		_ = json.Unmarshal([]byte(args[m.ToolCallID]), &a)
		return a.Setup, a.Calls
	}
	return nil, nil
}

func (s *scripted) answer(id, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.answers[id]; seen {
		return
	}
	s.answers[id] = content
	if id == "script_0" && strings.Contains(content, `"added"`) {
		close(s.added)
	}
}

func (s *scripted) digested(subs []brief.Submission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range subs {
		if strings.HasSuffix(sub.Name, "-broken") && s.brokenRefused == nil {
			s.brokenRefused = sub.Refused
		}
	}
}

func (s *scripted) original(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.orig[key]
	return o, ok
}

func itoa(i int) string { return js(i) }

// TestAddSubGoalAndReportBucket drives real writer sessions (suitegen run with
// two writers on real NATS and Postgres) with the scripted model.
func TestAddSubGoalAndReportBucket(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "rides"))
	if err != nil {
		t.Fatal(err)
	}
	const asked = 8
	out := t.TempDir()
	dbURL := testenv.PostgresURL(t)
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := newScripted(c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// A reply allowance that holds one move: the script wraps replies of
	// one submission.
	res, err := run.Run(ctx, run.Config{Dirs: []string{dir}, Asked: asked, Writers: 2, Out: out, Seed: 7, MaxTokens: 2048,
		NATSURL: testenv.NATS(t), DatabaseURL: dbURL, Client: m})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res[0].Proved != asked {
		t.Errorf("proved %d, asked %d: a reported bucket must not change what the run writes", res[0].Proved, asked)
	}

	// Every scripted call got the answer it should.
	m.mu.Lock()
	for i, st := range script {
		got := m.answers["script_"+itoa(i)]
		for _, w := range st.want {
			if !strings.Contains(got, w) {
				t.Errorf("step %d (%s %s): answer %q lacks %q", i, st.name, clip(st.args), got, w)
			}
		}
	}
	brokenAnswer, seen := m.answers["script_broken"]
	brokenRefused := m.brokenRefused
	slices := len(m.slices)
	m.mu.Unlock()
	// The broken submission's answer is read from the conversation, or,
	// when the builtin's scenario beside it was kept and their turns
	// compacted first, from the digest that replaced them, or, when the
	// session ended with that reply, from the refusals the writer recorded.
	codes := map[string]bool{}
	if seen {
		var sr brief.SubmitResult
		if err := json.Unmarshal([]byte(brokenAnswer), &sr); err != nil || sr.Accepted {
			t.Fatalf("the submission naming the broken sub-goal: %q", brokenAnswer)
		}
		for _, r := range sr.Refusals {
			codes[string(r.Code)] = true
		}
	}
	for _, r := range brokenRefused {
		_, code, _ := strings.Cut(r, "/")
		codes[code] = true
	}
	if !seen && brokenRefused == nil {
		var recorded int
		if err := pgxRecorded(ctx, dbURL, res[0].RunID, &recorded); err != nil {
			t.Fatal(err)
		}
		codes["check-broken"] = recorded > 0
	}
	if !codes["check-broken"] {
		t.Errorf("the broken sub-goal was refused with %q %v, want check-broken", brokenAnswer, brokenRefused)
	}

	// The suite: every scenario names the added sub-goal and was kept.
	paths, _ := filepath.Glob(filepath.Join(out, "scenarios", "*", "scenario.json"))
	if len(paths) != asked {
		t.Fatalf("wrote %d scenarios, want %d", len(paths), asked)
	}
	named := ""
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range sc.SubGoals {
			if ref.Name == goodGoal {
				named = p
			}
		}
	}
	if named == "" {
		t.Fatal("no kept scenario names the added sub-goal")
	}

	// The ledger: the sub-goals, the reported bucket, and which writers used them.
	pool, err := engine.Pool(ctx, dbURL, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	store := ledger.New(pool)
	runID := res[0].RunID
	goals, err := store.SubGoals(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(goals) != 2 || goals[0].Name != brokenGoal || goals[1].Name != goodGoal || goals[1].Source != goodSource {
		t.Errorf("ledger sub-goals: %+v", goals)
	}
	bs, err := store.Buckets(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	reported := 0
	for _, b := range bs {
		if b.Origin != "writer" {
			continue
		}
		reported++
		sp := b.Spec
		if b.Want != 0 || sp.Capacity != 1 || sp.Sized != 0 || b.UseCase != "cancel-trip" || b.Overlay != "pressure" || b.Outcome != "refuse" || b.Kind != "edge" || sp.Tool == "" {
			t.Errorf("reported bucket: %+v spec %+v", b, sp)
		}
		if !strings.Contains(m.answers["script_11"], `"bucket":"`+b.ID+`"`) || !strings.Contains(m.answers["script_12"], `"bucket":"`+b.ID+`"`) {
			t.Errorf("bucket %s is not the id the model was told: %s", b.ID, m.answers["script_11"])
		}
	}
	if reported != 1 {
		t.Errorf("%d buckets of origin writer, want 1 (a repeated report is the same bucket)", reported)
	}
	var writers int
	if err := pool.QueryRow(ctx, `SELECT count(DISTINCT writer) FROM scenarios WHERE run_id = $1 AND body::text LIKE '%calls_counted%'`, runID).Scan(&writers); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d slices named the added sub-goal; %d writers journalled scenarios using it", slices, writers)
	if slices < 2 || writers < 2 {
		t.Errorf("%d slices and %d writers used the added sub-goal; every slice and writer of the run must be able to", slices, writers)
	}

	// catalogue.json carries the run's sub-goals with their source...
	var cat []suite.SubGoalInfo
	b, err := os.ReadFile(filepath.Join(out, "catalogue.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cat); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range cat {
		if g.Name == goodGoal {
			found = g.Origin == "run" && g.Source == goodSource
		}
	}
	if !found {
		t.Errorf("catalogue.json lacks %s with its source", goodGoal)
	}
	// ...so `suitegen prove --catalogue` proves a scenario that names one,
	// and without it the scenario names an unknown sub-goal.
	code, outText := prove(t, dir, named, "--catalogue", filepath.Join(out, "catalogue.json"))
	if code != cli.ExitOK || !strings.Contains(outText, "kept:") {
		t.Errorf("prove --catalogue: exit %d\n%s", code, outText)
	}
	code, outText = prove(t, dir, named)
	if code == cli.ExitOK || !strings.Contains(outText, "unknown-sub-goal") {
		t.Errorf("prove without --catalogue: exit %d\n%s", code, outText)
	}
}

func prove(t *testing.T, dir, file string, extra ...string) (int, string) {
	t.Helper()
	var buf strings.Builder
	env := &cli.Env{Stdout: &buf, Stderr: &buf, Getenv: func(k string) string {
		if k == "SUITEGEN_DATABASE_URL" {
			return testenv.PostgresURL(t)
		}
		return ""
	}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	args := append([]string{"prove", dir, file}, extra...)
	code := cli.Dispatch(context.Background(), env, "suitegen", args)
	return code, buf.String()
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// pgxRecorded counts the check-broken refusals the ledger recorded for run.
func pgxRecorded(ctx context.Context, dbURL, run string, n *int) error {
	pool, err := engine.Pool(ctx, dbURL, 1)
	if err != nil {
		return err
	}
	defer pool.Close()
	return pool.QueryRow(ctx, `SELECT count(*) FROM refusals WHERE run_id = $1 AND code = 'check-broken'`, run).Scan(n)
}
