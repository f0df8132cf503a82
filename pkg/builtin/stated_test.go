package builtin

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/ground"
	"github.com/suitegen/suitegen/pkg/plan"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// doubled is a phrase said twice in a row ("full name X and full name X").
var doubled = regexp.MustCompile(`(\b[a-z_]+(?: [\w"',.-]+){1,5}) and `)

// TestReferencesSendWhatTheCallerStates: on a contract written from the
// docs alone (testdata/contracts/council-line: look-ups by address and
// registration, an outbound call whose purpose record no tool reads, a
// log_only card detail, a caller key every act takes), the first case of
// every bucket hands the caller (or the callee) what the reference's
// calls take from them: every detail a look-up that writes nothing searches
// by (a key aside, which an earlier answer may show), every value an
// outbound reference sends that the record the agent brings does not hold,
// and a log_only argument the act sends; never the caller's own key once an
// identification precedes the act, and no detail twice.
func TestReferencesSendWhatTheCallerStates(t *testing.T) {
	c, probs, err := contract.Load(filepath.Join("..", "..", "testdata", "contracts", "council-line"))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load: %v %v", err, probs)
	}
	ctx := context.Background()
	e, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	pl, err := plan.Derive(ctx, c, probe.Rehearser(e.World), plan.Options{Rules: e.Prover, Mutants: probe.Mutants(e.World, c), Cache: plan.EnvCache(os.Getenv)})
	if err != nil {
		t.Fatal(err)
	}
	p := &policy{c: c, g: ground.New(c), b: brief.Brief{Seed: 7}}
	composed, outbound, logOnly, handoffs := 0, 0, 0, 0
	for _, b := range pl.Buckets {
		var sc scenario.Scenario
		ok := false
		for _, key := range b.Spec.Templates {
			if sc, ok = p.compose(brief.Bucket{Bucket: b}, 0, key); ok {
				break
			}
		}
		if !ok {
			continue
		}
		composed++
		said := sc.Instruction + "\n" + sc.Persona.Opening
		if m := doubled.FindStringSubmatch(said); m != nil && strings.Contains(said, m[0]+m[1]) {
			t.Errorf("%s says %q twice: %s", sc.Name, m[1], sc.Instruction)
		}
		if sc.Expects == scenario.OutcomeAsk {
			continue // who cannot prove who they are is handed less
		}
		// A hand-off says the request: its summary is the case's (it
		// names the caller), not a seed row's about another matter, and
		// its topic is the one the use case's words single out.
		if n := len(sc.Solution); n > 0 && c.Tool(sc.Solution[n-1].Tool).EndsConversation && sc.Outbound == nil {
			h := c.Tool(sc.Solution[n-1].Tool)
			handoffs++
			for name, v := range sc.Solution[n-1].Args {
				if _, _, ref := c.RefOf(h.Name, name); !ref && h.LogOnlyParam(name) && !strings.Contains(ground.Text(v), strings.Fields(sc.Persona.Name)[0]) {
					t.Errorf("%s: hand-off %s %q is not about the case: %s", sc.Name, name, ground.Text(v), sc.Instruction)
				}
				if want := topicOf(h, name, c.UseCase(sc.UseCase).Text); want != "" && ground.Text(v) != want {
					t.Errorf("%s: hand-off %s %q, want %q, the one %q is about", sc.Name, name, ground.Text(v), want, sc.UseCase)
				}
			}
		}
		brought := map[string]bool{}
		if sc.Outbound != nil {
			outbound++
			for _, v := range sc.Outbound.Record {
				brought[ground.Text(v)] = true
			}
		}
		for _, call := range sc.Solution {
			tl := c.Tool(call.Tool)
			for name, v := range call.Args {
				text, isText := v.(string)
				if !isText || text == "" || brought[text] || len(tl.Enum(name)) > 0 || tl.LogOnlyParam(name) {
					continue
				}
				_, _, key := c.RefOf(tl.Name, name)
				lookup := len(c.Writes(tl)) == 0 && !key
				if (lookup || sc.Outbound != nil && sc.Outbound.AnsweredBy == scenario.RightPerson && len(c.Writes(tl)) == 0) && !strings.Contains(said, text) {
					t.Errorf("%s: %s sends %s %q, which nobody states: %s", sc.Name, call.Tool, name, text, sc.Instruction)
				}
			}
		}
		// A key of a record a look-up finds by details alone (a property
		// by its address: the record's row holds every detail) is the
		// look-up's answer to show, not the caller's to be handed.
		// A key some call sent before the look-up is the caller's to give
		// (the builtin hands it, foundByDetails); only one the look-up
		// finds first is not.
		var lookups []scenario.Call
		sent := map[string]bool{}
		for _, call := range sc.Solution {
			tl := c.Tool(call.Tool)
			for name, v := range call.Args {
				table, column, key := c.RefOf(tl.Name, name)
				text, _ := v.(string)
				if !key || text == "" {
					continue
				}
				row := p.g.Find(table, column, text)
				for _, l := range lookups {
					if row != nil && !sent[text] && holdsAll(row, l.Args) && strings.Contains(said, text) {
						t.Errorf("%s: handed %s %s, which %s finds by details the caller gives: %s", sc.Name, name, text, l.Tool, sc.Instruction)
					}
				}
			}
			for _, v := range call.Args {
				if text, ok := v.(string); ok && len(lookups) == 0 {
					sent[text] = true
				}
			}
			if len(c.Writes(tl)) == 0 && !c.Identifies(tl.Name) && len(call.Args) > 0 && detailsOnly(c, call) {
				lookups = append(lookups, call)
			}
		}
		for _, call := range append(append([]scenario.Call{}, sc.Solution...), sc.Tempting...) {
			for _, name := range c.Tool(call.Tool).LogOnly {
				if v, sent := call.Args[name]; sent && sc.Expects == scenario.OutcomeSucceed {
					logOnly++
					if !strings.Contains(said, ground.Text(v)) {
						t.Errorf("%s: %s sends log_only %s %q, which the caller is never given: %s", sc.Name, call.Tool, name, ground.Text(v), sc.Instruction)
					}
				}
			}
		}
		if id := ground.Text(sc.CallerID); sc.CallerID != nil && len(sc.Solution) > 0 && c.Identifies(sc.Solution[0].Tool) && strings.Contains(said, id) {
			t.Errorf("%s: the caller is handed their own key %s, which the identification shows the agent: %s", sc.Name, id, sc.Instruction)
		}
	}
	if composed == 0 || outbound == 0 || logOnly == 0 || handoffs == 0 {
		t.Fatalf("composed %d cases, %d outbound, %d sending a log_only argument, %d handing off: nothing measured", composed, outbound, logOnly, handoffs)
	}
}

// holdsAll reports whether a row holds every value of args in some column.
func holdsAll(row ground.Row, args map[string]any) bool {
	for _, v := range args {
		held := false
		for _, w := range row {
			held = held || ground.Text(w) == ground.Text(v)
		}
		if !held {
			return false
		}
	}
	return true
}

// detailsOnly reports whether a call takes text alone, naming no record.
func detailsOnly(c *contract.Contract, call scenario.Call) bool {
	for name, v := range call.Args {
		if _, _, key := c.RefOf(call.Tool, name); key {
			return false
		}
		if _, isText := v.(string); !isText {
			return false
		}
	}
	return true
}

// topicOf is the one value of an enum argument whose words the use case's
// text has (penalty_charges for "challenge a penalty charge notice"), ""
// when none or several.
func topicOf(h *contract.Tool, name, text string) string {
	text = strings.ToLower(text)
	out := ""
	for _, e := range h.Enum(name) {
		for _, w := range strings.Split(ground.Text(e), "_") {
			if len(w) >= 4 && strings.Contains(text, w[:4]) {
				if out != "" && out != ground.Text(e) {
					return ""
				}
				out = ground.Text(e)
			}
		}
	}
	return out
}
