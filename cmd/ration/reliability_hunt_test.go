//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReliabOutputGoneResumeRunsJob: when ration's stdout cannot be
// written (here a full disk: /dev/full), the job whose output was lost is
// not recorded, so the command ration prints to run the rest (--resume)
// runs it again and every job's output is delivered. It was recorded as
// failed (Exitval -1), which --resume skips: its output was lost for good.
func TestReliabOutputGoneResumeRunsJob(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{nil, {"-k"}, {"--line-buffer"}} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), " "), func(t *testing.T) {
			t.Parallel()
			full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skip("no /dev/full:", err)
			}
			defer full.Close()
			dir := t.TempDir()
			jl := filepath.Join(dir, "jl")
			args := append(append([]string{"run", "-j", "1", "--joblog", jl}, flags...), "--", "echo", ":::", "a", "b", "c")
			r := rcmd{dir: dir, stdout: full, args: args}.run(t)
			if r.code == 0 || !strings.Contains(r.stderr, "to run the rest: ration run --resume") {
				t.Fatalf("exit %d, want an error and the --resume hint:\n%s", r.code, r.stderr)
			}
			r = rcmd{dir: dir, args: append([]string{"run", "--resume"}, args[1:]...)}.run(t)
			if r.code != 0 || r.stdout != "a\nb\nc\n" {
				t.Errorf("--resume: exit %d, stdout %q, want every job's output:\n%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}
