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
		if s.Value() < 1 {
			t.Errorf("probe %s: %v", s.Probe, s.Failures)
		}
	}
	if s := score(rep, "handler-reads-every-argument"); s.Total < 9 {
		t.Errorf("reads checked on %d arguments: the tools were not answered", s.Total)
	}
	if len(rep.Grounding.Unanswered) > 0 {
		t.Errorf("tools never answered ok: %v", rep.Grounding.Unanswered)
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
			if s.Value() < 1 {
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
