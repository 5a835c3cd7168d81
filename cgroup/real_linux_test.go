package cgroup_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/testutil"
)

// TestRealMoveAndResize uses the live cpu controller: a process started
// by the test is moved into a child cgroup and the quota is changed; each
// ReadProcess must see the new state (what a live resize relies on).
func TestRealMoveAndResize(t *testing.T) {
	dir, version := testutil.ChildCgroup(t, "cpu")
	own, err := cgroup.Reader{}.Read()
	if err != nil {
		t.Fatal(err)
	}
	quotaFile, value := "cpu.cfs_quota_us", func(q int) string { return strconv.Itoa(q) }
	if version == 2 {
		quotaFile, value = "cpu.max", func(q int) string { return fmt.Sprintf("%d 100000", q) }
	}
	sleep := startSleep(t)
	pid := sleep.Process.Pid
	r := cgroup.Reader{}
	read := func(when string) cgroup.Snapshot {
		t.Helper()
		s, err := r.ReadProcess(pid)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		return s
	}

	if got := read("before the move").CPUCgroup; got != own.CPUCgroup {
		t.Errorf("CPUCgroup before the move = %q, want %q", got, own.CPUCgroup)
	}
	write(t, filepath.Join(dir, quotaFile), value(50000))
	write(t, filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid))
	moved := read("after the move")
	wantPath := testutil.CgroupPath(own.CPUCgroup, own.CPUDir, dir)
	if moved.CPUCgroup != wantPath || moved.CPUDir != dir {
		t.Errorf("after the move: CPUCgroup %q, CPUDir %q; want %q, %q", moved.CPUCgroup, moved.CPUDir, wantPath, dir)
	}
	if own.CPUQuota == 0 || own.CPUQuota > 0.5 {
		if moved.CPUQuota != 0.5 || moved.CPUQuotaCgroup != wantPath {
			t.Errorf("after the move: CPUQuota %v at %q, want 0.5 at %q", moved.CPUQuota, moved.CPUQuotaCgroup, wantPath)
		}
	}

	write(t, filepath.Join(dir, quotaFile), value(150000))
	resized := read("after the resize")
	if resized.LeafCPUQuota != 1.5 {
		t.Errorf("LeafCPUQuota after the resize = %v, want 1.5", resized.LeafCPUQuota)
	}
	if len(resized.Warnings) != 0 {
		t.Errorf("warnings: %q", resized.Warnings)
	}

	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	if _, err := r.ReadProcess(pid); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadProcess of a reaped process: err = %v, want fs.ErrNotExist", err)
	}
}

func write(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRealProcs: Procs of a real cgroup lists the process moved into it,
// and one moved into a child of it.
func TestRealProcs(t *testing.T) {
	dir, _ := testutil.ChildCgroup(t, "memory")
	child := testutil.ChildCgroupOf(t, dir)
	var pids []int
	for _, into := range []string{dir, child} {
		sleep := startSleep(t)
		write(t, filepath.Join(into, "cgroup.procs"), strconv.Itoa(sleep.Process.Pid))
		pids = append(pids, sleep.Process.Pid)
	}
	got, err := cgroup.Procs(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(pids)
	if !slices.Equal(got, pids) {
		t.Errorf("Procs(%s) = %v, want %v", dir, got, pids)
	}
}

// startSleep starts a process that sleeps for a minute, killed and reaped
// at cleanup: registered after the test's cgroups were created, it runs
// before their removal.
func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sleep.Process.Kill()
		_ = sleep.Wait()
	})
	return sleep
}
