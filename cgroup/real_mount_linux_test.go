package cgroup_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/testutil"
)

// remountEnv marks the test binary started as TestRemountChild; its value
// is a remount (JSON).
const remountEnv = "RATION_CGROUP_REMOUNT_CHILD"

// remount is what TestRemountChild does in its private mount namespace:
// it unmounts the v1 hierarchy at From and mounts it again at To with
// the super options Opts and the source Source; or, with Bind set, it
// bind-mounts the directory From over To, as Docker shows a container
// its own v1 cgroup.
//
// With CgroupNS set it does no mount, and once in the test's cgroup it
// enters a cgroup namespace of its own (unshare -C) before it reads.
// Exec marks the program it then runs, to read and print.
type remount struct {
	From, To, Opts, Source string
	Bind, CgroupNS, Exec   bool
}

// TestRealRemountedHierarchy mounts the live v1 cpu hierarchy the way
// some hosts and container runtimes do, in the private mount namespace of
// a child process that sits in a cgroup with a 0.5-CPU quota; the child's
// own Read must find the controller, its directory and the quota, as the
// Go runtime does. The kernel separates mountinfo's fields by one space
// and escapes only space, tab, newline and backslash in paths.
func TestRealRemountedHierarchy(t *testing.T) {
	dir, version := testutil.ChildCgroup(t, "cpu")
	if version != 1 {
		t.Skip("needs the cpu controller on cgroup v1: only v1 names controllers in mountinfo's super options")
	}
	mountPoint, opts := v1Mount(t, "cpu")
	testutil.SetCPUQuota(t, dir, 0.5)
	rel, err := filepath.Rel(mountPoint, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		source string
		to     string // the new mount point's name in a temporary directory; "": mountPoint
	}{
		// mount(2) with source "": "- cgroup  rw,cpu", two spaces.
		{name: "empty source", source: ""},
		{name: "no-break space in the mount point", source: "cgroup", to: "cpu\u00a0x"},
		{name: "carriage return in the mount point", source: "cgroup", to: "cpu\rx"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			to := mountPoint
			if tt.to != "" {
				to = filepath.Join(t.TempDir(), tt.to)
				if err := os.Mkdir(to, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s := readRemounted(t, dir, remount{From: mountPoint, To: to, Opts: opts, Source: tt.source})
			if s.CPUVersion != 1 || s.CPUDir != filepath.Join(to, rel) || s.CPUQuota != 0.5 {
				t.Errorf("Read in the child: CPUVersion %d, CPUDir %q, CPUQuota %v; want 1, %q, 0.5 (warnings %q)",
					s.CPUVersion, s.CPUDir, s.CPUQuota, filepath.Join(to, rel), s.Warnings)
			}
		})
	}
}

// readRemounted starts TestRemountChild in a private mount namespace to
// do rm, moves it into the cgroup dir, and returns its own Read.
func readRemounted(t *testing.T, dir string, rm remount) cgroup.Snapshot {
	t.Helper()
	arg, err := json.Marshal(rm)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRemountChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), remountEnv+"="+string(arg))
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
	defer func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	out := bufio.NewReader(stdout)
	if line, err := out.ReadString('\n'); line != "ready\n" {
		t.Skipf("the child could not remount %s: %q %v", rm.From, line, err)
	}
	write(t, filepath.Join(dir, "cgroup.procs"), strconv.Itoa(cmd.Process.Pid))
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	line, readErr := out.ReadString('\n')
	var s cgroup.Snapshot
	if err := json.Unmarshal([]byte(line), &s); err != nil {
		t.Fatalf("the child's reading %q (%v): %v", line, readErr, err)
	}
	return s
}

// TestRealHierarchicalMemoryLimit: as Docker does on v1, a child process
// sees its own memory cgroup bind-mounted as the hierarchy's root, and
// only its parent has a limit (docker run --cgroup-parent, a slice, a
// pod). The walk up to the mount root cannot see that limit; the leaf's
// hierarchical_memory_limit does, and it must bind.
func TestRealHierarchicalMemoryLimit(t *testing.T) {
	const limit = 256 << 20
	parent, version := testutil.ChildCgroup(t, "memory")
	if version != 1 {
		t.Skip("needs the memory controller on cgroup v1: v2 has no hierarchical_memory_limit")
	}
	mountPoint, _ := v1Mount(t, "memory")
	testutil.SetMemoryLimit(t, parent, limit)
	dir := testutil.ChildCgroupOf(t, parent)
	s := readRemounted(t, dir, remount{From: dir, To: mountPoint, Bind: true})
	if s.MemoryDir != mountPoint || s.MemoryLimit != limit || !strings.HasPrefix(s.MemoryLimitCgroup, "an ancestor of /") {
		t.Errorf("Read in the child: MemoryDir %q, MemoryLimit %d at %q; want %q, %d at an ancestor (warnings %q)",
			s.MemoryDir, s.MemoryLimit, s.MemoryLimitCgroup, mountPoint, limit, s.Warnings)
	}
}

// TestRealCgroupNamespace: a process that enters a cgroup namespace of its
// own while the hierarchies stay mounted from outside it (unshare -C, a
// sandbox that keeps the host's /sys) reads its cgroup as "/" and the
// mount's root as "/../..". Its Read must still find its memory cgroup
// and the limit there (it read the host's root cgroup, with a warning,
// and no limit: jobs that fit alone were OOM-killed).
func TestRealCgroupNamespace(t *testing.T) {
	const limit = 200 << 20
	dir, _ := testutil.ChildCgroup(t, "memory")
	testutil.SetMemoryLimit(t, dir, limit)
	s := readRemounted(t, dir, remount{CgroupNS: true})
	if s.MemoryCgroup != "/" || s.MemoryDir != dir || s.MemoryLimit != limit || len(s.Warnings) != 0 {
		t.Errorf("Read in the namespace: MemoryCgroup %q, MemoryDir %q, MemoryLimit %d; want \"/\", %q, %d and no warnings (warnings %q)",
			s.MemoryCgroup, s.MemoryDir, s.MemoryLimit, dir, limit, s.Warnings)
	}
}

// v1Mount returns the mount point and super options ("cpu,cpuacct",
// without "rw") of the test process's v1 hierarchy of controller.
func v1Mount(t *testing.T, controller string) (mountPoint, opts string) {
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
		if slices.Contains(o, controller) && !strings.Contains(pf[4], `\`) {
			return pf[4], strings.Join(o, ",")
		}
	}
	t.Skipf("no v1 %s hierarchy mounted at its root", controller)
	return "", ""
}

// TestRemountChild is the child of the tests above, already in a
// private mount namespace: it does the remount of its environment, says
// "ready", and after a line on stdin (it is in the test's cgroup then)
// prints its own cgroup.Reader reading as JSON. Run on its own it does
// nothing.
func TestRemountChild(t *testing.T) {
	arg := os.Getenv(remountEnv)
	if arg == "" {
		t.Skip("only run as the child of TestRealRemountedHierarchy or TestRealHierarchicalMemoryLimit")
	}
	var rm remount
	if err := json.Unmarshal([]byte(arg), &rm); err != nil {
		t.Fatal(err)
	}
	if !rm.Exec {
		remountChild(t, rm)
	}
	s, err := cgroup.Reader{}.Read()
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(string(b))
}

// remountChild does TestRemountChild's mounts and handshake; with
// rm.CgroupNS it enters a new cgroup namespace and execs the test binary
// again (a namespace entered by one thread of a Go program is that
// thread's alone until it execs).
func remountChild(t *testing.T, rm remount) {
	switch {
	case rm.CgroupNS:
	case rm.Bind:
		if err := unix.Mount(rm.From, rm.To, "", unix.MS_BIND, ""); err != nil {
			fmt.Printf("bind mount: %v\n", err)
			t.SkipNow()
		}
	default:
		if err := unix.Unmount(rm.From, unix.MNT_DETACH); err != nil {
			fmt.Printf("umount: %v\n", err)
			t.SkipNow()
		}
		if err := unix.Mount(rm.Source, rm.To, "cgroup", 0, rm.Opts); err != nil {
			fmt.Printf("mount: %v\n", err)
			t.SkipNow()
		}
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if !rm.CgroupNS {
		return
	}
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		t.Fatalf("unshare: %v", err)
	}
	rm.Exec = true
	next, err := json.Marshal(rm)
	if err != nil {
		t.Fatal(err)
	}
	env := append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, remountEnv+"=") }), remountEnv+"="+string(next))
	t.Fatal(syscall.Exec(os.Args[0], []string{os.Args[0], "-test.run=^TestRemountChild$", "-test.count=1"}, env))
}
