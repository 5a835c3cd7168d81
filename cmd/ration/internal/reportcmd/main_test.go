package reportcmd

import (
	"testing"

	"github.com/ration-run/ration/cmd/ration/internal/clitest"
	"github.com/ration-run/ration/internal/testutil"
)

// TestMain: see clitest.Main. These tests start no ration process.
func TestMain(m *testing.M) {
	var bins *testutil.Binaries
	clitest.Main(m, &bins)
}
