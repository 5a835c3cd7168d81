// Package cgroup reads the kernel's view of the CPU and memory budget of a
// process: its cgroups (v1, v2 or hybrid), the CPU quota and cpuset, the
// memory limit and usage, OOM kills and CPU throttling, and the CPU
// affinity and host size they are measured against. It reads kernel files
// and does nothing else: the policy built on it lives in package limits.
//
// # Finding the cgroups
//
// /proc/PID/cgroup names the process's cgroup in each hierarchy;
// /proc/PID/mountinfo says where each hierarchy is mounted. A v1 hierarchy
// is matched by its controller name in the mount's super options; the v2
// hierarchy is the "0::" line and the cgroup2 mount, and serves a
// controller only when no v1 hierarchy has it (hybrid systems) and, when
// the mount root's cgroup.controllers is readable, it lists the controller.
// Mount paths are octal-unescaped (\040 is a space). When a hierarchy is
// mounted several times the mount whose root is the longest prefix of the
// process's path wins. A mount whose root is not "/" (a container's view
// of the host's /docker/ID) is handled by stripping the root from the
// path. A path with a ".." component ("/../sibling", which the kernel writes
// when the cgroup lies outside the reader's cgroup namespace) cannot be
// located below any mount; the mount point itself is used instead and a
// warning says so.
//
// # Tightest limit
//
// The CPU quota and the memory limits are read at every level from the
// process's cgroup up to the mount root, and the tightest one wins, with
// the cgroup path and file that set it. A parent's limit binds its
// children, and the Go runtime (which reads the leaf only) misses it.
// The leaf's quota alone is kept as Snapshot.LeafCPUQuota for comparison.
//
// # Robustness
//
// Every file that is malformed, truncated or unreadable becomes a line in
// Snapshot.Warnings naming the file and the problem, and that input is
// ignored (treated as "no limit at this level"). Files that do not exist
// are normal (the root cgroup has no cpu.max) and are not reported. No
// input makes this package panic; the parsers are fuzzed.
//
// # Re-reading
//
// Every Read parses /proc/PID/cgroup and mountinfo again and opens every
// file afresh, so a changed limit or a process moved to another cgroup is
// seen by the next Read. Nothing is cached and Reader has no mutable
// state, so it is safe for concurrent use.
//
// # containerd/cgroups
//
// github.com/containerd/cgroups/v3 is used for [cgroups.Mode] only: on the
// live system it stat()s /sys/fs/cgroup independently of mountinfo, and a
// disagreement with our mountinfo reading becomes a warning. Everything
// else is our own small parsers, because the library's cgroup1 and cgroup2
// packages cannot be pointed at another filesystem root (fixtures,
// --fs-root), do not walk up the hierarchy for the tightest limit, do not
// handle the namespace and mount-root cases above, and would pull
// runtime-spec, protobuf, logrus, dbus and ebpf into a small binary. For
// the same reason the real-cgroup tests create and remove their child
// cgroups with plain mkdir and rmdir rather than cgroup1.New.
package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/containerd/cgroups/v3"
	"golang.org/x/sys/unix"
)

// Reader reads cgroup information below a filesystem root. The zero value
// reads the live system.
type Reader struct {
	// Root is prefixed to every path read: proc/PID/cgroup,
	// proc/PID/mountinfo, proc/PID/status, proc/meminfo,
	// sys/devices/system/cpu/online and the cgroup mount points named in
	// mountinfo. "" or "/" means the live system; any other value is a
	// snapshot tree (a test fixture, or a copy taken from a broken pod),
	// for which the CPU affinity comes from proc/PID/status instead of
	// sched_getaffinity(2).
	Root string
}

// Snapshot is one reading of a process's cgroups. Byte counts are bytes,
// CPU amounts are CPUs; for limits 0 means "no limit".
type Snapshot struct {
	// Version is the cgroup version that controls the process's CPU (or,
	// when no CPU controller is found, its memory): 1 or 2. 0 means no
	// cgroup was found. Hybrid is true when both v1 controller hierarchies
	// and the v2 hierarchy are mounted; CPUVersion and MemoryVersion then
	// tell which one each controller uses.
	Version       int
	Hybrid        bool
	CPUVersion    int
	MemoryVersion int
	// HostMode is containerd's cgroups.Mode() ("legacy", "hybrid",
	// "unified", "unavailable") on the live system, "" for a fixture root.
	HostMode string

	// CPUCgroup is the process's cgroup path in the CPU hierarchy as
	// /proc/PID/cgroup writes it; CPUDir is its directory (with Root
	// prefixed). Empty when no CPU hierarchy is found.
	CPUCgroup string
	CPUDir    string

	// CPUQuota is the tightest CPU bandwidth limit over the walk from the
	// process's cgroup up to the mount root, in CPUs (quota / period);
	// 0 means unlimited. CPUQuotaUs and CPUPeriodUs are the raw values of
	// that level, CPUQuotaCgroup its cgroup path and CPUQuotaFile the file
	// that gave it. LeafCPUQuota is the process's own cgroup's quota (what
	// the Go runtime sees), 0 when unlimited.
	CPUQuota       float64
	CPUQuotaUs     int64
	CPUPeriodUs    int64
	CPUQuotaCgroup string
	CPUQuotaFile   string
	LeafCPUQuota   float64

	// CPUSet lists the CPUs the process's cpuset allows (sorted), read
	// from the nearest level that has a non-empty list; nil when no cpuset
	// information was found. CPUSetFile is the file it came from.
	CPUSet     []int
	CPUSetFile string

	// AffinityCPUs is the number of CPUs in the process's scheduler
	// affinity mask (live) or in proc/PID/status Cpus_allowed_list
	// (fixture); 0 when unknown. HostCPUs is the number of online CPUs.
	// The Source fields say where each number came from.
	AffinityCPUs   int
	AffinitySource string
	HostCPUs       int
	HostCPUsSource string

	// MemoryCgroup and MemoryDir are as CPUCgroup and CPUDir for the
	// memory hierarchy.
	MemoryCgroup string
	MemoryDir    string
	// MemoryLimit is the tightest hard memory limit over the walk (v2
	// memory.max, v1 memory.limit_in_bytes), 0 when unlimited. A value at
	// or above the host's memory cannot bind and counts as unlimited (v1
	// writes 9223372036854771712 for "no limit").
	MemoryLimit       int64
	MemoryLimitCgroup string
	MemoryLimitFile   string
	// MemoryHigh is the tightest v2 memory.high (throttling, not killing),
	// 0 when none or on v1.
	MemoryHigh int64
	// MemoryUsage is the cgroup's current usage (memory.current,
	// memory.usage_in_bytes); MemoryPeak the high-water mark
	// (memory.peak, memory.max_usage_in_bytes), 0 when the kernel keeps
	// none. OOMKills counts processes of the cgroup killed by the OOM
	// killer (memory.events or memory.oom_control "oom_kill").
	MemoryUsage int64
	MemoryPeak  int64
	OOMKills    int64
	// HostMemory is MemTotal of proc/meminfo, 0 when unreadable.
	HostMemory int64

	// CPU throttling counters of the process's CPU cgroup (cpu.stat).
	NrPeriods     int64
	NrThrottled   int64
	ThrottledTime time.Duration

	// Warnings describes every file that was malformed, truncated or
	// unreadable, naming the file and the problem. Never nil.
	Warnings []string
}

// CPUSetCount is the number of CPUs in the cpuset, 0 when unknown.
func (s Snapshot) CPUSetCount() int { return len(s.CPUSet) }

// Read reads the cgroups of the calling process (proc/self). It parses
// everything afresh on every call. The Snapshot is always usable: when
// proc/self/cgroup itself cannot be read, Read returns the error too (the
// Snapshot then has Version 0 and the host CPU and memory numbers).
func (r Reader) Read() (Snapshot, error) { return r.read("self", 0) }

// ReadProcess is Read for the process pid, through proc/PID/cgroup and
// proc/PID/mountinfo. It is meant for a worker started by ration (to
// classify an OOM kill); mount points are taken from the process's
// mountinfo but read under Root, so a process in another mount namespace
// gives wrong directories. An exited process gives an error wrapping
// fs.ErrNotExist.
func (r Reader) ReadProcess(pid int) (Snapshot, error) {
	if pid <= 0 {
		return Snapshot{Warnings: []string{}}, fmt.Errorf("cgroup: invalid pid %d", pid)
	}
	return r.read(strconv.Itoa(pid), pid)
}

func (r Reader) live() bool { return r.Root == "" || r.Root == "/" }

// file returns the path of an absolute kernel path below Root.
func (r Reader) file(p string) string {
	// Cleaning against "/" first keeps a mount point like "/../../etc"
	// from a damaged mountinfo inside Root.
	p = filepath.Clean("/" + p)
	if r.live() {
		return p
	}
	return filepath.Join(r.Root, p)
}

// hierarchy is a located cgroup hierarchy for one controller.
type hierarchy struct {
	version int
	cgPath  string // the process's path, as in /proc/PID/cgroup
	levels  []level
}

// level is one directory of the walk from the leaf up to the mount root.
type level struct {
	dir    string // on disk, Root prefixed
	cgPath string // as a cgroup path, for messages
}

// state carries one read in progress.
type state struct {
	r        Reader
	warnings []string
}

// warn records a problem once: on v2 the cpu, cpuset and memory
// controllers share one hierarchy and would repeat it.
func (st *state) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(st.warnings, w) {
		st.warnings = append(st.warnings, w)
	}
}

// readFile returns the file's contents; ok is false when it does not
// exist (silently) or cannot be read (with a warning).
func (st *state) readFile(name string) (string, bool) {
	b, err := os.ReadFile(name)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			st.warn("%s: unreadable: %v", name, unwrapPathError(err))
		}
		return "", false
	}
	return string(b), true
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (r Reader) read(procName string, pid int) (Snapshot, error) {
	st := &state{r: r}
	s := Snapshot{}
	st.readHost(&s, procName, pid)

	cgFile := r.file("/proc/" + procName + "/cgroup")
	cgData, err := os.ReadFile(cgFile)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) || !r.live() {
			st.warn("%s: unreadable: %v; no cgroup limits applied", cgFile, unwrapPathError(err))
		}
		s.Warnings = nonNil(st.warnings)
		return s, fmt.Errorf("cgroup: %w", err)
	}
	lines, w := parseProcCgroup(string(cgData))
	for _, x := range w {
		st.warn("%s: %s", cgFile, x)
	}
	miFile := r.file("/proc/" + procName + "/mountinfo")
	var mounts []mount
	if miData, ok := st.readFile(miFile); ok {
		var w []string
		mounts, w = parseMountinfo(miData)
		for _, x := range w {
			st.warn("%s: %s", miFile, x)
		}
	} else {
		st.warn("%s: missing; cannot locate cgroup directories", miFile)
	}

	v1Mounted, v2Mounted := false, false
	for _, l := range lines {
		if l.id == 0 && len(l.controllers) == 0 {
			if slices.ContainsFunc(mounts, func(m mount) bool { return m.fsType == "cgroup2" }) {
				v2Mounted = true
			}
			continue
		}
		for _, c := range l.controllers {
			if slices.ContainsFunc(mounts, func(m mount) bool { return m.fsType == "cgroup" && slices.Contains(m.options, c) }) {
				v1Mounted = true
			}
		}
	}
	s.Hybrid = v1Mounted && v2Mounted

	if h := st.locate(lines, mounts, "cpu"); h != nil {
		s.CPUVersion, s.CPUCgroup, s.CPUDir = h.version, h.cgPath, h.levels[0].dir
		st.readCPU(&s, h)
	}
	if h := st.locate(lines, mounts, "cpuset"); h != nil {
		st.readCPUSet(&s, h)
	}
	if h := st.locate(lines, mounts, "memory"); h != nil {
		s.MemoryVersion, s.MemoryCgroup, s.MemoryDir = h.version, h.cgPath, h.levels[0].dir
		st.readMemory(&s, h)
	}
	switch {
	case s.CPUVersion != 0:
		s.Version = s.CPUVersion
	case s.MemoryVersion != 0:
		s.Version = s.MemoryVersion
	case v2Mounted:
		s.Version = 2
	case v1Mounted:
		s.Version = 1
	}

	if r.live() {
		s.HostMode = modeName(cgroups.Mode())
		ours := "legacy"
		switch {
		case s.Hybrid:
			ours = "hybrid"
		case v2Mounted:
			ours = "unified"
		case !v1Mounted:
			ours = "unavailable"
		}
		if pid == 0 && s.HostMode != ours {
			st.warn("containerd cgroups.Mode() says %s but %s suggests %s", s.HostMode, miFile, ours)
		}
	}
	s.Warnings = nonNil(st.warnings)
	return s, nil
}

func nonNil(w []string) []string {
	if w == nil {
		return []string{}
	}
	return w
}

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

// locate finds the hierarchy serving controller and the walk from the
// process's cgroup up to the mount root. nil means the controller is not
// available (not mounted, or not enabled in v2).
func (st *state) locate(lines []procCgroup, mounts []mount, controller string) *hierarchy {
	for _, l := range lines {
		if !slices.Contains(l.controllers, controller) {
			continue
		}
		var cands []mount
		for _, m := range mounts {
			if m.fsType == "cgroup" && slices.Contains(m.options, controller) {
				cands = append(cands, m)
			}
		}
		if len(cands) > 0 {
			return st.walk(1, l.path, cands)
		}
	}
	for _, l := range lines {
		if l.id != 0 || len(l.controllers) != 0 {
			continue
		}
		var cands []mount
		for _, m := range mounts {
			if m.fsType == "cgroup2" {
				cands = append(cands, m)
			}
		}
		if len(cands) == 0 {
			return nil
		}
		h := st.walk(2, l.path, cands)
		top := h.levels[len(h.levels)-1].dir
		// In v2 a controller exists below the mount root only when it is
		// listed here; without this check a hybrid host with an empty
		// unified hierarchy would claim v2 CPU control.
		if data, ok := st.readFile(filepath.Join(top, "cgroup.controllers")); ok {
			if !slices.Contains(strings.Fields(data), controller) {
				return nil
			}
		}
		return h
	}
	return nil
}

// walk resolves cgPath against the candidate mounts of one hierarchy.
func (st *state) walk(version int, cgPath string, cands []mount) *hierarchy {
	outside := slices.Contains(strings.Split(cgPath, "/"), "..")
	best, rel := -1, ""
	if !outside {
		for i, m := range cands {
			r, ok := relTo(m.root, cgPath)
			if ok && (best < 0 || len(m.root) > len(cands[best].root)) {
				best, rel = i, r
			}
		}
	}
	if best < 0 {
		best, rel = 0, ""
		m := cands[0]
		if outside {
			st.warn("cgroup path %s is outside this cgroup namespace; using the mount root %s (%s) instead", cgPath, m.root, m.mountPoint)
		} else {
			st.warn("cgroup path %s is not below the root %s of any mount of its hierarchy; using mount point %s instead", cgPath, m.root, m.mountPoint)
		}
	}
	m := cands[best]
	h := &hierarchy{version: version, cgPath: cgPath}
	for {
		h.levels = append(h.levels, level{
			dir:    st.r.file(path.Join(m.mountPoint, rel)),
			cgPath: path.Join(m.root, rel),
		})
		if rel == "" || rel == "/" {
			break
		}
		rel = path.Dir(rel)
		if rel == "/" || rel == "." {
			rel = ""
		}
	}
	return h
}

// relTo returns cgPath relative to a mount's root ("" for the root itself).
func relTo(root, cgPath string) (string, bool) {
	root = strings.TrimSuffix(root, "/")
	if cgPath == root || (root == "" && cgPath == "/") {
		return "", true
	}
	if strings.HasPrefix(cgPath, root+"/") {
		return path.Clean(cgPath[len(root):]), true
	}
	return "", false
}

func (st *state) readCPU(s *Snapshot, h *hierarchy) {
	for i, lv := range h.levels {
		var quota, period int64
		var file string
		if h.version == 1 {
			qf, pf := filepath.Join(lv.dir, "cpu.cfs_quota_us"), filepath.Join(lv.dir, "cpu.cfs_period_us")
			qd, ok := st.readFile(qf)
			if !ok {
				continue
			}
			q, err := parseInt(qd)
			if err != nil {
				st.warn("%s: %v; ignored", qf, err)
				continue
			}
			if q < 0 {
				continue // -1: no limit at this level
			}
			if q == 0 {
				st.warn("%s: quota 0 is not a valid limit; ignored", qf)
				continue
			}
			pd, ok := st.readFile(pf)
			if !ok {
				st.warn("%s: missing next to %s; quota ignored", pf, qf)
				continue
			}
			p, err := parseInt(pd)
			if err != nil || p <= 0 {
				if err == nil {
					err = fmt.Errorf("period %d is not positive", p)
				}
				st.warn("%s: %v; quota ignored", pf, err)
				continue
			}
			quota, period, file = q, p, qf
		} else {
			f := filepath.Join(lv.dir, "cpu.max")
			d, ok := st.readFile(f)
			if !ok {
				continue
			}
			q, p, err := parseCPUMax(d)
			if err != nil {
				st.warn("%s: %v; ignored", f, err)
				continue
			}
			if q < 0 {
				continue
			}
			quota, period, file = q, p, f
		}
		cpus := float64(quota) / float64(period)
		if i == 0 {
			s.LeafCPUQuota = cpus
		}
		if s.CPUQuota == 0 || cpus < s.CPUQuota {
			s.CPUQuota, s.CPUQuotaUs, s.CPUPeriodUs = cpus, quota, period
			s.CPUQuotaCgroup, s.CPUQuotaFile = lv.cgPath, file
		}
	}

	f := filepath.Join(h.levels[0].dir, "cpu.stat")
	if d, ok := st.readFile(f); ok {
		m, err := parseKeyed(d)
		if err != nil {
			st.warn("%s: %v; throttling counters ignored", f, err)
			return
		}
		s.NrPeriods, s.NrThrottled = m["nr_periods"], m["nr_throttled"]
		if h.version == 1 {
			s.ThrottledTime = time.Duration(m["throttled_time"])
		} else {
			s.ThrottledTime = time.Duration(m["throttled_usec"]) * time.Microsecond
		}
	}
}

func (st *state) readCPUSet(s *Snapshot, h *hierarchy) {
	names := []string{"cpuset.effective_cpus", "cpuset.cpus"}
	if h.version == 2 {
		names = []string{"cpuset.cpus.effective"}
	}
	for _, lv := range h.levels {
		for _, n := range names {
			f := filepath.Join(lv.dir, n)
			d, ok := st.readFile(f)
			if !ok {
				continue
			}
			cpus, err := ParseCPUList(d)
			if err != nil {
				st.warn("%s: %v; ignored", f, err)
				continue
			}
			if len(cpus) == 0 {
				continue // unconfigured (v1) or inheriting: look further up
			}
			s.CPUSet, s.CPUSetFile = cpus, f
			return
		}
	}
}

func (st *state) readMemory(s *Snapshot, h *hierarchy) {
	limitName, usageName, peakName := "memory.limit_in_bytes", "memory.usage_in_bytes", "memory.max_usage_in_bytes"
	if h.version == 2 {
		limitName, usageName, peakName = "memory.max", "memory.current", "memory.peak"
	}
	for _, lv := range h.levels {
		f := filepath.Join(lv.dir, limitName)
		if d, ok := st.readFile(f); ok {
			n, unlimited, err := parseMaxOrInt(d)
			if err != nil {
				st.warn("%s: %v; ignored", f, err)
			} else if !unlimited && !st.atOrAboveHost(s, n) && (s.MemoryLimit == 0 || n < s.MemoryLimit) {
				s.MemoryLimit, s.MemoryLimitCgroup, s.MemoryLimitFile = n, lv.cgPath, f
			}
		}
		if h.version == 2 {
			f := filepath.Join(lv.dir, "memory.high")
			if d, ok := st.readFile(f); ok {
				n, unlimited, err := parseMaxOrInt(d)
				if err != nil {
					st.warn("%s: %v; ignored", f, err)
				} else if !unlimited && !st.atOrAboveHost(s, n) && (s.MemoryHigh == 0 || n < s.MemoryHigh) {
					s.MemoryHigh = n
				}
			}
		}
	}
	leaf := h.levels[0].dir
	for _, x := range []struct {
		name string
		dst  *int64
	}{{usageName, &s.MemoryUsage}, {peakName, &s.MemoryPeak}} {
		f := filepath.Join(leaf, x.name)
		if d, ok := st.readFile(f); ok {
			n, err := parseInt(d)
			if err != nil || n < 0 {
				if err == nil {
					err = fmt.Errorf("negative value %d", n)
				}
				st.warn("%s: %v; ignored", f, err)
				continue
			}
			*x.dst = n
		}
	}
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
	b, err := os.ReadFile(f)
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
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &set); err != nil {
			st.warn("sched_getaffinity(%d): %v", pid, err)
		} else {
			s.AffinityCPUs, s.AffinitySource = set.Count(), "sched_getaffinity"
		}
	} else {
		status := r.file("/proc/" + procName + "/status")
		if d, ok := st.readFile(status); ok {
			if cpus, err := parseStatusCPUs(d); err != nil || len(cpus) == 0 {
				if err == nil {
					err = errors.New("empty Cpus_allowed_list")
				}
				st.warn("%s: %v", status, err)
			} else {
				s.AffinityCPUs, s.AffinitySource = len(cpus), status+" Cpus_allowed_list"
			}
		}
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
