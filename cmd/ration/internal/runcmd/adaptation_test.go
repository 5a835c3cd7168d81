package runcmd

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/limits"
)

// TestWatchAdjustsGOMAXPROCS: each re-read of the limits while running
// (--watch-limits) applies limits.AdjustGOMAXPROCS again, as its doc asks
// of callers: where ration lowered GOMAXPROCS for a limit the Go runtime
// does not see (a parent's quota, or any quota in a cgroup namespace,
// where the runtime never re-reads one), a changed limit must change it
// too. Here GOMAXPROCS stands lowered to 1 for a limit that is gone: the
// next re-read must hand it back (it stayed at 1: only the start adjusted).
func TestWatchAdjustsGOMAXPROCS(t *testing.T) {
	s, err := cgroup.Reader{}.Read()
	switch {
	case err != nil:
		t.Skipf("no cgroup: %v", err)
	case runtime.NumCPU() < 2:
		t.Skip("needs 2 CPUs to tell 1 from the runtime's default")
	case s.CPUQuota != s.LeafCPUQuota || s.CPUOutsideNamespace || (s.CPUQuota > 0 && s.CPUQuota <= 1):
		t.Skip("this process has a CPU limit of its own that ration would correct")
	case os.Getenv("GOMAXPROCS") != "" || strings.Contains(os.Getenv("GODEBUG"), "containermaxprocs=0"):
		t.Skip("GOMAXPROCS is set in the environment")
	}
	p := basePlan()
	a, _ := newAdaptation(&p, slog.New(slog.DiscardHandler), limits.Decision{}, nil)
	if a.watch == nil {
		t.Fatal("no watch with --watch-limits")
	}
	t.Cleanup(runtime.SetDefaultGOMAXPROCS)
	runtime.GOMAXPROCS(1)
	if _, err := a.watch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := runtime.GOMAXPROCS(0); n < 2 {
		t.Errorf("GOMAXPROCS %d after a re-read of the limits: want the runtime's default (>= 2) back", n)
	}
}
