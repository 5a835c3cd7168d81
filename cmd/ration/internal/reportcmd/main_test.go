package reportcmd

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
