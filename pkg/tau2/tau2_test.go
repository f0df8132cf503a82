package tau2_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/run"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/tau2"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/world"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The τ²-bench task schema (tau2.data_model.tasks), read strictly: a field
// the export writes that τ²-bench does not define fails the decode.
type t2Doc struct {
	Format         string `json:"format"`
	Domain         string `json:"domain"`
	ContractSHA256 string `json:"contract_sha256"`
	WorldSHA256    string `json:"world_sha256"`
	Policy         string `json:"policy"`
	Tools          []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"tools"`
	DB      map[string]map[string]map[string]any `json:"db"`
	Tasks   []t2Task                             `json:"tasks"`
	Refused []tau2.Refusal                       `json:"refused"`
}

type t2Task struct {
	ID          string `json:"id"`
	Description *struct {
		Purpose          *string `json:"purpose"`
		RelevantPolicies *string `json:"relevant_policies"`
		Notes            *string `json:"notes"`
	} `json:"description"`
	UserScenario struct {
		Persona      *string `json:"persona"`
		Instructions struct {
			Domain           string  `json:"domain"`
			ReasonForCall    string  `json:"reason_for_call"`
			KnownInfo        *string `json:"known_info"`
			UnknownInfo      *string `json:"unknown_info"`
			TaskInstructions string  `json:"task_instructions"`
		} `json:"instructions"`
	} `json:"user_scenario"`
	InitialState *struct {
		InitializationData *struct {
			AgentData map[string]map[string]map[string]any `json:"agent_data"`
			UserData  map[string]any                       `json:"user_data"`
		} `json:"initialization_data"`
		InitializationActions []any `json:"initialization_actions"`
		MessageHistory        []any `json:"message_history"`
	} `json:"initial_state"`
	EvaluationCriteria *struct {
		Actions []struct {
			ActionID    string         `json:"action_id"`
			Requestor   string         `json:"requestor"`
			Name        string         `json:"name"`
			Arguments   map[string]any `json:"arguments"`
			Info        *string        `json:"info"`
			CompareArgs []string       `json:"compare_args"`
		} `json:"actions"`
		EnvAssertions   []any    `json:"env_assertions"`
		CommunicateInfo []string `json:"communicate_info"`
		NLAssertions    []string `json:"nl_assertions"`
		RewardBasis     []string `json:"reward_basis"`
	} `json:"evaluation_criteria"`
}

func readT2(t *testing.T, b []byte) t2Doc {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d t2Doc
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("the export does not read back as τ²-bench tasks: %v", err)
	}
	return d
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func exampleDir(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeSuite writes a builtin suite of n scenarios for an example and
// returns its directory and the engine of its world.
func writeSuite(t *testing.T, name string, n int) (string, *engine.Engine) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := testenv.PostgresURL(t)
	out := t.TempDir()
	if _, err := run.Run(ctx, run.Config{Dirs: []string{exampleDir(t, name)}, Asked: n, Writers: 2, Out: out, Seed: 7,
		NATSURL: testenv.NATS(t), DatabaseURL: url, Logger: quiet()}); err != nil {
		t.Fatalf("run: %v", err)
	}
	c, err := contract.LoadValid(exampleDir(t, name))
	if err != nil {
		t.Fatal(err)
	}
	pool, err := engine.Pool(ctx, url, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	e, err := engine.Open(ctx, pool, c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return out, e
}

func export(t *testing.T, out string, e *engine.Engine) (tau2.Summary, []byte) {
	t.Helper()
	var buf bytes.Buffer
	sum, err := tau2.Export(context.Background(), out, tau2.Source{Contract: e.C, World: e.World, Replayer: e.Prover}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return sum, buf.Bytes()
}

// merge is τ²-bench's side of an initial state, done without the export's
// code: each row of agent_data is written over the record of its key (added
// when absent), tables in schema order.
func merge(ctx context.Context, cp *world.Copy, c *contract.Contract, data map[string]map[string]map[string]any) error {
	for _, tb := range c.Tables {
		rows := data[tb.Name]
		keys := make([]string, 0, len(rows))
		for k := range rows {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var set []string
		for _, col := range tb.Columns {
			if !slices.Contains(tb.PrimaryKey, col.Name) {
				set = append(set, fmt.Sprintf("%s = EXCLUDED.%s", col.Name, col.Name))
			}
		}
		sql := fmt.Sprintf("INSERT INTO %s SELECT * FROM json_populate_record(NULL::%s, $1::json) ON CONFLICT (%s) DO ",
			tb.Name, tb.Name, strings.Join(tb.PrimaryKey, ", "))
		if len(set) == 0 {
			sql += "NOTHING"
		} else {
			sql += "UPDATE SET " + strings.Join(set, ", ")
		}
		for _, k := range keys {
			if got := tau2.Key(tb.PrimaryKey, rows[k]); got != k {
				return fmt.Errorf("%s: row under key %s has key %s", tb.Name, k, got)
			}
			b, err := json.Marshal(rows[k])
			if err != nil {
				return err
			}
			if _, err := cp.Exec(ctx, sql, string(b)); err != nil {
				return fmt.Errorf("%s %s: %w", tb.Name, k, err)
			}
		}
	}
	for name := range data {
		if c.Table(name) == nil {
			return fmt.Errorf("agent_data names table %s, which the world does not have", name)
		}
	}
	return nil
}

func stateJSON(ctx context.Context, cp *world.Copy) (string, error) {
	st, err := cp.State(ctx)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(st)
	return string(b), err
}

func readScenario(t *testing.T, out, name string) *scenario.Scenario {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "scenarios", name, "scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestRoundTrip exports real suites, reads the tasks back as τ²-bench
// reads them and plays each in the world: the initial state merged into the
// data is the scenario's setup exactly; the actions apply without error and,
// when they include a tool declared to change state, change state; an agent that does
// nothing fails every task whose scenario expects the agent to act or hand
// over. Every scenario is a task or a named refusal.
func TestRoundTrip(t *testing.T) {
	testenv.OutsideRace(t, "suites written by the pipeline the race pass runs in pkg/e2e, then exported by one goroutine")
	for _, ex := range []struct {
		name string
		n    int
	}{{"retail", 40}, {"rides", 64}} {
		// rides plans its escalations after every use case's ordinary and
		// refused cases: 64 is the smallest suite that holds some.
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel() // each writes its own suite on servers of its own
			ctx := context.Background()
			out, e := writeSuite(t, ex.name, ex.n)
			sum, raw := export(t, out, e)
			doc := readT2(t, raw)
			if doc.Format != tau2.Format || doc.Domain != e.C.Agent || doc.ContractSHA256 != e.C.SHA256 || doc.WorldSHA256 != e.C.WorldSHA256 {
				t.Fatalf("header: %s %s %s %s", doc.Format, doc.Domain, doc.ContractSHA256, doc.WorldSHA256)
			}
			if len(doc.Tools) != len(e.C.Tools) || !strings.Contains(doc.Policy, e.C.Rules[0].Text) {
				t.Errorf("%d tools for %d, or a policy without the rules", len(doc.Tools), len(e.C.Tools))
			}
			if len(doc.Tasks)+len(doc.Refused) != ex.n || sum.Tasks != len(doc.Tasks) || len(sum.Refused) != len(doc.Refused) {
				t.Fatalf("%d tasks + %d refused for %d scenarios (summary %d + %d)", len(doc.Tasks), len(doc.Refused), ex.n, sum.Tasks, len(sum.Refused))
			}
			if len(doc.Tasks) < ex.n/4 {
				t.Fatalf("only %d of %d scenarios exported", len(doc.Tasks), ex.n)
			}
			seen := map[string]bool{}
			for _, r := range doc.Refused {
				if r.Scenario == "" || r.Code == "" || r.Reason == "" || seen[r.Scenario] {
					t.Errorf("refusal without a name, code or reason, or twice: %+v", r)
				}
				seen[r.Scenario] = true
			}
			for table, rows := range doc.DB {
				if len(rows) != len(e.C.Seed(table)) {
					t.Errorf("db %s: %d rows, the seed has %d", table, len(rows), len(e.C.Seed(table)))
				}
			}
			kinds := map[string]int{}
			for _, task := range doc.Tasks {
				if seen[task.ID] {
					t.Errorf("%s is both a task and a refusal", task.ID)
				}
				seen[task.ID] = true
				sc := readScenario(t, out, task.ID)
				kinds[sc.Expects]++
				if len(sc.Then) > 0 {
					kinds["conversations"]++
				}
				checkTask(ctx, t, e, sc, task)
			}
			t.Logf("%d tasks (%v), %d refused (%v)", len(doc.Tasks), kinds, len(doc.Refused), sum.ByCode())
			// An escalation is kept only where the world refuses the act
			// pressed for (or a rule forbids it); a refused act changes
			// nothing τ²-bench's criteria read, so such escalations are
			// refused from the export (tempting-passes) rather than tasks.
			if kinds["succeed"] == 0 {
				t.Errorf("no succeed task among %v", kinds)
			}
		})
	}
}

func checkTask(ctx context.Context, t *testing.T, e *engine.Engine, sc *scenario.Scenario, task t2Task) {
	t.Helper()
	ec := task.EvaluationCriteria
	if ec == nil || ec.Actions == nil || len(ec.RewardBasis) == 0 {
		t.Errorf("%s: no criteria, no action list or no reward basis", task.ID)
		return
	}
	if task.UserScenario.Instructions.ReasonForCall != sc.Instruction || task.UserScenario.Instructions.Domain != e.C.Agent {
		t.Errorf("%s: the user's instructions are not the scenario's", task.ID)
	}
	// Every request's settling call (its solution's last) is an action, in
	// the order the caller makes the requests.
	at := 0
	for k, r := range sc.Requests() {
		if len(r.Solution) == 0 {
			continue
		}
		last := r.Solution[len(r.Solution)-1].Tool
		for at < len(ec.Actions) && ec.Actions[at].Name != last {
			at++
		}
		if at == len(ec.Actions) {
			t.Errorf("%s: request %d's last call %s is not among the actions, in order", task.ID, k+1, last)
			break
		}
		at++
	}
	var data map[string]map[string]map[string]any
	if task.InitialState != nil && task.InitialState.InitializationData != nil {
		data = task.InitialState.InitializationData.AgentData
	}
	if (len(sc.Setup) > 0) != (len(data) > 0) {
		t.Errorf("%s: setup of %d statements, initial state of %d tables", task.ID, len(sc.Setup), len(data))
	}
	// The scenario's own setup, for comparison.
	var want string
	if err := e.World.Copy(ctx, func(cp *world.Copy) error {
		if err := cp.ExecBatch(ctx, sc.Setup); err != nil {
			return err
		}
		var err error
		want, err = stateJSON(ctx, cp)
		return err
	}); err != nil {
		t.Fatalf("%s: setup: %v", task.ID, err)
	}
	changes := false
	var initial, after string
	err := e.World.Copy(ctx, func(cp *world.Copy) error {
		if err := merge(ctx, cp, e.C, data); err != nil {
			return fmt.Errorf("initial state: %w", err)
		}
		var err error
		if initial, err = stateJSON(ctx, cp); err != nil {
			return err
		}
		for _, a := range ec.Actions {
			if tl := e.C.Tool(a.Name); tl != nil && tl.ChangesState != nil && *tl.ChangesState {
				changes = true
			}
			if r := cp.Call(ctx, a.Name, a.Arguments); !r.OK {
				return fmt.Errorf("action %s does not apply: %s", a.ActionID, r.Error)
			}
		}
		after, err = stateJSON(ctx, cp)
		return err
	})
	if err != nil {
		t.Errorf("%s: %v", task.ID, err)
		return
	}
	if initial != want {
		t.Errorf("%s: the initial state merged into the data is not the state the scenario's setup leaves", task.ID)
	}
	if changes && initial == after {
		t.Errorf("%s: the actions include a state-changing tool but change nothing", task.ID)
	}
	// τ²-bench's verdict on an agent that does nothing: its state is the
	// initial one, it said nothing and called nothing.
	nothing := true
	for _, b := range ec.RewardBasis {
		switch b {
		case tau2.RewardDB:
			nothing = nothing && initial == after
		case tau2.RewardCommunicate:
			nothing = nothing && len(ec.CommunicateInfo) == 0
		case tau2.RewardAction:
			nothing = nothing && len(ec.Actions) == 0
		default:
			t.Errorf("%s: reward basis %s", task.ID, b)
		}
	}
	if nothing && (sc.Expects == "succeed" || sc.Expects == "escalate") {
		t.Errorf("%s (expects %s): an agent that does nothing passes %v", task.ID, sc.Expects, ec.RewardBasis)
	}
}

// TestRefusals: a setup that deletes rows cannot be an initial state
// (one is merged into the data); the scenario is refused, named and counted,
// and the others are still exported. A suite written for another contract
// is an error.
func TestRefusals(t *testing.T) {
	out, e := writeSuite(t, "retail", 12)
	idx, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index suite.Index
	if err := json.Unmarshal(idx, &index); err != nil {
		t.Fatal(err)
	}
	// The plan deals some conversations of two requests: the victims are
	// two of one request.
	var single []string
	for _, e := range index.Scenarios {
		if sc := readScenario(t, out, e.Name); len(sc.Then) == 0 {
			single = append(single, e.Name)
		}
	}
	if len(single) < 2 {
		t.Fatalf("%d scenarios of one request, want 2", len(single))
	}
	victim := single[0]
	sc := readScenario(t, out, victim)
	sc.Setup = append(sc.Setup, scenario.Statement{SQL: "DELETE FROM payments WHERE order_id = $1", Args: []any{"#W1001"}})
	b, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "scenarios", victim, "scenario.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	// A conversation of two requests, neither to be carried out and
	// neither with a wrong move: no reading of it can be scored.
	twice := single[1]
	sc2 := readScenario(t, out, twice)
	sc2.Expects = scenario.OutcomeRefuse
	sc2.Then = []scenario.Request{{UseCase: sc2.UseCase, Expects: scenario.OutcomeRefuse, Tests: sc2.Tests, Solution: sc2.Solution, SubGoals: sc2.SubGoals}}
	if b, err = json.MarshalIndent(sc2, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "scenarios", twice, "scenario.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum, raw := export(t, out, e)
	doc := readT2(t, raw)
	var got *tau2.Refusal
	for i := range doc.Refused {
		if doc.Refused[i].Scenario == victim {
			got = &doc.Refused[i]
		}
	}
	if got == nil || got.Code != tau2.SetupRemoves || !strings.Contains(got.Reason, "payments") {
		t.Fatalf("%s: want refused %s naming payments, got %+v", victim, tau2.SetupRemoves, got)
	}
	refusedTwice := false
	for i := range doc.Refused {
		if doc.Refused[i].Scenario == twice {
			refusedTwice = doc.Refused[i].Reason != ""
		}
	}
	if !refusedTwice {
		t.Errorf("%s: two requests to refuse with no wrong move either way was not refused with a reason", twice)
	}
	if sum.ByCode()[tau2.SetupRemoves] != 1 || len(doc.Tasks) == 0 {
		t.Fatalf("summary %v, %d tasks", sum.ByCode(), len(doc.Tasks))
	}

	rides, err := contract.LoadValid(exampleDir(t, "rides"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = tau2.Export(context.Background(), out, tau2.Source{Contract: rides, World: e.World, Replayer: e.Prover}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "written for contract") {
		t.Fatalf("exporting a retail suite against the rides contract: %v", err)
	}
}

// TestCodesDocumented keeps docs/EXPORT.md's table of refusal codes
// exactly the codes the export gives, in order.
func TestCodesDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "EXPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []tau2.Code
	inTable := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| code | the scenario is refused because |"):
			inTable = true
		case inTable && strings.HasPrefix(line, "| `"):
			code, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			documented = append(documented, tau2.Code(code))
		case inTable && !strings.HasPrefix(line, "|"):
			inTable = false
		}
	}
	if !slices.Equal(documented, tau2.Codes) {
		t.Fatalf("docs/EXPORT.md lists %v, the export gives %v", documented, tau2.Codes)
	}
}
