package tau2_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/tau2"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/world"
)

// TestLoadMap checks the document map against the contract: examples/telecom's
// own map loads, and each fault is an error naming its field.
func TestLoadMap(t *testing.T) {
	dir := exampleDir(t, "telecom")
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tau2.LoadMap(filepath.Join(dir, tau2.MapFile), c)
	if err != nil {
		t.Fatalf("examples/telecom's map: %v", err)
	}
	if len(m.AgentDB) != 5 || len(m.UserTables) != 2 {
		t.Fatalf("examples/telecom's map: %d collections, %d user tables", len(m.AgentDB), len(m.UserTables))
	}
	col := func(name, table, extra string) string {
		return `{"name": "` + name + `", "table": "` + table + `", "tool": "get_details_by_id", "arg": "id"` + extra + `}`
	}
	rest := col("plans", "plans", "") + "," + col("lines", "lines", "") + "," + col("devices", "devices", "") + "," +
		col("bills", "bills", `, "parts": ["bill_line_items"]`)
	users := `"user_tables": ["user_phones", "user_phone_apps"]`
	for _, tc := range []struct{ name, json, want string }{
		{"unknown field", `{"agent_db": [` + col("customers", "customers", `, "parts": ["payment_methods"], "layout": "list"`) + `,` + rest + `], ` + users + `}`, `unknown field "layout"`},
		{"no collection", `{"agent_db": [], ` + users + `}`, "agent_db: no collection"},
		{"unknown tool", `{"agent_db": [{"name": "customers", "table": "customers", "tool": "get_customer"}, ` + rest + `], ` + users + `}`, `agent_db[0].tool: no tool "get_customer"`},
		{"unknown argument", `{"agent_db": [{"name": "customers", "table": "customers", "tool": "get_details_by_id"}, ` + rest + `], ` + users + `}`, `agent_db[0].arg: tool get_details_by_id has no argument "customer_id"`},
		{"unknown table", `{"agent_db": [` + col("customers", "clients", "") + `,` + rest + `], ` + users + `}`, `agent_db[0].table: no table "clients"`},
		{"unknown top-level field", `{"agent_db": [` + col("customers", "customers", `, "parts": ["payment_methods"]`) + `,` + rest + `], "user_tables": ["user_phone_apps"], "x": 1}`, `unknown field "x"`},
		{"key of two columns", `{"agent_db": [` + col("customers", "customers", `, "parts": ["payment_methods"]`) + `,` + col("apps", "user_phone_apps", "") + `,` + rest + `], "user_tables": ["user_phones"]}`, "agent_db[1].table: user_phone_apps has a primary key of 2 columns"},
		{"placed twice", `{"agent_db": [` + col("customers", "customers", `, "parts": ["payment_methods", "lines"]`) + `,` + rest + `], ` + users + `}`, "agent_db[2].table: table lines is already placed by agent_db[0].parts[1]"},
		{"placed nowhere", `{"agent_db": [` + col("customers", "customers", "") + `,` + rest + `], ` + users + `}`, "table payment_methods is placed nowhere"},
		{"name twice", `{"agent_db": [` + col("customers", "customers", `, "parts": ["payment_methods"]`) + `,` + col("customers", "plans", "") + `], ` + users + `}`, `agent_db[1].name: "customers" given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), tau2.MapFile)
			if err := os.WriteFile(p, []byte(tc.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := tau2.LoadMap(p, c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error naming %q, got %v", tc.want, err)
			}
		})
	}
}

// The export with a document map, read strictly: τ²-bench's task schema,
// the domain's lists, and the suitegen extension.
type t2MapDoc struct {
	Format         string                      `json:"format"`
	Domain         string                      `json:"domain"`
	ContractSHA256 string                      `json:"contract_sha256"`
	WorldSHA256    string                      `json:"world_sha256"`
	Policy         string                      `json:"policy"`
	Tools          []map[string]any            `json:"tools"`
	DB             map[string][]map[string]any `json:"db"`
	Tasks          []t2MapTask                 `json:"tasks"`
	Refused        []tau2.Refusal              `json:"refused"`
	Suitegen       struct {
		FinalAgentDB map[string]map[string][]map[string]any          `json:"final_agent_db"`
		UserRows     map[string]map[string]map[string]map[string]any `json:"user_rows"`
	} `json:"suitegen"`
}

type t2MapTask struct {
	ID           string         `json:"id"`
	Description  map[string]any `json:"description"`
	UserScenario map[string]any `json:"user_scenario"`
	InitialState struct {
		InitializationData    *struct{} `json:"initialization_data"`
		InitializationActions []struct {
			EnvType   string `json:"env_type"`
			FuncName  string `json:"func_name"`
			Arguments struct {
				UpdateData map[string][]map[string]any `json:"update_data"`
			} `json:"arguments"`
		} `json:"initialization_actions"`
		MessageHistory []any `json:"message_history"`
	} `json:"initial_state"`
	EvaluationCriteria struct {
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

// TestDocumentMap exports a builtin telecom suite with examples/telecom's
// map and plays it back in the world: db is the seed as the domain's lists,
// each task's initial state (an update_db call, never agent_data) is the
// setup's state as those lists, and its gold actions, replayed after the
// setup, leave the lists final_agent_db says. With TAU2_BENCH_DIR naming a
// τ²-bench checkout, the same export is checked by τ²-bench's own telecom
// domain (testdata/tau2_check.py).
func TestDocumentMap(t *testing.T) {
	testenv.OutsideRace(t, "a suite written by the pipeline the race pass runs in pkg/e2e, then exported by one goroutine")
	ctx := context.Background()
	dir := exampleDir(t, "telecom")
	out, e := writeSuite(t, "telecom", 40)
	m, err := tau2.LoadMap(filepath.Join(dir, tau2.MapFile), e.C)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	sum, err := tau2.Export(ctx, out, tau2.Source{Contract: e.C, World: e.World, Replayer: e.Prover, Map: m}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	// Numbers as written: a gold argument 1 is the integer τ²-bench's
	// tools receive (and write as "1"), not 1.0.
	dec.UseNumber()
	var doc t2MapDoc
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("the export does not read back: %v", err)
	}
	if sum.Tasks != len(doc.Tasks) || sum.Tasks < 10 || len(doc.Tasks)+len(doc.Refused) != 40 {
		t.Fatalf("%d tasks (summary %d), %d refused, of 40", len(doc.Tasks), sum.Tasks, len(doc.Refused))
	}
	for _, r := range doc.Refused {
		if !slices.Contains(tau2.Codes, r.Code) {
			t.Errorf("refusal of %s with an unknown code %q", r.Scenario, r.Code)
		}
	}

	// db: one list per collection, one document per seed row, in key order,
	// each the collection tool's answer.
	if len(doc.DB) != len(m.AgentDB) {
		t.Fatalf("db holds %d collections, the map %d", len(doc.DB), len(m.AgentDB))
	}
	seedKeys := map[string][]string{}
	for _, col := range m.AgentDB {
		key := e.C.Table(col.Table).PrimaryKey[0]
		docs := doc.DB[col.Name]
		if len(docs) != len(e.C.Seed(col.Table)) {
			t.Errorf("db %s: %d documents, the seed has %d rows", col.Name, len(docs), len(e.C.Seed(col.Table)))
		}
		for _, d := range docs {
			k, _ := d[key].(string)
			seedKeys[col.Name] = append(seedKeys[col.Name], k)
		}
		if !slices.IsSorted(seedKeys[col.Name]) {
			t.Errorf("db %s: keys not in order: %v", col.Name, seedKeys[col.Name])
		}
		checkDocs(t, ctx, e, nil, nil, "db "+col.Name, col, docs)
	}

	for _, task := range doc.Tasks {
		sc := readScenario(t, out, task.ID)
		if task.InitialState.InitializationData != nil {
			t.Errorf("%s: agent_data given; τ²-bench's dual-control set_state cannot take it", task.ID)
		}
		// The initial state: the setup's documents, whole lists.
		initial := map[string][]map[string]any{}
		for name, docs := range doc.DB {
			initial[name] = docs
		}
		if acts := task.InitialState.InitializationActions; len(acts) > 0 {
			if len(acts) != 1 || acts[0].EnvType != "assistant" || acts[0].FuncName != tau2.UpdateDB {
				t.Fatalf("%s: initialization actions %+v", task.ID, acts)
			}
			if len(sc.Setup) == 0 {
				t.Errorf("%s: an initial state without a setup", task.ID)
			}
			for name, docs := range acts[0].Arguments.UpdateData {
				initial[name] = docs
			}
		}
		for _, col := range m.AgentDB {
			checkDocs(t, ctx, e, sc.Setup, nil, task.ID+" initial "+col.Name, col, initial[col.Name])
		}
		// The end: the gold actions after the setup leave final_agent_db
		// over the initial state.
		final, ok := doc.Suitegen.FinalAgentDB[task.ID]
		if !ok {
			t.Fatalf("%s: no final_agent_db", task.ID)
		}
		var gold []scenario.Call
		for _, a := range task.EvaluationCriteria.Actions {
			gold = append(gold, scenario.Call{Tool: a.Name, Args: a.Arguments})
		}
		if len(final) == 0 && slices.Equal(task.EvaluationCriteria.RewardBasis, []string{tau2.RewardDB}) && sc.Expects == scenario.OutcomeSucceed {
			t.Errorf("%s: judged by DB alone, but its gold actions change no document", task.ID)
		}
		for _, col := range m.AgentDB {
			docs, changed := final[col.Name]
			if !changed {
				docs = initial[col.Name]
			}
			checkDocs(t, ctx, e, sc.Setup, gold, task.ID+" final "+col.Name, col, docs)
		}
		for table := range doc.Suitegen.UserRows[task.ID] {
			if !slices.Contains(m.UserTables, table) {
				t.Errorf("%s: user_rows of %s, not a user table", task.ID, table)
			}
		}
	}

	t.Run("in τ²-bench", func(t *testing.T) {
		root := os.Getenv("TAU2_BENCH_DIR")
		if root == "" {
			t.Skip("TAU2_BENCH_DIR not set")
		}
		py, err := exec.LookPath("python3")
		if err != nil {
			t.Skip("python3 not found")
		}
		p := filepath.Join(t.TempDir(), "tasks.json")
		if err := os.WriteFile(p, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := exec.Command(py, filepath.Join("testdata", "tau2_check.py"), root, "telecom", p).CombinedOutput()
		t.Logf("%s", res)
		if err != nil {
			t.Fatalf("τ²-bench's telecom domain: %v", err)
		}
	})
}

// checkDocs asserts that docs are the collection's documents after the
// setup and the calls: one for each row the world then holds, in key order,
// each the collection tool's answer.
func checkDocs(t *testing.T, ctx context.Context, e *engine.Engine, setup []scenario.Statement, calls []scenario.Call, what string, col tau2.Collection, docs []map[string]any) {
	t.Helper()
	key := e.C.Table(col.Table).PrimaryKey[0]
	err := e.World.Copy(ctx, func(cp *world.Copy) error {
		if len(setup) > 0 {
			if err := cp.ExecBatch(ctx, setup); err != nil {
				return err
			}
		}
		for _, c := range calls {
			if r := cp.Call(ctx, c.Tool, c.Args); !r.OK {
				t.Errorf("%s: gold %s refused: %s", what, c.Tool, r.Error)
			}
		}
		st, err := cp.State(ctx)
		if err != nil {
			return err
		}
		var keys []string
		for _, r := range st.Table(col.Table).Rows {
			keys = append(keys, tau2.Key([]string{key}, r))
		}
		slices.Sort(keys)
		var have []string
		for _, d := range docs {
			k, _ := d[key].(string)
			have = append(have, k)
		}
		if !slices.Equal(keys, have) {
			t.Errorf("%s: documents %v, the world holds %v", what, have, keys)
			return nil
		}
		for _, d := range docs {
			r := cp.Call(ctx, col.Tool, map[string]any{col.Arg: d[key]})
			if !r.OK {
				t.Errorf("%s: %s(%v) refused: %s", what, col.Tool, d[key], r.Error)
				continue
			}
			var got any
			rd := json.NewDecoder(bytes.NewReader(r.Result))
			rd.UseNumber()
			if err := rd.Decode(&got); err != nil {
				return err
			}
			wb, _ := json.Marshal(d)
			gb, _ := json.Marshal(got)
			if !bytes.Equal(wb, gb) {
				t.Errorf("%s %v:\n got %s\nwant %s", what, d[key], gb, wb)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
