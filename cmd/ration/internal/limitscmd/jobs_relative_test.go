package limitscmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ration-run/ration/internal/testutil"
)

// nestedRoot is a snapshot with a 1-CPU quota (at /kubepods/pod1) on 16
// CPUs: -j +N gives 1 + N jobs there.
var nestedRoot = filepath.Join("..", "..", "..", "..", "cgroup", "testdata", "v2-nested")

// TestLimitsRelativeJobs: `ration limits` takes GNU parallel's -j +N and
// -j -N, as ration run does, and its reason explains them; -j -N that
// leaves no job slot is refused as ration run refuses it. `ration limits
// -j +2` was a usage error ("+2" is not a whole number >= 1).
func TestLimitsRelativeJobs(t *testing.T) {
	code, out, errs := runLimits(t, "--fs-root", nestedRoot, "-j", "+2")
	if code != 0 || errs != "" || !strings.Contains(out, "jobs:            3 (-j, decided by cpu_quota)") ||
		!strings.Contains(out, "; -j +2: 1 effective CPUs + 2 = 3\n") {
		t.Errorf("limits -j +2: exit %d, stderr %q, stdout:\n%s\nwant 3 jobs explained as 1 effective CPUs + 2", code, errs, out)
	}
	code, out, errs = runLimits(t, "--fs-root", nestedRoot, "-j", "-1")
	if want := "ration limits: -j -1 leaves no job slot: 1 effective CPUs - 1 = 0\n"; code != exitUsage || out != "" || errs != want {
		t.Errorf("limits -j -1: exit %d, stdout %q, stderr %q; want 255 and %q", code, out, errs, want)
	}
	t.Setenv("RATION_JOBS", "+1")
	var o, e strings.Builder
	if code := limitsMain([]string{"--fs-root", nestedRoot}, os.Getenv, &o, &e); code != 0 || !strings.Contains(o.String(), "; RATION_JOBS=+1: 1 effective CPUs + 1 = 2\n") {
		t.Errorf("RATION_JOBS=+1: exit %d, stderr %q, stdout:\n%s", code, e.String(), o.String())
	}
}

// TestRunRelativeJobs runs ration: -j +N is decided by the limits
// decision, whose reason the summary prints, also from a -j FILE (GNU
// parallel's procfile may hold +N); -j -N leaving no job slot is a usage
// error before any job runs. The summary said "-j 3 given" before, and a
// -j FILE holding +2 was refused.
func TestRunRelativeJobs(t *testing.T) {
	bin := buildRation(t)
	run := func(args ...string) (int, string) {
		cmd := exec.Command(bin, append([]string{"run", "--fs-root", nestedRoot}, args...)...)
		cmd.Env = append(os.Environ(), "RATION_JOBS=")
		out, err := cmd.CombinedOutput()
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		return code, string(out)
	}
	if code, out := run("-j", "+2", "true", ":::", "a"); code != 0 || !strings.Contains(out, " 3 jobs (jobs=3: ") || !strings.Contains(out, "; -j +2: 1 effective CPUs + 2 = 3)") {
		t.Errorf("-j +2: exit %d, output:\n%s\nwant 3 jobs explained as 1 effective CPUs + 2", code, out)
	}
	procfile := filepath.Join(t.TempDir(), "procfile")
	testutil.WriteFile(t, procfile, "+1\n")
	if code, out := run("-j", procfile, "true", ":::", "a"); code != 0 || !strings.Contains(out, " 2 jobs (jobs=2: ") || !strings.Contains(out, "; -j +1: 1 effective CPUs + 1 = 2)") {
		t.Errorf("-j FILE holding +1: exit %d, output:\n%s\nwant 2 jobs", code, out)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	if code, out := run("-j", "-1", "touch", marker); code != exitUsage || out != "ration run: -j -1 leaves no job slot: 1 effective CPUs - 1 = 0\n" {
		t.Errorf("-j -1: exit %d, output %q; want 255 and one line saying no job slot is left", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("-j -1 ran its job")
	}
}

// TestLimitsJobsFile: `ration limits` says what ration run would do with
// the same flags, and ration run takes GNU parallel's -j FILE (a value
// that is no number and names a file holding one): so must limits. It
// refused it ('"FILE" is not a whole number').
func TestLimitsJobsFile(t *testing.T) {
	procfile := filepath.Join(t.TempDir(), "procfile")
	for _, c := range []struct{ content, want string }{
		{"3\n", "jobs:            3 (-j, decided by explicit)"},
		{"+1\n", "jobs:            2 (-j, decided by cpu_quota)"},
		{"0\n", "jobs:            250 (-j, decided by explicit)"}, // -j 0
	} {
		testutil.WriteFile(t, procfile, c.content)
		code, out, errs := runLimits(t, "--fs-root", nestedRoot, "-j", procfile)
		if code != 0 || errs != "" || !strings.Contains(out, c.want) {
			t.Errorf("-j FILE holding %q: exit %d, stderr %q; want %q in:\n%s", c.content, code, errs, c.want, out)
		}
	}
	testutil.WriteFile(t, procfile, "many\n")
	if code, _, errs := runLimits(t, "--fs-root", nestedRoot, "-j", procfile); code != exitUsage || !strings.Contains(errs, procfile+`: "many" is not`) {
		t.Errorf("-j FILE holding many: exit %d, stderr %q; want 255 naming the file", code, errs)
	}
}
