package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/suite"
	"github.com/suitegen/suitegen/pkg/taskimport"
)

func init() {
	register(command{"import", "FILE --format tau-bench|tau2-bench --contract DIR [--out OUT] [--json]", "turn a benchmark's published tasks into a suite of a ported contract and report each task's flaws", cmdImport})
}

// ImportResult is one task's fate.
type ImportResult struct {
	Task     string `json:"task"`
	Line     int    `json:"line,omitempty"`
	Scenario string `json:"scenario,omitempty"`
	UseCase  string `json:"use_case,omitempty"`
	Kept     bool   `json:"kept"`
	Gate     string `json:"gate,omitempty"`
	Code     string `json:"code,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// ImportReport is what import prints with --json.
type ImportReport struct {
	File     string         `json:"file"`
	Format   string         `json:"format"`
	Agent    string         `json:"agent"`
	Out      string         `json:"out,omitempty"`
	Tasks    int            `json:"tasks"`
	Kept     int            `json:"kept"`
	Refused  int            `json:"refused"`
	ByCode   map[string]int `json:"by_code"`
	Results  []ImportResult `json:"results"`
	Contract string         `json:"contract_sha256"`
}

func cmdImport(ctx context.Context, env *Env, args []string) error {
	f := newFlags(env, "suitegen import", "FILE --format tau-bench|tau2-bench --contract DIR [--out OUT] [--json]",
		"Read a benchmark's published task file (a τ-bench Python task list, read without running it, or a τ²-bench tasks.json), make each task a scenario of the ported contract, prove it, write the kept ones as a suite in OUT, and report every task: kept, or the gate, code and reason that refused it. Exit 0 when a task was kept.")
	format := f.str("format", "", "tau-bench or tau2-bench")
	dir := f.str("contract", "", "the ported contract directory (required)")
	out := f.str("out", "", "where to write the suite of kept scenarios (none: only the report)")
	prefix := f.str("prefix", "", "scenario names are PREFIX-ID (default: the format and the file's folder, e.g. tau-bench-airline)")
	asJSON := f.Bool("json", false, "print the report as JSON: {file, format, agent, out, tasks, kept, refused, by_code, results: [{task, line, scenario, use_case, kept, gate, code, reason}]}")
	cn := f.conn()
	pos, err := f.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &UsageError{"import takes one task file"}
	}
	if *format != taskimport.FormatTauBench && *format != taskimport.FormatTau2Bench {
		return &UsageError{fmt.Sprintf("--format %q: want %s or %s", *format, taskimport.FormatTauBench, taskimport.FormatTau2Bench)}
	}
	if *dir == "" {
		return &UsageError{"import needs --contract DIR"}
	}
	tasks, err := readTasks(pos[0], *format)
	if err != nil {
		return err
	}
	c, err := contract.LoadValid(*dir)
	if err != nil {
		return err
	}
	if *prefix == "" {
		*prefix = *format + "-" + filepath.Base(filepath.Dir(pos[0]))
	}
	e, closeEngine, err := openEngine(ctx, env, cn, c)
	if err != nil {
		return err
	}
	defer closeEngine()
	rep := ImportReport{File: pos[0], Format: *format, Agent: c.Agent, Out: *out, Tasks: len(tasks), ByCode: map[string]int{}, Contract: c.SHA256}
	var kept []scenario.Scenario
	seen := map[string]string{} // content -> scenario name
	src := taskimport.Source{Format: *format, Prefix: *prefix}
	for _, t := range tasks {
		b := taskimport.Build(c, src, t)
		r := ImportResult{Task: t.ID, Line: t.Line}
		refusal := b.Refusal
		if sc := b.Scenario; sc != nil {
			r.Scenario, r.UseCase = sc.Name, sc.UseCase
			if err := taskimport.Searched(ctx, e.World, c, sc); err != nil {
				return fmt.Errorf("task %s: %w", t.ID, err)
			}
			key := content(sc)
			if first, dup := seen[key]; dup {
				refusal = &prove.Refusal{Gate: prove.GateSuite, Code: prove.CodeDuplicateContent, Message: "the same scenario as " + first + " (same instruction, actions and outputs)"}
			} else {
				v, err := e.Prover.Prove(ctx, sc)
				if err != nil {
					return fmt.Errorf("task %s: %w", t.ID, err)
				}
				if v.Kept {
					seen[key] = sc.Name
					kept = append(kept, *sc)
					r.Kept = true
				} else {
					refusal = &v.Refusals[0]
				}
			}
		}
		if refusal != nil {
			r.Gate, r.Code, r.Reason = string(refusal.Gate), string(refusal.Code), refusal.Message
			rep.ByCode[r.Gate+"/"+r.Code]++
			rep.Refused++
		} else {
			rep.Kept++
		}
		rep.Results = append(rep.Results, r)
	}
	if *out != "" {
		if err := writeImported(ctx, c, *out, *format, kept); err != nil {
			return err
		}
	}
	if *asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printImport(env.Stdout, rep)
	}
	if rep.Kept == 0 {
		return fmt.Errorf("no task of %s was kept", pos[0])
	}
	return nil
}

func readTasks(path, format string) ([]taskimport.Task, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	src, err := io.ReadAll(io.LimitReader(fh, taskimport.MaxSource+1))
	if err != nil {
		return nil, err
	}
	if format == taskimport.FormatTauBench {
		ts, err := taskimport.ParseTauBench(src)
		if err != nil {
			return nil, fmt.Errorf("%s:%w", path, err)
		}
		return ts, nil
	}
	ts, err := taskimport.ParseTau2Bench(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ts, nil
}

// content is what makes two imported scenarios the same test.
func content(sc *scenario.Scenario) string {
	b, _ := json.Marshal([]any{sc.UseCase, sc.CallerID, sc.Instruction, sc.Solution, sc.Outputs})
	return string(b)
}

// writeImported writes the kept scenarios with the suite writer, from a
// ledger of this import alone: one finished run, no buckets, no spend.
func writeImported(ctx context.Context, c *contract.Contract, out, format string, kept []scenario.Scenario) error {
	l := &importLedger{run: ledger.Run{ID: "import-" + format, Agent: c.Agent, ContractSHA256: c.SHA256, WorldSHA256: c.WorldSHA256,
		Model: "import:" + format, State: ledger.RunDone, Asked: len(kept), CreatedAt: time.Now().UTC()}, scenarios: kept}
	var x suite.ReportExtra
	for _, b := range prove.BuiltinsFor(c) {
		x.BuiltinSubGoals = append(x.BuiltinSubGoals, suite.SubGoalInfo{Name: b.Name, What: b.What, Judged: b.Judged, Params: b.Params, Origin: "builtin"})
	}
	_, _, err := suite.Write(ctx, l, l.run.ID, c, out, x)
	return err
}

// importLedger is suite.Ledger over what an import made.
type importLedger struct {
	run       ledger.Run
	scenarios []scenario.Scenario
}

func (l *importLedger) Run(context.Context, string) (ledger.Run, error) { return l.run, nil }
func (l *importLedger) ScenariosAfter(_ context.Context, _, after string, n int) ([]scenario.Scenario, error) {
	from := 0
	if after != "" {
		// From the end: a name written twice cannot bring a page back.
		from = len(l.scenarios)
		for i := len(l.scenarios) - 1; i >= 0; i-- {
			if l.scenarios[i].Name == after {
				from = i + 1
				break
			}
		}
	}
	to := len(l.scenarios)
	if n > 0 {
		to = min(to, from+n)
	}
	return l.scenarios[from:to], nil
}
func (l *importLedger) Buckets(context.Context, string) ([]ledger.Bucket, error)   { return nil, nil }
func (l *importLedger) SubGoals(context.Context, string) ([]ledger.SubGoal, error) { return nil, nil }
func (l *importLedger) Refusals(context.Context, string) (map[string]int, error) {
	return map[string]int{}, nil
}
func (l *importLedger) BucketRefusals(context.Context, string) (map[string]ledger.BucketRefusal, error) {
	return map[string]ledger.BucketRefusal{}, nil
}
func (l *importLedger) Meter(context.Context, string) (ledger.Meter, error) {
	return ledger.Meter{}, nil
}

func printImport(w io.Writer, rep ImportReport) {
	for _, r := range rep.Results {
		at := "task " + r.Task
		if r.Line > 0 {
			at += fmt.Sprintf(" (line %d)", r.Line)
		}
		if r.Kept {
			fmt.Fprintf(w, "kept %s: %s (%s)\n", at, r.Scenario, r.UseCase)
			continue
		}
		fmt.Fprintf(w, "refused %s: %s/%s: %s\n", at, r.Gate, r.Code, r.Reason)
	}
	fmt.Fprintf(w, "%d of %d task(s) kept, %d refused\n", rep.Kept, rep.Tasks, rep.Refused)
	printCodes(w, rep.ByCode)
	if rep.Out != "" {
		fmt.Fprintf(w, "suite written to %s\n", strings.TrimSuffix(rep.Out, "/"))
	}
}
