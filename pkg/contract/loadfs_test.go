package contract

import (
	"reflect"
	"testing"
	"testing/fstest"
)

// TestLoadFSIsLoad: a contract read back from its own Files (as the ledger
// keeps them) is the same contract, with the same hashes and problems, for a
// good directory and for one with problems.
func TestLoadFSIsLoad(t *testing.T) {
	for _, dir := range []string{"testdata/good", "testdata/bad/many", "../../examples/retail", "../../examples/rides"} {
		c, ps, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		fsys := fstest.MapFS{}
		for p, b := range c.Files {
			fsys[p] = &fstest.MapFile{Data: b}
		}
		got, gps, err := LoadFS(fsys)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if got.SHA256 != c.SHA256 || got.WorldSHA256 != c.WorldSHA256 || got.Dir != "" {
			t.Errorf("%s: hashes %s/%s, want %s/%s (dir %q)", dir, got.SHA256, got.WorldSHA256, c.SHA256, c.WorldSHA256, got.Dir)
		}
		if ps.Error() != gps.Error() {
			t.Errorf("%s: problems differ:\n%s\nvs\n%s", dir, gps, ps)
		}
		got.Dir = c.Dir
		if !reflect.DeepEqual(got, c) {
			t.Errorf("%s: the contract read from its files differs from the directory's", dir)
		}
	}
	if _, _, err := LoadFS(fstest.MapFS{"x": {Data: []byte("y")}}); err != nil {
		t.Fatalf("an FS without a contract is problems, not an error: %v", err)
	}
}
