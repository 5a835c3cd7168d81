package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Real mountinfo and /proc/self/cgroup contents, trimmed to the lines that
// matter, from a cgroup v1 hybrid host (this development VM), a systemd
// v2-only host and a v2 container with a cgroup namespace.
const (
	mountinfoHybrid = `22 28 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
30 22 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
34 30 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,cpu,cpuacct
38 30 0:34 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:18 - cgroup cgroup rw,memory
`
	cgroupHybrid = `12:cpu,cpuacct:/
4:memory:/process_api/6e28441f222670ea9b2eda5c2b56fe47
0::/
`
	mountinfoV2 = `24 29 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
	cgroupV2 = "0::/user.slice/user-0.slice/session-4.scope\n"
	// In a cgroup namespace the mount's root is the container's cgroup and
	// /proc/self/cgroup may still show the full path when read from outside
	// the namespace's view (bind-mounted /sys/fs/cgroup).
	mountinfoV2NS = `1210 1201 0:30 /kubepods/pod1/ctr /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw
`
	cgroupV2NS     = "0::/kubepods/pod1/ctr\n"
	mountinfoSpace = `40 30 0:34 / /mnt/my\040cgroups rw,relatime - cgroup2 cgroup2 rw
`
)

func TestFindHierarchy(t *testing.T) {
	tests := []struct {
		name, mountinfo, own string
		wantV1               map[string]string
		wantV2               string
		wantErr              error
	}{
		{name: "hybrid: v1 controllers win over the empty v2 mount", mountinfo: mountinfoHybrid, own: cgroupHybrid,
			wantV1: map[string]string{"cpu": "/sys/fs/cgroup/cpu,cpuacct", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct", "memory": "/sys/fs/cgroup/memory/process_api/6e28441f222670ea9b2eda5c2b56fe47"}},
		{name: "v2 only", mountinfo: mountinfoV2, own: cgroupV2, wantV2: "/sys/fs/cgroup/user.slice/user-0.slice/session-4.scope"},
		{name: "v2 in a cgroup namespace", mountinfo: mountinfoV2NS, own: cgroupV2NS, wantV2: "/sys/fs/cgroup"},
		{name: "escaped mount point", mountinfo: mountinfoSpace, own: "0::/a\n", wantV2: "/mnt/my cgroups/a"},
		{name: "no cgroup mounts", mountinfo: "22 28 0:20 / /sys rw - sysfs sysfs rw\n", own: cgroupV2, wantErr: errNoCgroup},
		{name: "v1 without memory and no v2 line", mountinfo: mountinfoHybrid, own: "12:cpu,cpuacct:/\n", wantErr: errNoCgroup},
		{name: "garbage", mountinfo: "not a mountinfo line\n - \n", own: "::::\n", wantErr: errNoCgroup},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := findHierarchy(tc.mountinfo, tc.own)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if h.unified != tc.wantV2 {
				t.Errorf("unified %q, want %q", h.unified, tc.wantV2)
			}
			for c, d := range tc.wantV1 {
				if h.dirs[c] != d {
					t.Errorf("%s at %q, want %q", c, h.dirs[c], d)
				}
			}
		})
	}
}

// v2Fixture is a directory laid out like a delegated cgroup v2 cgroup.
func v2Fixture(t *testing.T, controllers string) *hierarchy {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"cgroup.controllers": controllers, "cgroup.subtree_control": "", "cgroup.procs": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// No cgroup.type: the fixture is a root cgroup, whose processes need not
	// move (moving needs the kernel).
	return &hierarchy{unified: dir}
}

func TestV2PrepareNeedsControllers(t *testing.T) {
	h := v2Fixture(t, "io pids memory")
	_, err := h.prepare()
	if err == nil || !strings.Contains(err.Error(), "cpu controller is not available") || !strings.Contains(err.Error(), "Delegate=yes") {
		t.Fatalf("prepare without cpu: %v, want an error naming the cpu controller and how to delegate it", err)
	}
}

func TestV2PrepareEnablesAndRestores(t *testing.T) {
	h := v2Fixture(t, "cpuset cpu io memory pids")
	restore, err := h.prepare()
	if err != nil {
		t.Fatal(err)
	}
	// A plain file keeps only the last write; the kernel's file keeps a set.
	if got := readString(filepath.Join(h.unified, "cgroup.subtree_control")); got != "+memory" {
		t.Errorf("subtree_control after prepare: last write %q, want +memory", got)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got := readString(filepath.Join(h.unified, "cgroup.subtree_control")); got != "-memory" {
		t.Errorf("subtree_control after restore: last write %q, want -memory", got)
	}

	// Already enabled: nothing is written.
	h = v2Fixture(t, "cpu memory")
	if err := os.WriteFile(filepath.Join(h.unified, "cgroup.subtree_control"), []byte("cpu memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.prepare(); err != nil {
		t.Fatal(err)
	}
	if got := readString(filepath.Join(h.unified, "cgroup.subtree_control")); got != "cpu memory" {
		t.Errorf("subtree_control %q was written although both controllers were on", got)
	}
}

// TestV2PrepareLeaf: below the root (a cgroup.type file) prepare makes the
// leaf the cgroup's processes move into, and restore removes it. (The
// fixture's cgroup.procs is empty: moving a pid needs the kernel.)
func TestV2PrepareLeaf(t *testing.T) {
	h := v2Fixture(t, "cpu memory")
	if err := os.WriteFile(filepath.Join(h.unified, "cgroup.type"), []byte("domain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	restore, err := h.prepare()
	if err != nil {
		t.Fatal(err)
	}
	leaf := filepath.Join(h.unified, fmt.Sprintf("ration-bench-%d-procs", os.Getpid()))
	if _, err := os.Stat(leaf); err != nil {
		t.Fatalf("no leaf for the processes: %v", err)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leaf); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("leaf %s still there after restore (%v)", leaf, err)
	}
}

func TestV2ChildFiles(t *testing.T) {
	h := v2Fixture(t, "cpu memory")
	cg, err := h.newChild("ration-bench-1-001", 0.5, 160<<20)
	if err != nil {
		t.Fatal(err)
	}
	if ds := cg.dirs(); len(ds) != 1 || ds[0] != filepath.Join(h.unified, "ration-bench-1-001") {
		t.Errorf("dirs %q, want the one v2 directory", ds)
	}
	if got := readString(filepath.Join(cg.cpu, "cpu.max")); got != "50000 100000" {
		t.Errorf("cpu.max %q, want \"50000 100000\"", got)
	}
	if got := readString(filepath.Join(cg.memory, "memory.max")); got != fmt.Sprint(160<<20) {
		t.Errorf("memory.max %q, want %d", got, 160<<20)
	}
	if err := cg.setQuota(0); err != nil {
		t.Fatal(err)
	}
	if got := readString(filepath.Join(cg.cpu, "cpu.max")); got != "max 100000" {
		t.Errorf("cpu.max without a quota %q, want \"max 100000\"", got)
	}
	if argv := cg.wrap([]string{"true"}); strings.Count(strings.Join(argv, " "), "cgroup.procs") != 1 {
		t.Errorf("wrap %q: want the pid written into the one cgroup.procs", argv)
	}

	// What a v2 kernel shows after a run (Linux 6.x formats).
	for name, content := range map[string]string{
		"memory.peak":   "167772160\n",
		"memory.events": "low 0\nhigh 0\nmax 37\noom 3\noom_kill 2\noom_group_kill 0\n",
		"cpu.stat":      "usage_usec 41234567\nuser_usec 40000000\nsystem_usec 1234567\nnr_periods 421\nnr_throttled 400\nthrottled_usec 38000000\nnr_bursts 0\nburst_usec 0\n",
	} {
		if err := os.WriteFile(filepath.Join(cg.memory, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want := cgStats{PeakMem: 167772160, FailCnt: 37, OOMKills: 2, NrPeriods: 421, NrThrottled: 400,
		ThrottledTime: 38 * time.Second, CPUUsage: 41234567 * time.Microsecond}
	if got := cg.stats(); got != want {
		t.Errorf("stats\n got %+v\nwant %+v", got, want)
	}
}

// TestV1ChildReal makes a real child cgroup under this process's own (cgroup
// v1 hosts, as root), runs a process in it and removes it.
func TestV1ChildReal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	h, err := ownHierarchy()
	if err != nil || h.unified != "" {
		t.Skipf("not a cgroup v1 host (%v)", err)
	}
	cg, err := h.newChild(fmt.Sprintf("ration-bench-%d-test", os.Getpid()), 0.5, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.remove()
	if got := readString(filepath.Join(cg.cpu, "cpu.cfs_quota_us")); got != "50000" {
		t.Errorf("cpu.cfs_quota_us %q, want 50000", got)
	}
	if got := readString(filepath.Join(cg.memory, "memory.limit_in_bytes")); got != fmt.Sprint(64<<20) {
		t.Errorf("memory.limit_in_bytes %q, want %d", got, 64<<20)
	}
	argv := cg.wrap([]string{"cat", "/proc/self/cgroup"})
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), cg.name) {
		t.Errorf("the wrapped process ran in\n%s\nwant cgroups named %s", out, cg.name)
	}
	if s := cg.stats(); s.PeakMem <= 0 || s.CPUUsage <= 0 {
		t.Errorf("stats %+v: want a peak and CPU usage from the process that ran", s)
	}
	if err := cg.remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range cg.dirs() {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after remove (%v)", d, err)
		}
	}
}
