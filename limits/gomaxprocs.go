package limits

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
)

// AdjustGOMAXPROCS corrects GOMAXPROCS for a limit the Go runtime cannot
// see (see the package doc): when the tightest CPU quota of d's hierarchy
// walk gives a smaller GOMAXPROCS than the leaf quota the runtime reads
// (none when the cgroup lies outside the process's cgroup namespace,
// cgroup.Snapshot.CPUOutsideNamespace, where the runtime finds no cgroup)
// (with the runtime's rounding: up, at least 2, at most the affinity
// count), it lowers GOMAXPROCS to that; when there is no such limit but
// GOMAXPROCS is below the runtime's leaf-based value (an earlier
// correction), it calls runtime.SetDefaultGOMAXPROCS so the runtime
// follows the limit again. It does nothing for a Decision read from an
// FSRoot snapshot, or when the GOMAXPROCS environment variable or
// GODEBUG=containermaxprocs=0 is set. changed reports a call into the
// runtime; msg says what was done or why not. Safe to call on every
// re-read of the limits.
func AdjustGOMAXPROCS(d Decision) (changed bool, msg string) {
	return adjustGOMAXPROCS(d, os.Getenv)
}

func adjustGOMAXPROCS(d Decision, getenv func(string) string) (bool, string) {
	if d.FSRoot != "" {
		return false, "GOMAXPROCS left alone: the limits were read from " + d.FSRoot + ", not this process"
	}
	if v := getenv("GOMAXPROCS"); v != "" {
		return false, "GOMAXPROCS left alone: set in the environment to " + v
	}
	if strings.Contains(getenv("GODEBUG"), "containermaxprocs=0") {
		return false, "GOMAXPROCS left alone: GODEBUG=containermaxprocs=0"
	}
	s := d.Snapshot
	leaf, why := s.LeafCPUQuota, ""
	if s.CPUOutsideNamespace {
		// The runtime found no cgroup at all (see cgroup.Snapshot).
		leaf, why = 0, " (its cgroup lies outside this cgroup namespace)"
	}
	cur := runtime.GOMAXPROCS(0)
	act, n := planGOMAXPROCS(leaf, s.CPUQuota, s.AffinityCPUs, cur)
	switch act {
	case lower:
		runtime.GOMAXPROCS(n)
		return true, fmt.Sprintf("GOMAXPROCS lowered from %d to %d for the CPU quota %.2f at %s, which the Go runtime does not see%s",
			cur, n, s.CPUQuota, s.CPUQuotaCgroup, why)
	case restore:
		runtime.SetDefaultGOMAXPROCS()
		return true, fmt.Sprintf("GOMAXPROCS handed back to the Go runtime (was %d, now %d): no tighter limit above the leaf cgroup", cur, runtime.GOMAXPROCS(0))
	}
	if s.CPUQuota > 0 && s.CPUQuota != leaf {
		return false, fmt.Sprintf("GOMAXPROCS %d left to the Go runtime: the CPU quota %.2f at %s, which it does not see%s, calls for no fewer (rounded up, at least 2)",
			cur, s.CPUQuota, s.CPUQuotaCgroup, why)
	}
	return false, fmt.Sprintf("GOMAXPROCS %d left to the Go runtime: no tighter CPU limit above the leaf cgroup", cur)
}

type gomaxprocsAction int

const (
	keep gomaxprocsAction = iota
	lower
	restore
)

// runtimeProcs is the Go runtime's GOMAXPROCS for a quota (0 = none) and
// an affinity count (runtime/cgroup_linux.go adjustCgroupGOMAXPROCS).
func runtimeProcs(quota float64, cpus int) int {
	if quota <= 0 {
		return cpus
	}
	return min(cpus, max(2, int(math.Ceil(quota))))
}

// planGOMAXPROCS decides what AdjustGOMAXPROCS does, without side effects.
func planGOMAXPROCS(leafQuota, walkQuota float64, cpus, cur int) (gomaxprocsAction, int) {
	if cpus <= 0 {
		return keep, cur
	}
	leaf, walk := runtimeProcs(leafQuota, cpus), runtimeProcs(walkQuota, cpus)
	switch {
	case walk < leaf:
		if cur > walk {
			return lower, walk
		}
	case cur < leaf:
		return restore, leaf
	}
	return keep, cur
}
