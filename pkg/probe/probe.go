// Package probe proves a world before any scenario is written: every tool
// argument is grounded by rehearsal (ground.Discover), then a valid call is
// answered (refused is fine, a crash is not, and a call the params schema
// refused before the handler ran is not an answer); a bogus record id and a
// missing required argument are refused; an unknown tool is refused; every
// handler reads every argument it is given; every enum value that names a
// record exists; declared sequences leave the state they claim.
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

// Report is every probe's score, and the grounding they ran on.
type Report struct {
	Scores    []Score          `json:"scores"`
	Grounding ground.Grounding `json:"grounding"`
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

// probeCases is how many cases a tool is called on before it counts as
// never answered.
const probeCases = 8

// prober holds what the probes share.
type prober struct {
	c  *contract.Contract
	w  *world.World
	g  *ground.Graph
	bs ground.Bindings
	// base is, per tool, the arguments of its first answered call (those
	// of an ok answer when there was one): the bogus-record and
	// missing-argument probes vary them.
	base map[string]map[string]any
}

// Run grounds the contract's tools in the world, then runs every probe.
func Run(ctx context.Context, c *contract.Contract, w *world.World) (Report, error) {
	g := ground.New(c)
	gr, err := g.Discover(ctx, Rehearser(w))
	if err != nil {
		return Report{}, err
	}
	p := &prober{c: c, w: w, g: g, bs: gr.Bindings, base: map[string]map[string]any{}}
	valid, reads := p.answered(ctx)
	seqs, err := p.sequences(ctx)
	if err != nil {
		return Report{}, err
	}
	return Report{Grounding: gr, Scores: []Score{
		valid, p.bogus(ctx), p.missing(ctx), p.unknownTool(ctx), reads, p.enums(), seqs,
	}}, nil
}

// answered calls each tool with every argument filled from the world, case
// after case, until the handler answers ok. A tool is answered when its
// handler ran (ok or refused). What it reads is judged on a call it answered
// ok: a handler that refuses early has not yet read what it reads later.
func (p *prober) answered(ctx context.Context) (valid, reads Score) {
	valid = Score{Probe: "valid-call-answered"}
	reads = Score{Probe: "handler-reads-every-argument"}
	for i := range p.c.Tools {
		t := &p.c.Tools[i]
		read := map[string]bool{}
		ran, okCall, crashed, invalid := false, false, "", ""
		for _, b := range p.g.Cases(t, p.bs, probeCases) {
			args, _ := p.g.FillAll(t, b, p.bs)
			r := call(ctx, p.w, t.Name, args)
			if r.Crash {
				crashed = fmt.Sprintf("%s crashed on %s: %s", t.Name, js(args), r.Error)
				break
			}
			if r.Invalid {
				invalid = fmt.Sprintf("%s with %s: %s", t.Name, js(args), r.Error)
				continue
			}
			if !ran || r.OK {
				p.base[t.Name] = args
			}
			ran = true
			if r.OK {
				okCall = true
				for _, a := range r.ReadArgs {
					read[a] = true
				}
				break
			}
		}
		switch {
		case crashed != "":
			valid.check(false, "%s", crashed)
		case !ran && invalid != "":
			valid.check(false, "%s: no call filled from the world got past its params schema (%s)%s", t.Name, invalid, p.unbound(t))
		case !ran:
			valid.check(false, "%s: no arguments could be filled from the world%s", t.Name, p.unbound(t))
		default:
			valid.check(true, "")
		}
		if !okCall {
			continue // what it reads is unknown, not wrong
		}
		for _, a := range t.ParamNames() {
			if t.LogOnlyParam(a) {
				continue
			}
			reads.check(read[a], "%s never reads argument %q", t.Name, a)
		}
	}
	return valid, reads
}

// unbound names a tool's arguments no column grounds, for a failure message.
func (p *prober) unbound(t *contract.Tool) string {
	var names []string
	for _, b := range p.bs.For(t.Name) {
		if b.How == ground.Unbound {
			names = append(names, b.Param)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("; ungrounded: %s (see the binding table)", strings.Join(names, ", "))
}

// bogus calls each tool with each record argument replaced by a record that
// does not exist (in the record's own shape, so the params schema lets it
// through): the handler must refuse it, not crash.
func (p *prober) bogus(ctx context.Context) Score {
	s := Score{Probe: "bogus-id-refused"}
	for i := range p.c.Tools {
		t := &p.c.Tools[i]
		base, ok := p.base[t.Name]
		if !ok {
			continue
		}
		for _, a := range t.ParamNames() {
			tb, col, isRef := p.g.RecordParam(p.bs, t, a)
			if !isRef {
				continue
			}
			if _, has := base[a]; !has {
				continue
			}
			args := copyArgs(base)
			args[a] = p.bogusValue(tb, col, args[a])
			r := call(ctx, p.w, t.Name, args)
			// Refused by the handler, not by the params schema: a bogus
			// value the schema stops says nothing of the handler. A search
			// that changes nothing may answer that it found nothing.
			found := r.OK && !(nothing(r.Result) && !r.Wrote && t.ChangesState != nil && !*t.ChangesState)
			s.check(!found && !r.Crash && !r.Invalid, "%s with a bogus %s (%v) was %s", t.Name, a, args[a], verdict(r))
		}
	}
	return s
}

// missing calls each tool without each required argument: refused.
func (p *prober) missing(ctx context.Context) Score {
	s := Score{Probe: "missing-argument-refused"}
	for i := range p.c.Tools {
		t := &p.c.Tools[i]
		base, ok := p.base[t.Name]
		if !ok {
			continue
		}
		for _, a := range t.Required() {
			args := copyArgs(base)
			delete(args, a)
			r := call(ctx, p.w, t.Name, args)
			s.check(r.Refused && !r.Crash, "%s without %s was %s", t.Name, a, verdict(r))
		}
	}
	return s
}

func (p *prober) unknownTool(ctx context.Context) Score {
	s := Score{Probe: "unknown-tool-refused"}
	r := call(ctx, p.w, "no_such_tool_"+strings.Repeat("x", 3), map[string]any{})
	s.check(r.Refused && !r.OK, "an unknown tool was %s", verdict(r))
	return s
}

// enums checks that every enum value of an argument naming a record names
// one that exists.
func (p *prober) enums() Score {
	s := Score{Probe: "enum-values-exist"}
	seedText := map[string]bool{}
	for _, st := range p.c.Seeds {
		for _, r := range st.Rows {
			for _, v := range r {
				if str, ok := v.(string); ok {
					seedText[str] = true
				}
			}
		}
	}
	for i := range p.c.Tools {
		t := &p.c.Tools[i]
		for _, a := range t.ParamNames() {
			tb, col, isRef := p.c.RefOf(t.Name, a)
			for _, v := range t.Enum(a) {
				switch {
				case isRef && p.c.Table(tb) != nil:
					s.check(p.g.Find(tb, col, v) != nil, "%s.%s permits %v, which names no %s.%s", t.Name, a, v, tb, col)
				case seedText[ground.Text(v)]:
					// Held by the seed: the value exists in the data.
					s.check(true, "")
				}
				// Otherwise a value the tool writes but the seed never holds: fine.
			}
		}
	}
	return s
}

// sequences plays each declared sequence and checks the state it claims.
func (p *prober) sequences(ctx context.Context) (Score, error) {
	s := Score{Probe: "sequences-hold"}
	for _, sq := range p.c.Sequences {
		err := p.w.Copy(ctx, func(cp *world.Copy) error {
			for i, st := range sq.Steps {
				r := cp.Call(ctx, st.Tool, st.Args)
				want := "ok"
				if st.Expect != "" {
					want = st.Expect
				}
				got := verdict(r)
				s.check(got == want, "sequence %s step %d (%s): want %s, got %s %s", sq.Name, i+1, st.Tool, want, got, r.Error)
			}
			for _, ex := range sq.Expect {
				rows, err := cp.Query(ctx, ex.SQL)
				if err != nil {
					s.check(false, "sequence %s: %s: %v", sq.Name, ex.SQL, err)
					continue
				}
				got := make([]map[string]any, len(rows))
				for i, row := range rows {
					got[i] = row.Map()
				}
				s.check(sameRows(got, ex.Rows, ex.Unordered), "sequence %s: %s returned %s, want %s", sq.Name, ex.SQL, js(got), js(ex.Rows))
			}
			return nil
		})
		if err != nil {
			return Score{}, err
		}
	}
	return s, nil
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
	case r.Invalid:
		return "refused by its params schema"
	case r.Refused:
		return "refused"
	case r.OK:
		return "ok"
	}
	return "unanswered"
}

// nothing reports an empty answer: null, "", [] or {}.
func nothing(result json.RawMessage) bool {
	var v any
	if json.Unmarshal(result, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func copyArgs(a map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	return out
}

// bogusValue is a record key that does not exist, in the shape of the real
// one (so "PAT-00012" gives "PAT-99999"-like values the schema accepts).
func (p *prober) bogusValue(table, col string, real any) any {
	if xs, ok := real.([]any); ok && len(xs) > 0 {
		return []any{p.bogusValue(table, col, xs[0])}
	}
	// The last fresh value of the column's shape: no seed row holds it, and
	// no minted case of a run reaches it first.
	if room := p.g.Room(table, col, real); room > 0 {
		if v, err := p.g.Fresh(table, col, real, room-1); err == nil {
			return v
		}
	}
	switch real.(type) {
	case int64, int, float64:
		return int64(987654321)
	}
	return "bogus-0000"
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
