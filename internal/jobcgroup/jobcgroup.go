// Package jobcgroup gives a run's jobs and workers a memory cgroup of
// their own, below ration's, whose limit leaves ration room.
//
// Where ration and its jobs share one memory cgroup, the kernel's OOM
// killer chooses among all of them when the cgroup runs out. ration
// raises its jobs' oom_score_adj so that a job is chosen first, but a
// killed job's memory can stay charged after its death: for milliseconds
// while the kernel tears the process down, for good when it is a tmpfs
// file. Any page that ration faults in meanwhile brings another kill, and
// once no job is left, the one chosen is ration: the run, its joblog and
// its record of what is done are lost. On a real cgroup v2 host that
// happened in 10 of 25 runs of an OOM test with Go workers.
//
// A [Group] is a child memory cgroup whose limit is the tightest limit
// over ration's cgroup and its ancestors minus a reserve for ration
// itself. Jobs and workers start in it and ration stays outside, so the
// OOM killer of the jobs' cgroup never sees ration, and ration keeps its
// reserve below the limit they share.
//
// The jobs start in it from birth, so that nothing they fork escapes:
//
//   - on cgroup v1 the thread that forks them (package pdeath) joins the
//     group's memory cgroup, and a child starts in its forking thread's
//     cgroup; ration's own pages stay charged to ration's cgroup, the
//     cgroup of its main thread;
//   - on cgroup v2, where a process's threads share one memory cgroup,
//     they are started with clone3's CLONE_INTO_CGROUP
//     (SysProcAttr.UseCgroupFD). A v2 cgroup whose children have a memory
//     limit may hold no process itself, so ration first moves itself into
//     a leaf of its own beside the group, which it can only do when it is
//     alone in its cgroup.
//
// It needs a memory limit and a writable cgroup: root, or a delegated
// subtree. A container usually mounts its cgroups read-only; then
// [Create] fails with the reason and the jobs share ration's cgroup as
// before. Linux only: elsewhere Create fails with errors.ErrUnsupported.
//
// It imports cgroup, limits and internal/pdeath; it must not import runner
// or runner/worker (both import it) nor the command line's packages.
package jobcgroup

import (
	"errors"
	"fmt"

	"github.com/ration-run/ration/limits"
)

// MinReserve is the least memory a Group leaves ration: two to three times
// the anonymous memory of a ration run of a few hundred jobs (3 to 5 MiB).
const MinReserve = 12 << 20

// ErrNoLimit is returned by Create when no memory limit binds ration's
// cgroup: then there is nothing to keep ration's share of.
var ErrNoLimit = errors.New("jobcgroup: no memory limit")

// Options are Create's.
type Options struct {
	// Reserve is how much of the limit ration keeps for itself; 0 means
	// DefaultReserve of ration's resident anonymous memory (RssAnon) when
	// Create runs.
	Reserve int64
}

// DefaultReserve is the reserve for a process of anon bytes of resident
// anonymous memory under a limit of limit bytes: twice anon, at least
// MinReserve, and at most a quarter of the limit, so that a small limit
// leaves the jobs most of it. The reserve is not a wall: should ration
// outgrow it while the jobs fill theirs, the shared limit is reached and
// the kernel chooses among all processes again, as without a group.
func DefaultReserve(anon, limit int64) int64 {
	return min(max(2*anon, MinReserve), limit/4)
}

// A Group is the jobs' memory cgroup. Its methods are safe on a nil
// *Group, which stands for "no group": the jobs then start in ration's
// own cgroup. Follow changes the limit fields and must not run
// concurrently with String or another Follow; the rest is read-only.
type Group struct {
	// Dir is the group's directory, Version its cgroup version (1 or 2).
	Dir     string
	Version int
	// Limit is its memory limit: ParentLimit minus Reserve.
	Limit, ParentLimit, Reserve int64

	parent string // ration's memory cgroup, where the group was made
	tasks  string // v1: the tasks file the forking threads join
	fd     int    // v2: the group's directory, open for CLONE_INTO_CGROUP; -1 on v1
	ctl    controller
	undo   []func() error
}

// String says what the group is, for logs and `ration limits`.
func (g *Group) String() string {
	if g == nil {
		return "none: jobs share ration's memory cgroup"
	}
	return fmt.Sprintf("%s (cgroup v%d), limit %s: %s of %s kept for ration",
		g.Dir, g.Version, limits.FormatSize(g.Limit), limits.FormatSize(g.Reserve), limits.FormatSize(g.ParentLimit))
}

// Tasks is the cgroup v1 tasks file that a forking thread joins so that
// the processes it forks start in the group (pdeath.Thread.Tasks); "" on
// cgroup v2 and for a nil Group.
func (g *Group) Tasks() string {
	if g == nil {
		return ""
	}
	return g.tasks
}
