package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/refresh"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// copyTree copies the files under src to a fresh temporary directory.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// snapshot is every file under dir, by relative path.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// edit replaces each old text of a file under dir, failing when one is not
// there (the example changed under the test).
func edit(t *testing.T, dir, file string, pairs ...string) {
	t.Helper()
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("%s has no %q", file, pairs[i])
		}
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reprove proves every scenario file of the suite in out against the
// contract in dir, each on its own, and returns the names refused.
func reprove(t *testing.T, dir, out string) (refused []string, all []string) {
	t.Helper()
	ctx := context.Background()
	c, err := contract.LoadValid(dir)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, testenv.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	e, err := engine.Open(ctx, pool, c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	w, err := suite.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := range w.Scenarios {
		sc := w.Scenarios[i]
		v, err := e.Prover.Prove(ctx, &sc)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, sc.Name)
		if !v.Kept {
			refused = append(refused, sc.Name)
		}
	}
	sort.Strings(refused)
	return refused, all
}

func checkJSON(t *testing.T, out, dir string) (int, refresh.Report, string) {
	t.Helper()
	code, text := dispatch(t, "check", out, "--contract", dir, "--json")
	var rep refresh.Report
	if i := strings.Index(text, "{"); i >= 0 {
		_ = json.NewDecoder(strings.NewReader(text[i:])).Decode(&rep)
	}
	return code, rep, text
}

// TestSuiteLives writes a retail suite, then changes the contract three ways
// (a handler's refusal threshold, a tool argument's name, a use case
// removed): check lists exactly the scenarios each change breaks (each file
// re-proved on its own agrees), export refuses the stale suite, run
// --update writes them again, after which every file proves and every
// other file is byte-identical. --into +N adds N proved scenarios and
// changes no existing file; bad inputs get clear errors and change nothing.
func TestSuiteLives(t *testing.T) {
	testenv.OutsideRace(t, "a whole suite written and planned again three times; the race pass runs the commands on small ones")
	retail, err := filepath.Abs(filepath.Join("..", "..", "examples", "retail"))
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	if code, out := dispatch(t, "run", retail, "--scenarios", "40", "--writers", "2", "--out", base, "--seed", "7"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	w, err := suite.Read(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := contract.LoadValid(retail)
	if err != nil {
		t.Fatal(err)
	}
	if w.Index.ContractSHA256 != c.SHA256 || len(w.Scenarios) != 40 {
		t.Fatalf("index: hash %q (want %s), %d scenarios", w.Index.ContractSHA256, c.SHA256, len(w.Scenarios))
	}
	if code, rep, out := checkJSON(t, base, retail); code != ExitOK || len(rep.Stale) != 0 || rep.Checked != 40 || rep.Changed {
		t.Fatalf("check of a fresh suite: exit %d\n%s", code, out)
	} else if !strings.Contains(out, "proved 40/40") {
		t.Errorf("check printed no progress line ending at 40/40:\n%s", out)
	}

	changes := []struct {
		name   string
		change func(t *testing.T, dir string)
		// removed is a use case the change takes out: its stale scenarios
		// cannot be written again.
		removed string
	}{
		{"threshold", func(t *testing.T, dir string) {
			// A gift card must now keep 75 after what it pays.
			edit(t, dir, "lib/orders.star", `pm["balance"] < amount:`, `pm["balance"] < amount + 75:`)
		}, ""},
		{"argument-renamed", func(t *testing.T, dir string) {
			edit(t, dir, "contract.yaml",
				"        reason: {type: string, enum: [no longer needed, ordered by mistake]", "        cancel_reason: {type: string, enum: [no longer needed, ordered by mistake]",
				"required: [order_id, reason]", "required: [order_id, cancel_reason]",
				`reason: ordered by mistake}`, `cancel_reason: ordered by mistake}`,
				`reason: no longer needed}`, `cancel_reason: no longer needed}`)
			edit(t, dir, "handlers/cancel_pending_order.star", `args["reason"]`, `args["cancel_reason"]`)
		}, ""},
		{"use-case-removed", func(t *testing.T, dir string) {
			edit(t, dir, "contract.yaml", "  - id: modify-address\n    text: Change the shipping address of a pending order\n    tools: [find_user_id_by_email, find_user_id_by_name_zip, get_user_details, get_order_details, modify_pending_order_address]\n", "")
		}, "modify-address"},
	}
	for _, ch := range changes {
		t.Run(ch.name, func(t *testing.T) {
			dir := copyTree(t, retail)
			ch.change(t, dir)
			out := copyTree(t, base)
			before := snapshot(t, out)
			want, _ := reprove(t, dir, out)
			if len(want) == 0 {
				t.Fatalf("the change breaks no scenario of the suite: the test proves nothing")
			}
			t.Logf("%s breaks %d of 40: %v", ch.name, len(want), want)

			code, rep, text := checkJSON(t, out, dir)
			if code != ExitFail || !rep.Changed {
				t.Fatalf("check: exit %d, want 1 with the contract changed\n%s", code, text)
			}
			got := rep.StaleNames()
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Fatalf("check lists %v, re-proving each file refuses %v", got, want)
			}
			for _, s := range rep.Stale {
				if s.Gate == "" || s.Code == "" || s.Reason == "" {
					t.Errorf("%s: no gate, code or reason: %+v", s.Name, s)
				}
			}
			if code, text := dispatch(t, "export", out, "--contract", dir, "-o", filepath.Join(t.TempDir(), "x.jsonl")); code != ExitFail || !strings.Contains(text, "no longer prove") {
				t.Errorf("export of a stale suite: exit %d, want 1 naming it stale\n%s", code, text)
			}
			if code, text := dispatch(t, "export", out, "--contract", dir, "--allow-stale", "-o", filepath.Join(t.TempDir(), "x.jsonl")); code != ExitOK {
				t.Errorf("export --allow-stale: exit %d\n%s", code, text)
			}
			if !equalFiles(before, snapshot(t, out)) {
				t.Fatal("check or export changed the suite")
			}

			code, text = dispatch(t, "run", dir, "--update", out, "--writers", "2")
			if code != ExitOK {
				t.Fatalf("run --update: exit %d\n%s", code, text)
			}
			t.Log(text)
			refused, all := reprove(t, dir, out)
			if len(refused) > 0 {
				t.Errorf("after the update, %v still do not prove", refused)
			}
			var o refresh.Outcome
			if err := json.Unmarshal(snapshot(t, out)[refresh.OutcomeFile], &o); err != nil {
				t.Fatal(err)
			}
			after := snapshot(t, out)
			stale := map[string]bool{}
			for _, n := range want {
				stale[n] = true
			}
			for _, n := range all {
				if stale[n] {
					continue
				}
				p := filepath.Join("scenarios", n, "scenario.json")
				if !bytes.Equal(before[p], after[p]) {
					t.Errorf("%s was not stale and changed", n)
				}
			}
			notKept := map[string]bool{}
			for _, nk := range o.NotKept {
				notKept[nk.Name] = true
				if ch.removed == "" || nk.UseCase != ch.removed {
					t.Errorf("%s not kept: %s", nk.Name, nk.Reason)
				}
			}
			for _, n := range want {
				p := filepath.Join("scenarios", n, "scenario.json")
				switch {
				case notKept[n]:
					if _, ok := after[p]; ok {
						t.Errorf("%s was not kept but its file is still there", n)
					}
				case after[p] == nil:
					t.Errorf("stale %s is neither replaced nor reported not kept", n)
				case bytes.Equal(before[p], after[p]):
					t.Errorf("stale %s was not written again", n)
				}
			}
			if len(o.Replaced)+len(o.NotKept) != len(want) {
				t.Errorf("outcome: %d replaced + %d not kept, %d stale", len(o.Replaced), len(o.NotKept), len(want))
			}
			if code, rep, text := checkJSON(t, out, dir); code != ExitOK || len(rep.Stale) != 0 || rep.Changed {
				t.Errorf("check after the update: exit %d\n%s", code, text)
			}
			if rep := restated(t, out, o); rep.Provenance.ContractSHA256 == w.Index.ContractSHA256 {
				t.Errorf("report.json still records the contract the suite was written for")
			}
		})
	}

	t.Run("current", func(t *testing.T) {
		// Nothing stale: nothing is written, no scenario file changes, and
		// the report is restated with a refresh that ran nothing.
		out := copyTree(t, base)
		before := snapshot(t, out)
		code, text := dispatch(t, "run", retail, "--update", out)
		if code != ExitOK {
			t.Fatalf("run --update of a current suite: exit %d\n%s", code, text)
		}
		after := snapshot(t, out)
		for p, b := range before {
			if strings.HasPrefix(p, "scenarios") && !bytes.Equal(after[p], b) {
				t.Errorf("%s changed", p)
			}
		}
		var o refresh.Outcome
		if err := json.Unmarshal(after[refresh.OutcomeFile], &o); err != nil {
			t.Fatal(err)
		}
		if o.Asked != 0 || o.Run != "" || len(o.Replaced) != 0 {
			t.Errorf("outcome of a current suite: %+v", o)
		}
		was, err := suite.ReadReport(base)
		if err != nil {
			t.Fatal(err)
		}
		if rep := restated(t, out, o); rep.Count != was.Count || rep.Coverage.CellsCovered != was.Coverage.CellsCovered || rep.Spend.PromptTokens != was.Spend.PromptTokens {
			t.Errorf("restated report of a current suite: %d scenarios, %d cells covered, %d prompt tokens; before %d, %d, %d",
				rep.Count, rep.Coverage.CellsCovered, rep.Spend.PromptTokens, was.Count, was.Coverage.CellsCovered, was.Spend.PromptTokens)
		}
	})

	t.Run("into", func(t *testing.T) {
		out := copyTree(t, base)
		before := snapshot(t, out)
		code, text := dispatch(t, "run", retail, "--into", out, "--scenarios", "+5", "--writers", "2")
		if code != ExitOK {
			t.Log(string(snapshot(t, out)[refresh.OutcomeFile]))
			t.Fatalf("run --into: exit %d\n%s", code, text)
		}
		after := snapshot(t, out)
		for p, b := range before {
			if p != "index.json" && p != "report.json" && p != "review.json" && !bytes.Equal(after[p], b) {
				t.Errorf("%s changed", p)
			}
		}
		var o refresh.Outcome
		if err := json.Unmarshal(after[refresh.OutcomeFile], &o); err != nil {
			t.Fatal(err)
		}
		if rep := restated(t, out, o); rep.Count != 45 {
			t.Errorf("report.json counts %d, want 45", rep.Count)
		}
		w, err := suite.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Scenarios) != 45 {
			t.Fatalf("%d scenarios, want 45", len(w.Scenarios))
		}
		names, branches := map[string]bool{}, map[string]bool{}
		for _, sc := range w.Scenarios {
			if names[sc.Name] || branches[sc.UseCase+"|"+sc.Branch] {
				t.Errorf("%s: name or (use case, branch) repeated", sc.Name)
			}
			names[sc.Name], branches[sc.UseCase+"|"+sc.Branch] = true, true
		}
		if refused, _ := reprove(t, retail, out); len(refused) > 0 {
			t.Errorf("%v do not prove", refused)
		}
	})

	t.Run("revise", func(t *testing.T) {
		out := copyTree(t, base)
		before := snapshot(t, out)
		// An ask the builtin writer cannot do: refused before anything runs.
		code, text := dispatch(t, "revise", out, "--contract", retail, "--where", "use_case=cancel-order,expects=succeed", "--ask", "make it funnier")
		if code != ExitUsage || !strings.Contains(text, "understands harder, fresh, answerer") || !equalFiles(before, snapshot(t, out)) {
			t.Fatalf("an ask not understood: exit %d, files changed %v\n%s", code, !equalFiles(before, snapshot(t, out)), text)
		}
		var chosen []string
		for _, sc := range w.Scenarios {
			if sc.UseCase == "cancel-order" && sc.Expects == "succeed" && sc.Kind == "happy" {
				chosen = append(chosen, sc.Name)
			}
		}
		if len(chosen) == 0 {
			t.Fatal("the suite has no plain cancel-order success to revise")
		}
		db := testenv.PostgresURL(t) // one ledger for the revision and the look at its history
		code, text = dispatch(t, "revise", out, "--contract", retail, "--where", "use_case=cancel-order,expects=succeed,kind=happy", "--ask", "make it harder", "--database", db)
		if code != ExitOK {
			t.Fatalf("revise: exit %d\n%s", code, text)
		}
		t.Log(text)
		var o refresh.Outcome
		after := snapshot(t, out)
		if err := json.Unmarshal(after[refresh.OutcomeFile], &o); err != nil {
			t.Fatal(err)
		}
		if o.Mode != refresh.ModeRevise || len(o.Replaced) != len(chosen) {
			t.Fatalf("outcome %+v, chosen %v", o, chosen)
		}
		rw, err := suite.Read(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range rw.Scenarios {
			p := filepath.Join("scenarios", sc.Name, "scenario.json")
			if !slices.Contains(chosen, sc.Name) {
				if !bytes.Equal(before[p], after[p]) {
					t.Errorf("%s was not chosen and changed", sc.Name)
				}
				continue
			}
			if sc.Expects == "succeed" && sc.Kind == "happy" {
				t.Errorf("%s is no harder: %s, expects %s", sc.Name, sc.Kind, sc.Expects)
			}
		}
		if refused, _ := reprove(t, retail, out); len(refused) > 0 {
			t.Errorf("%v do not prove after the revision", refused)
		}
		// The report counts the revised suite as its files are, not as the
		// run wrote it.
		was, err := suite.ReadReport(base)
		if err != nil {
			t.Fatal(err)
		}
		rep := restated(t, out, o)
		kinds, outcomes := map[string]int{}, map[string]int{}
		for _, sc := range rw.Scenarios {
			kinds[sc.Kind]++
			for _, r := range sc.Requests() {
				outcomes[r.Expects]++
			}
		}
		if !maps.Equal(rep.Coverage.Kinds, kinds) || !maps.Equal(rep.Coverage.Outcomes, outcomes) ||
			maps.Equal(was.Coverage.Kinds, kinds) && maps.Equal(was.Coverage.Outcomes, outcomes) {
			t.Errorf("report.json after the revision: kinds %v outcomes %v; the files: %v %v; before: %v %v",
				rep.Coverage.Kinds, rep.Coverage.Outcomes, kinds, outcomes, was.Coverage.Kinds, was.Coverage.Outcomes)
		}
		// The suite keeps the old versions itself: history.jsonl, and
		// `suitegen history`, with no database.
		vs, err := suite.ReadHistory(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != len(o.Replaced) {
			t.Fatalf("history.jsonl holds %d versions, %d revised", len(vs), len(o.Replaced))
		}
		for _, v := range vs {
			var was, old bytes.Buffer
			_ = json.Compact(&was, before[filepath.Join("scenarios", v.Name, "scenario.json")])
			_ = json.Compact(&old, v.Old)
			if v.Ask != "make it harder" || v.Run != o.Run || was.Len() == 0 || !bytes.Equal(was.Bytes(), old.Bytes()) {
				t.Errorf("history of %s: ask %q run %q (want %s), old version kept %v", v.Name, v.Ask, v.Run, o.Run, bytes.Equal(was.Bytes(), old.Bytes()))
			}
		}
		code, text = dispatch(t, "history", out, chosen[0])
		if code != ExitOK || !strings.Contains(text, "revised by run "+o.Run+`, asked "make it harder"`) || !strings.Contains(text, "expects succeed") {
			t.Errorf("history %s: exit %d\n%s", chosen[0], code, text)
		}
		pool, err := pgxpool.New(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		hist, err := ledger.New(pool).History(context.Background(), chosen[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) == 0 || hist[len(hist)-1].Ask != "make it harder" || hist[len(hist)-1].Run != o.Run {
			t.Fatalf("history of %s: %+v", chosen[0], hist)
		}
		var old map[string]any
		if err := json.Unmarshal(hist[len(hist)-1].Body, &old); err != nil || old["name"] != chosen[0] || old["expects"] != "succeed" {
			t.Errorf("the history's old version: %v %v", err, old)
		}
	})

	t.Run("bad-inputs", func(t *testing.T) {
		out := copyTree(t, base)
		before := snapshot(t, out)
		empty := t.TempDir()
		for _, tc := range []struct {
			args []string
			want string
			not  string // advice the command cannot take, absent
		}{
			{[]string{"check", empty, "--contract", retail}, "is not a suite: it has no index.json", ""},
			{[]string{"check", out}, "check needs --contract DIR", ""},
			{[]string{"check", out, "--contract", filepath.Join(retail, "..", "rides")}, `the contract is agent "`, ""},
			{[]string{"check", out, "--contract", filepath.Join(retail, "..", "rides")}, "give --any-contract", ""},
			// export has no --any-contract: it must not advise it.
			{[]string{"export", out, "--format", "jsonl", "--contract", filepath.Join(retail, "..", "rides")}, "another contract", "--any-contract"},
			{[]string{"run", retail, "--update", empty}, "is not a suite", ""},
			{[]string{"history", empty}, "is not a suite", ""},
			{[]string{"history", out, "no-such-scenario"}, `no scenario "no-such-scenario"`, ""},
			{[]string{"run", filepath.Join(retail, "..", "rides"), "--into", out, "--scenarios", "+2"}, "another contract", ""},
			{[]string{"run", retail, "--update", out, "--out", empty}, "leave --out out", ""},
		} {
			code, text := dispatch(t, tc.args...)
			if code == ExitOK || !strings.Contains(text, tc.want) || (tc.not != "" && strings.Contains(text, tc.not)) {
				t.Errorf("%v: exit %d, want an error saying %q (and not %q)\n%s", tc.args, code, tc.want, tc.not, text)
			}
		}
		// A corrupt scenario file: named with its field, nothing changed.
		name := w.Scenarios[3].Name
		p := filepath.Join(out, "scenarios", name, "scenario.json")
		edit(t, out, filepath.Join("scenarios", name, "scenario.json"), `"max_turns": `, `"max_turns": "many", "was": `)
		corrupt := snapshot(t, out)
		code, text := dispatch(t, "check", out, "--contract", retail)
		if code != ExitFail || !strings.Contains(text, p) || !strings.Contains(text, "field max_turns") {
			t.Errorf("check of a corrupt file: exit %d, want the file and its field named\n%s", code, text)
		}
		code, text = dispatch(t, "run", retail, "--update", out)
		if code == ExitOK || !strings.Contains(text, p) {
			t.Errorf("run --update over a corrupt file: exit %d\n%s", code, text)
		}
		if !equalFiles(corrupt, snapshot(t, out)) || len(empty) == 0 || len(snapshot(t, empty)) != 0 {
			t.Error("a refused command changed files")
		}
		delete(corrupt, filepath.Join("scenarios", name, "scenario.json"))
		delete(before, filepath.Join("scenarios", name, "scenario.json"))
		if !equalFiles(before, corrupt) {
			t.Error("files other than the corrupted one changed")
		}
	})
}

// restated checks that report.json and review.json describe the suite in out
// as it now is after a run over it in mode: the report counts the scenario
// folders on disk, records the contract of index.json and names o's run
// last among its refreshes.
func restated(t *testing.T, out string, o refresh.Outcome) suite.Report {
	t.Helper()
	w, err := suite.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := suite.ReadReport(out)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(filepath.Join(out, "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := 0
	for _, n := range rep.Coverage.Kinds {
		kinds += n
	}
	if rep.Count != len(dirs) || rep.Count != len(w.Scenarios) || w.Index.Count != len(dirs) || kinds != len(dirs) {
		t.Errorf("report.json counts %d (%d by kind), index.json %d, %d scenario folders on disk", rep.Count, kinds, w.Index.Count, len(dirs))
	}
	if rep.Provenance.ContractSHA256 != w.Index.ContractSHA256 {
		t.Errorf("report.json's contract %s, index.json's %s", rep.Provenance.ContractSHA256, w.Index.ContractSHA256)
	}
	if n := len(rep.Refreshed); n == 0 || rep.Refreshed[n-1] != (suite.Refreshed{Mode: o.Mode, Run: o.Run}) {
		t.Errorf("report.json's refreshed %+v, want %s run %q last", rep.Refreshed, o.Mode, o.Run)
	}
	if rep.Coverage.CellsCovered == 0 || rep.Coverage.UseCasesPresent == 0 {
		t.Errorf("report.json covers no cell or use case: %+v", rep.Coverage)
	}
	var rv struct {
		Findings []json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal(snapshot(t, out)["review.json"], &rv); err != nil {
		t.Errorf("review.json: %v", err)
	}
	return rep
}

func equalFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(b[k], v) {
			return false
		}
	}
	return true
}

// TestReviseDeterministic: revising five scenarios of a small retail suite
// with --ask harder writes the same bytes whether one writer or three
// write the replacements (the run's id, which differs, aside).
func TestReviseDeterministic(t *testing.T) {
	t.Parallel() // the package's long runs, each on servers of its own
	retail, err := filepath.Abs(filepath.Join("..", "..", "examples", "retail"))
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	if code, out := dispatch(t, "run", retail, "--scenarios", "24", "--writers", "2", "--out", base, "--seed", "11"); code != ExitOK {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	w, err := suite.Read(base)
	if err != nil {
		t.Fatal(err)
	}
	// Plain successes first: each has a harder bucket when its use case
	// has any other.
	scs := slices.Clone(w.Scenarios)
	sort.SliceStable(scs, func(i, j int) bool {
		pi := scs[i].Kind == "happy" && scs[i].Expects == "succeed"
		pj := scs[j].Kind == "happy" && scs[j].Expects == "succeed"
		return pi && !pj
	})
	var chosen []string
	for _, sc := range scs[:5] {
		chosen = append(chosen, sc.Name)
	}
	revised := map[string]map[string][]byte{}
	for _, writers := range []string{"1", "3"} {
		out := copyTree(t, base)
		code, text := dispatch(t, "revise", out, "--contract", retail, "--only", strings.Join(chosen, ","), "--ask", "harder", "--writers", writers)
		if code != ExitOK {
			t.Fatalf("revise with %s writer(s): exit %d\n%s", writers, code, text)
		}
		files := snapshot(t, out)
		var o refresh.Outcome
		if err := json.Unmarshal(files[refresh.OutcomeFile], &o); err != nil {
			t.Fatal(err)
		}
		if len(o.Replaced) != len(chosen) || o.Run == "" {
			t.Fatalf("revise with %s writer(s) revised %d of %d:\n%s", writers, len(o.Replaced), len(chosen), text)
		}
		// refresh.json holds the revision's counts (docs/METRICS.md): every
		// chosen scenario revised or kept as it was.
		if o.Asked != len(chosen) || len(o.Replaced)+len(o.NotKept) != o.Asked {
			t.Errorf("refresh.json: asked %d, %d replaced, %d not kept; %d chosen", o.Asked, len(o.Replaced), len(o.NotKept), len(chosen))
		}
		for p, b := range files {
			files[p] = bytes.ReplaceAll(b, []byte(o.Run), []byte("RUN"))
		}
		revised[writers] = files
		t.Logf("%s writer(s): %d revised, %d kept as they were\n%s", writers, len(o.Replaced), len(o.NotKept), text)
	}
	testenv.SameFiles(t, revised["1"], revised["3"], [2]string{"1 writer", "3 writers"})
}
