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

// answered calls each tool with every argument filled from the world, case
// after case, until the handler answers ok. A tool is answered when its
// handler ran (ok or refused). What it reads is judged once a call answered
// ok, from every call that ran: a handler that refuses early has not yet
// read what it reads later, and one that answers ok may skip a branch that
// reads an argument (the refused calls may have taken it).
func (p *prober) answered(ctx context.Context) (valid, reads Score) {
	valid = Score{Probe: "valid-call-answered", always: true}
	reads = Score{Probe: "handler-reads-every-argument"}
	for i := range p.c.Tools {
		t := &p.c.Tools[i]
		a := p.firstAnswer(ctx, t)
		switch {
		case a.crashed != "":
			valid.check(false, "%s", a.crashed)
		case !a.ran && a.invalid != "":
			valid.check(false, "%s: no call filled from the world got past its params schema (%s)%s", t.Name, a.invalid, p.unbound(t))
		case !a.ran:
			valid.check(false, "%s: no arguments could be filled from the world%s", t.Name, p.unbound(t))
		default:
			valid.check(true, "")
		}
		if !a.ok {
			continue // what it reads is unknown, not wrong
		}
		for _, name := range t.ParamNames() {
			if t.LogOnlyParam(name) {
				continue
			}
			reads.check(a.read[name], "%s never reads argument %q on the probes' calls (the one answered ok, and those refused before it): read it on every path, or on a branch a refused call takes, mark it log_only, or drop it", t.Name, name)
		}
	}
	return valid, reads
}

// answer is what calling one tool case after case gave.
type answer struct {
	ran     bool            // the handler ran (ok or refused) on some case
	ok      bool            // and answered ok
	crashed string          // how it crashed, when it did
	invalid string          // the last call its params schema refused
	read    map[string]bool // the arguments the calls that ran read
}

// firstAnswer calls t on its cases until the handler answers ok or
// crashes, and keeps the arguments of its first answered call (of the ok
// one, when there is one) as the base the other probes vary.
func (p *prober) firstAnswer(ctx context.Context, t *contract.Tool) answer {
	a := answer{read: map[string]bool{}}
	for _, b := range p.g.Cases(t, p.bs, probeCases) {
		args, _ := p.g.FillAll(t, b, p.bs)
		r := call(ctx, p.w, t.Name, args)
		if r.Crash {
			a.crashed = fmt.Sprintf("%s crashed on %s: %s", t.Name, js(args), r.Error)
			return a
		}
		if r.Invalid {
			a.invalid = fmt.Sprintf("%s with %s: %s", t.Name, js(args), r.Error)
			continue
		}
		if !a.ran || r.OK {
			p.base[t.Name] = args
		}
		a.ran = true
		// A refused call that read an argument shows the handler reads it
		// (on a branch the ok call may not take: a fee accepted only
		// inside a cancellation window).
		for _, name := range r.ReadArgs {
			a.read[name] = true
		}
		if r.OK {
			a.ok = true
			return a
		}
	}
	return a
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
			// value the schema stops says nothing of the handler, unless
			// the schema lists every value the argument may take (an enum
			// of clinic ids): then no bogus value ever reaches it. A search
			// that changes nothing may answer that it found nothing.
			found := r.OK && !(nothing(r.Result) && !r.Wrote && t.ChangesState != nil && !*t.ChangesState)
			bySchema := r.Invalid && len(t.Enum(a)) > 0
			// The column is named because the argument may have been taken
			// for a record it does not name (a bank account number shaped
			// like an account key): then the fix is the author's x-ref.
			s.check(!found && !r.Crash && (!r.Invalid || bySchema), "%s with a bogus %s (%v), taken to name %s.%s, was %s; if %s names no record, mark it `x-ref: false`", t.Name, a, args[a], tb, col, verdict(r), a)
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
	s := Score{Probe: "unknown-tool-refused", always: true}
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
