package main

import (
	"os"
	"path/filepath"
	"testing"
)

// writeTree writes files (slash-separated path: contents) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCount(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"go.mod": "module example.com/m\n",
		"a/a.go": `package a
type T struct{}
type u struct{}
type G[P any] struct{}
func (T) M() {}
func (*T) N() {}
func (u) M() {}
func (G[P]) M() {}
func (T) m() {}
func F() {}
func f() {}
const C = 1
var V = 2
`,
		// Declared once per OS: counts once.
		"a/os_linux.go":     "package a\nfunc OS() {}\n",
		"a/os_other.go":     "package a\nfunc OS() {}\n",
		"a/a_test.go":       "package a\nfunc Test() {}\n",
		"a/internal/x/x.go": "package x\nfunc X() {}\n",
		"internal/y/y.go":   "package y\nfunc Y() {}\n",
		"cmd/c/main.go":     "package main\nfunc Main() {}\n",
		"tool/main.go":      "package main\nfunc Tool() {}\n",
		"sub/go.mod":        "module example.com/sub\n",
		"sub/s.go":          "package sub\nfunc S() {}\n",
		"b/b.go":            "package b\ntype (\n\tB int\n\tc int\n)\n",
		"b/testdata/t.go":   "package t\nfunc T() {}\n",
	})
	pkgs, err := count(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []pkgCount{
		{Path: "a", Funcs: 2, Types: 2, Methods: 3}, // F, OS; T, G; T.M, T.N, G.M
		{Path: "b", Types: 1},
	}
	if len(pkgs) != len(want) {
		t.Fatalf("count = %+v, want %+v", pkgs, want)
	}
	for i := range want {
		if pkgs[i] != want[i] {
			t.Errorf("package %d = %+v, want %+v", i, pkgs[i], want[i])
		}
	}
}
