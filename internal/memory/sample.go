package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ration-run/ration/cgroup"
)

// FromCgroup turns a cgroup reading into a Reading: the tightest limit, the
// working set of the cgroup that sets it, and the pressure of the process's
// own cgroup (where the jobs run, so its stalls are theirs).
func FromCgroup(m cgroup.MemoryReading) Reading {
	r := Reading{Limit: m.Limit, WorkingSet: m.LimitStat.WorkingSet}
	if m.Stat.Pressure.Present {
		r.Pressure, r.PressureSome10 = true, m.Stat.Pressure.Some.Avg10
	}
	return r
}

// Sampler reads the memory cgroup of the calling process as often as a
// runner admits jobs: it locates the directories once ([cgroup.Reader.MemStat])
// and then reads only a few small files per Sample. It has no mutable
// state and is safe for concurrent use.
type Sampler struct {
	version       int
	leaf, limitAt string // limitAt: "" when there is no limit
}

// NewSampler locates the memory cgroup of the calling process below r.Root.
func NewSampler(r cgroup.Reader) (*Sampler, error) {
	m, err := r.MemStat()
	if err != nil {
		return nil, err
	}
	return &Sampler{version: m.Stat.Version, leaf: m.Stat.Dir, limitAt: m.LimitStat.Dir}, nil
}

// SamplerFor returns a Sampler of the memory cgroup directory dir of the
// given version (1 or 2) whose own limit is the one that counts: for a
// cgroup a runner made for its jobs, or a test's.
func SamplerFor(dir string, version int) *Sampler {
	return &Sampler{version: version, leaf: dir, limitAt: dir}
}

// Limited reports whether a memory limit was found at NewSampler (or the
// Sampler was made by SamplerFor): without one, admission has nothing to
// check.
func (s *Sampler) Limited() bool { return s.limitAt != "" }

// Procs returns the processes of the memory cgroup the Sampler reads and
// of the cgroups below it ([cgroup.Procs]): the jobs' processes, where
// the jobs run in the runner's cgroup.
func (s *Sampler) Procs() ([]int, error) { return cgroup.Procs(s.leaf) }

// Sample reads the cgroups now. oomKills is the process's memory cgroup's
// oom_kill counter, -1 when the kernel does not count. The limit is
// re-read from the cgroup that set it at NewSampler (a resized pod is
// seen); when that cgroup no longer has one, Limit is 0.
func (s *Sampler) Sample() (r Reading, oomKills int64, err error) {
	leaf, err := cgroup.ReadMemStat(s.leaf, s.version)
	if err != nil {
		return Reading{}, -1, err
	}
	m := cgroup.MemoryReading{Stat: leaf}
	if s.limitAt != "" {
		at := leaf
		if s.limitAt != s.leaf {
			if at, err = cgroup.ReadMemStat(s.limitAt, s.version); err != nil {
				return Reading{}, leaf.OOMKills, err
			}
		}
		m.LimitStat, m.Limit = at, at.Limit
	}
	return FromCgroup(m), leaf.OOMKills, nil
}

// GroupRSS returns the resident memory, in bytes, of the processes of each
// process group in pgids (a job's, as the runner starts each job in its
// own group), read from procRoot/PID/stat ("/proc" on Linux) in one pass
// over every process there. A group with no process left has no entry.
// Processes that exit during the scan are skipped. Without a /proc (not
// Linux) it returns an error wrapping fs.ErrNotExist. [GroupRSSOf] reads
// only the processes given, which a runner with a memory cgroup prefers.
func GroupRSS(procRoot string, pgids []int) (map[int]int64, error) {
	pids, err := ProcessIDs(procRoot)
	if err != nil {
		return map[int]int64{}, err
	}
	return GroupRSSOf(procRoot, pids, pgids), nil
}

// ProcessIDs returns the ID of every process under procRoot ("/proc"):
// what GroupRSS and GroupRuns read where no memory cgroup narrows them.
func ProcessIDs(procRoot string) ([]int, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("admit: %w", err)
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// GroupRSSOf is [GroupRSS] over the processes pids only: those of the
// memory cgroup whose limit the jobs share ([Sampler.Procs]), which are
// the ones whose memory counts against it. Reading a process's stat file
// makes the kernel hold its memory for the length of the read (a process
// that exits meanwhile frees it only when the read ends), so a runner
// that scanned every process on the machine could delay the release of
// another cgroup's OOM-killed job, just when that cgroup needs its memory
// back; and the scan's cost grew with the machine's process count.
func GroupRSSOf(procRoot string, pids, pgids []int) map[int]int64 {
	want := map[int]bool{}
	for _, g := range pgids {
		want[g] = true
	}
	out := map[int]int64{}
	page := int64(os.Getpagesize())
	for _, pid := range pids {
		b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
		if err != nil {
			continue // exited, or a kernel thread we may not read
		}
		pgrp, pages, err := parseProcStat(string(b))
		if err != nil || !want[pgrp] {
			continue
		}
		out[pgrp] += pages * page
	}
	return out
}

// ProcessRSS returns the resident memory, in bytes, of the one process
// pid, read from procRoot/PID/stat: a cheap stand-in for [GroupRSS] when
// a process group's leader just started (its children, if any, are not
// counted). The error wraps fs.ErrNotExist when the process is gone.
func ProcessRSS(procRoot string, pid int) (int64, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("admit: %w", err)
	}
	_, pages, err := parseProcStat(string(b))
	if err != nil {
		return 0, fmt.Errorf("admit: %s/%d/stat: %w", procRoot, pid, err)
	}
	return pages * int64(os.Getpagesize()), nil
}

// GroupRuns reports whether a process of the process group pgid, among
// the processes pids (those of the jobs' memory cgroup, [Sampler.Procs],
// or [ProcessIDs]), is running: in any state but zombie or dead, read from
// procRoot/PID/stat. A job whose shell the OOM killer took may leave its
// command a zombie for as long as nobody reaps it (an orphan of a PID 1
// that does not), and a zombie holds no memory and runs nothing. As for
// GroupRSSOf, reading only the cgroup's processes keeps the read from
// holding other processes' memory, right after an OOM kill.
func GroupRuns(procRoot string, pids []int, pgid int) bool {
	for _, pid := range pids {
		b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
		if err != nil {
			continue // exited meanwhile
		}
		st, err := parseProcState(string(b))
		if err == nil && st.pgrp == pgid && st.state != 'Z' && st.state != 'X' {
			return true
		}
	}
	return false
}

// pfExiting is PF_EXITING of /proc/PID/stat's flags: the process is being
// torn down, its memory being freed.
const pfExiting = 0x4

// procState is what GroupRuns and GroupRSSOf read of a /proc/PID/stat
// line.
type procState struct {
	state    byte // field 3: R, S, D, Z, X, ...
	ppid     int
	flags    uint64 // field 9: PF_* (PF_EXITING: on its way out)
	pgrp     int
	rssPages int64
	pending  uint64 // field 31: the signals pending for the thread, as a bit set (0 where the line ends before it)
}

// killed reports whether the process is being killed: SIGKILL pending
// (the kernel marks every thread of a process a fatal signal kills, its
// OOM killer's victims included, until each thread dequeues it) or
// PF_EXITING (on its way out). Either way its memory is on its way back,
// though the OOM reaper may already have freed the resident pages, so
// that its RSS no longer shows it.
func (st procState) killed() bool {
	const sigkill = 1 << (9 - 1)
	return st.flags&pfExiting != 0 || st.pending&sigkill != 0
}

// parseProcStat returns the process group (field 5) and resident pages
// (field 24) of a /proc/PID/stat line.
func parseProcStat(s string) (pgrp int, rssPages int64, err error) {
	st, err := parseProcState(s)
	return st.pgrp, st.rssPages, err
}

// parseProcState parses a /proc/PID/stat line. The command name (field 2)
// may hold spaces and parentheses, so fields are counted after its last
// ')'.
func parseProcState(s string) (procState, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procState{}, errors.New("no ')' after the command name")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): pgrp is f[2], rss f[21], pending f[28].
	if len(f) < 22 {
		return procState{}, fmt.Errorf("%d fields after the command name, want at least 22", len(f))
	}
	if len(f[0]) != 1 {
		return procState{}, fmt.Errorf("state %q: not one letter", f[0])
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procState{}, fmt.Errorf("ppid %q: %w", f[1], err)
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return procState{}, fmt.Errorf("pgrp %q: %w", f[2], err)
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return procState{}, fmt.Errorf("flags %q: %w", f[6], err)
	}
	rssPages, err := strconv.ParseInt(f[21], 10, 64)
	if err != nil || rssPages < 0 {
		return procState{}, fmt.Errorf("rss %q: not a page count", f[21])
	}
	st := procState{state: f[0][0], ppid: ppid, pgrp: pgrp, flags: flags, rssPages: rssPages}
	if len(f) > 28 {
		if st.pending, err = strconv.ParseUint(f[28], 10, 64); err != nil {
			return procState{}, fmt.Errorf("pending signals %q: %w", f[28], err)
		}
	}
	return st, nil
}
