//go:build unix

package testutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	return ChildCgroupOf(t, own), version
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
