package contractgen_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/suitegen/suitegen/pkg/contract"
	"github.com/suitegen/suitegen/pkg/contractgen"
)

// Every generated contract loads without a problem, and its ground truth
// names what the loaded contract holds.
func TestGeneratedContractsLoad(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) {
			dir := t.TempDir()
			truth, err := contractgen.Generate(seed, contractgen.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			c, probs, err := contract.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(probs) > 0 {
				t.Fatalf("seed %d: problems:\n%v", seed, probs)
			}
			if n := len(c.Tools); n < 10 || n > 25 {
				t.Errorf("%d tools, want 10-25", n)
			}
			if n := len(c.Tables); n < 8 || n > 20 {
				t.Errorf("%d tables, want 8-20", n)
			}
			checkTruth(t, dir, c, truth)
		})
	}
}

func checkTruth(t *testing.T, dir string, c *contract.Contract, truth contractgen.Contract) {
	t.Helper()
	if len(truth.Tools) != len(c.Tools) {
		t.Fatalf("truth has %d tools, the contract %d", len(truth.Tools), len(c.Tools))
	}
	styles := map[string]bool{}
	for _, tt := range truth.Tools {
		ct := c.Tool(tt.Name)
		if ct == nil {
			t.Fatalf("tool %s of the truth is not in the contract", tt.Name)
		}
		switch {
		case strings.Contains(tt.Name, "-"):
			styles["kebab"] = true
		case strings.ToLower(tt.Name) != tt.Name:
			styles["camel"] = true
		default:
			styles["snake"] = true
		}
		if got, want := ct.ParamNames(), len(tt.Args); len(got) != want {
			t.Errorf("%s: %d params, truth %d", tt.Name, len(got), want)
		}
		for _, a := range tt.Args {
			if a.Ref == contractgen.Free {
				continue
			}
			tab, col, ok := strings.Cut(a.Ref, ".")
			if !ok || c.Table(tab) == nil {
				t.Errorf("%s.%s: truth %s is no table", tt.Name, a.Name, a.Ref)
				continue
			}
			if c.Table(tab).Column(col) == nil {
				t.Errorf("%s.%s: truth %s is no column", tt.Name, a.Name, a.Ref)
			}
		}
		src, err := os.ReadFile(filepath.Join(dir, tt.Handler))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		for _, b := range tt.Branches {
			file, ln, _ := strings.Cut(b.At, ":")
			n, _ := strconv.Atoi(ln)
			if file != tt.Handler || n < 1 || n >= len(lines) {
				t.Errorf("branch %s: not a line of %s", b.At, tt.Handler)
				continue
			}
			if !strings.HasPrefix(strings.TrimSpace(lines[n-1]), "if ") || !strings.Contains(lines[n], "refuse(") {
				t.Errorf("branch %s: %q / %q is not an if that refuses", b.At, lines[n-1], lines[n])
			}
		}
	}
	// Use case ids share no word with the names of their tools.
	for _, u := range truth.UseCases {
		if c.UseCase(u.ID) == nil {
			t.Fatalf("use case %s is not in the contract", u.ID)
		}
		for _, tn := range u.Tools {
			for _, w := range words(u.ID) {
				if slicesHas(words(tn), w) {
					t.Errorf("use case %s shares %q with its tool %s", u.ID, w, tn)
				}
			}
		}
	}
	if len(styles) < 2 {
		t.Logf("tool names in one style only: %v", styles)
	}
	var files int
	_ = fs.WalkDir(os.DirFS(dir), "handlers", func(string, fs.DirEntry, error) error { files++; return nil })
	if files-1 != len(truth.Tools) {
		t.Errorf("%d handler files for %d tools", files-1, len(truth.Tools))
	}
}

var wordRE = regexp.MustCompile(`[A-Z]?[a-z0-9]+`)

// words splits a snake, kebab or camel name into lower-case words.
func words(name string) []string {
	ws := wordRE.FindAllString(name, -1)
	for i := range ws {
		ws[i] = strings.ToLower(ws[i])
	}
	return ws
}

func slicesHas(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// The same seed writes the same bytes and the same truth; another seed
// writes another contract.
func TestGenerateDeterministic(t *testing.T) {
	read := func(dir string) map[string]string {
		out := map[string]string{}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, seed := range []int64{3, 42} {
		a, b := t.TempDir(), t.TempDir()
		ta, err := contractgen.Generate(seed, contractgen.Options{Dir: a})
		if err != nil {
			t.Fatal(err)
		}
		tb, err := contractgen.Generate(seed, contractgen.Options{Dir: b})
		if err != nil {
			t.Fatal(err)
		}
		fa, fb := read(a), read(b)
		if len(fa) != len(fb) {
			t.Fatalf("seed %d: %d files, then %d", seed, len(fa), len(fb))
		}
		for k, v := range fa {
			if fb[k] != v {
				t.Errorf("seed %d: %s differs between two runs", seed, k)
			}
		}
		ta.Dir, tb.Dir = "", ""
		if !sameTruth(ta, tb) {
			t.Errorf("seed %d: the ground truth differs between two runs", seed)
		}
	}
	a, b := t.TempDir(), t.TempDir()
	if _, err := contractgen.Generate(1, contractgen.Options{Dir: a}); err != nil {
		t.Fatal(err)
	}
	if _, err := contractgen.Generate(2, contractgen.Options{Dir: b}); err != nil {
		t.Fatal(err)
	}
	if read(a)["contract.yaml"] == read(b)["contract.yaml"] {
		t.Error("seeds 1 and 2 wrote the same contract.yaml")
	}
}

func sameTruth(a, b contractgen.Contract) bool {
	return strings.Join(strings.Fields(fmtTruth(a)), " ") == strings.Join(strings.Fields(fmtTruth(b)), " ")
}

func fmtTruth(c contractgen.Contract) string {
	var b strings.Builder
	b.WriteString(c.Agent + c.Caller + strings.Join(c.Tables, ","))
	for _, t := range c.Tools {
		b.WriteString(" " + t.Name + string(t.Role) + t.Handler)
		for _, a := range t.Args {
			b.WriteString(" " + a.Name + a.Ref + strings.Join(a.Also, ",") + strconv.FormatBool(a.XRef))
		}
		for _, br := range t.Branches {
			b.WriteString(" " + br.At + br.Reason + br.Column)
		}
	}
	for _, u := range c.UseCases {
		b.WriteString(" " + u.ID + u.Act + strings.Join(u.Tools, ","))
	}
	return b.String()
}

func TestGenerateNeedsDir(t *testing.T) {
	if _, err := contractgen.Generate(1, contractgen.Options{}); !errors.Is(err, contractgen.ErrNoDir) {
		t.Fatalf("err = %v, want ErrNoDir", err)
	}
}
