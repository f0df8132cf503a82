package prove_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/engine"
	"github.com/suitegen/suitegen/pkg/prove"
	"github.com/suitegen/suitegen/pkg/scenario"
	"github.com/suitegen/suitegen/pkg/testenv"
)

// The adversary corpus (testdata/adversary) holds scenarios written to get
// something kept that does not mean what it says: checks that cannot fail in
// disguise, refusals the world would not make, acts that change nothing,
// asks with nothing to ask, text aimed at the agent or the grader, setups
// that reach past the case. Each file is a plain scenario.json (suitegen
// prove DIR FILE proves it); corpus.json says which contract it is for, the
// class of attack, and the verdict it must get: "kept" (an attack that is
// not a defect: the scenario means what it says) or the gate/code of the
// first refusal. A change to the gates that lets an attack through, or that
// refuses it for another reason, fails here.

type attack struct {
	Contract string `json:"contract"`
	File     string `json:"file"`
	Class    string `json:"class"`
	Want     string `json:"want"`
	Why      string `json:"why"`
}

const adversaryDir = "testdata/adversary"

func loadCorpus(t *testing.T) []attack {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(adversaryDir, "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	var corpus []attack
	if err := json.Unmarshal(raw, &corpus); err != nil {
		t.Fatalf("corpus.json: %v", err)
	}
	return corpus
}

// contractDir is a contract of testdata when there is one of that name, else
// an example.
func contractDir(name string) string {
	if fileExists(filepath.Join("testdata", name, "contract.yaml")) {
		return filepath.Join("testdata", name)
	}
	// A contract written outside the repository is kept as its author wrote it.
	if foreign := filepath.Join("..", "..", "testdata", "contracts", name); fileExists(filepath.Join(foreign, "contract.yaml")) {
		return foreign
	}
	return filepath.Join("..", "..", "examples", name)
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// TestAdversaryCorpusComplete: every attack file is in corpus.json once, and
// every entry names a file, a class, a reason and a verdict a gate can give.
func TestAdversaryCorpusComplete(t *testing.T) {
	corpus := loadCorpus(t)
	listed := map[string]bool{}
	codes := map[string]bool{"kept": true}
	for _, gc := range prove.Codes {
		codes[string(gc.Gate)+"/"+string(gc.Code)] = true
	}
	for _, a := range corpus {
		path := filepath.Join(a.Contract, a.File)
		if listed[path] {
			t.Errorf("%s is listed twice", path)
		}
		listed[path] = true
		if a.Class == "" || a.Why == "" {
			t.Errorf("%s: an attack needs its class and why", path)
		}
		if !codes[a.Want] {
			t.Errorf("%s: want %q is neither kept nor a gate/code", path, a.Want)
		}
		if _, err := os.Stat(filepath.Join(adversaryDir, path)); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(adversaryDir, "*", "*.json"))
	for _, f := range files {
		rel, _ := filepath.Rel(adversaryDir, f)
		if !listed[rel] {
			t.Errorf("%s is not in corpus.json", rel)
		}
	}
}

// manyProofs is why the tests that prove the whole corpus or every mutant
// of whole suites run in make test's pass without the race detector
// (testenv.OutsideRace): the race pass proves a fixture of every gate code
// (TestEveryCodeHasAFixture) through the same prover.
const manyProofs = "hundreds of proofs one after another; the race pass proves a fixture of every gate code"

// TestAdversaryCorpus proves every attack and asserts its verdict.
func TestAdversaryCorpus(t *testing.T) {
	testenv.OutsideRace(t, manyProofs)
	corpus := loadCorpus(t)
	byContract := map[string][]attack{}
	for _, a := range corpus {
		byContract[a.Contract] = append(byContract[a.Contract], a)
	}
	names := make([]string, 0, len(byContract))
	for n := range byContract {
		names = append(names, n)
	}
	sort.Strings(names)
	ctx := context.Background()
	pool := testenv.Postgres(t)
	for _, name := range names {
		c, err := contract.LoadValid(contractDir(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e, err := engine.Open(ctx, pool, c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer e.Close()
		for _, a := range byContract[name] {
			t.Run(name+"/"+strings.TrimSuffix(a.File, ".json"), func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join(adversaryDir, a.Contract, a.File))
				if err != nil {
					t.Fatal(err)
				}
				sc, err := scenario.Decode(raw)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				v, err := e.Prover.Prove(ctx, sc)
				if err != nil {
					t.Fatal(err)
				}
				got := "kept"
				if !v.Kept {
					got = string(v.Refusals[0].Gate) + "/" + string(v.Refusals[0].Code)
				}
				if got != a.Want {
					var rs []string
					for _, r := range v.Refusals {
						rs = append(rs, r.String())
					}
					t.Errorf("%s (%s): got %s, want %s\n  attack: %s\n  refusals: %s", a.File, a.Class, got, a.Want, a.Why, strings.Join(rs, "; "))
				}
				if !v.Kept && !slices.ContainsFunc(prove.Codes, func(gc prove.GateCode) bool { return gc.Gate == v.Refusals[0].Gate && gc.Code == v.Refusals[0].Code }) {
					t.Errorf("%s: refused with %s/%s, which prove.Codes does not list", a.File, v.Refusals[0].Gate, v.Refusals[0].Code)
				}
			})
		}
	}
}
