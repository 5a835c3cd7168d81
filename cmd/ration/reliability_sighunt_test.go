//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// TestReliabInterruptKeepsRetries: a job whose first attempt fails after
// SIGTERM, with --retries left, was recorded as failed, so the --resume
// that ration prints skipped it: the interrupt cost it its retries. It is
// not done: unrecorded, --resume runs it again (here it then succeeds).
func TestReliabInterruptKeepsRetries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jl := filepath.Join(dir, "jl")
	// The first attempt marks itself, waits for "go" and fails; a later
	// attempt succeeds.
	script := `if [ -e "$1.tried" ]; then echo ok; exit 0; fi; : > "$1.tried"; while [ ! -e go ]; do sleep 0.01; done; exit 3`
	args := func(resume bool) []string {
		a := []string{"run", "-j", "1", "--retries", "3", "--joblog", jl}
		if resume {
			a = append(a, "--resume")
		}
		return append(a, "--", "sh", "-c", script, "sh", ":::", "a")
	}
	cmd, out, errb := rcmd{dir: dir, args: args(false)}.start(t)
	testutil.Eventually(t, 10*time.Second, "the first attempt running", func() bool {
		_, err := os.Stat(filepath.Join(dir, "a.tried"))
		return err == nil
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "ration draining", func() bool { return strings.Contains(errb.String(), "got SIGTERM") })
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := waitRation(t, cmd, out, errb, 30*time.Second)
	if r.code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, want 143:\n%s", r.code, r.stderr)
	}
	if recs := readJoblog(t, jl); len(recs) != 0 {
		t.Errorf("the joblog records %v: the job was denied its retries by the interrupt, yet recorded as done", recs)
	}
	r = rcmd{dir: dir, args: args(true)}.run(t)
	recs := readJoblog(t, jl)
	if r.code != 0 || len(recs) != 1 || recs[1].Exitval != 0 || r.stdout != "ok\n" {
		t.Errorf("--resume: exit %d, stdout %q, joblog %v; want the job run again and succeeded:\n%s", r.code, r.stdout, recs, r.stderr)
	}
}
