package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/suitegen/suitegen/pkg/contractgen"
)

// TestCallerInferredFromTheIdentityCheck: a contract that names no caller
// gets the table its identity check reads rows from (the requirement most
// tools share), keyed by its primary key, with the checks that take no key
// of it as the tools that name the caller. One that names its caller keeps
// it as written.
func TestCallerInferredFromTheIdentityCheck(t *testing.T) {
	c := mustLoad(t, filepath.Join("..", "..", "testdata", "contracts", "clinic-voice"))
	cl := c.Caller
	if cl == nil || !cl.Inferred || cl.Table != "patients" || cl.Key != "id" ||
		!slices.Equal(cl.From, []string{"verify_patient_identity", "verify_patient_by_phone"}) {
		t.Fatalf("caller %+v, want patients.id inferred from the two identity checks", cl)
	}
	r := mustLoad(t, filepath.Join("..", "..", "examples", "retail"))
	if r.Caller == nil || r.Caller.Inferred || r.Caller.Table != "users" {
		t.Fatalf("retail's own caller was replaced: %+v", r.Caller)
	}
}

// TestUndeclaredParamsAreRead: a check that reads params its file does not
// declare declares them by reading them; float() makes a number.
func TestUndeclaredParamsAreRead(t *testing.T) {
	src := `what = "paid"
params = {"invoice_id": "string"}

def check(world, calls, params):
    amount = params["amount"]
    status = params.get("status", "paid")
    if float(amount) <= 0:
        return "nothing paid on %s" % params["invoice_id"]
    return None
`
	sg, ps := ParseSubGoal("subgoals/paid.star", src)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	want := map[string]string{"invoice_id": "string", "amount": "number", "status": "string"}
	if len(sg.Params) != len(want) {
		t.Fatalf("params %v, want %v", sg.Params, want)
	}
	for k, v := range want {
		if sg.Params[k] != v {
			t.Errorf("param %s: %q, want %q", k, sg.Params[k], v)
		}
	}
}

// foreignSHA256 is the hash of every file of the contracts written outside
// this repository (clinic-voice) or from docs/contract.md alone by authors
// who read nothing else of it (utility-line, pharmacy-line, parcel-line, hotel-desk,
// registrar-line), as they were
// handed over: a user's contract is input, never edited to please the tool.
var foreignSHA256 = map[string]string{
	"clinic-voice":   "1a271c53b3333c5a89781ddf1670b853a0383d24383a04d52fc82da66d6dfc84",
	"utility-line":   "67238a63bf590ee071d51592823312f72389c0a3417a4c227c56671ba74d2ca7",
	"pharmacy-line":  "708c2e45633b651b8db0fcd90e940934f085002f4ca6e59c629dfaa5cbe99e3b",
	"parcel-line":    "0025f681d6b0618452d8515b3339593ef4a0473e312327ef95c786679c7595d2",
	"hotel-desk":     "04851bfa4e84c728ae1cc86e4c3076b6d377030d51d96f0405187c97ff5a58b3",
	"registrar-line": "9a6839531278416e55976ec7fa09ed4fca8bd724757e97deb0bf8500cf564912",
}

// TestForeignContractsUnedited: the copies in testdata are byte-identical to
// what their authors wrote (and, where the originals are at hand beside the
// repository, to them).
func TestForeignContractsUnedited(t *testing.T) {
	for name, want := range foreignSHA256 {
		got := treeSHA256(t, filepath.Join("..", "..", "testdata", "contracts", name))
		if got != want {
			t.Errorf("testdata/contracts/%s was edited: hash %s, want %s", name, got, want)
		}
		orig := filepath.Join("..", "..", "..", "shared", "foreign", name)
		if _, err := os.Stat(orig); err != nil {
			t.Logf("%s: no original beside the repository to compare with", name)
			continue
		}
		if o := treeSHA256(t, orig); o != got {
			t.Errorf("testdata/contracts/%s differs from its original: %s against %s", name, got, o)
		}
	}
}

// treeSHA256 hashes every regular file under dir, by relative path.
func treeSHA256(t *testing.T, dir string) string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(b)
		h.Write([]byte(filepath.ToSlash(rel) + "\x00" + hex.EncodeToString(sum[:]) + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func mustLoad(t *testing.T, dir string) *Contract {
	t.Helper()
	c, ps, err := Load(dir)
	if err != nil || len(ps) > 0 {
		t.Fatalf("load %s: %v %v", dir, err, ps)
	}
	return c
}

// TestCallerOfGeneratedContracts: on generated contracts, whether they name
// their caller or leave it to be inferred, the caller is the table their
// author meant — an identity check handed a last name and a date of birth
// (x-refs to columns that name no record) still finds out whose record it is.
func TestCallerOfGeneratedContracts(t *testing.T) {
	inferred := 0
	for seed := int64(1); seed <= 30; seed++ {
		dir := t.TempDir()
		truth, err := contractgen.Generate(seed, contractgen.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		c := mustLoad(t, dir)
		if c.Caller == nil {
			t.Errorf("seed %d: no caller, want %s", seed, truth.Caller)
			continue
		}
		if got := c.Caller.Table + "." + c.Caller.Key; got != truth.Caller {
			t.Errorf("seed %d: caller %s (inferred %v), want %s", seed, got, c.Caller.Inferred, truth.Caller)
		}
		if c.Caller.Inferred {
			inferred++
		}
	}
	if inferred == 0 {
		t.Fatal("no generated contract left its caller to be inferred: the test tests nothing")
	}
}
