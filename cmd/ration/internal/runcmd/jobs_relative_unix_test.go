//go:build unix

package runcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// TestRunRelativeJobsFollowLimits: with --watch-limits (the default) a run
// with -j +1 re-decides from the CPUs it then has when its cgroup's quota
// drops from 2 CPUs to 0.5: floor(0.5) + 1 = 1 job. The offset was turned
// into a fixed -j 3 at the start before, which no re-decision revisited.
func TestRunRelativeJobsFollowLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if s := ownCgroup(t); s.AffinityCPUs < 2 || (s.CPUQuota > 0 && s.CPUQuota < 2) {
		t.Skip("needs 2 CPUs to give a child cgroup a 2-CPU quota")
	}
	bin := buildRation(t)
	cg, _ := testutil.ChildCgroup(t, "cpu")
	testutil.SetCPUQuota(t, cg, 2)
	release := filepath.Join(t.TempDir(), "release")
	p := accStart(t, bin, nil, []string{"RELEASE=" + release}, []string{cg}, "-j", "+1",
		"--watch-interval", "200ms", "--log-format", "json", "--term-timeout", "1s",
		"sh", "-c", `while [ ! -e "$RELEASE" ]; do sleep 0.05; done`, ":::", "a", "b", "c")
	testutil.Eventually(t, 30*time.Second, "the three jobs to run", func() bool { return len(childrenOf(p.cmd.Process.Pid)) == 3 })
	testutil.SetCPUQuota(t, cg, 0.5)
	testutil.Eventually(t, 30*time.Second, "the pool to shrink to 1", func() bool {
		sizes, _ := accResizes(p.stderr.String())
		return len(sizes) > 0 && sizes[len(sizes)-1] == 1
	})
	os.WriteFile(release, nil, 0o644)
	code := p.wait(60 * time.Second)
	accCgroupEmpty(t, cg)
	sizes, reasons := accResizes(p.stderr.String())
	if code != 0 || len(reasons) == 0 || !strings.Contains(reasons[len(reasons)-1], "-j +1: floor(0.50 effective CPUs) + 1 = 1") {
		t.Errorf("exit %d, resizes %v %q: want 0 and a resize to 1 explained by -j +1", code, sizes, reasons)
	}
}
