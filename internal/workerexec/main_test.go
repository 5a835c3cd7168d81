package workerexec_test

import (
	"os"
	"testing"

	"github.com/ration-run/ration/internal/testutil"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// On cgroup v2 the tests' child cgroups need this process moved into
	// a leaf of its own cgroup, which is only possible while it is alone
	// there: before any test has started a process that might outlive it.
	undo := testutil.DelegateCgroups()
	// The forking thread lives as long as the process (package pdeath).
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/ration-run/ration/internal/pdeath.loop"),
		goleak.Cleanup(func(code int) { undo(); os.Exit(code) }))
}
