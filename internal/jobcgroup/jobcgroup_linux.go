package jobcgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/pdeath"
	"github.com/ration-run/ration/limits"
	"golang.org/x/sys/unix"
)

// Create makes the jobs' memory cgroup below the calling process's own
// memory cgroup. It fails with ErrNoLimit when no limit binds, and with
// the reason when the cgroup cannot be made (not writable, other
// processes beside ration on cgroup v2, ...); it then leaves everything
// as it found it. Close removes the group.
func Create(opts Options) (*Group, error) {
	snap, err := cgroup.Reader{}.Read()
	if err != nil {
		return nil, fmt.Errorf("jobcgroup: %w", err)
	}
	if snap.MemoryDir == "" || snap.MemoryVersion == 0 {
		return nil, errors.New("jobcgroup: no memory cgroup found")
	}
	if snap.MemoryLimit <= 0 {
		return nil, ErrNoLimit
	}
	reserve := opts.Reserve
	if reserve <= 0 {
		reserve = DefaultReserve(ownAnon(), snap.MemoryLimit)
	}
	return create(snap.MemoryDir, snap.MemoryVersion, snap.MemoryLimit, reserve, os.Getpid())
}

// controller is the cgroup controller a group limits and the file of
// the limit. Groups are made for memory; TestVacateV2 makes one for
// hugetlb, the domain controller that a hybrid host's v2 hierarchy has,
// to check what cgroup v2 asks of a parent (no process of its own while
// its children have a domain controller) where memory is v1's.
type controller struct{ name, limitFile string }

var (
	memoryV1 = controller{"memory", "memory.limit_in_bytes"}
	memoryV2 = controller{"memory", "memory.max"}
)

// Check says whether a `ration run` in the memory cgroup of snap (a live
// reading) could make the group, without making it: the reserve it would
// keep, or why not. It checks the limit and that the cgroup directory is
// writable; on cgroup v2 also that the memory controller is delegated to
// it and that the calling process is alone in it (as ration run must be).
func Check(snap cgroup.Snapshot) (reserve int64, err error) {
	switch {
	case snap.MemoryDir == "" || snap.MemoryVersion == 0:
		return 0, errors.New("jobcgroup: no memory cgroup found")
	case snap.MemoryLimit <= 0:
		return 0, ErrNoLimit
	}
	if err := unix.Access(snap.MemoryDir, unix.W_OK); err != nil {
		return 0, fmt.Errorf("jobcgroup: %s is not writable: %w", snap.MemoryDir, err)
	}
	if snap.MemoryVersion == 2 {
		if err := checkV2(snap.MemoryDir, os.Getpid(), memoryV2); err != nil {
			return 0, err
		}
	}
	return DefaultReserve(ownAnon(), snap.MemoryLimit), nil
}

// checkV2 is what vacateV2 needs of parent before it changes anything.
func checkV2(parent string, pid int, c controller) error {
	procs := strings.Fields(readString(filepath.Join(parent, "cgroup.procs")))
	if len(procs) != 1 || procs[0] != strconv.Itoa(pid) {
		return fmt.Errorf("jobcgroup: %s holds other processes than ration (%d), so its children cannot have a %s limit (cgroup v2)", parent, len(procs), c.name)
	}
	if !slices.Contains(strings.Fields(readString(filepath.Join(parent, "cgroup.controllers"))), c.name) {
		return fmt.Errorf("jobcgroup: the %s controller is not delegated to %s", c.name, parent)
	}
	return nil
}

// create makes the memory group below parent for process pid.
func create(parent string, version int, limit, reserve int64, pid int) (*Group, error) {
	c := memoryV1
	if version == 2 {
		c = memoryV2
	}
	return createFor(c, parent, version, limit, reserve, pid)
}

// createFor makes the group of controller c below parent for process pid.
func createFor(c controller, parent string, version int, limit, reserve int64, pid int) (*Group, error) {
	if reserve >= limit {
		return nil, fmt.Errorf("jobcgroup: a reserve of %s leaves nothing of the limit %s", limits.FormatSize(reserve), limits.FormatSize(limit))
	}
	removeStale(parent)
	g := &Group{Version: version, Limit: limit - reserve, ParentLimit: limit, Reserve: reserve, parent: parent, fd: -1, ctl: c,
		Dir: filepath.Join(parent, fmt.Sprintf("ration-%d-jobs", pid))}
	var err error
	if version == 2 {
		err = g.vacateV2(pid)
	}
	if err == nil {
		err = g.makeDir(pid)
	}
	if err != nil {
		_ = g.Close()
		return nil, err
	}
	return g, nil
}

// vacateV2 moves process pid out of parent into a leaf of its own and
// enables the group's controller for parent's children: cgroup v2 allows
// neither while parent holds a process.
func (g *Group) vacateV2(pid int) error {
	if err := checkV2(g.parent, pid, g.ctl); err != nil {
		return err
	}
	self := strconv.Itoa(pid)
	leaf := filepath.Join(g.parent, fmt.Sprintf("ration-%d", pid))
	if err := mkdir(leaf); err != nil {
		return err
	}
	// What a job left in the group is moved here first, then on to parent.
	g.undo = append(g.undo, func() error { return removeDir(leaf, g.parent) })
	if err := write(filepath.Join(leaf, "cgroup.procs"), self); err != nil {
		return err
	}
	g.undo = append(g.undo, func() error { return write(filepath.Join(g.parent, "cgroup.procs"), self) })
	control := filepath.Join(g.parent, "cgroup.subtree_control")
	if !slices.Contains(strings.Fields(readString(control)), g.ctl.name) {
		if err := write(control, "+"+g.ctl.name); err != nil {
			return err
		}
		g.undo = append(g.undo, func() error { return write(control, "-"+g.ctl.name) })
	}
	return nil
}

// makeDir makes the group's directory with its limit, and what forks into
// it: the tasks file (v1) or an open directory (v2). pid is ration's.
func (g *Group) makeDir(pid int) error {
	if err := mkdir(g.Dir); err != nil {
		return err
	}
	// Processes a job left running move to ration's cgroup: on v2 its
	// leaf, as long as the parent's children have the controller.
	to := g.parent
	if g.Version == 2 {
		to = filepath.Join(g.parent, fmt.Sprintf("ration-%d", pid))
	}
	g.undo = append(g.undo, func() error { return removeDir(g.Dir, to) })
	if err := write(filepath.Join(g.Dir, g.ctl.limitFile), strconv.FormatInt(g.Limit, 10)); err != nil {
		return err
	}
	if g.Version == 1 {
		g.tasks = filepath.Join(g.Dir, "tasks")
		back := filepath.Join(g.parent, "tasks")
		g.undo = append(g.undo, func() error { return pdeath.Retire(g.tasks, back) })
		return nil
	}
	fd, err := syscall.Open(g.Dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("jobcgroup: open %s: %w", g.Dir, err)
	}
	g.fd = fd
	g.undo = append(g.undo, func() error { return syscall.Close(fd) })
	return nil
}

// Follow sets the group's limit for a new shared limit (a resized pod,
// seen by --watch-limits): limit minus the reserve, or none when limit is
// 0 (the limit was lifted: the jobs may use what ration's cgroup may, and
// Limit and ParentLimit are 0 until a limit comes back). A limit that
// leaves nothing after the reserve keeps the group's limit and is an
// error; so is a limit the kernel refuses (v1 refuses one below what the
// jobs use and cannot reclaim).
func (g *Group) Follow(limit int64) error {
	if g == nil || limit == g.ParentLimit {
		return nil
	}
	value, jobs := "max", int64(0)
	if g.Version == 1 {
		value = "-1"
	}
	if limit > 0 {
		if limit <= g.Reserve {
			return fmt.Errorf("jobcgroup: a limit of %s leaves nothing after the reserve of %s; the jobs keep %s", limits.FormatSize(limit), limits.FormatSize(g.Reserve), limits.FormatSize(g.Limit))
		}
		jobs = limit - g.Reserve
		value = strconv.FormatInt(jobs, 10)
	}
	if err := write(filepath.Join(g.Dir, g.ctl.limitFile), value); err != nil {
		return err
	}
	g.Limit, g.ParentLimit = jobs, limit
	return nil
}

// SetProcAttr makes a process started with attr start in the group on
// cgroup v2 (clone3's CLONE_INTO_CGROUP); on cgroup v1, where the forking
// thread's cgroup decides (Tasks), and for a nil Group, it does nothing.
func (g *Group) SetProcAttr(attr *syscall.SysProcAttr) {
	if g == nil || g.fd < 0 || attr == nil {
		return
	}
	attr.UseCgroupFD, attr.CgroupFD = true, g.fd
}

// Close removes the group once its processes are gone (waiting up to 1 s
// for the kernel to finish their exits; processes that a job left running
// are then moved to ration's cgroup) and, on cgroup v2, moves ration back
// into its cgroup. Call it when no job or worker runs any more. It
// returns the first error; a nil Group has nothing to close.
func (g *Group) Close() error {
	if g == nil {
		return nil
	}
	var first error
	for i := len(g.undo) - 1; i >= 0; i-- {
		if err := g.undo[i](); err != nil && first == nil {
			first = err
		}
	}
	g.undo, g.fd = nil, -1
	return first
}

// removeStale removes the groups and leaves that an earlier ration left
// below parent when it was killed before its Close: those whose process
// is gone. A cgroup that still holds a process is not removed.
func removeStale(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "ration-")
		if !ok || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSuffix(rest, "-jobs"))
		if err != nil || pid <= 0 || !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			continue
		}
		_ = os.Remove(filepath.Join(parent, e.Name()))
	}
}

// ownAnon is the calling process's resident anonymous memory in bytes
// (RssAnon of /proc/self/status), 0 when unknown: its heap and stacks,
// which grow with its work. Its file-backed pages (the binary) are
// shared and can be reclaimed.
func ownAnon() int64 {
	for line := range strings.Lines(readString("/proc/self/status")) {
		v, ok := strings.CutPrefix(line, "RssAnon:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func mkdir(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("jobcgroup: %w", err)
	}
	return nil
}

func write(path, value string) error {
	if err := os.WriteFile(path, []byte(value), 0o644); err != nil {
		return fmt.Errorf("jobcgroup: %w", err)
	}
	return nil
}

// removeDir removes the cgroup directory dir, retrying for up to 1 s
// while the kernel finishes the exits of its last processes. Processes
// still in it then were left running by a job (a child that left its
// process group: setsid, a daemon): ration neither waits for them nor
// kills them, so they are moved to the cgroup to (ration's), where they
// run on under the limit they shared, and dir is removed.
func removeDir(dir, to string) error {
	err := removeWaiting(dir)
	for round := 0; errors.Is(err, syscall.EBUSY) && round < 5; round++ {
		// A process may fork while it is moved: its child starts in dir.
		for _, pid := range strings.Fields(readString(filepath.Join(dir, "cgroup.procs"))) {
			// One that exits meanwhile fails with ESRCH: it is gone anyway.
			_ = os.WriteFile(filepath.Join(to, "cgroup.procs"), []byte(pid), 0o644)
		}
		err = removeWaiting(dir)
	}
	if err != nil {
		return fmt.Errorf("jobcgroup: %w", err)
	}
	return nil
}

// removeWaiting removes dir, retrying for up to 1 s while it is busy.
func removeWaiting(dir string) error {
	var err error
	for range 50 {
		if err = os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	return err
}
