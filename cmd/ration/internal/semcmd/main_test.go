package semcmd

import (
	"testing"

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

// rationCmd runs ration with args, stdin and env added to the test's
// environment, and returns its stdout, stderr and exit status.
func rationCmd(t *testing.T, stdin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	return clitest.RationCmd(t, bins, stdin, env, args...)
}
