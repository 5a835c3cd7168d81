package memory

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestImports holds the package to what its documentation says it may
// import: the standard library, x/sys/unix and package cgroup. Every
// other package of ration that knows memory calls this one, so an import
// of any of them would be a cycle or a rule living in two places.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"github.com/ration-run/ration/cgroup", "golang.org/x/sys/unix"}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			std := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
			if !std && !slices.Contains(allowed, path) {
				t.Errorf("%s imports %s: package memory imports the standard library and %s only", name, path, strings.Join(allowed, ", "))
			}
		}
	}
}
