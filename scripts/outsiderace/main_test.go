package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMarked: a test calling testenv.OutsideRace, at its top or in a
// subtest, is listed with its package; one calling another OutsideRace, or
// none, is not.
func TestMarked(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/a_test.go", `package a
import ("testing"; "x/testenv")
func TestTop(t *testing.T) { testenv.OutsideRace(t, "why") }
func TestSub(t *testing.T) { t.Run("s", func(t *testing.T) { testenv.OutsideRace(t, "why") }) }
func TestOther(t *testing.T) { other.OutsideRace(t, "why") }
func TestPlain(t *testing.T) {}
`)
	write("b/b_test.go", "package b\nimport \"testing\"\nfunc TestB(t *testing.T) {}\n")
	write("a/testdata/c_test.go", "package c\nfunc TestHidden(t *testing.T) { testenv.OutsideRace(t, \"\") }\n")
	tests, pkgs, err := marked(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"TestSub", "TestTop"}; !slices.Equal(tests, want) {
		t.Errorf("tests %v, want %v", tests, want)
	}
	if want := []string{"./a"}; !slices.Equal(pkgs, want) {
		t.Errorf("packages %v, want %v", pkgs, want)
	}
}
