//go:build unix

package testutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/cgroup"
)

// ChildCgroup creates a child of the test process's own cgroup for
// controller ("cpu" or "memory"), in whichever hierarchy (v1 or v2) holds
// that controller, and returns its directory and cgroup version. At
// cleanup it kills whatever is left in it (only the test's own processes
// can be there) and removes it. It skips the test when not root, when no
// hierarchy has the controller, or when it is not writable.
func ChildCgroup(t testing.TB, controller string) (dir string, version int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot create cgroups")
	}
	snap, err := cgroup.Reader{}.Read()
	if err != nil {
		t.Skipf("cannot read own cgroups: %v", err)
	}
	own, version := snap.MemoryDir, snap.MemoryVersion
	if controller == "cpu" {
		own, version = snap.CPUDir, snap.CPUVersion
	}
	if own == "" || version == 0 {
		t.Skipf("no %s cgroup hierarchy found", controller)
	}
	if version == 2 {
		own = delegateV2(t, own)
	}
	return ChildCgroupOf(t, own), version
}

// v2Delegation is the state of the one change ChildCgroup makes to the
// test process's own cgroup on cgroup v2, shared by every test of the
// process because that cgroup is process-wide: a child of a v2 cgroup
// has cpu.max and memory.max only when its parent enables the
// controllers in cgroup.subtree_control, which the kernel refuses while
// the parent holds processes. So the first caller moves the test process
// (it must be the only one there: the device script runs each test
// binary in a cgroup of its own) into a leaf child, within its own
// subtree, and enables the controllers; the last cleanup undoes both.
var v2Delegation delegation

type delegation struct {
	sync.Mutex
	users   int
	own     string   // the cgroup the test process started in
	leaf    string   // where it was moved
	enabled []string // controllers enabled by the move
}

// delegateV2 returns the cgroup whose children have the cpu and memory
// controllers (those own's cgroup.controllers offers): own itself when it
// enables them already, else own after the move v2Delegation describes.
// It skips t when own holds other processes than the test's.
func delegateV2(t testing.TB, own string) string {
	t.Helper()
	d := &v2Delegation
	d.Lock()
	defer d.Unlock()
	delegated, why := d.delegate(own)
	if why != "" {
		t.Skip(why)
	}
	if d.users > 0 {
		t.Cleanup(undelegateV2)
	}
	return delegated
}

// DelegateCgroups is for TestMain, before any test starts a process: on
// cgroup v2 it makes the move ChildCgroup would make at its first call
// (which needs the test process alone in its cgroup, so a parallel test
// that has started a process must not come first), and returns its undo,
// to call after the tests. Where there is nothing to move, or the move
// fails, it does nothing and ChildCgroup decides per test.
func DelegateCgroups() (undo func()) {
	nothing := func() {}
	if os.Geteuid() != 0 {
		return nothing
	}
	snap, err := cgroup.Reader{}.Read()
	if err != nil || snap.MemoryVersion != 2 && snap.CPUVersion != 2 {
		return nothing
	}
	own := snap.MemoryDir
	if snap.MemoryVersion != 2 {
		own = snap.CPUDir
	}
	d := &v2Delegation
	d.Lock()
	defer d.Unlock()
	if _, why := d.delegate(own); why != "" || d.users == 0 {
		return nothing
	}
	return undelegateV2
}

// delegate is delegateV2 with d locked: it returns why it cannot, instead
// of skipping, and counts a user when a move is in place.
func (d *delegation) delegate(own string) (delegated, why string) {
	if d.users > 0 {
		d.users++
		return d.own, ""
	}
	offered := strings.Fields(readFile(filepath.Join(own, "cgroup.controllers")))
	enabled := strings.Fields(readFile(filepath.Join(own, "cgroup.subtree_control")))
	var add []string
	for _, c := range []string{"cpu", "memory"} {
		if slices.Contains(offered, c) && !slices.Contains(enabled, c) {
			add = append(add, c)
		}
	}
	if len(add) == 0 {
		return own, ""
	}
	self := strconv.Itoa(os.Getpid())
	if procs := strings.Fields(readFile(filepath.Join(own, "cgroup.procs"))); len(procs) != 1 || procs[0] != self {
		return "", fmt.Sprintf("cgroup v2: %s holds other processes than this test (%v), so it cannot enable %v for a child; run the test binary alone in a cgroup of its own", own, procs, add)
	}
	leaf := filepath.Join(own, fmt.Sprintf("ration-test-%d-self", os.Getpid()))
	if err := os.Mkdir(leaf, 0o755); err != nil {
		return "", fmt.Sprintf("cgroup v2: cannot create %s: %v", leaf, err)
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(self), 0o644); err != nil {
		_ = os.Remove(leaf)
		return "", fmt.Sprintf("cgroup v2: cannot move the test into %s: %v", leaf, err)
	}
	d.users, d.own, d.leaf, d.enabled = 1, own, leaf, nil
	for _, c := range add {
		if err := os.WriteFile(filepath.Join(own, "cgroup.subtree_control"), []byte("+"+c), 0o644); err != nil {
			d.undo()
			return "", fmt.Sprintf("cgroup v2: cannot enable %s in %s: %v", c, own, err)
		}
		d.enabled = append(d.enabled, c)
	}
	return own, ""
}

// undelegateV2 undoes delegateV2 when its last user is done: it disables
// the controllers it enabled, moves every process of the leaf (the test
// and any process it left there) back, and removes the leaf.
func undelegateV2() {
	d := &v2Delegation
	d.Lock()
	defer d.Unlock()
	d.undo()
}

// undo is undelegateV2 with d locked.
func (d *delegation) undo() {
	if d.users--; d.users > 0 {
		return
	}
	for _, c := range d.enabled {
		_ = os.WriteFile(filepath.Join(d.own, "cgroup.subtree_control"), []byte("-"+c), 0o644)
	}
	for range 100 {
		procs := strings.Fields(readFile(filepath.Join(d.leaf, "cgroup.procs")))
		if len(procs) == 0 {
			break
		}
		for _, p := range procs {
			_ = os.WriteFile(filepath.Join(d.own, "cgroup.procs"), []byte(p), 0o644)
		}
	}
	_ = os.Remove(d.leaf)
	d.own, d.leaf, d.enabled = "", "", nil
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// ChildCgroupOf creates a uniquely named child of the cgroup directory
// parent and removes it at cleanup, as ChildCgroup does.
func ChildCgroupOf(t testing.TB, parent string) string {
	t.Helper()
	dir := filepath.Join(parent, fmt.Sprintf("ration-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			t.Skipf("cgroup %s not writable: %v", parent, err)
		}
		t.Fatalf("mkdir %s: %v", dir, err)
	}
	t.Cleanup(func() { RemoveCgroup(t, dir) })
	return dir
}

// RemoveCgroup kills the processes left in the cgroup directory dir and
// removes it, retrying while the kernel finishes their exits; the cgroups
// below it first (a ration killed before it removed its jobs' cgroup
// leaves one).
func RemoveCgroup(t testing.TB, dir string) {
	t.Helper()
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if e.IsDir() {
				RemoveCgroup(t, filepath.Join(dir, e.Name()))
			}
		}
	}
	var err error
	for range 100 {
		if data, rerr := os.ReadFile(filepath.Join(dir, "cgroup.procs")); rerr == nil {
			for _, f := range strings.Fields(string(data)) {
				if pid, perr := strconv.Atoi(f); perr == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
		if err = os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("cleanup: rmdir %s: %v", dir, err)
}

// MemoryCgroup creates a child cgroup as ChildCgroup(t, "memory") does
// and limits it to limit bytes, swap included, so that a job over the
// limit is OOM-killed instead of swapped out. It skips when the test's
// own cgroup is limited to less than four times limit.
func MemoryCgroup(t testing.TB, limit int64) (dir string, version int) {
	t.Helper()
	if own, err := (cgroup.Reader{}).Read(); err == nil && own.MemoryLimit > 0 && own.MemoryLimit < 4*limit {
		t.Skipf("own memory limit %d is too close to the test's %d", own.MemoryLimit, limit)
	}
	dir, version = ChildCgroup(t, "memory")
	SetMemoryLimit(t, dir, limit)
	if version == 1 {
		watchOOMKills(t, dir)
	}
	return dir, version
}

// CgroupVersion is 2 when dir is in a cgroup v2 hierarchy (it has
// cgroup.controllers), else 1.
func CgroupVersion(dir string) int {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.controllers")); err == nil {
		return 2
	}
	return 1
}

// SetMemoryLimit limits the memory cgroup dir to limit bytes (0: no
// limit), swap included where the kernel accounts it: memory.max and
// memory.swap.max on v2, memory.limit_in_bytes and
// memory.memsw.limit_in_bytes on v1.
func SetMemoryLimit(t testing.TB, dir string, limit int64) {
	t.Helper()
	if CgroupVersion(dir) == 2 {
		value := "max"
		if limit > 0 {
			value = strconv.FormatInt(limit, 10)
		}
		WriteFile(t, filepath.Join(dir, "memory.max"), value)
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil {
			WriteFile(t, filepath.Join(dir, "memory.swap.max"), "0")
		}
		return
	}
	value := "-1"
	if limit > 0 {
		value = strconv.FormatInt(limit, 10)
	}
	// The kernel keeps memsw at or above the memory limit: when lowering,
	// the memory limit goes first; when raising (the first write fails),
	// memsw does.
	memsw := filepath.Join(dir, "memory.memsw.limit_in_bytes")
	if _, err := os.Stat(memsw); err != nil {
		WriteFile(t, filepath.Join(dir, "memory.limit_in_bytes"), value)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(value), 0o644); err != nil {
		WriteFile(t, memsw, value)
		WriteFile(t, filepath.Join(dir, "memory.limit_in_bytes"), value)
		return
	}
	WriteFile(t, memsw, value)
}

// SetCPUQuota sets the CPU quota of the cgroup dir to cpus CPUs over a
// period of 100 ms (0: no quota): cpu.max on v2, cpu.cfs_quota_us and
// cpu.cfs_period_us on v1.
func SetCPUQuota(t testing.TB, dir string, cpus float64) {
	t.Helper()
	quota := int64(cpus * 100000)
	if CgroupVersion(dir) == 2 {
		value := "max 100000"
		if cpus > 0 {
			value = fmt.Sprintf("%d 100000", quota)
		}
		WriteFile(t, filepath.Join(dir, "cpu.max"), value)
		return
	}
	if cpus <= 0 {
		quota = -1
	}
	WriteFile(t, filepath.Join(dir, "cpu.cfs_period_us"), "100000")
	WriteFile(t, filepath.Join(dir, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10))
}

// OOMKills is the number of processes the kernel OOM-killed in the
// memory cgroup dir and below ([cgroup.OOMKills]: oom_kill of
// memory.events on v2, of memory.oom_control on v1). It fails t when the
// count cannot be read.
//
// On v2 the kernel counts a child's kills in its ancestors too. On v1 it
// does not, and ration runs its jobs in a child cgroup that it removes
// when it ends (package jobcgroup): for a dir made by MemoryCgroup, a
// watcher started there has polled the counters of dir's descendants, and
// the most each one reached is added.
func OOMKills(t testing.TB, dir string) int {
	t.Helper()
	n, err := cgroup.OOMKills(dir, CgroupVersion(dir))
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := oomWatchers.Load(dir); ok {
		n += w.(*oomWatcher).below()
	}
	return int(n)
}

// oomWatchers maps a v1 memory cgroup made by MemoryCgroup to its
// watcher: tests run in parallel, each with its own cgroup.
var oomWatchers sync.Map

// oomWatcher polls the oom_kill counters of the cgroups below dir, which
// may be removed at any time, and keeps the most each one reached.
type oomWatcher struct {
	dir  string
	mu   sync.Mutex
	seen map[string]int64
	stop chan struct{}
	done chan struct{}
}

// watchOOMKills starts a watcher of dir (a v1 memory cgroup) that runs
// until t's cleanup.
func watchOOMKills(t testing.TB, dir string) {
	w := &oomWatcher{dir: dir, seen: map[string]int64{}, stop: make(chan struct{}), done: make(chan struct{})}
	oomWatchers.Store(dir, w)
	go w.loop()
	t.Cleanup(func() {
		close(w.stop)
		<-w.done
		oomWatchers.Delete(dir)
	})
}

func (w *oomWatcher) loop() {
	defer close(w.done)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		w.poll()
		select {
		case <-w.stop:
			return
		case <-tick.C:
		}
	}
}

// poll reads the counter of every cgroup below dir.
func (w *oomWatcher) poll() {
	_ = filepath.WalkDir(w.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == w.dir {
			return nil
		}
		if n, err := cgroup.OOMKills(path, 1); err == nil {
			w.mu.Lock()
			w.seen[path] = max(w.seen[path], n)
			w.mu.Unlock()
		}
		return nil
	})
}

// below polls once more and sums the most each cgroup below dir reached.
func (w *oomWatcher) below() int64 {
	w.poll()
	w.mu.Lock()
	defer w.mu.Unlock()
	var n int64
	for _, c := range w.seen {
		n += c
	}
	return n
}

// CgroupPath is the cgroup path, as /proc/PID/cgroup and ration write it,
// of the cgroup directory dir, given the test process's own cgroup path
// own and its directory ownDir: own, walked as dir lies from ownDir. On v1
// the test's cgroups are children of ownDir; on v2, after ChildCgroup
// moved the test process into a leaf, they are that leaf's siblings
// ("../name"). Not path.Join: it would clean away the leading ".." of a
// path outside the cgroup namespace ("/../x").
func CgroupPath(own, ownDir, dir string) string {
	rel, err := filepath.Rel(ownDir, dir)
	if err != nil {
		return "?" + dir
	}
	p := strings.TrimSuffix(own, "/")
	for _, e := range strings.Split(rel, string(filepath.Separator)) {
		switch e {
		case ".":
		case "..":
			p = p[:max(strings.LastIndex(p, "/"), 0)]
		default:
			p += "/" + e
		}
	}
	if p == "" {
		return "/"
	}
	return p
}

// EnableControllers lets the children of the cgroup v2 directory dir,
// which must hold no process, have the cpu and memory controllers that
// dir has (a nested test cgroup needs this for a limit on a grandchild).
// On v1 it does nothing.
func EnableControllers(t testing.TB, dir string) {
	t.Helper()
	if CgroupVersion(dir) != 2 {
		return
	}
	offered := strings.Fields(readFile(filepath.Join(dir, "cgroup.controllers")))
	for _, c := range []string{"cpu", "memory"} {
		if slices.Contains(offered, c) {
			WriteFile(t, filepath.Join(dir, "cgroup.subtree_control"), "+"+c)
		}
	}
}
