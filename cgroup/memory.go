package cgroup

import (
	"fmt"
	"path/filepath"
)

func (st *state) readMemory(s *Snapshot, h *hierarchy) {
	limitName, usageName, peakName := "memory.limit_in_bytes", "memory.usage_in_bytes", "memory.max_usage_in_bytes"
	if h.version == 2 {
		limitName, usageName, peakName = "memory.max", "memory.current", "memory.peak"
	}
	for _, lv := range h.levels {
		f := filepath.Join(lv.dir, limitName)
		if n, ok := st.memoryLimit(s, f); ok && (s.MemoryLimit == 0 || n < s.MemoryLimit) {
			s.MemoryLimit, s.MemoryLimitCgroup, s.MemoryLimitFile = n, lv.cgPath, f
		}
		if h.version == 2 {
			if n, ok := st.memoryLimit(s, filepath.Join(lv.dir, "memory.high")); ok && (s.MemoryHigh == 0 || n < s.MemoryHigh) {
				s.MemoryHigh = n
			}
		}
	}
	if h.version == 1 {
		st.hierarchicalLimit(s, h)
	}
	leaf := h.levels[0].dir
	st.readCounter(filepath.Join(leaf, usageName), &s.MemoryUsage)
	st.readCounter(filepath.Join(leaf, peakName), &s.MemoryPeak)
	evName := "memory.oom_control"
	if h.version == 2 {
		evName = "memory.events"
	}
	f := filepath.Join(leaf, evName)
	if d, ok := st.readFile(f); ok {
		m, err := parseKeyed(d)
		if err != nil {
			st.warn("%s: %v; OOM kill count ignored", f, err)
			return
		}
		s.OOMKills = m["oom_kill"]
	}
}

// hierarchicalLimit takes v1's hierarchical_memory_limit (memory.stat of
// the leaf: the tightest limit of the leaf and every ancestor) when it is
// tighter than the walk found. The walk stops at the mount root, and a
// container's view of v1 mounts its own cgroup as the root (Docker binds
// /docker/ID there), so a limit on a parent (--cgroup-parent, a slice, a
// pod) is visible only here. That ancestor has no path in this mount
// namespace: MemoryLimitCgroup says "an ancestor of" the mount root.
func (st *state) hierarchicalLimit(s *Snapshot, h *hierarchy) {
	f := filepath.Join(h.levels[0].dir, "memory.stat")
	d, ok := st.readFile(f)
	if !ok {
		return
	}
	m, err := parseKeyed(d)
	if err != nil {
		st.warn("%s: %v; hierarchical_memory_limit ignored", f, err)
		return
	}
	n, ok := m["hierarchical_memory_limit"]
	if !ok || n <= 0 || st.atOrAboveHost(s, n) || (s.MemoryLimit != 0 && n >= s.MemoryLimit) {
		return
	}
	s.MemoryLimit, s.MemoryLimitFile = n, f
	s.MemoryLimitCgroup = "an ancestor of " + h.levels[len(h.levels)-1].cgPath
}

// memoryLimit reads one level's limit file (memory.max, memory.high,
// memory.limit_in_bytes); ok is false when it sets no limit that can
// bind.
func (st *state) memoryLimit(s *Snapshot, f string) (int64, bool) {
	d, ok := st.readFile(f)
	if !ok {
		return 0, false
	}
	n, unlimited, err := parseMaxOrInt(d)
	if err != nil {
		st.warn("%s: %v; ignored", f, err)
		return 0, false
	}
	return n, !unlimited && !st.atOrAboveHost(s, n)
}

// readCounter stores a non-negative byte count read from f in dst; a
// missing file leaves dst alone.
func (st *state) readCounter(f string, dst *int64) {
	d, ok := st.readFile(f)
	if !ok {
		return
	}
	n, err := parseInt(d)
	if err != nil || n < 0 {
		if err == nil {
			err = fmt.Errorf("negative value %d", n)
		}
		st.warn("%s: %v; ignored", f, err)
		return
	}
	*dst = n
}

// OOMKills reads only the OOM-kill counter of a memory cgroup directory
// (Snapshot.MemoryDir) of the given version (Snapshot.MemoryVersion): the
// "oom_kill" line of memory.events (v2) or memory.oom_control (v1). It is
// cheap enough to poll around a worker's exit to tell an OOM kill from
// another SIGKILL. A missing "oom_kill" line (kernels before 4.13) gives
// 0; an unreadable or malformed file gives an error naming it.
func OOMKills(memoryDir string, version int) (int64, error) {
	name := "memory.oom_control"
	if version == 2 {
		name = "memory.events"
	}
	f := filepath.Join(memoryDir, name)
	b, err := readFile(f)
	if err != nil {
		return 0, fmt.Errorf("cgroup: %w", err)
	}
	m, err := parseKeyed(string(b))
	if err != nil {
		return 0, fmt.Errorf("cgroup: %s: %w", f, err)
	}
	return m["oom_kill"], nil
}

// v1NoLimit is the smallest value v1 writes for "no limit" on any page
// size (PAGE_COUNTER_MAX pages, rounded down to 64 KiB pages); used when
// the host's memory is unknown.
const v1NoLimit = 1 << 62

func (st *state) atOrAboveHost(s *Snapshot, n int64) bool {
	if s.HostMemory > 0 {
		return n >= s.HostMemory
	}
	return n >= v1NoLimit
}
