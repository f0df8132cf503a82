// Package probe proves a world before any scenario is written: a valid call is
// answered (refused is fine, a crash is not); a bogus record id and a missing
// required argument are refused; an unknown tool is refused; every handler
// reads every argument it is given; every enum value that names a record
// exists; declared sequences leave the state they claim.
package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/world"
)

// Score is one probe's result.
type Score struct {
	Probe    string   `json:"probe"`
	Passed   int      `json:"passed"`
	Total    int      `json:"total"`
	Failures []string `json:"failures,omitempty"`
}

// Value is passed/total (1 when there was nothing to check).
func (s Score) Value() float64 {
	if s.Total == 0 {
		return 1
	}
	return float64(s.Passed) / float64(s.Total)
}

func (s *Score) check(ok bool, format string, a ...any) {
	s.Total++
	if ok {
		s.Passed++
	} else {
		s.Failures = append(s.Failures, fmt.Sprintf(format, a...))
	}
}

// Report is every probe's score.
type Report struct {
	Scores []Score `json:"scores"`
}

// OK is true when every probe scored 1.
func (r Report) OK() bool {
	for _, s := range r.Scores {
		if s.Value() < 1 {
			return false
		}
	}
	return true
}

// Run runs every probe against a world.
func Run(ctx context.Context, c *contract.Contract, w *world.World) (Report, error) {
	g := ground.New(c)
	valid := Score{Probe: "valid-call-answered"}
	bogus := Score{Probe: "bogus-id-refused"}
	missing := Score{Probe: "missing-argument-refused"}
	unknown := Score{Probe: "unknown-tool-refused"}
	reads := Score{Probe: "handler-reads-every-argument"}
	enums := Score{Probe: "enum-values-exist"}
	seqs := Score{Probe: "sequences-hold"}

	seedText := map[string]bool{}
	for _, st := range c.Seeds {
		for _, r := range st.Rows {
			for _, v := range r {
				if s, ok := v.(string); ok {
					seedText[s] = true
				}
			}
		}
	}
	for i := range c.Tools {
		t := &c.Tools[i]
		cases := bounds(g, t)
		read := map[string]bool{}
		answered, crashed := false, ""
		for _, b := range cases {
			args, ok := g.Fill(t, b)
			if !ok {
				continue
			}
			full := fillOptional(g, t, b, args)
			r := call(ctx, w, t.Name, full)
			if r.Crash {
				crashed = fmt.Sprintf("%s crashed on %s: %s", t.Name, js(full), r.Error)
				break
			}
			answered = true
			for _, a := range r.ReadArgs {
				read[a] = true
			}
			if r.OK {
				break
			}
		}
		switch {
		case crashed != "":
			valid.check(false, "%s", crashed)
		case !answered:
			valid.check(false, "%s: no arguments could be filled from the seed to call it", t.Name)
		default:
			valid.check(true, "")
		}
		logOnly := map[string]bool{}
		for _, a := range t.LogOnly {
			logOnly[a] = true
		}
		for _, p := range ground.ParamNames(t) {
			if logOnly[p] {
				continue
			}
			reads.check(read[p], "%s never reads argument %q", t.Name, p)
		}
		if len(cases) == 0 {
			continue
		}
		base, ok := g.Fill(t, cases[0])
		if !ok {
			continue
		}
		for _, p := range ground.ParamNames(t) {
			if _, _, isRef := g.Ref(t, p); !isRef {
				continue
			}
			args := copyArgs(base)
			if _, has := args[p]; !has {
				continue
			}
			args[p] = bogusValue(args[p])
			r := call(ctx, w, t.Name, args)
			bogus.check(r.Refused && !r.Crash, "%s with a bogus %s (%v) was %s", t.Name, p, args[p], verdict(r))
		}
		for p := range ground.Required(t) {
			args := copyArgs(base)
			delete(args, p)
			r := call(ctx, w, t.Name, args)
			missing.check(r.Refused && !r.Crash, "%s without %s was %s", t.Name, p, verdict(r))
		}
		for _, p := range ground.ParamNames(t) {
			tb, col, isRef := g.Ref(t, p)
			for _, v := range enumOf(t, p) {
				switch {
				case isRef && g.C.Table(tb) != nil:
					enums.check(g.Find(tb, col, v) != nil, "%s.%s permits %v, which names no %s.%s", t.Name, p, v, tb, col)
				case seedText[ground.Text(v)]:
					// Held by the seed: the value exists in the data.
					enums.check(true, "")
				}
				// Otherwise a value the tool writes but the seed never holds: fine.
			}
		}
	}
	r := call(ctx, w, "no_such_tool_"+strings.Repeat("x", 3), map[string]any{})
	unknown.check(r.Refused && !r.OK, "an unknown tool was %s", verdict(r))

	for _, sq := range c.Sequences {
		err := w.Copy(ctx, func(cp *world.Copy) error {
			for i, st := range sq.Steps {
				r := cp.Call(ctx, st.Tool, st.Args)
				want := "ok"
				if st.Expect != "" {
					want = st.Expect
				}
				got := verdict(r)
				seqs.check(got == want, "sequence %s step %d (%s): want %s, got %s %s", sq.Name, i+1, st.Tool, want, got, r.Error)
			}
			for _, ex := range sq.Expect {
				rows, err := cp.Query(ctx, ex.SQL)
				if err != nil {
					seqs.check(false, "sequence %s: %s: %v", sq.Name, ex.SQL, err)
					continue
				}
				got := make([]map[string]any, len(rows))
				for i, row := range rows {
					got[i] = row.Map()
				}
				seqs.check(sameRows(got, ex.Rows, ex.Unordered), "sequence %s: %s returned %s, want %s", sq.Name, ex.SQL, js(got), js(ex.Rows))
			}
			return nil
		})
		if err != nil {
			return Report{}, err
		}
	}
	return Report{Scores: []Score{valid, bogus, missing, unknown, reads, enums, seqs}}, nil
}

// bounds are the cases a tool is probed with: bindings of a few rows of the
// table its first record argument names (or the caller table).
func bounds(g *ground.Graph, t *contract.Tool) []ground.Bound {
	table := ""
	for _, p := range ground.ParamNames(t) {
		if tb, _, ok := g.Ref(t, p); ok && len(g.Rows(tb)) > 0 {
			table = tb
			break
		}
	}
	if table == "" && g.C.Caller != nil {
		table = g.C.Caller.Table
	}
	var out []ground.Bound
	for i, r := range g.Rows(table) {
		if i >= 8 {
			break
		}
		b := g.Bind(table, r)
		b.Ordinal = i
		out = append(out, b)
	}
	if len(out) == 0 {
		out = append(out, ground.Bound{Rows: map[string][]ground.Row{}})
	}
	return out
}

// fillOptional adds the optional arguments Fill leaves to the agent, so the
// read probe sees every argument passed.
func fillOptional(g *ground.Graph, t *contract.Tool, b ground.Bound, args map[string]any) map[string]any {
	out := copyArgs(args)
	props, _ := t.Params["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if _, ok := out[k]; ok {
			continue
		}
		sub := *t
		sub.Params = map[string]any{"type": "object", "properties": map[string]any{k: props[k]}, "required": []any{k}}
		if v, ok := g.Fill(&sub, b); ok {
			out[k] = v[k]
		}
	}
	return out
}

func call(ctx context.Context, w *world.World, tool string, args map[string]any) world.CallResult {
	var r world.CallResult
	err := w.Copy(ctx, func(cp *world.Copy) error { r = cp.Call(ctx, tool, args); return nil })
	if err != nil {
		r.Crash, r.Error = true, err.Error()
	}
	return r
}

func verdict(r world.CallResult) string {
	switch {
	case r.Crash:
		return "crash"
	case r.Refused:
		return "refused"
	case r.OK:
		return "ok"
	}
	return "unanswered"
}

func copyArgs(a map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

func bogusValue(v any) any {
	switch v.(type) {
	case int64, int, float64:
		return int64(987654321)
	case []any:
		return []any{"bogus-0000"}
	}
	return "bogus-0000"
}

func enumOf(t *contract.Tool, p string) []any {
	props, _ := t.Params["properties"].(map[string]any)
	ps, _ := props[p].(map[string]any)
	e, _ := ps["enum"].([]any)
	return e
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func sameRows(got, want []map[string]any, unordered bool) bool {
	norm := func(rows []map[string]any) []string {
		out := make([]string, len(rows))
		for i, r := range rows {
			var x any
			_ = json.Unmarshal([]byte(js(r)), &x)
			out[i] = js(x)
		}
		if unordered {
			sort.Strings(out)
		}
		return out
	}
	a, b := norm(got), norm(want)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
