package runcmd

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// cpuCounts are the CPU counts GNU parallel's --number-of-sockets,
// --number-of-cores and --number-of-threads print.
type cpuCounts struct {
	sockets, cores, threads int
}

// affinityCPUs is the number of CPUs this process may run on (its
// scheduler affinity on Linux), GNU parallel's "active" threads.
func affinityCPUs() int { return runtime.NumCPU() }

// hostCPUs counts the host's CPUs as GNU parallel 20221122 does from
// Linux's topology under root (/sys/devices/system/cpu): threads are the
// cpuN directories, cores the distinct thread_siblings masks, sockets the
// distinct physical_package_id values; each is then at most active, the
// CPUs of the affinity (GNU parallel's taskset limit). Where the topology
// cannot be read (another OS, a restricted /sys), every count is active,
// as GNU parallel falls back to nproc. The cgroup CPU quota is not
// counted, as GNU parallel does not count it: `ration limits` shows the
// effective CPUs ration sizes its pool from.
func hostCPUs(root string, active int) cpuCounts {
	siblings, packages := map[string]bool{}, map[string]bool{}
	threads := 0
	for ; ; threads++ {
		dir := filepath.Join(root, "cpu"+strconv.Itoa(threads), "topology")
		s, err1 := os.ReadFile(filepath.Join(dir, "thread_siblings"))
		p, err2 := os.ReadFile(filepath.Join(dir, "physical_package_id"))
		if err1 != nil || err2 != nil {
			break
		}
		siblings[string(s)], packages[string(p)] = true, true
	}
	if threads == 0 {
		return cpuCounts{active, active, active}
	}
	return cpuCounts{sockets: min(len(packages), active), cores: min(len(siblings), active), threads: min(threads, active)}
}
