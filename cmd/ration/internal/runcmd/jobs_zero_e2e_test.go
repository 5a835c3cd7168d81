//go:build linux

package runcmd

import (
	"strings"
	"testing"
	"time"
)

// TestJobsZeroAsManyAsPossible: -j 0 is GNU parallel's "as many as
// possible": 20 one-second jobs run at once (about 1 s, where the default
// of 2 per CPU, at most 8, takes 3 s or more on this machine), and the
// summary says -j 0 was taken so. It ran the default concurrency without
// a word.
func TestJobsZeroAsManyAsPossible(t *testing.T) {
	t.Parallel()
	args := append([]string{"run", "-j", "0", "--shell", "sleep 1; echo {}", ":::"}, inputs(20)...)
	start := time.Now()
	r := rcmd{dir: t.TempDir(), args: args}.run(t)
	wall := time.Since(start)
	if r.code != 0 || strings.Count(r.stdout, "\n") != 20 {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if wall > 2500*time.Millisecond {
		t.Errorf("20 one-second jobs took %s with -j 0, want them at once", wall)
	}
	if !strings.Contains(r.stderr, "250 jobs (jobs=250: -j 0 given (as many as possible") {
		t.Errorf("the summary does not say what -j 0 did:\n%s", r.stderr)
	}
}
