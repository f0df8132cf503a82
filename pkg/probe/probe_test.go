package probe

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func run(t *testing.T, name string) Report {
	t.Helper()
	c, probs, err := contract.Load(filepath.Join("..", "..", "testdata", "contracts", name))
	if err != nil || len(probs) > 0 {
		t.Fatalf("load %s: %v %v", name, err, probs)
	}
	e, err := engine.Open(context.Background(), testenv.Postgres(t), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	rep, err := Run(context.Background(), c, e.World)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func score(rep Report, probe string) Score {
	for _, s := range rep.Scores {
		if s.Probe == probe {
			return s
		}
	}
	return Score{}
}

// TestProbesHoldOnASoundWorld: arguments named unlike their columns, with
// patterns a guess would break, read through a helper: no probe fails for
// want of grounding (no "never reads" from calls the schema refused, no
// "no arguments could be filled").
func TestProbesHoldOnASoundWorld(t *testing.T) {
	rep := run(t, "guardian-line")
	for _, s := range rep.Scores {
		if !s.Held() {
			t.Errorf("probe %s: %v", s.Probe, s.Failures)
		}
	}
	if s := score(rep, "handler-reads-every-argument"); s.Total < 9 {
		t.Errorf("reads checked on %d arguments: the tools were not answered", s.Total)
	}
	if len(rep.Grounding.Unanswered) > 0 {
		t.Errorf("tools never answered ok: %v", rep.Grounding.Unanswered)
	}
	// The probes that have something to check on any contract are marked so.
	for _, name := range []string{"valid-call-answered", "unknown-tool-refused"} {
		if s := score(rep, name); !s.always || s.Total == 0 {
			t.Errorf("%s: always %v, %d checked", name, s.always, s.Total)
		}
	}
}

// TestProbesFindFaults: each fault of the faulty world is reported, and
// nothing else.
func TestProbesFindFaults(t *testing.T) {
	rep := run(t, "probe-faults")
	want := map[string]string{
		"valid-call-answered":          "crashes crashed on",
		"bogus-id-refused":             "accepts_anything with a bogus account_ref",
		"handler-reads-every-argument": `ignores_note never reads argument "note"`,
	}
	for _, s := range rep.Scores {
		w, faulty := want[s.Probe]
		if !faulty {
			if !s.Held() {
				t.Errorf("probe %s failed on a sound part: %v", s.Probe, s.Failures)
			}
			continue
		}
		if len(s.Failures) != 1 || !strings.Contains(s.Failures[0], w) {
			t.Errorf("probe %s: failures %q, want one saying %q", s.Probe, s.Failures, w)
		}
	}
	// look_up's arguments are named unlike the columns they take.
	for param, ref := range map[string]string{"account_ref": "accounts.account_no", "holder_birth_date": "accounts.born"} {
		b, _ := rep.Grounding.Bindings.Of("look_up", param)
		if b.Ref() != ref || !b.Confirmed {
			t.Errorf("look_up.%s bound %+v, want %s confirmed", param, b, ref)
		}
	}
}

// TestNothingCheckedIsUnscored: a probe that checked nothing proves
// nothing, so it is unscored, never a perfect score; it holds only when it
// need not check anything on every contract, and a report with one that
// should have checked something is not OK.
func TestNothingCheckedIsUnscored(t *testing.T) {
	optional := Score{Probe: "enum-values-exist"}
	if v, scored := optional.Value(); scored || v == 1 {
		t.Fatalf("nothing checked: value %v, scored %v; want unscored", v, scored)
	}
	if !optional.Held() || !(Report{Scores: []Score{optional}}).OK() {
		t.Fatal("an optional probe with nothing to check failed the report")
	}
	for _, name := range []string{"valid-call-answered", "unknown-tool-refused"} {
		s := Score{Probe: name, always: true}
		if s.Held() || (Report{Scores: []Score{optional, s}}).OK() {
			t.Fatalf("%s checked nothing and the report held", name)
		}
	}
	half := Score{Probe: "bogus-id-refused", Passed: 1, Total: 2}
	if v, scored := half.Value(); !scored || v != 0.5 || half.Held() {
		t.Fatalf("1/2: value %v, scored %v, held %v", v, scored, half.Held())
	}
	full := Score{Probe: "valid-call-answered", Passed: 3, Total: 3, always: true}
	if v, scored := full.Value(); !scored || v != 1 || !full.Held() || !(Report{Scores: []Score{full, optional}}).OK() {
		t.Fatalf("3/3: value %v, scored %v, held %v", v, scored, full.Held())
	}
}
