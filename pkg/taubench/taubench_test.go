package taubench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/taubench"
	"github.com/suitegen/suitegen/pkg/taubench/taubenchtest"
	"github.com/suitegen/suitegen/pkg/testenv"
	"github.com/suitegen/suitegen/pkg/world"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const airlineDir = "../../examples/airline"

func airline(t *testing.T) (*contract.Contract, *engine.Engine, *taubench.Map) {
	t.Helper()
	c, err := contract.LoadValid(airlineDir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(context.Background(), testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	m, err := taubench.LoadMap(filepath.Join(airlineDir, taubench.MapFile), c)
	if err != nil {
		t.Fatal(err)
	}
	return c, e, m
}

func tauCall(tool string, args map[string]any) scenario.Call {
	return scenario.Call{Tool: tool, Args: args}
}

func tauStmt(sql string, args ...any) scenario.Statement {
	return scenario.Statement{SQL: sql, Args: args}
}

// newTraveller is a setup in the shape the writers mint: a user who is not in
// the benchmark's data, with a card and a reservation of her own.
var newTraveller = []scenario.Statement{
	tauStmt("INSERT INTO users (user_id, first_name, last_name, address1, address2, city, country, state, zip, email, dob, membership) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
		"ines_novak_7008", "Ines", "Novak", "12 Lake Road", "", "Denver", "USA", "CO", "80202", "ines.novak8@mail.com", "1985-02-11", "gold"),
	tauStmt("INSERT INTO payment_methods (user_id, id, position, source, brand, last_four) VALUES ($1, $2, $3, $4, $5, $6)",
		"ines_novak_7008", "credit_card_7008001", 0, "credit_card", "visa", "4321"),
	tauStmt("INSERT INTO reservations (reservation_id, user_id, position, origin, destination, flight_type, cabin, created_at, total_baggages, nonfree_baggages, insurance) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
		"NV7008", "ines_novak_7008", 0, "DFW", "DFW", "round_trip", "economy", "2024-05-14T20:00:00", 1, 0, "no"),
	tauStmt("INSERT INTO reservation_flights (reservation_id, position, flight_number, date, origin, destination, price) VALUES ($1, $2, $3, $4, $5, $6, $7)",
		"NV7008", 0, "HAT170", "2024-05-22", "DFW", "LAX", 147),
	tauStmt("INSERT INTO reservation_flights (reservation_id, position, flight_number, date, origin, destination, price) VALUES ($1, $2, $3, $4, $5, $6, $7)",
		"NV7008", 1, "HAT022", "2024-05-26", "LAX", "DFW", 178),
	tauStmt("INSERT INTO reservation_passengers (reservation_id, position, first_name, last_name, dob) VALUES ($1, $2, $3, $4, $5)",
		"NV7008", 0, "Ines", "Novak", "1985-02-11"),
	tauStmt("INSERT INTO payment_history (reservation_id, position, payment_id, amount) VALUES ($1, $2, $3, $4)",
		"NV7008", 0, "credit_card_7008001", 325),
}

// tauScenarios are the cases the export must tell apart, by what it should do
// with them: "export" or a refusal code.
func tauScenarios(c *contract.Contract) map[string]struct {
	sc   scenario.Scenario
	want string
} {
	mk := func(name, expects string, setup []scenario.Statement, caller string, outputs []string, calls ...scenario.Call) scenario.Scenario {
		return scenario.Scenario{Name: name, UseCase: "cancel-reservation", Branch: name, Kind: "happy", Expects: expects,
			Tests: "export case", CallerID: caller, Instruction: "Your user id is " + caller + ".", Setup: setup,
			Solution: calls, Outputs: outputs, MaxTurns: 10,
			Provenance: scenario.Provenance{ContractSHA256: c.SHA256, WorldSHA256: c.WorldSHA256, Model: "test"}}
	}
	tempt := func(sc scenario.Scenario, calls ...scenario.Call) scenario.Scenario {
		sc.Tempting = calls
		return sc
	}
	mismatch := mk("other-world", "succeed", nil, "chen_jackson_3290", nil,
		tauCall("cancel_reservation", map[string]any{"reservation_id": "4WQ150"}))
	mismatch.Provenance.WorldSHA256 = strings.Repeat("0", 64)
	// Two requests: the export builds a task from one request's actions.
	several := mk("two-requests", "succeed", nil, "chen_jackson_3290", nil,
		tauCall("cancel_reservation", map[string]any{"reservation_id": "4WQ150"}))
	several.Then = []scenario.Request{{UseCase: "cancel-reservation", Expects: "refuse", Tests: "export case"}}
	// Two requests carried out: the second's reference to its own first
	// step points, in the task, past the first request's actions.
	twoActs := mk("two-acts", "succeed", nil, "chen_jackson_3290", nil,
		tauCall("get_reservation_details", map[string]any{"reservation_id": "4WQ150"}),
		tauCall("cancel_reservation", map[string]any{"reservation_id": "$1.reservation_id"}))
	twoActs.Then = []scenario.Request{{UseCase: "cancel-reservation", Expects: "succeed", Tests: "export case",
		Solution: []scenario.Call{
			tauCall("get_reservation_details", map[string]any{"reservation_id": "DDHPNX"}),
			tauCall("cancel_reservation", map[string]any{"reservation_id": "$1.reservation_id"})}}}
	// Two requests to refuse, each with its wrong move: a task holds one.
	twoRefusals := tempt(mk("two-refusals", "refuse", nil, "chen_jackson_3290", nil,
		tauCall("get_reservation_details", map[string]any{"reservation_id": "4WQ150"})),
		tauCall("cancel_reservation", map[string]any{"reservation_id": "4WQ150"}))
	twoRefusals.Then = []scenario.Request{{UseCase: "cancel-reservation", Expects: "refuse", Tests: "export case",
		Solution: []scenario.Call{tauCall("get_user_details", map[string]any{"user_id": "chen_jackson_3290"})},
		Tempting: []scenario.Call{tauCall("send_certificate", map[string]any{"user_id": "chen_jackson_3290", "amount": 150})}}}
	// The first wrong move the world refuses, so the benchmark cannot see
	// it; the second's it can.
	secondSeen := tempt(mk("second-seen", "refuse", nil, "chen_jackson_3290", nil,
		tauCall("get_reservation_details", map[string]any{"reservation_id": "4WQ150"})),
		tauCall("cancel_reservation", map[string]any{"reservation_id": "NOPE00"}))
	secondSeen.Then = twoRefusals.Then
	return map[string]struct {
		sc   scenario.Scenario
		want string
	}{
		"cancel-minted": {mk("cancel-minted", "succeed", newTraveller, "ines_novak_7008", nil,
			tauCall("get_user_details", map[string]any{"user_id": "ines_novak_7008"}),
			tauCall("get_reservation_details", map[string]any{"reservation_id": "NV7008"}),
			tauCall("cancel_reservation", map[string]any{"reservation_id": "NV7008"})), "export"},
		"bags-on-seed": {mk("bags-on-seed", "succeed", nil, "chen_jackson_3290", nil,
			tauCall("get_reservation_details", map[string]any{"reservation_id": "4WQ150"}),
			tauCall("update_reservation_baggages", map[string]any{"reservation_id": "4WQ150", "total_baggages": 6, "nonfree_baggages": 1, "payment_id": "gift_card_3576581"})), "export"},
		"book-then-read": {mk("book-then-read", "succeed", nil, "mia_li_3668", []string{"1,122"},
			tauCall("get_user_details", map[string]any{"user_id": "mia_li_3668"}),
			tauCall("book_reservation", map[string]any{"user_id": "mia_li_3668", "origin": "PHL", "destination": "LGA",
				"flight_type": "one_way", "cabin": "economy", "flights": []any{map[string]any{"flight_number": "HAT001", "date": "2024-05-16"}},
				"passengers":      []any{map[string]any{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}},
				"payment_methods": []any{map[string]any{"payment_id": "credit_card_4421486", "amount": 122}},
				"total_baggages":  0, "nonfree_baggages": 0, "insurance": "no"}),
			tauCall("get_reservation_details", map[string]any{"reservation_id": "$2.reservation_id"})), "export"},
		"drop-saved-passenger": {mk("drop-saved-passenger", "succeed",
			[]scenario.Statement{tauStmt("DELETE FROM saved_passengers WHERE user_id = $1", "chen_jackson_3290")}, "chen_jackson_3290", nil,
			tauCall("get_user_details", map[string]any{"user_id": "chen_jackson_3290"}),
			tauCall("send_certificate", map[string]any{"user_id": "chen_jackson_3290", "amount": 150})), "export"},
		"look-only": {mk("look-only", "succeed", newTraveller, "ines_novak_7008", nil,
			tauCall("get_reservation_details", map[string]any{"reservation_id": "NV7008"})), string(taubench.Vacuous)},
		"look-and-say": {mk("look-and-say", "succeed", newTraveller, "ines_novak_7008", []string{"325"},
			tauCall("get_reservation_details", map[string]any{"reservation_id": "NV7008"})), "export"},
		"refuse-nothing": {mk("refuse-nothing", "refuse", newTraveller, "ines_novak_7008", nil), string(taubench.Vacuous)},
		// A refusal goes out when its wrong move changes the benchmark's
		// data (the cancellation), not when the world refuses it anyway.
		"refuse-cancel": {tempt(mk("refuse-cancel", "refuse", nil, "chen_jackson_3290", nil,
			tauCall("get_reservation_details", map[string]any{"reservation_id": "4WQ150"})),
			tauCall("cancel_reservation", map[string]any{"reservation_id": "4WQ150"})), "export"},
		"refuse-refused-anyway": {tempt(mk("refuse-refused-anyway", "refuse", nil, "chen_jackson_3290", nil,
			tauCall("get_user_details", map[string]any{"user_id": "chen_jackson_3290"})),
			tauCall("cancel_reservation", map[string]any{"reservation_id": "NOPE00"})), string(taubench.TemptingPasses)},
		"flight-cancelled": {mk("flight-cancelled", "succeed",
			[]scenario.Statement{tauStmt("UPDATE flight_dates SET status = 'cancelled' WHERE flight_number = $1 AND date = $2", "HAT170", "2024-05-22")},
			"chen_jackson_3290", nil, tauCall("cancel_reservation", map[string]any{"reservation_id": "4WQ150"})), string(taubench.CannotCarry)},
		"airport-renamed": {mk("airport-renamed", "succeed",
			[]scenario.Statement{tauStmt("UPDATE airports SET city = $1 WHERE iata = $2", "Dallas-Fort Worth", "DFW")},
			"chen_jackson_3290", nil, tauCall("cancel_reservation", map[string]any{"reservation_id": "4WQ150"})), string(taubench.CannotCarry)},
		"cancel-nothing": {mk("cancel-nothing", "succeed", nil, "chen_jackson_3290", nil,
			tauCall("cancel_reservation", map[string]any{"reservation_id": "NOPE00"})), string(taubench.ActionFailed)},
		"bad-setup": {mk("bad-setup", "succeed", []scenario.Statement{tauStmt("INSERT INTO users (user_id) VALUES ($1)", "x")},
			"x", nil, tauCall("get_user_details", map[string]any{"user_id": "x"})), string(taubench.SetupFailed)},
		"other-world": {mismatch, string(taubench.WorldMismatch)},
		// A conversation of two requests is one task: every request's
		// actions in order, the one to refuse giving the wrong move.
		"two-requests": {several, "export"},
		// Two requests to refuse are two wrong moves; the task scores the
		// first the benchmark can see.
		"two-refusals": {twoRefusals, "export"},
		"second-seen":  {secondSeen, "export"},
		"two-acts":     {twoActs, "export"},
	}
}

func writeTauSuite(t *testing.T, scs []scenario.Scenario) string {
	t.Helper()
	out := t.TempDir()
	idx := suite.Index{Run: "r", Agent: "airline-agent", Count: len(scs)}
	for _, sc := range scs {
		dir := filepath.Join(out, "scenarios", sc.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(sc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "scenario.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		idx.Scenarios = append(idx.Scenarios, suite.IndexEntry{Name: sc.Name, UseCase: sc.UseCase})
	}
	b, _ := json.Marshal(idx)
	if err := os.WriteFile(filepath.Join(out, "index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRoundTrip exports scenarios of every kind the export must tell
// apart, re-reads the tasks, and checks each exported task in the world: the
// data it carries is the world the scenario starts in, its actions apply
// without error and change a document of the benchmark's data, and doing
// nothing fails it. Every other scenario is refused with its code.
func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	c, e, m := airline(t)
	cases := tauScenarios(c)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	var scs []scenario.Scenario
	for _, n := range names {
		sc := cases[n].sc
		if n == "cancel-minted" {
			sc.SubGoals = append(append([]scenario.SubGoalRef{}, sc.SubGoals...), scenario.SubGoalRef{Name: "courteous", Judged: true})
		}
		scs = append(scs, sc)
	}
	out := writeTauSuite(t, scs)
	cat := `[{"name":"courteous","what":"Stays courteous","judged":true,"params":{},"origin":"contract"}]`
	if err := os.WriteFile(filepath.Join(out, "catalogue.json"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}

	var buf bytes.Buffer
	src := taubench.Source{Contract: c, World: e.World, Rehearser: e.Prover, Map: m}
	rep, err := taubench.Export(ctx, out, src, &buf)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []taubench.Task
	if err := json.Unmarshal(buf.Bytes(), &tasks); err != nil {
		t.Fatalf("re-read: %v\n%s", err, buf.String())
	}
	got := map[string]string{}
	for _, tk := range tasks {
		got[tk.ID] = "export"
	}
	for _, r := range rep.Refused {
		got[r.Scenario] = string(r.Code)
		if r.Reason == "" {
			t.Errorf("%s refused without a reason", r.Scenario)
		}
	}
	for _, n := range names {
		if got[n] != cases[n].want {
			t.Errorf("%s: got %q, want %q (report %+v)", n, got[n], cases[n].want, rep.Refused)
		}
	}
	if rep.Exported != len(tasks) || rep.Exported+len(rep.Refused) != len(cases) {
		t.Errorf("report counts %d exported + %d refused of %d", rep.Exported, len(rep.Refused), len(cases))
	}

	for _, tk := range tasks {
		sc := cases[tk.ID].sc
		checkTauTask(t, ctx, e, m, sc, tk)
	}

	// What the tasks carry, in detail.
	byID := map[string]taubench.Task{}
	for _, tk := range tasks {
		byID[tk.ID] = tk
	}
	if d := byID["cancel-minted"].Data; d["users"]["ines_novak_7008"] == nil || d["reservations"]["NV7008"] == nil || len(d) != 2 {
		t.Errorf("cancel-minted carries %v, want the new user and reservation", keysOf(d))
	}
	// What no code proved is listed as judged, with what it means; a task
	// with nothing judged lists nothing.
	if j := byID["cancel-minted"].Judged; len(j) != 1 || j[0].Name != "courteous" || j[0].What != "Stays courteous" {
		t.Errorf("cancel-minted lists judged %+v, want courteous with its what", j)
	}
	if j := byID["bags-on-seed"].Judged; len(j) != 0 {
		t.Errorf("bags-on-seed lists judged sub-goals it does not have: %+v", j)
	}
	if d := byID["bags-on-seed"].Data; len(d) != 0 {
		t.Errorf("bags-on-seed has no setup but carries %v", keysOf(d))
	}
	if a := byID["book-then-read"].Actions; len(a) != 3 || a[2].Kwargs["reservation_id"] != "HATHAT" {
		t.Errorf("book-then-read: the reference to the booking is not resolved: %+v", a)
	}
	if a := byID["two-acts"].Actions; len(a) != 4 || a[1].Kwargs["reservation_id"] != "4WQ150" || a[3].Kwargs["reservation_id"] != "DDHPNX" {
		t.Errorf("two-acts: each request's reference is not resolved to its own look-up: %+v", a)
	}
	for name, move := range map[string]string{"two-refusals": "cancel_reservation", "second-seen": "send_certificate"} {
		if w := byID[name].Tempting; len(w) == 0 || w[len(w)-1].Name != move {
			t.Errorf("%s: wrong move %+v, want %s", name, w, move)
		}
	}
	if o := byID["book-then-read"].Outputs; !reflect.DeepEqual(o, []string{"1122"}) {
		t.Errorf("outputs %q: the benchmark matches them without commas", o)
	}
	var chen map[string]any
	if err := json.Unmarshal(byID["drop-saved-passenger"].Data["users"]["chen_jackson_3290"], &chen); err != nil || len(chen["saved_passengers"].([]any)) != 0 {
		t.Errorf("drop-saved-passenger: the changed seed user is not carried as changed: %v %v", err, chen)
	}
}

func keysOf(d map[string]map[string]json.RawMessage) []string {
	var out []string
	for c, docs := range d {
		for k := range docs {
			out = append(out, c+"/"+k)
		}
	}
	sort.Strings(out)
	return out
}

// checkTauTask replays one exported task in the world, from the task alone
// except for the setup (the world the data must describe).
func checkTauTask(t *testing.T, ctx context.Context, e *engine.Engine, m *taubench.Map, sc scenario.Scenario, tk taubench.Task) {
	t.Helper()
	tool := map[string]taubench.Collection{}
	for _, col := range m.Collections {
		tool[col.Name] = col
	}
	render := func(cp *world.Copy, coll, key string) json.RawMessage {
		col := tool[coll]
		r := cp.Call(ctx, col.Tool, map[string]any{col.Arg: key})
		if !r.OK {
			return json.RawMessage("null")
		}
		return r.Result
	}
	// The documents the actions may change: those carried, and those the
	// actions name by key.
	docs := map[[2]string]bool{}
	for coll, ds := range tk.Data {
		for k := range ds {
			docs[[2]string{coll, k}] = true
		}
	}
	for _, a := range tk.Actions {
		for _, col := range m.Collections {
			if v, ok := a.Kwargs[col.Key].(string); ok && col.Tool != "" {
				docs[[2]string{col.Name, v}] = true
			}
		}
	}
	// The benchmark's own data is the seed: every document the setup made
	// differ from it must be carried.
	seed := map[[2]string]string{}
	if err := e.World.Copy(ctx, func(cp *world.Copy) error {
		for d := range docs {
			seed[d] = string(render(cp, d[0], d[1]))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	err := e.World.Copy(ctx, func(cp *world.Copy) error {
		if err := cp.ExecBatch(ctx, sc.Setup); err != nil {
			return err
		}
		for d := range docs {
			now := render(cp, d[0], d[1])
			if _, carried := tk.Data[d[0]][d[1]]; !carried && !jsonEqual(now, json.RawMessage(seed[d])) {
				t.Errorf("%s: %s %s differs from the benchmark's data after the setup but is not carried", tk.ID, d[0], d[1])
			}
		}
		for coll, ds := range tk.Data {
			for k, want := range ds {
				if got := render(cp, coll, k); !jsonEqual(got, want) {
					t.Errorf("%s: carried %s %s is not the world's:\n got %s\nwant %s", tk.ID, coll, k, want, got)
				}
			}
		}
		before := map[[2]string]string{}
		for d := range docs {
			before[d] = string(render(cp, d[0], d[1]))
		}
		for i, a := range tk.Actions {
			if r := cp.Call(ctx, a.Name, a.Kwargs); !r.OK {
				t.Errorf("%s: action %d (%s) failed: %s", tk.ID, i+1, a.Name, r.Error)
			}
		}
		changed := false
		for d := range docs {
			if !jsonEqual(json.RawMessage(before[d]), render(cp, d[0], d[1])) {
				changed = true
			}
		}
		// Doing nothing leaves every document as it was and says nothing:
		// the task must then fail, on its data or on its outputs.
		if !changed && len(tk.Outputs) == 0 && len(tk.Tempting) == 0 {
			t.Errorf("%s: doing nothing passes (no document changes, no outputs)", tk.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", tk.ID, err)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestReplayInBenchmark replays the export through the benchmark's own
// tools and data (TAU_BENCH_DIR: a checkout of sierra-research/tau-bench):
// every action is answered without error and changes the data, or the task
// has outputs; and through docs/EXPORT.md's SuiteEnv, the benchmark's reward
// is 1 for the reference calls and 0 for doing nothing. Skipped without a
// checkout or python3 (with pydantic, which the benchmark needs).
func TestReplayInBenchmark(t *testing.T) {
	root, py := taubenchtest.Checkout(t), taubenchtest.Python(t)
	ctx := context.Background()
	c, e, m := airline(t)
	cases := tauScenarios(c)
	var scs []scenario.Scenario
	for _, cs := range cases {
		scs = append(scs, cs.sc)
	}
	sort.Slice(scs, func(i, j int) bool { return scs[i].Name < scs[j].Name })
	out := writeTauSuite(t, scs)
	path := filepath.Join(t.TempDir(), "tasks.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := taubench.Export(ctx, out, taubench.Source{Contract: c, World: e.World, Rehearser: e.Prover, Map: m}, f)
	f.Close()
	if err != nil || rep.Exported == 0 {
		t.Fatalf("export: %v, %d exported", err, rep.Exported)
	}
	cmd := exec.Command(py, filepath.Join("testdata", "tau_bench_replay.py"), root, "airline", path)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("replay in the benchmark: %v\n%s", err, b)
	}
	var res struct {
		Tasks    int `json:"tasks"`
		Rewarded int `json:"rewarded"`
	}
	if err := json.Unmarshal(b, &res); err != nil || res.Tasks != rep.Exported || res.Rewarded != rep.Exported {
		t.Fatalf("replay read %d tasks and rewarded %d of %d: %v\n%s", res.Tasks, res.Rewarded, rep.Exported, err, b)
	}
}

// TestLoadMap: a data map names tables, keys and tools the contract
// has, and says which field is wrong when it does not.
func TestLoadMap(t *testing.T) {
	c, err := contract.LoadValid(airlineDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"collections": []}`, "collections: none given"},
		{`{"collections": [{"name": "users", "table": "nope", "key": "user_id"}]}`, `collections[0].table: no table "nope"`},
		{`{"collections": [{"name": "users", "table": "users", "key": "id"}]}`, `collections[0].key: no column "id"`},
		{`{"collections": [{"name": "users", "table": "users", "key": "user_id", "tool": "get_user"}]}`, `collections[0].tool: no tool "get_user"`},
		{`{"collections": [{"name": "users", "table": "users", "key": "user_id", "tool": "get_user_details", "arg": "id"}]}`, `collections[0].arg: tool get_user_details has no argument "id"`},
		{`{"collections": [{"name": "u", "table": "users", "key": "user_id"}, {"name": "u", "table": "flights", "key": "flight_number"}]}`, `collections[1].name: "u" given twice`},
		{`{"collections": [{"name": "u", "table": "users", "key": "user_id", "arg": "x"}]}`, `collections[0].arg: given without a tool`},
		{`{"collections": [{"name": "u", "table": "users", "key": "user_id", "tools": "x"}]}`, `unknown field "tools"`},
	} {
		path := filepath.Join(t.TempDir(), "map.json")
		os.WriteFile(path, []byte(tc.body), 0o644)
		if _, err := taubench.LoadMap(path, c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.body, err, tc.want)
		}
	}
	m, err := taubench.LoadMap(filepath.Join(airlineDir, taubench.MapFile), c)
	if err != nil || len(m.Collections) != 3 || m.Collections[0].Arg != "user_id" {
		t.Fatalf("the airline map: %v %+v", err, m)
	}
}

// TestCodesDocumented keeps docs/EXPORT.md's table of the scenarios
// the tau-bench export leaves out exactly the codes it gives, in order.
func TestCodesDocumented(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "EXPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []taubench.Code
	inTable := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "| code | the scenario is left out because |"):
			inTable = true
		case inTable && strings.HasPrefix(line, "| `"):
			code, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
			documented = append(documented, taubench.Code(code))
		case inTable && !strings.HasPrefix(line, "|"):
			inTable = false
		}
	}
	if !reflect.DeepEqual(documented, taubench.Codes) {
		t.Fatalf("docs/EXPORT.md lists %v, the export gives %v", documented, taubench.Codes)
	}
}

// FuzzLoadMap: any file either loads as a map whose every collection
// names a table, key column and tool argument of the contract, or is an
// error; never a panic.
func FuzzLoadMap(f *testing.F) {
	c, err := contract.LoadValid(airlineDir)
	if err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(filepath.Join(airlineDir, taubench.MapFile))
	f.Add(seed)
	f.Add([]byte(`{"collections": [{"name": "u", "table": "users", "key": "user_id", "tool": "get_user_details", "arg": "user_id"}]}`))
	f.Add([]byte(`{"collections": null}`))
	f.Add([]byte(`{"collections": [{}]} {}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		path := filepath.Join(t.TempDir(), "map.json")
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := taubench.LoadMap(path, c)
		if err != nil {
			return
		}
		for _, col := range m.Collections {
			tb := c.Table(col.Table)
			if tb == nil || tb.Column(col.Key) == nil || col.Name == "" {
				t.Fatalf("loaded a collection the contract does not hold: %+v", col)
			}
			if col.Tool != "" && (c.Tool(col.Tool) == nil || col.Arg == "") {
				t.Fatalf("loaded a tool the contract does not have: %+v", col)
			}
		}
	})
}
