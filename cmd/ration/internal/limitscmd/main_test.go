package limitscmd

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
func ownCgroup(t *testing.T) cgroup.Snapshot { return clitest.OwnCgroup(t) }

func limitsIn(t *testing.T, bin, dir string, args ...string) map[string]any {
	return clitest.LimitsIn(t, bin, dir, args...)
}
func jobsFlagErr(spec string) string { return clitest.JobsFlagErr(spec) }
func jobsErr(spec string) string     { return clitest.JobsErr(spec) }
