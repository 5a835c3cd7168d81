// Command cgtests lists the tests of a repository that use a real cgroup,
// so that the v2 lane compiles and runs exactly those, wherever their
// packages move.
//
// A test uses a real cgroup when its function, or a function or method
// of its package's test files that it names (transitively), does one of:
// calls ChildCgroup, ChildCgroupOf, MemoryCgroup or DelegateCgroups (the
// helpers of internal/testutil); reads the live hierarchy through an
// empty Reader{} literal (package cgroup's reader of the running
// process); or mentions the literal "/proc/self/cgroup" or
// "cgroup.subtree_control" (tests that manage a v2 cgroup by hand, such as
// charts'). Fixture tests, which name a Root, are left out.
//
// Usage:
//
//	cgtests [DIR]
//
// walks DIR (default .) and prints one line per package with such tests:
// the module's directory (relative to DIR), the package's directory relative to it, and an
// anchored -test.run pattern naming the tests, separated by tabs.
//
// It imports the standard library only.
package main

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

var helpers = []string{"ChildCgroup", "ChildCgroupOf", "MemoryCgroup", "DelegateCgroups"}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	if err := run(root); err != nil {
		fmt.Fprintln(os.Stderr, "cgtests:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	dirs := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", ".git", "bin", "devbin", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range dirs {
			if !yield(k) {
				return
			}
		}
	})
	for _, dir := range keys {
		tests, err := realTests(dir)
		if err != nil {
			return err
		}
		if len(tests) == 0 {
			continue
		}
		mod, rel, err := module(dir)
		if err != nil {
			return err
		}
		if mod, err = relTo(root, mod); err != nil {
			return err
		}
		fmt.Printf("%s\t%s\t^(%s)$\n", mod, rel, strings.Join(tests, "|"))
	}
	return nil
}

// relTo returns dir relative to root.
func relTo(root, dir string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	return filepath.Rel(abs, dir)
}

// module returns the directory of the module holding dir and dir
// relative to it.
func module(dir string) (mod, rel string, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	for m := abs; ; m = filepath.Dir(m) {
		if _, err := os.Stat(filepath.Join(m, "go.mod")); err == nil {
			rel, err := filepath.Rel(m, abs)
			return m, rel, err
		}
		if filepath.Dir(m) == m {
			return "", "", fmt.Errorf("%s: no go.mod above it", dir)
		}
	}
}

// realTests returns the names of dir's top-level tests that reach a
// real cgroup, in source order.
func realTests(dir string) ([]string, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	uses := map[string]map[string]bool{} // function or method name -> names it mentions
	real := map[string]bool{}
	var tests []string
	for _, name := range names {
		// Files that build tags leave out of `go test` are left out here.
		if ok, err := build.Default.MatchFile(dir, filepath.Base(name)); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fd.Name.Name
			if uses[n] == nil {
				uses[n] = map[string]bool{}
			}
			if marks(fd.Body, uses[n]) {
				real[n] = true
			}
			if fd.Recv == nil && strings.HasPrefix(n, "Test") && n != "TestMain" {
				tests = append(tests, n)
			}
		}
	}
	// Propagate until nothing changes: the call graph is small.
	for changed := true; changed; {
		changed = false
		for f, mentioned := range uses {
			if real[f] {
				continue
			}
			for m := range mentioned {
				if real[m] {
					real[f], changed = true, true
					break
				}
			}
		}
	}
	var out []string
	for _, t := range tests {
		if real[t] {
			out = append(out, t)
		}
	}
	return out, nil
}

// marks records in mentioned every identifier body names and reports
// whether body itself touches a real cgroup.
func marks(body *ast.BlockStmt, mentioned map[string]bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			mentioned[n.Name] = true
			if slices.Contains(helpers, n.Name) {
				found = true
			}
		case *ast.CompositeLit:
			if len(n.Elts) == 0 && typeName(n.Type) == "Reader" {
				found = true
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				s, err := strconv.Unquote(n.Value)
				if err == nil && (s == "/proc/self/cgroup" || strings.Contains(s, "cgroup.subtree_control")) {
					found = true
				}
			}
		}
		return true
	})
	return found
}

func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}
