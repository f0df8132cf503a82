package contract

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// FuzzLoad feeds arbitrary contract.yaml text to Load beside a fixed, valid
// world and Starlark tree: it must never panic, never fail with an error for a
// directory that exists, and every problem must be well formed.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/contract.yaml")
	more, _ := filepath.Glob("testdata/bad/*/contract.yaml")
	for _, p := range append(seeds, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Add("a: &a [*a, *a]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n")
	f.Add("tools:\n  - name: x\n    params: &p {type: object, properties: {a: *p}}\n")
	f.Add("tools: [{name: t, description: d, params: {type: object, $ref: 'file:///etc/passwd'}}]\n")
	f.Add("\tagent: x")
	f.Add("agent: x\n---\nagent: y\n")
	f.Add("tools:\n  - {name: a, description: d, requires: [[b], {tool: b, same: [x]}, c, 3]}\n  - {name: b, description: d, requires: [a]}\n")

	dir := copyDir(f, "testdata/good")
	known := map[string]bool{}
	for _, c := range Codes {
		known[c] = true
	}
	f.Fuzz(func(t *testing.T, yml string) {
		if err := os.WriteFile(filepath.Join(dir, ContractFile), []byte(yml), 0o644); err != nil {
			t.Fatal(err)
		}
		c, ps, err := Load(dir)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		if c == nil {
			t.Fatal("nil contract")
		}
		for _, p := range ps {
			if p.File == "" || p.Line < 0 || !known[p.Code] || p.Message == "" {
				t.Fatalf("malformed problem %+v", p)
			}
		}
		if !sort.SliceIsSorted(ps, func(i, j int) bool {
			if ps[i].File != ps[j].File {
				return ps[i].File < ps[j].File
			}
			if ps[i].Line != ps[j].Line {
				return ps[i].Line < ps[j].Line
			}
			return ps[i].Code < ps[j].Code
		}) {
			t.Fatalf("problems not sorted: %v", ps)
		}
		if len(ps) == 0 && (len(c.Tools) == 0 || c.Agent == "" || len(c.UseCases) == 0) {
			t.Fatalf("no problems but an incomplete contract: %+v", c)
		}
	})
}
