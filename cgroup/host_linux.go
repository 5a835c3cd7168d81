package cgroup

import (
	"github.com/containerd/cgroups/v3"
	"golang.org/x/sys/unix"
)

// haveCgroups is true where a live Read has kernel files to read.
const haveCgroups = true

// liveAffinity is the number of CPUs in pid's scheduler affinity mask (0:
// the calling thread).
func liveAffinity(pid int) (int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err != nil {
		return 0, err
	}
	return set.Count(), nil
}

// hostMode is containerd's cgroups.Mode(), which stat()s /sys/fs/cgroup
// independently of mountinfo.
func hostMode() string { return modeName(cgroups.Mode()) }

func modeName(m cgroups.CGMode) string {
	switch m {
	case cgroups.Legacy:
		return "legacy"
	case cgroups.Hybrid:
		return "hybrid"
	case cgroups.Unified:
		return "unified"
	}
	return "unavailable"
}
