package main

import (
	"cmp"
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

// pkgCount is one public package's exported identifiers.
type pkgCount struct {
	Path  string // the directory, relative to the module root, slash-separated
	Funcs int    // top-level exported functions
	Types int    // exported types
	// Methods are the exported methods of exported types.
	Methods int
}

// Total is the package's exported functions, methods and types.
func (p pkgCount) Total() int { return p.Funcs + p.Types + p.Methods }

// private reports whether the directory rel (slash-separated, relative to
// the module root) is outside the public API: internal/, cmd/, examples,
// testdata, the test harnesses under test/ (they export nothing an
// embedder imports), and anything hidden or starting with _.
func private(rel string) bool {
	if rel == "test" || strings.HasPrefix(rel, "test/") {
		return true
	}
	for _, part := range strings.Split(rel, "/") {
		switch {
		case part == "internal", part == "cmd", part == "testdata",
			part == "examples", part == "example",
			strings.HasPrefix(part, "."), strings.HasPrefix(part, "_"):
			return true
		}
	}
	return false
}

// count walks the module rooted at root (the directory of its go.mod) and
// counts the exported identifiers of every public package, skipping
// nested modules. An identifier declared in several files (one per OS,
// by build constraint) counts once.
func count(root string) ([]pkgCount, error) {
	var pkgs []pkgCount
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." {
			if private(rel) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		p, ok, err := countDir(path)
		if err != nil || !ok {
			return err
		}
		if rel == "." {
			rel = ""
		}
		p.Path = rel
		pkgs = append(pkgs, p)
		return nil
	})
	slices.SortFunc(pkgs, func(a, b pkgCount) int { return cmp.Compare(a.Path, b.Path) })
	return pkgs, err
}

// countDir counts the exported identifiers of the non-test Go files in
// dir; ok is false when it has none, or they make a package main.
func countDir(dir string) (p pkgCount, ok bool, err error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return p, false, err
	}
	types, funcs, methods := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return p, false, err
		}
		if f.Name.Name == "main" {
			return p, false, nil
		}
		ok = true
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, isType := s.(*ast.TypeSpec); isType && ts.Name.IsExported() {
						types[ts.Name.Name] = true
					}
				}
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					funcs[d.Name.Name] = true
					continue
				}
				if recv := receiverType(d.Recv.List[0].Type); ast.IsExported(recv) {
					methods[recv+"."+d.Name.Name] = true
				}
			}
		}
	}
	return pkgCount{Funcs: len(funcs), Types: len(types), Methods: len(methods)}, ok, nil
}

// receiverType is the name of a method's receiver type: T of T, *T, T[P]
// and *T[P].
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return fmt.Sprint(t)
		}
	}
}
