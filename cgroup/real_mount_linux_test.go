package cgroup_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/testutil"
)

// remountEnv marks the test binary started as TestRemountChild: its value
// is the mount point and the super options of the v1 cpu hierarchy.
const remountEnv = "RATION_CGROUP_REMOUNT_CHILD"

// TestRealEmptyMountSource: a v1 hierarchy mounted with an empty source
// (mount(2) with source "", as some container runtimes do) appears in
// mountinfo as "- cgroup  rw,cpu", with two spaces. A child process in a
// private mount namespace remounts the cpu hierarchy that way and sits in
// a cgroup with a 0.5-CPU quota; ReadProcess must still find the cpu
// controller and the quota, as the Go runtime does.
func TestRealEmptyMountSource(t *testing.T) {
	dir, version := testutil.ChildCgroup(t, "cpu")
	if version != 1 {
		t.Skip("needs the cpu controller on cgroup v1: only v1 names controllers in mountinfo's super options")
	}
	mountPoint, opts := cpuMount(t)
	testutil.SetCPUQuota(t, dir, 0.5)

	cmd := exec.Command(os.Args[0], "-test.run=^TestRemountChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), remountEnv+"="+mountPoint+" "+opts)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Skipf("the child could not remount %s: %q %v", mountPoint, line, err)
	}
	pid := cmd.Process.Pid
	write(t, filepath.Join(dir, "cgroup.procs"), strconv.Itoa(pid))
	mi, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mi), " - cgroup  ") {
		t.Fatalf("the child's mountinfo has no empty-source cgroup line:\n%s", mi)
	}
	s, err := cgroup.Reader{}.ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if s.CPUVersion != 1 || s.CPUDir != dir || s.CPUQuota != 0.5 {
		t.Errorf("ReadProcess: CPUVersion %d, CPUDir %q, CPUQuota %v; want 1, %q, 0.5 (warnings %q)", s.CPUVersion, s.CPUDir, s.CPUQuota, dir, s.Warnings)
	}
}

// cpuMount returns the mount point and super options ("cpu,cpuacct",
// without "rw") of the test process's v1 cpu hierarchy.
func cpuMount(t *testing.T) (mountPoint, opts string) {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		pre, post, ok := strings.Cut(l, " - cgroup ")
		pf, sf := strings.Fields(pre), strings.Fields(post)
		if !ok || len(pf) < 5 || len(sf) != 2 || pf[3] != "/" {
			continue
		}
		o := slices.DeleteFunc(strings.Split(sf[1], ","), func(s string) bool { return s == "rw" || s == "ro" })
		if slices.Contains(o, "cpu") && !strings.Contains(pf[4], `\`) {
			return pf[4], strings.Join(o, ",")
		}
	}
	t.Skip("no v1 cpu hierarchy mounted at its root")
	return "", ""
}

// TestRemountChild is TestRealEmptyMountSource's child, already in a
// private mount namespace: it unmounts the cpu hierarchy and mounts it
// again at the same place with an empty source, says "ready" and waits for stdin to
// close. Run on its own it does nothing.
func TestRemountChild(t *testing.T) {
	mountPoint, opts, ok := strings.Cut(os.Getenv(remountEnv), " ")
	if !ok {
		t.Skip("only run as TestRealEmptyMountSource's child")
	}
	if err := unix.Unmount(mountPoint, unix.MNT_DETACH); err != nil {
		fmt.Printf("umount: %v\n", err)
		return
	}
	if err := unix.Mount("", mountPoint, "cgroup", 0, opts); err != nil {
		fmt.Printf("mount: %v\n", err)
		return
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}
