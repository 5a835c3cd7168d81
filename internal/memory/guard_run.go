package memory

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/ration-run/ration/cgroup"
)

// Guard stops a job before the kernel's OOM killer fires on a memory
// cgroup that ration shares with its jobs. It is the defence where the
// jobs cannot have a memory cgroup of their own (package jobcgroup: a
// read-only cgroupfs) and the kernel's OOM kill would take ration too:
// on cgroup v2 with memory.oom.group set, as Kubernetes sets it on every
// container's cgroup, the kernel kills every process of the container,
// ration and the whole batch in flight, when one job does not fit
// (oom_score_adj does not exempt anyone from a group kill but -1000,
// which takes CAP_SYS_RESOURCE).
//
// Run polls the memory charged to the cgroup whose limit counts (a read
// of one small file, read again as often as memory growing by
// guardGrowth could come within half the margin of the limit: every
// 100 ms far below the limit, down to every 2 ms next to it; sleeping so
// that only its own thread wakes for a reading), and on cgroup v2 at once
// when the kernel counts the cgroup at its limit (memory.events, which a
// read-only cgroupfs lets it watch). When the memory that
// cannot be reclaimed (the charge less the page cache on the file LRUs)
// comes within GuardMargin of the limit, it SIGKILLs the process group
// with the most resident memory among those of ration's children, as the
// kernel would have picked, and counts the kill; but not while a process
// of the cgroup is being killed (SIGKILL pending or exiting: its memory
// is on its way back, though its RSS may read 0 once the kernel's OOM
// reaper has taken it) for up to 200 ms, and not unless a reading taken
// once the jobs are listed is still past the line. Counter adds those
// kills to the cgroup's oom_kill counter, so that the job runner and the
// worker pool attribute a guard's stop as they attribute a kernel's OOM
// kill and apply the same rules (memory.OOMRetry): re-queued beside fewer
// jobs, failed as OOM-killed when it ran alone.
type Guard struct {
	dir     string // the cgroup whose limit counts: its charge and memory.stat are read
	version int
	leaf    string // ration's cgroup: its processes (and those below) are the candidates
	proc    string // the proc file system
	self    int    // ration's process ID
	log     *slog.Logger
	kills   atomic.Int64
}

// NewGuard returns a Guard of the memory cgroup s reads (NewSampler of
// ration's own). It is an error when s found no memory limit: then there
// is no OOM kill to pre-empt. A nil log discards.
func NewGuard(s *Sampler, log *slog.Logger) (*Guard, error) {
	if s == nil || !s.Limited() {
		return nil, errors.New("memory guard: no memory limit")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Guard{dir: s.limitAt, version: s.version, leaf: s.leaf, proc: "/proc", self: os.Getpid(), log: log}, nil
}

// Kills returns how many job process groups the guard has stopped.
func (g *Guard) Kills() int64 { return g.kills.Load() }

// Counter returns read (an oom_kill counter reader, nil: none) plus the
// guard's kills: the counter the job runner (runner.Config.OOMKills) and
// the worker pool (worker.Config.OOMKills) attribute OOM kills by. A
// guard's kill is counted before its SIGKILL is sent, so an attempt's end
// always sees it.
func (g *Guard) Counter(read func() (int64, error)) func() (int64, error) {
	return func() (int64, error) {
		n := int64(0)
		if read != nil {
			var err error
			if n, err = read(); err != nil {
				return n, err
			}
		}
		return n + g.kills.Load(), nil
	}
}

// GroupKill reports whether an OOM kill in the memory cgroup s reads
// takes every process of the cgroup ration is in: memory.oom.group is set
// on ration's cgroup or on an ancestor up to the one whose limit counts
// (the kernel kills the highest such cgroup whole). at is that cgroup's
// directory. Without a limit, or on cgroup v1 (no memory.oom.group), it
// is false.
func GroupKill(s *Sampler) (on bool, at string) {
	if s == nil || !s.Limited() || s.version != 2 {
		return false, ""
	}
	for dir := s.leaf; ; dir = filepath.Dir(dir) {
		if set, _, _ := cgroup.OOMGroup(dir); set {
			on, at = true, dir
		}
		if dir == s.limitAt || dir == filepath.Dir(dir) || !strings.HasPrefix(s.leaf, s.limitAt) {
			return on, at
		}
	}
}
