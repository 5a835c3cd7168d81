//go:build linux

package runcmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// closedPipe returns the write end of a pipe whose reader is gone, as
// after `| head` read its lines.
func closedPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// TestClosedPipeE2E: every command of ration exits 141 when its standard
// output was closed by its reader, as `ration run` does and as a shell
// reports a program killed by SIGPIPE: `ration report jl | head` exited
// 255, `ration limits | true` and the help 0.
func TestClosedPipeE2E(t *testing.T) {
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	if r := (rcmd{dir: dir, args: []string{"run", "-q", "--joblog", jl, "true", ":::", "a", "b"}}).run(t); r.code != 0 {
		t.Fatalf("the joblog's run: exit %d: %s", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"report", jl},
		{"report", "--format", "svg", jl},
		{"limits"},
		{"limits", "--json"},
		{"--help"},
		{"help"},
		{"help", "run"},
		{"version"},
		{"run", "--help"},
		{"run", "--version"},
		{"report", "--help"},
		{"sem", "--help"},
		{"sem", "--fg", "--id", "closedpipe-" + filepath.Base(dir), "echo", "hi"},
		{"run", "--dry-run", "echo", ":::", "a"},
		{"run", "echo", ":::", "a"},
	} {
		r := rcmd{dir: dir, stdout: closedPipe(t), args: args}.run(t)
		if r.code != 141 {
			t.Errorf("%q: exit %d, want 141\n%s", args, r.code, r.stderr)
		}
	}
}

// TestQuietDryRunE2E: -q prints errors only, nothing after a broken pipe
// (it printed the notice and the resume hint), no notice or hint after an
// interrupt; --dry-run prints the commands only, no summary ("ration: 2
// done, ..." although nothing ran).
func TestQuietDryRunE2E(t *testing.T) {
	dir := t.TempDir()
	r := rcmd{dir: dir, stdout: closedPipe(t), args: []string{"run", "-q", "-j", "1", "seq", "1", "100000", ":::", "1", "2", "3"}}.run(t)
	if r.code != 141 || r.stderr != "" {
		t.Errorf("-q after a broken pipe: exit %d, stderr %q; want 141 and nothing", r.code, r.stderr)
	}
	started := filepath.Join(dir, "started")
	cmd, out, errb := rcmd{dir: dir, args: []string{"run", "-q", "--term-timeout", "100ms", "--shell", "echo >> " + started + "; exec sleep 30", ":::", "1", "2"}}.start(t)
	testutil.Eventually(t, 20*time.Second, "the jobs started", func() bool {
		b, _ := os.ReadFile(started)
		return len(b) == 2
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The answer to the signal stays (it says that a second one kills the
	// jobs); the interruption notice and the resume hint after it go.
	if r := waitRation(t, cmd, out, errb, 30*time.Second); r.code != 130 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "got SIGINT") {
		t.Errorf("-q after SIGINT: exit %d, stderr %q; want 130 and the one line that answers the signal", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"run", "--dry-run", "echo", ":::", "a", "b"},
		{"run", "--dry-run", "--log-format", "json", "echo", ":::", "a", "b"},
		{"run", "--dry-run", "--bar", "echo", ":::", "a", "b"},
	} {
		r := rcmd{dir: dir, args: args}.run(t)
		if r.code != 0 || r.stdout != "echo a\necho b\n" || strings.Contains(r.stderr, "done") || strings.Contains(r.stderr, "summary") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0, the commands and no summary", args, r.code, r.stdout, r.stderr)
		}
	}
}
