// Command outsiderace prints the go test arguments of make test's pass
// without the race detector: a -run pattern naming every top-level test
// that calls testenv.OutsideRace, and the packages that hold them. It reads
// the source, so a test marked is a test run.
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	tests, pkgs, err := marked(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "outsiderace:", err)
		os.Exit(1)
	}
	if len(tests) == 0 {
		fmt.Fprintln(os.Stderr, "outsiderace: no test calls testenv.OutsideRace")
		os.Exit(1)
	}
	fmt.Printf("-run ^(%s)$ %s\n", strings.Join(tests, "|"), strings.Join(pkgs, " "))
}

// marked walks the module under root for _test.go files and returns the
// names of the Test functions whose body calls testenv.OutsideRace, and the
// directories that hold them (./ and their path from root), both sorted.
func marked(root string) (tests, pkgs []string, err error) {
	fset := token.NewFileSet()
	seenTest, seenPkg := map[string]bool{}, map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "bin" || name == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || !calls(fn.Body) {
				continue
			}
			if !seenTest[fn.Name.Name] {
				seenTest[fn.Name.Name] = true
				tests = append(tests, fn.Name.Name)
			}
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if dir := "./" + filepath.ToSlash(rel); !seenPkg[dir] {
				seenPkg[dir] = true
				pkgs = append(pkgs, dir)
			}
		}
		return nil
	})
	slices.Sort(tests)
	slices.Sort(pkgs)
	return tests, pkgs, err
}

// calls reports whether body calls testenv.OutsideRace anywhere.
func calls(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "OutsideRace" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "testenv" {
					found = true
				}
			}
		}
		return !found
	})
	return found
}
