package runcmd

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestExitCount runs ration with --exit-count (which the Helm chart sets
// for its podFailurePolicy): whatever --halt says, the exit status is the
// number of failed jobs, never a job's own status (GNU parallel's --halt
// rule, kept without the flag) nor the percentage of failed jobs; 255
// stays ration's usage error.
func TestExitCount(t *testing.T) {
	bin := buildRation(t)
	run := func(args ...string) int {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"run", "-j", "1"}, args...)...)
		cmd.Env = append(os.Environ(), "RATION_JOBS=")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &ee) && ee.Exited():
			return ee.ExitCode()
		}
		t.Fatalf("ration %q: %v\n%s", args, err, out)
		return 0
	}
	fail := func(codes ...string) []string {
		return append([]string{"--shell", `case {} in ok*) ;; kill) kill -KILL $$;; *) exit {};; esac`, ":::"}, codes...)
	}
	for _, c := range []struct {
		name          string
		args          []string
		gnu, counting int
	}{
		{"halt now,fail=1: a job exits 255", append([]string{"--halt", "now,fail=1"}, fail("255", "ok1")...), 255, 1},
		{"halt now,fail=1: a job is killed", append([]string{"--halt", "now,fail=1"}, fail("kill", "ok1")...), 137, 1},
		{"halt soon,fail=1: a job exits 200", append([]string{"--halt", "soon,fail=1"}, fail("200")...), 200, 1},
		{"halt soon,fail=50%: 2 of 3 fail", append([]string{"--halt", "soon,fail=50%"}, fail("3", "4", "ok1")...), 67, 2},
		{"halt now,success=1: one fails first", append([]string{"--halt", "now,success=1"}, fail("3", "ok1")...), 0, 1},
		{"no halt: as without the flag", fail("255", "9", "ok1"), 2, 2},
	} {
		if got := run(c.args...); got != c.gnu {
			t.Errorf("%s: exit %d without --exit-count, want GNU parallel's %d", c.name, got, c.gnu)
		}
		if got := run(append([]string{"--exit-count"}, c.args...)...); got != c.counting {
			t.Errorf("%s: exit %d with --exit-count, want %d failed jobs", c.name, got, c.counting)
		}
	}
	if got := run("--exit-count", "--halt", "now,fail=1", "--no-such-flag", "true"); got != exitUsage {
		t.Errorf("usage error with --exit-count: exit %d, want %d", got, exitUsage)
	}
	help, _ := exec.Command(bin, "run", "--help").CombinedOutput()
	if !strings.Contains(string(help), "--exit-count") || !strings.Contains(string(help), "with --exit-count as well") {
		t.Errorf("ration run --help does not document --exit-count:\n%s", help)
	}
}
