package input_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ration-run/ration/internal/testutil"
)

// TestFilesE2E runs the ration binary in a git checkout: `--files '**/*'`
// lists no path under .git/, and a pattern that matches nothing fails the
// run with exit 255 and names the pattern.
func TestFilesE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ration binary")
	}
	bin, err := testutil.BuildRation(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := t.TempDir()
	if git, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	} else { // what git init makes, enough for the walk
		for _, d := range []string{".git/objects/info", ".git/refs/heads", ".git/hooks"} {
			os.MkdirAll(filepath.Join(repo, d), 0o755)
		}
		os.WriteFile(filepath.Join(repo, ".git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	}
	for _, f := range []string{"main.go", "pkg/util.go", ".gitignore"} {
		os.MkdirAll(filepath.Dir(filepath.Join(repo, f)), 0o755)
		os.WriteFile(filepath.Join(repo, f), []byte("x\n"), 0o644)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = repo
		out, _ := cmd.CombinedOutput()
		return string(out), cmd.ProcessState.ExitCode()
	}
	out, code := run("run", "--dry-run", "--files", "**/*", "echo")
	if code != 0 || strings.Contains(out, ".git") || !strings.Contains(out, "echo main.go") || !strings.Contains(out, "echo pkg/util.go") {
		t.Errorf("--files '**/*' in a git checkout: exit %d\n%s", code, out)
	}
	out, code = run("run", "--dry-run", "--files", "**/*.{rs,java}", "echo")
	if code != 255 || !strings.Contains(out, "--files **/*.{rs,java}: no file matches") {
		t.Errorf("no match: exit %d, want 255\n%s", code, out)
	}
	out, code = run("run", "--dry-run", "--files", "**/*.go", "--files", "**/*.rs", "echo")
	if code != 0 || !strings.Contains(out, "warning: --files **/*.rs: no file matches") || !strings.Contains(out, "echo main.go") {
		t.Errorf("one of two matched nothing: exit %d, want 0 and a warning\n%s", code, out)
	}
}
