package runcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ration-run/ration/runner/joblog"
)

// TestReaperPID1E2E runs the built binary as PID 1 of a new PID namespace
// (unshare), as a container entrypoint: jobs that leave orphans behind
// keep their own exit statuses, and the orphans do not stay zombies.
func TestReaperPID1E2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for a PID namespace")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare")
	}
	if err := exec.Command(unshare, "-p", "-f", "--mount-proc", "true").Run(); err != nil {
		t.Skipf("unshare cannot make a PID namespace here: %v", err)
	}
	bin := buildRation(t)
	jl := filepath.Join(t.TempDir(), "joblog")
	// The o* jobs orphan a sleep and exit with their job number; the
	// check job looks at the namespace's processes once the orphans ended.
	script := `case {} in o*) sleep 0.2 & exit {#};; check) sleep 1.5; ps -eo pid=,ppid=,stat=,comm=;; esac`
	c := exec.Command(unshare, "-p", "-f", "--mount-proc", bin, "run", "-j", "4", "--joblog", jl, "--shell", script,
		":::", "o1", "o2", "o3", "check")
	c.Env = append(os.Environ(), "RATION_JOBS=")
	out, err := c.Output()
	if code := c.ProcessState.ExitCode(); code != 3 {
		t.Errorf("exit %d, want 3 (three failed jobs): %v", code, err)
	}
	for line := range strings.Lines(string(out)) {
		if f := strings.Fields(line); len(f) >= 3 && strings.HasPrefix(f[2], "Z") {
			t.Errorf("zombie left in the namespace: %q\n%s", line, out)
		}
	}
	if !strings.Contains(string(out), "ration") {
		t.Errorf("ps output without ration as PID 1:\n%s", out)
	}
	b, err := os.ReadFile(jl)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		e, err := joblog.ParseLine(line)
		if err != nil {
			continue // the header
		}
		n++
		if want := int(e.Seq); e.Seq <= 3 && (e.Exitval != want || e.Signal != 0) {
			t.Errorf("job %d: exit %d signal %d, want exit %d: the reaper took the status", e.Seq, e.Exitval, e.Signal, want)
		}
	}
	if n != 4 {
		t.Errorf("%d joblog entries, want 4:\n%s", n, b)
	}
}
