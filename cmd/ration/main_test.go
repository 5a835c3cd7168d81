package main

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/ration-run/ration/internal/testutil"
)

// bins builds the commands the end-to-end tests run (ration itself, the
// example Go worker) once for the whole test binary.
var bins *testutil.Binaries

// TestMain is the package's only TestMain: it makes bins, runs the tests,
// removes what was built, and checks for leaked goroutines. First of all,
// before any test starts a process, it makes the one change to the test
// process's own cgroup that the real-cgroup tests need on cgroup v2 (see
// testutil.DelegateCgroups): later, with parallel tests' processes beside
// the test process, that change is no longer possible.
func TestMain(m *testing.M) {
	undo := testutil.DelegateCgroups()
	var err error
	if bins, err = testutil.NewBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		undo()
		os.Exit(1)
	}
	code := m.Run()
	bins.Close()
	undo()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("github.com/ration-run/ration/internal/pdeath.loop")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// buildRation returns the ration binary, built on first use.
func buildRation(t *testing.T) string {
	t.Helper()
	return bins.Build(t, ".")
}

// accGoWorker returns runner/worker/examples/goworker, built on first
// use.
func accGoWorker(t *testing.T) string {
	t.Helper()
	return bins.Build(t, "../../runner/worker/examples/goworker")
}
