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
	if d.users > 0 {
		d.users++
		t.Cleanup(undelegateV2)
		return d.own
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
		return own
	}
	self := strconv.Itoa(os.Getpid())
	if procs := strings.Fields(readFile(filepath.Join(own, "cgroup.procs"))); len(procs) != 1 || procs[0] != self {
		t.Skipf("cgroup v2: %s holds other processes than this test (%v), so it cannot enable %v for a child; run the test binary alone in a cgroup of its own", own, procs, add)
	}
	leaf := filepath.Join(own, fmt.Sprintf("ration-test-%d-self", os.Getpid()))
	if err := os.Mkdir(leaf, 0o755); err != nil {
		t.Skipf("cgroup v2: cannot create %s: %v", leaf, err)
	}
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(self), 0o644); err != nil {
		_ = os.Remove(leaf)
		t.Skipf("cgroup v2: cannot move the test into %s: %v", leaf, err)
	}
	d.users, d.own, d.leaf, d.enabled = 1, own, leaf, nil
	for _, c := range add {
		if err := os.WriteFile(filepath.Join(own, "cgroup.subtree_control"), []byte("+"+c), 0o644); err != nil {
			d.undo()
			t.Skipf("cgroup v2: cannot enable %s in %s: %v", c, own, err)
		}
		d.enabled = append(d.enabled, c)
	}
	t.Cleanup(undelegateV2)
	return own
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
// removes it, retrying while the kernel finishes their exits.
func RemoveCgroup(t testing.TB, dir string) {
	t.Helper()
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
