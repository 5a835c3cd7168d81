package workerexec_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The forking thread lives as long as the process (package pdeath).
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/ration-run/ration/runner/internal/pdeath.loop"))
}
