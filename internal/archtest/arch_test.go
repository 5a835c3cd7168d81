package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the import path of the module under test.
const module = "github.com/ration-run/ration"

// cliOnly are the packages only the command line uses (and the tests:
// internal/testutil). No library package may depend on them.
var cliOnly = []string{
	"cmd/...",
	"internal/closedpipe", "internal/cmdcheck", "internal/flagvalue",
	"internal/logs", "internal/metrics", "internal/progress",
	"internal/report", "internal/sem", "internal/watchdog",
	"internal/workerexec", "internal/workershell", "internal/testutil",
}

// engine are the internal packages that the library packages (runner,
// runner/worker) are built from.
var engine = []string{
	"internal/adapt", "internal/jobcgroup", "internal/jobtable",
	"internal/memory", "internal/pdeath", "internal/reaper",
	"internal/runhook", "internal/template",
}

// dialect are the packages of GNU parallel's options: they configure the
// engine through internal/runhook, and the engine never depends on them.
var dialect = []string{"internal/gnurun", "internal/gnu", "internal/gnuinput"}

// rule is one import rule: for every package matched by pkgs, its
// dependencies (transitive, test files left out) of this module.
type rule struct {
	why  string   // the rule as the package doc states it
	pkgs []string // module-relative paths; "x/..." is x and all below it
	// stdOnly: the standard library only, no other module either.
	stdOnly bool
	// only, when not nil, are the only module packages it may depend on.
	only []string
	// never are module packages it must not depend on.
	never []string
	// except are packages of pkgs the rule leaves out.
	except []string
}

var rules = []rule{
	{why: "pool imports the standard library only", pkgs: []string{"pool"}, stdOnly: true},
	{why: "event, input and joblog import the standard library only",
		pkgs: []string{"runner/event", "runner/input", "runner/joblog"}, stdOnly: true},
	{why: "cgroup imports no other package of the module", pkgs: []string{"cgroup"}, only: []string{}},
	{why: "limits imports only cgroup and internal/memory (the memory-per-job cap) of the module", pkgs: []string{"limits"}, only: []string{"cgroup", "internal/memory"}},
	{why: "runner never imports the command line's packages, nor runner/worker (internal/workerexec adapts a worker pool to runner)",
		pkgs: []string{"runner"}, never: append([]string{"runner/worker/..."}, cliOnly...)},
	{why: "runner/worker never imports runner nor the command line's packages",
		pkgs: []string{"runner/worker"}, never: append([]string{"runner"}, cliOnly...)},
	{why: "the library's internal packages import neither the engines that use them (runner, runner/worker) nor the command line's packages",
		pkgs: engine, never: append([]string{"runner", "runner/worker"}, cliOnly...)},
	{why: "the engine (runner, runner/worker and their internal packages) never imports GNU parallel's dialect",
		pkgs: append([]string{"runner", "runner/worker"}, engine...), never: dialect},
	{why: "GNU parallel's dialect never imports the command line's packages",
		pkgs: dialect, never: cliOnly},
	{why: "public packages never import the command line's packages",
		pkgs: []string{"..."}, never: cliOnly,
		except: append([]string{"cmd/...", "internal/...", "test/...", "runner/worker/examples/..."}, cliOnly...)},
	{why: "nothing outside cmd/ imports cmd/...", pkgs: []string{"..."}, never: []string{"cmd/..."}, except: []string{"cmd/..."}},
	{why: "a command's package never imports another command's package (they share cmd/ration/internal/cli)",
		pkgs: []string{"cmd/ration/internal/..."}, never: []string{"cmd/ration/internal/...cmd"}},
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath   string
	Dir          string
	Standard     bool
	Deps         []string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	Module       *struct{ Path string }
}

// rel is p's path relative to the module, or "" for another module's.
func (p pkg) rel() string {
	if p.Module == nil || p.Module.Path != module {
		return ""
	}
	if p.ImportPath == module {
		return "."
	}
	return strings.TrimPrefix(p.ImportPath, module+"/")
}

// matches reports whether the module-relative path rel matches pattern:
// "x/..." is x and everything below it, "..." everything, "a/...b" the
// packages below a whose path ends in b, anything else itself.
func matches(pattern, rel string) bool {
	switch {
	case pattern == "...":
		return true
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		return rel == base || strings.HasPrefix(rel, base+"/")
	case strings.Contains(pattern, "/..."):
		base, suffix, _ := strings.Cut(pattern, "/...")
		return strings.HasPrefix(rel, base+"/") && strings.HasSuffix(rel, suffix)
	}
	return rel == pattern
}

func matchesAny(patterns []string, rel string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, rel) })
}

// list runs go list -deps -json over the module's packages.
func list(t *testing.T) map[string]pkg {
	t.Helper()
	// go test puts its own go first on the test's PATH.
	cmd := exec.Command("go", "list", "-e", "-deps", "-json", "./...")
	cmd.Dir = filepath.Join("..", "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	return pkgs
}

// violations returns what the packages in pkgs break of r, one line each.
func violations(r rule, pkgs map[string]pkg) []string {
	var out []string
	for _, p := range pkgs {
		rel := p.rel()
		if rel == "" || !matchesAny(r.pkgs, rel) || matchesAny(r.except, rel) {
			continue
		}
		for _, d := range p.Deps {
			dp, ok := pkgs[d]
			if !ok || dp.Standard {
				continue
			}
			drel := dp.rel()
			var bad bool
			switch {
			case r.stdOnly:
				bad = true
			case drel == "":
				continue // another module, allowed unless stdOnly
			case r.only != nil && !matchesAny(r.only, drel):
				bad = true
			case matchesAny(r.never, drel):
				bad = true
			}
			if bad {
				out = append(out, fmt.Sprintf("%s depends on %s: %s", rel, d, r.why))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestImportRules checks every rule against the module as it is.
func TestImportRules(t *testing.T) {
	pkgs := list(t)
	for _, r := range rules {
		for _, v := range violations(r, pkgs) {
			t.Error(v)
		}
	}
}

// TestRulesCanFail: each kind of rule catches a forbidden dependency.
func TestRulesCanFail(t *testing.T) {
	mod := &struct{ Path string }{module}
	pkgs := map[string]pkg{
		module + "/pool":                     {ImportPath: module + "/pool", Module: mod, Deps: []string{"golang.org/x/sys/unix"}},
		"golang.org/x/sys/unix":              {ImportPath: "golang.org/x/sys/unix", Module: &struct{ Path string }{"golang.org/x/sys"}},
		module + "/limits":                   {ImportPath: module + "/limits", Module: mod, Deps: []string{module + "/cgroup", module + "/runner/event"}},
		module + "/cgroup":                   {ImportPath: module + "/cgroup", Module: mod},
		module + "/runner/event":             {ImportPath: module + "/runner/event", Module: mod},
		module + "/runner":                   {ImportPath: module + "/runner", Module: mod, Deps: []string{module + "/internal/logs"}},
		module + "/internal/logs":            {ImportPath: module + "/internal/logs", Module: mod},
		module + "/internal/memory":          {ImportPath: module + "/internal/memory", Module: mod, Deps: []string{module + "/runner"}},
		module + "/cmd/ration/internal/acmd": {ImportPath: module + "/cmd/ration/internal/acmd", Module: mod, Deps: []string{module + "/cmd/ration/internal/bcmd"}},
		module + "/cmd/ration/internal/bcmd": {ImportPath: module + "/cmd/ration/internal/bcmd", Module: mod},
	}
	var got []string
	for _, r := range rules {
		got = append(got, violations(r, pkgs)...)
	}
	for _, want := range []string{
		"pool depends on golang.org/x/sys/unix",
		"limits depends on " + module + "/runner/event",
		"runner depends on " + module + "/internal/logs",
		"internal/memory depends on " + module + "/runner",
		"cmd/ration/internal/acmd depends on " + module + "/cmd/ration/internal/bcmd",
	} {
		if !slices.ContainsFunc(got, func(v string) bool { return strings.HasPrefix(v, want+":") }) {
			t.Errorf("no violation %q among %q", want, got)
		}
	}
}

// TestPackageDocsStateImports: every package of the module has a doc
// comment that says what it owns and what it imports (or must not).
func TestPackageDocsStateImports(t *testing.T) {
	for _, p := range list(t) {
		rel := p.rel()
		if rel == "" {
			continue
		}
		files := slices.Concat(p.GoFiles, p.CgoFiles)
		if len(files) == 0 {
			files = slices.Concat(p.TestGoFiles, p.XTestGoFiles)
		}
		var doc strings.Builder
		fset := token.NewFileSet()
		for _, f := range files {
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if af.Doc != nil {
				doc.WriteString(af.Doc.Text())
			}
		}
		switch d := doc.String(); {
		case d == "":
			t.Errorf("%s: no package doc", rel)
		case !strings.Contains(d, "import"):
			t.Errorf("%s: its package doc does not say what it imports or must not import", rel)
		}
	}
}
