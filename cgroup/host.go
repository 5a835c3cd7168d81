package cgroup

import (
	"errors"
	"runtime"
)

// readHost fills the host and affinity numbers.
func (st *state) readHost(s *Snapshot, procName string, pid int) {
	r := st.r
	mi := r.file("/proc/meminfo")
	if d, ok := st.readFile(mi); ok {
		if n, err := parseMeminfoTotal(d); err != nil {
			st.warn("%s: %v", mi, err)
		} else {
			s.HostMemory = n
		}
	}

	online := r.file("/sys/devices/system/cpu/online")
	if d, ok := st.readFile(online); ok {
		if cpus, err := ParseCPUList(d); err != nil || len(cpus) == 0 {
			if err == nil {
				err = errors.New("empty list")
			}
			st.warn("%s: %v", online, err)
		} else {
			s.HostCPUs, s.HostCPUsSource = len(cpus), online
		}
	}

	if r.live() {
		if n, err := liveAffinity(pid); err != nil {
			st.warn("sched_getaffinity(%d): %v", pid, err)
		} else {
			s.AffinityCPUs, s.AffinitySource = n, "sched_getaffinity"
		}
	} else {
		st.readStatusAffinity(s, procName)
	}

	switch {
	case s.HostCPUs > 0:
	case s.AffinityCPUs > 0:
		s.HostCPUs, s.HostCPUsSource = s.AffinityCPUs, s.AffinitySource
	default:
		// A fixture with neither file: say plainly that the number is
		// this machine's, not the snapshot's.
		s.HostCPUs, s.HostCPUsSource = runtime.NumCPU(), "runtime.NumCPU() of this machine"
		if !r.live() {
			st.warn("%s has neither %s nor proc/%s/status; using this machine's %d CPUs", r.Root, "sys/devices/system/cpu/online", procName, s.HostCPUs)
		}
	}
	if s.AffinityCPUs == 0 {
		s.AffinityCPUs, s.AffinitySource = s.HostCPUs, s.HostCPUsSource
	}
}

// readStatusAffinity takes a snapshot's affinity from the
// Cpus_allowed_list line of proc/PID/status.
func (st *state) readStatusAffinity(s *Snapshot, procName string) {
	status := st.r.file("/proc/" + procName + "/status")
	d, ok := st.readFile(status)
	if !ok {
		return
	}
	cpus, err := parseStatusCPUs(d)
	if err == nil && len(cpus) == 0 {
		err = errors.New("empty Cpus_allowed_list")
	}
	if err != nil {
		st.warn("%s: %v", status, err)
		return
	}
	s.AffinityCPUs, s.AffinitySource = len(cpus), status+" Cpus_allowed_list"
}
