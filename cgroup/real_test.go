package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRealMoveAndResize uses the live v1 cpu controller: a process started
// by the test is moved into a child cgroup and the quota is changed; each
// ReadProcess must see the new state (what a live resize relies on).
func TestRealMoveAndResize(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("real-cgroup test needs root")
	}
	own, err := Reader{}.Read()
	if err != nil || own.CPUDir == "" {
		t.Skipf("no cpu cgroup: %v", err)
	}
	quotaFile, value := "cpu.cfs_quota_us", func(q int) string { return strconv.Itoa(q) }
	if own.CPUVersion == 2 {
		quotaFile, value = "cpu.max", func(q int) string { return fmt.Sprintf("%d 100000", q) }
	}
	dir := filepath.Join(own.CPUDir, fmt.Sprintf("ration-cgroup-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
			t.Skipf("cpu cgroup %s not writable: %v", own.CPUDir, err)
		}
		t.Fatal(err)
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = sleep.Process.Kill()
		_ = sleep.Wait()
		for i := 0; i < 50; i++ {
			if err := os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Errorf("cleanup: cannot remove %s", dir)
	})
	pid := sleep.Process.Pid
	r := Reader{}

	before, err := r.ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "CPUCgroup before the move", before.CPUCgroup, own.CPUCgroup)

	if err := os.WriteFile(filepath.Join(dir, quotaFile), []byte(value(50000)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	moved, err := r.ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	wantPath := strings.TrimSuffix(own.CPUCgroup, "/") + "/" + filepath.Base(dir)
	eq(t, "CPUCgroup after the move", moved.CPUCgroup, wantPath)
	eq(t, "CPUDir after the move", moved.CPUDir, dir)
	if own.CPUQuota == 0 || own.CPUQuota > 0.5 {
		eq(t, "CPUQuota after the move", moved.CPUQuota, 0.5)
		eq(t, "CPUQuotaCgroup", moved.CPUQuotaCgroup, wantPath)
	}

	if err := os.WriteFile(filepath.Join(dir, quotaFile), []byte(value(150000)), 0o644); err != nil {
		t.Fatal(err)
	}
	resized, err := r.ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "LeafCPUQuota after the resize", resized.LeafCPUQuota, 1.5)
	if len(resized.Warnings) != 0 {
		t.Errorf("warnings: %q", resized.Warnings)
	}

	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	if _, err := r.ReadProcess(pid); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadProcess of a reaped process: err = %v, want fs.ErrNotExist", err)
	}
}

func TestOOMKills(t *testing.T) {
	n, err := OOMKills("testdata/v1/sys/fs/cgroup/memory/ration-test", 1)
	if err != nil || n != 3 {
		t.Errorf("v1: %d, %v; want 3", n, err)
	}
	n, err = OOMKills("testdata/v2/sys/fs/cgroup/system.slice/app.service", 2)
	if err != nil || n != 1 {
		t.Errorf("v2: %d, %v; want 1", n, err)
	}
	if _, err := OOMKills("testdata/v2/sys/fs/cgroup/nowhere", 2); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v, want fs.ErrNotExist", err)
	}
	root := copyTree(t, "testdata/v2")
	f := filepath.Join(root, "sys/fs/cgroup/system.slice/app.service/memory.events")
	must(t, os.WriteFile(f, []byte("oom_kill many\n"), 0o644))
	if _, err := OOMKills(filepath.Dir(f), 2); err == nil || !strings.Contains(err.Error(), f) {
		t.Errorf("malformed: %v, want an error naming %s", err, f)
	}
	s, err := Reader{}.Read()
	if err == nil && s.MemoryDir != "" {
		if n, err := OOMKills(s.MemoryDir, s.MemoryVersion); err != nil || n < s.OOMKills { // the counter only grows
			t.Errorf("live: %d, %v; Read said %d", n, err, s.OOMKills)
		}
	}
}
