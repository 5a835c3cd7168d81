package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"time"
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
	// NoCgroups is set on a live read on an OS without cgroups (every OS
	// but Linux; see the package doc) and says so: "no cgroups on
	// darwin". The CPU counts are then runtime.NumCPU(). "" on Linux and
	// for a snapshot tree.
	NoCgroups string

	// CPUCgroup is the process's cgroup path in the CPU hierarchy as
	// /proc/PID/cgroup writes it; CPUDir is its directory (with Root
	// prefixed). Empty when no CPU hierarchy is found.
	CPUCgroup string
	CPUDir    string
	// CPUOutsideNamespace is set when no mount of the CPU hierarchy has a
	// root that is a prefix of CPUCgroup: in a cgroup namespace whose
	// hierarchy was mounted outside it (unshare -C, a sandbox that keeps
	// the host's /sys) CPUCgroup reads "/" and the mount's root "/../..",
	// and the cgroup is found by searching below the mount point (see the
	// package doc). The Go runtime locates its cgroup by the mount roots
	// alone (internal/runtime/cgroup), so it then finds none and sees no
	// CPU quota at all: LeafCPUQuota is not what it sees.
	CPUOutsideNamespace bool
	// AncestorsHidden is set on cgroup v2 when the root of the mounted
	// hierarchy is not the hierarchy's root but a cgroup of its own (it
	// has cgroup.type, which only non-root cgroups have): a container in a
	// cgroup namespace, as Kubernetes runs every one on v2, sees its own
	// cgroup as the root. Limits of the cgroups above it, such as a pod's
	// pod-level resources, cannot be read from there and are not in
	// CPUQuota or MemoryLimit.
	AncestorsHidden bool

	// CPUQuota is the tightest CPU bandwidth limit over the walk from the
	// process's cgroup up to the mount root, in CPUs (quota / period);
	// 0 means unlimited. CPUQuotaUs and CPUPeriodUs are the raw values of
	// that level, CPUQuotaCgroup its cgroup path and CPUQuotaFile the file
	// that gave it. LeafCPUQuota is the process's own cgroup's quota (what
	// the Go runtime sees, unless CPUOutsideNamespace), 0 when unlimited.
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
	// writes 9223372036854771712 for "no limit"). On v1 the leaf's
	// hierarchical_memory_limit (memory.stat) also counts: it sees limits
	// above the mount root, and MemoryLimitCgroup is then "an ancestor of
	// ROOT" and MemoryLimitFile that memory.stat.
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

// state carries one read in progress.
type state struct {
	r Reader
	// pid is the live process read (os.Getpid() for Read), 0 for a
	// snapshot.
	pid      int
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
	b, err := readFile(name)
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
	if r.live() && !haveCgroups {
		return noCgroups(runtime.GOOS, runtime.NumCPU()), nil
	}
	st := &state{r: r}
	if r.live() {
		st.pid = pid
		if pid == 0 {
			st.pid = os.Getpid()
		}
	}
	s := Snapshot{}
	st.readHost(&s, procName, pid)

	cgFile := r.file("/proc/" + procName + "/cgroup")
	cgData, err := readFile(cgFile)
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
	mounts := st.readMountinfo(miFile)
	v1Mounted, v2Mounted := mountedVersions(lines, mounts)
	s.Hybrid = v1Mounted && v2Mounted
	st.readControllers(&s, lines, mounts)
	s.Version = snapshotVersion(s, v1Mounted, v2Mounted)
	if r.live() {
		s.HostMode = hostMode()
		ours := modeFromMounts(v1Mounted, v2Mounted)
		if pid == 0 && s.HostMode != ours {
			st.warn("containerd cgroups.Mode() says %s but %s suggests %s", s.HostMode, miFile, ours)
		}
	}
	s.Warnings = nonNil(st.warnings)
	return s, nil
}

// noCgroups is the live reading on an OS without cgroups (see the
// package doc): the host's CPUs and nothing else.
func noCgroups(goos string, cpus int) Snapshot {
	const source = "runtime.NumCPU()"
	return Snapshot{
		HostMode:       "unavailable",
		AffinityCPUs:   cpus,
		AffinitySource: source,
		HostCPUs:       cpus,
		HostCPUsSource: source,
		NoCgroups:      "no cgroups on " + goos,
		Warnings:       []string{},
	}
}

// readMountinfo parses the mount table; a missing one leaves every
// hierarchy unlocated, with a warning.
func (st *state) readMountinfo(miFile string) []mount {
	miData, ok := st.readFile(miFile)
	if !ok {
		st.warn("%s: missing; cannot locate cgroup directories", miFile)
		return nil
	}
	mounts, w := parseMountinfo(miData)
	for _, x := range w {
		st.warn("%s: %s", miFile, x)
	}
	return mounts
}

// mountedVersions reports whether any v1 hierarchy of the process, and
// its v2 hierarchy, are mounted.
func mountedVersions(lines []procCgroup, mounts []mount) (v1, v2 bool) {
	for _, l := range lines {
		if l.id == 0 && len(l.controllers) == 0 {
			if slices.ContainsFunc(mounts, func(m mount) bool { return m.fsType == "cgroup2" }) {
				v2 = true
			}
			continue
		}
		for _, c := range l.controllers {
			if slices.ContainsFunc(mounts, func(m mount) bool { return m.fsType == "cgroup" && slices.Contains(m.options, c) }) {
				v1 = true
			}
		}
	}
	return v1, v2
}

// readControllers locates and reads the cpu, cpuset and memory
// hierarchies.
func (st *state) readControllers(s *Snapshot, lines []procCgroup, mounts []mount) {
	if h := st.locate(lines, mounts, "cpu"); h != nil {
		s.CPUVersion, s.CPUCgroup, s.CPUDir = h.version, h.cgPath, h.levels[0].dir
		s.CPUOutsideNamespace = h.outside
		if h.version == 2 {
			_, s.AncestorsHidden = st.readFile(filepath.Join(h.levels[len(h.levels)-1].dir, "cgroup.type"))
		}
		st.readCPU(s, h)
	}
	if h := st.locate(lines, mounts, "cpuset"); h != nil {
		st.readCPUSet(s, h)
	}
	if h := st.locate(lines, mounts, "memory"); h != nil {
		s.MemoryVersion, s.MemoryCgroup, s.MemoryDir = h.version, h.cgPath, h.levels[0].dir
		st.readMemory(s, h)
	}
}

// snapshotVersion is Snapshot.Version: the CPU controller's version,
// else the memory controller's, else whichever hierarchy is mounted.
func snapshotVersion(s Snapshot, v1Mounted, v2Mounted bool) int {
	switch {
	case s.CPUVersion != 0:
		return s.CPUVersion
	case s.MemoryVersion != 0:
		return s.MemoryVersion
	case v2Mounted:
		return 2
	case v1Mounted:
		return 1
	}
	return 0
}

// modeFromMounts names, as containerd's cgroups.Mode() does, what the
// mount table says.
func modeFromMounts(v1Mounted, v2Mounted bool) string {
	switch {
	case v1Mounted && v2Mounted:
		return "hybrid"
	case v2Mounted:
		return "unified"
	case !v1Mounted:
		return "unavailable"
	}
	return "legacy"
}

func nonNil(w []string) []string {
	if w == nil {
		return []string{}
	}
	return w
}
