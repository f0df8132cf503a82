package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/probe"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// TestPlanSurvivesRenaming: an example contract whose every tool, argument,
// table and column is renamed to an opaque name (tNN, tbNN, nNN) is planned
// as the contract itself: the same arguments bound to the same columns, the
// same use cases planned, and the same buckets (use case, angle, outcome,
// overlay, kind, axes, acting tool, chain, lookups, hand-off, templates,
// rules), read back through the renaming. The plan must hold on what the
// tools do to the world, not on what they are called.
func TestPlanSurvivesRenaming(t *testing.T) {
	testenv.OutsideRace(t, wholePlans)
	for _, name := range []string{"retail", "airline"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "..", "examples", name)
			files, r := renameContract(t, dir)
			orig, probs, err := contract.Load(dir)
			if err != nil || len(probs) > 0 {
				t.Fatalf("load: %v %v", err, probs)
			}
			ren, probs, err := contract.LoadFS(files)
			if err != nil || len(probs) > 0 {
				t.Fatalf("load renamed: %v %v", err, probs)
			}
			want, wantRules := planLines(t, orig, nil)
			got, gotRules := planLines(t, ren, r.back())
			if d := lineDiff(want, got); d != "" {
				t.Errorf("the renamed contract plans otherwise (- the contract, + renamed, names read back):\n%s", d)
			}
			// Which hard rules a bucket tests is still read from the words
			// rules share with tool names: not asserted, only counted.
			if d := lineDiff(wantRules, gotRules); d != "" {
				t.Logf("rules assigned otherwise (rule text is matched to tool names' words):\n%s", d)
			}
		})
	}
}

// planLines derives a plan and prints what it decided, one line per
// binding, gap and bucket, with every opaque name read back through back;
// and apart, one line per bucket of the rules it tests.
func planLines(t *testing.T, c *contract.Contract, back map[string]string) (lines, rules []string) {
	t.Helper()
	ctx := context.Background()
	e, err := engine.Open(ctx, testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	p, err := Derive(ctx, c, probe.Rehearser(e.World), Options{Rules: e.Prover})
	if err != nil {
		t.Fatal(err)
	}
	un := func(s string) string {
		if back == nil {
			return s
		}
		return identRE.ReplaceAllStringFunc(s, func(w string) string {
			if v, ok := back[w]; ok {
				return v
			}
			return w
		})
	}
	// An angle writes a column's name with spaces: read back, an opaque
	// column comes back with its underscores.
	angleOf := func(s string) string {
		return strings.ReplaceAll(un(s), "_", " ")
	}
	var out []string
	for _, b := range p.Bindings {
		out = append(out, un(fmt.Sprintf("binding %s.%s -> %s %s", b.Tool, b.Param, b.Ref(), b.Found())))
	}
	for _, g := range p.Gaps {
		out = append(out, un("gap "+g.UseCase+": "+g.Reason))
	}
	for _, g := range p.RefusalsOnly {
		out = append(out, un("refusals only "+g.UseCase+": "+g.Reason))
	}
	for _, b := range p.Buckets {
		var axes []string
		for k, v := range b.Axes {
			axes = append(axes, k+"="+v)
		}
		sort.Strings(axes)
		s := b.Spec
		out = append(out, un(fmt.Sprintf("bucket %s angle=%s outcome=%s overlay=%s kind=%s axes=%v want=%d tool=%s then=%s tools=%v gated=%v lookups=%v handoff=%s target=%s.%s=%s templates=%v answer=%s",
			b.UseCase, angleOf(b.Angle), b.Outcome, b.Overlay, b.Kind, axes, b.Want, s.Tool, s.Then, s.Tools, s.Gated, s.Lookups, s.Handoff, s.Table, s.Column, s.Level, s.Templates, s.Answer)))
		rules = append(rules, un(fmt.Sprintf("rules %s %s: %v", b.UseCase, angleOf(b.Angle), s.Rules)))
	}
	sort.Strings(out)
	sort.Strings(rules)
	return out, rules
}

var identRE = regexp.MustCompile(`[A-Za-z0-9_]+`)

// lineDiff lists the lines only one side has, at most 40 of them.
func lineDiff(want, got []string) string {
	var d []string
	for _, w := range want {
		if i := slices.Index(got, w); i >= 0 {
			got = slices.Delete(got, i, i+1)
			continue
		}
		d = append(d, "- "+w)
	}
	for _, g := range got {
		d = append(d, "+ "+g)
	}
	sort.SliceStable(d, func(i, j int) bool { return d[i][2:] < d[j][2:] })
	if len(d) > 16 {
		d = append(d[:16], fmt.Sprintf("... and %d more", len(d)-16))
	}
	return strings.Join(d, "\n")
}

// TestLessonsKeptApartByOptions: what one derivation learnt is read back
// only by a derivation with the same options. A lesson learnt with the
// mutants (templates dealt teeth first) read by one without them made the
// same contract plan by which test of the process derived first.
func TestLessonsKeptApartByOptions(t *testing.T) {
	c := &contract.Contract{SHA256: "lessons-" + t.Name()}
	with, without := lessonsOf(c, 8, true, true), lessonsOf(c, 8, true, false)
	if with == without || lessonsOf(c, 8, true, true) != with || lessonsOf(c, 8, false, false) == without {
		t.Fatal("lessons are shared across options")
	}
}
