package main

import (
	"testing"

	"github.com/ration-run/ration/cmd/ration/internal/clitest"
	"github.com/ration-run/ration/internal/testutil"
)

// bins builds the ration binary the completion tests run; see
// clitest.Main.
var bins *testutil.Binaries

func TestMain(m *testing.M) { clitest.Main(m, &bins) }
