package writer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/ledger"
	"github.com/suitegen/suitegen/pkg/model"
	"github.com/suitegen/suitegen/pkg/outage"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/script"
)

// maxToolArgs bounds one tool call's arguments: a scenario's own limit
// (scenario.MaxSize) plus room for the wrapping object.
const maxToolArgs = scenario.MaxSize + 4<<10

// tool runs one tool call and returns its answer for the conversation; done
// is true when the session should end. Malformed arguments, unknown tools and
// hallucinated records are answered in the conversation, never raised.
func (ss *session) tool(ctx context.Context, tc model.ToolCall) (string, bool) {
	args, answer := vetToolCall(tc)
	if answer != "" {
		return answer, false
	}
	switch tc.Name {
	case brief.ToolFinish:
		return `{"ok":true}`, true
	case brief.ToolTry:
		return ss.try(ctx, args), false
	case brief.ToolSubmit:
		return ss.submit(ctx, args), false
	case brief.ToolSubGoals:
		return ss.subGoals(ctx), false
	case brief.ToolInspect:
		return ss.inspect(args), false
	case brief.ToolAddSubGoal:
		return ss.addSubGoal(ctx, args), false
	case brief.ToolReportBucket:
		return ss.reportBucket(ctx, args), false
	}
	// vetToolCall let through a tool brief.Tools offers that has no case here.
	return errorAnswer(brief.CodeNotServed, "tool %s is not served by this writer.", tc.Name), false
}

// vetToolCall checks what a model sent before anything runs it: the
// arguments' size, that they are JSON, and that the tool exists. It returns
// the arguments to dispatch, or the answer that refuses the call.
func vetToolCall(tc model.ToolCall) (args, answer string) {
	if len(tc.Arguments) > maxToolArgs {
		// Bounded before any parsing: a runaway reply costs one short answer.
		return "", errorAnswer(brief.CodeTooLarge, "the arguments are %d bytes, over the %d byte limit; send less (one scenario per submit_scenario).", len(tc.Arguments), maxToolArgs)
	}
	args = strings.TrimSpace(tc.Arguments)
	if args == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) {
		return "", errorAnswer(brief.CodeNotJSON, "the arguments are not valid JSON; send one JSON object matching the tool's parameters.")
	}
	names := make([]string, 0, 6)
	for _, t := range brief.Tools() {
		if t.Name == tc.Name {
			return args, ""
		}
		names = append(names, t.Name)
	}
	return "", errorAnswer(brief.CodeUnknownTool, "there is no tool %q; the tools are %s.", clip(tc.Name, 100), strings.Join(names, ", "))
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return errorAnswer(brief.CodeInvalid, "the answer could not be rendered: %v", err)
	}
	return string(b)
}

// try rehearses calls on a throwaway copy. A rehearsal that met an outage of
// the world's database (the rehearsal's error, or a handler's) ends the
// session after the answer; a handler stopped by one of its limits is the
// contract's doing and answered like any crash.
func (ss *session) try(ctx context.Context, args string) string {
	var a brief.TryArgs
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return errorAnswer(brief.CodeBadArguments, "try_calls arguments: %v", err)
	}
	if len(a.Calls) > 20 || len(a.Setup) > 200 {
		return errorAnswer(brief.CodeInvalid, "at most 20 calls and 200 setup statements per rehearsal.")
	}
	results, diff, err := ss.e.Prover.Rehearse(ctx, a.Setup, a.Calls, true)
	out := brief.TryResult{Diff: diff}
	limited := false
	for _, r := range results {
		out.Steps = append(out.Steps, brief.TryStep{Tool: r.Tool, OK: r.OK, Refused: r.Refused, Crash: r.Crash, Error: r.Error, Result: r.Result, Want: want(r.Want)})
		limited = limited || errors.Is(r.Err, script.ErrLimit)
		if outage.Is(r.Err) {
			// A handler's query met the outage: the record is not at fault.
			ss.outage = &outageError{r.Err}
		}
	}
	if err != nil {
		out.Diff, out.Error = nil, err.Error()
		// A handler stopped by a limit mid-query takes the copy's connection
		// with it: that is the contract's doing, not an outage.
		if outage.Is(err) && !limited {
			ss.outage = &outageError{err}
		}
		return jsonText(out)
	}
	ss.rehearsals = append(ss.rehearsals, a)
	out.Rehearsal = len(ss.rehearsals)
	return jsonText(out)
}

func (ss *session) subGoals(ctx context.Context) string {
	var out []subGoalEntry
	for _, sg := range ss.e.C.SubGoals {
		out = append(out, subGoalEntry{Name: sg.Name, What: sg.What, Judged: sg.Judged, Params: sg.Params})
	}
	// Sub-goals writers added to this run (add_sub_goal) come next.
	out = append(out, ss.runSubGoalEntries(ctx)...)
	for _, b := range prove.BuiltinsFor(ss.e.C) {
		out = append(out, subGoalEntry{Name: b.Name, What: b.What, Judged: b.Judged, Params: b.Params, Builtin: true})
	}
	return jsonText(out)
}

func (ss *session) inspect(args string) string {
	var a struct {
		Table   string         `json:"table"`
		Where   map[string]any `json:"where"`
		Columns []string       `json:"columns"`
		Limit   int            `json:"limit"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return errorAnswer(brief.CodeBadArguments, "inspect_world arguments: %v", err)
	}
	if a.Limit <= 0 || a.Limit > 50 {
		a.Limit = 20
	}
	rows := ss.e.C.Seed(a.Table)
	if ss.e.C.Table(a.Table) == nil {
		var names []string
		for _, t := range ss.e.C.Tables {
			names = append(names, t.Name)
		}
		return errorAnswer(brief.CodeInvalid, "no table %q; the tables are %s.", clip(a.Table, 100), strings.Join(names, ", "))
	}
	keys := make([]string, 0, len(a.Where))
	for k := range a.Where {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []map[string]any
	for _, r := range rows {
		match := true
		for _, k := range keys {
			if fmt.Sprint(r[k]) != fmt.Sprint(a.Where[k]) {
				match = false
			}
		}
		if match {
			out = append(out, project(r, a.Columns))
			if len(out) >= a.Limit {
				break
			}
		}
	}
	// The rows only: the table is the one asked for.
	return jsonText(map[string]any{"rows": out})
}

// project is the row with only the columns asked for (all when none are);
// a column the row lacks is left out rather than invented.
func project(r map[string]any, columns []string) map[string]any {
	if len(columns) == 0 {
		return r
	}
	out := make(map[string]any, len(columns))
	for _, c := range columns {
		if v, ok := r[c]; ok {
			out[c] = v
		}
	}
	return out
}

func (ss *session) submit(ctx context.Context, args string) string {
	var a brief.SubmitArgs
	if err := json.Unmarshal([]byte(args), &a); err != nil || a.Scenario.Name == "" {
		// Models often send the scenario itself rather than {"scenario": ...}.
		var sc scenario.Scenario
		if err2 := json.Unmarshal([]byte(args), &sc); err2 != nil || sc.Name == "" {
			return errorAnswer(brief.CodeBadArguments, "submit_scenario takes {\"scenario\": {...}} with at least a name")
		}
		a.Scenario = sc
	}
	sc := &a.Scenario
	if a.Rehearsal != 0 {
		if a.Rehearsal < 0 || a.Rehearsal > len(ss.rehearsals) {
			return errorAnswer(brief.CodeBadArguments, "there is no rehearsal %d in this session (%d ran); name one a try_calls answer numbered, or send setup and solution", a.Rehearsal, len(ss.rehearsals))
		}
		if len(sc.Setup) > 0 || len(sc.Solution) > 0 {
			return errorAnswer(brief.CodeBadArguments, "a scenario that names rehearsal %d takes its setup and solution from it: leave both out, or leave rehearsal out", a.Rehearsal)
		}
		r := ss.rehearsals[a.Rehearsal-1]
		sc.Setup, sc.Solution = r.Setup, r.Calls
	}
	w := ss.w
	res := brief.SubmitResult{Name: sc.Name}
	refuse := func(rs ...prove.Refusal) string {
		for _, r := range rs {
			w.cfg.Metrics.For(ss.b.Run).Refused(string(r.Gate), string(r.Code))
			if err := w.cfg.Ledger.Refuse(ctx, ss.b.Run, ss.b.Slice, sc.Bucket, string(r.Gate), string(r.Code), r.Message); err != nil {
				w.log.Warn("recording a refusal", "err", err)
			}
		}
		res.Refusals = rs
		res.Remaining = ss.outstanding()
		sub := brief.Submission{Name: sc.Name, Bucket: sc.Bucket, Remaining: res.Remaining}
		for _, r := range rs {
			sub.Refused = append(sub.Refused, string(r.Gate)+"/"+string(r.Code))
		}
		ss.subs = append(ss.subs, sub)
		return jsonText(res)
	}
	w.cfg.Metrics.For(ss.b.Run).ScenariosSubmitted.Inc()
	want, ok := ss.want[sc.Bucket]
	if r := prove.Admit(sc.Bucket, ok, ss.have[sc.Bucket], want); r != nil {
		return refuse(*r)
	}
	// Provenance is the writer's to say, not the model's.
	sc.Provenance.ContractSHA256 = ss.e.C.SHA256
	sc.Provenance.WorldSHA256 = ss.e.C.WorldSHA256
	sc.Provenance.Model = w.cfg.Model.Name()
	sc.Provenance.PromptSHA256 = ss.prompt
	sc.Provenance.Seed = ss.b.Seed
	sc.Provenance.Writer = "suitegen-writer/1"
	sc.Provenance.Slice = ""
	// A sub-goal added to the run (by this or another writer) is proved by the
	// run's prover, read from the ledger when sc names one it does not know.
	prover, err := ss.proverFor(ctx, sc)
	if err != nil {
		return ss.ledgerError(err)
	}
	start := time.Now()
	v, err := prover.Prove(ctx, sc)
	if err != nil {
		// The gates could not run: not the scenario's fault, and nothing is
		// recorded against it. An outage ends the session.
		if outage.Is(err) {
			ss.outage = &outageError{err}
			return errorAnswer(brief.CodeLedger, "%v", ss.outage)
		}
		return errorAnswer(brief.CodeNotProved, "the scenario could not be proved, submit it again: %v", err)
	}
	w.cfg.Metrics.For(ss.b.Run).ProofDuration.Observe(time.Since(start).Seconds())
	if !v.Kept {
		return refuse(v.Refusals...)
	}
	start = time.Now()
	jr, err := w.cfg.Ledger.Journal(ctx, ss.b.Run, sc, ss.b.Slice, w.cfg.ID, v.Codes)
	w.cfg.Metrics.For(ss.b.Run).LedgerWriteDuration.Observe(time.Since(start).Seconds())
	var conflict *ledger.ConflictError
	switch {
	case errors.As(err, &conflict):
		return refuse(prove.Conflict(conflict.Kind, conflict.Error()))
	case err != nil:
		if outage.Is(err) {
			ss.outage = &outageError{err}
		}
		return errorAnswer(brief.CodeLedger, "the ledger could not record the scenario, submit it again: %v", err)
	}
	if jr == ledger.Credited {
		w.cfg.Metrics.For(ss.b.Run).ScenariosProved.Inc()
	}
	ss.have[sc.Bucket]++
	res.Accepted = true
	res.Remaining = ss.outstanding()
	ss.subs = append(ss.subs, brief.Submission{Name: sc.Name, Bucket: sc.Bucket, Kept: true, Remaining: res.Remaining})
	return jsonText(res)
}

// want is a refused call's numbers, as the try_calls answer gives them.
func want(w *script.Want) *ground.Want {
	if w == nil {
		return nil
	}
	return &ground.Want{Arg: w.Arg, Value: w.Value}
}
