package wire

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/brief"
	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/model"
)

type contracts map[string]*contract.Contract

func (cs contracts) Contract(_ context.Context, sha string) (*contract.Contract, error) {
	if c, ok := cs[sha]; ok {
		return c, nil
	}
	return nil, errors.New("unknown contract")
}

// TestBuiltinFindsContractsItWasNotGiven: the builtin writer a process
// drives finds the contract of any run it is handed through the contracts
// it is wired to (a writer pod's engine cache), not only those it was given.
func TestBuiltinFindsContractsItWasNotGiven(t *testing.T) {
	c, probs, err := contract.Load("../../examples/rides")
	if err != nil || len(probs) > 0 {
		t.Fatal(err, probs)
	}
	m, err := Client(t.Context(), Model{Name: "builtin"}, nil, contracts{c.SHA256: c}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := brief.Brief{Run: "r", Slice: "s", Agent: c.Agent, Contract: c.SHA256, TurnBudget: 6}
	text, err := brief.Render(b)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := m.Complete(t.Context(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: text}}})
	if err != nil || len(resp.Message.ToolCalls) != 1 {
		t.Fatalf("a brief of a contract known only through the wiring: %+v, %v", resp, err)
	}
	b.Contract = strings.Repeat("0", 64)
	if text, err = brief.Render(b); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Complete(t.Context(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: text}}}); err == nil {
		t.Fatal("a brief of an unknown contract was answered")
	}
}

func TestReadPlanFile(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "plan.json")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s, err := ReadPlanFile(write(`[{"use_case":"cancel-trip","angle":"late","count":3,"why":"x"}]`))
	if err != nil || len(s) != 1 || s[0].UseCase != "cancel-trip" || s[0].Count != 3 {
		t.Fatalf("a good plan: %+v, %v", s, err)
	}
	for _, bad := range []string{`{`, `[{"use_case":"","count":1}]`, `[{"use_case":"x","count":0}]`} {
		if _, err := ReadPlanFile(write(bad)); err == nil || !strings.Contains(err.Error(), "--plan") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if _, err := ReadPlanFile(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing plan file was read")
	}
}
