package runcmd

import (
	"testing"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/cmd/ration/internal/clitest"
	"github.com/ration-run/ration/internal/testutil"
)

// bins builds the commands the end-to-end tests run (ration itself, the
// example Go worker) once for the whole test binary.
var bins *testutil.Binaries

func TestMain(m *testing.M) { clitest.Main(m, &bins) }

// buildRation returns the ration binary, built on first use.
func buildRation(t *testing.T) string {
	t.Helper()
	return clitest.Ration(t, bins)
}

// accGoWorker returns runner/worker/examples/goworker, built on first
// use.
func accGoWorker(t *testing.T) string {
	t.Helper()
	return clitest.GoWorker(t, bins)
}

func writeFile(t *testing.T, name, data string) { clitest.WriteFile(t, name, data) }
func ownCgroup(t *testing.T) cgroup.Snapshot    { return clitest.OwnCgroup(t) }

// rationCmd runs ration with args, stdin and env added to the test's
// environment, and returns its stdout, stderr and exit status.
func rationCmd(t *testing.T, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return clitest.RationCmd(t, bins, stdin, env, args...)
}

func limitsIn(t *testing.T, bin, dir string, args ...string) map[string]any {
	return clitest.LimitsIn(t, bin, dir, args...)
}
func jobsFlagErr(spec string) string { return clitest.JobsFlagErr(spec) }
func jobsErr(spec string) string     { return clitest.JobsErr(spec) }
