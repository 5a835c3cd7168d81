package jobcgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/pdeath"
	"github.com/ration-run/ration/internal/testutil"
)

// helperEnv makes the test binary the helper of TestCreateReal.
const helperEnv = "JOBCGROUP_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "1":
		os.Exit(helper())
	case "vacate":
		os.Exit(vacateHelper())
	}
	undo := testutil.DelegateCgroups()
	code := m.Run()
	undo()
	os.Exit(code)
}

// helper is the process TestCreateReal starts alone in a memory cgroup, as
// ration runs: it creates the group, starts a process through it as the
// runner does (the forking thread of pdeath, SetProcAttr), and prints
// what the test checks: the group, the child's memory cgroup, its own
// memory cgroup during the run and after Close.
func helper() int {
	g, err := Create(Options{Reserve: 16 << 20})
	if err != nil {
		fmt.Println("create:", err)
		return 1
	}
	fmt.Println("dir", g.Dir)
	fmt.Println("limit", g.Limit)
	cmd := exec.Command("cat", "/proc/self/cgroup")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	g.SetProcAttr(cmd.SysProcAttr)
	if terr := pdeath.DoOn(pdeath.Thread{Tasks: g.Tasks()}, func() { err = cmd.Start() }); terr != nil {
		err = terr
	}
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		fmt.Println("child:", err)
		return 1
	}
	fmt.Println("child", memoryLine(out.String()))
	if err := g.Follow(128 << 20); err != nil {
		fmt.Println("follow:", err)
		return 1
	}
	name := "memory.max"
	if g.Version == 1 {
		name = "memory.limit_in_bytes"
	}
	fmt.Println("followed", strings.TrimSpace(readString(filepath.Join(g.Dir, name))))
	fmt.Println("self", memoryLine(readString("/proc/self/cgroup")))
	if err := g.Close(); err != nil {
		fmt.Println("close:", err)
		return 1
	}
	fmt.Println("closed", memoryLine(readString("/proc/self/cgroup")))
	return 0
}

// runHelper runs this test binary as the helper of the given mode, alone
// in the cgroup dir, and returns what it printed, as key-value pairs, and
// its PID.
func runHelper(t *testing.T, mode, dir string) (got map[string]string, pid int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `echo $$ > "$CG/cgroup.procs" || exit 250; exec "$@"`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", self, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "CG="+dir)
	out, err := cmd.CombinedOutput()
	t.Logf("helper %s in %s:\n%s", mode, dir, out)
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	got = map[string]string{}
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
		got[k] = v
	}
	return got, cmd.Process.Pid
}

// memoryLine is the memory cgroup's path in /proc/PID/cgroup contents: the
// v1 memory line's, else the v2 line's.
func memoryLine(data string) string {
	v2 := ""
	for line := range strings.Lines(data) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2 = f[2]
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				return f[2]
			}
		}
	}
	return v2
}

// TestCreateReal: a process alone in a real 256 MiB memory cgroup (v1 or
// v2) makes the jobs' group with a reserve of 16 MiB; a child started
// through it is in the group (limit 240 MiB) while the process itself is
// not; Follow(128 MiB) makes its limit 112 MiB; after Close the group is
// gone and the process is back where it started.
func TestCreateReal(t *testing.T) {
	cg, _ := testutil.MemoryCgroup(t, 256<<20)
	got, pid := runHelper(t, "1", cg)
	own, err := cgroup.Reader{}.Read()
	if err != nil {
		t.Fatal(err)
	}
	cgPath := testutil.CgroupPath(own.MemoryCgroup, own.MemoryDir, cg)
	dir := got["dir"]
	if want := filepath.Join(cg, fmt.Sprintf("ration-%d-jobs", pid)); dir != want {
		t.Errorf("group %q, want %q", dir, want)
	}
	if want := strconv.Itoa(240 << 20); got["limit"] != want {
		t.Errorf("limit %s, want %s", got["limit"], want)
	}
	if want := cgPath + "/" + filepath.Base(dir); got["child"] != want {
		t.Errorf("the child ran in %q, want the group %q", got["child"], want)
	}
	if want := strconv.Itoa(112 << 20); got["followed"] != want {
		t.Errorf("after Follow(128 MiB) the group's limit is %s, want %s", got["followed"], want)
	}
	if got["self"] == got["child"] {
		t.Errorf("the process itself is in the group %q", got["self"])
	}
	if got["closed"] != cgPath {
		t.Errorf("after Close the process is in %q, want %q", got["closed"], cgPath)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the group is still there after Close: %v", err)
	}
}

// TestRemoveStale: the groups and leaves of a ration that is gone are
// removed; those of a live process and other directories are kept.
func TestRemoveStale(t *testing.T) {
	parent := t.TempDir()
	dead := deadPID(t)
	live := os.Getpid()
	for _, name := range []string{
		fmt.Sprintf("ration-%d-jobs", dead), fmt.Sprintf("ration-%d", dead),
		fmt.Sprintf("ration-%d-jobs", live), "ration-test-1-2", "other",
	} {
		if err := os.Mkdir(filepath.Join(parent, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStale(parent)
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	want := []string{"other", fmt.Sprintf("ration-%d-jobs", live), "ration-test-1-2"}
	if fmt.Sprint(left) != fmt.Sprint(want) {
		t.Errorf("left %v, want %v", left, want)
	}
}

// deadPID is the PID of a process that has ended and been waited for.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestSetProcAttrV2: on a cgroup v2 hierarchy (this machine's unified
// hierarchy of a hybrid host does, without controllers), a process
// started with the attributes of SetProcAttr, together with the process
// group and parent-death signal that ration's jobs get, starts in the
// group's cgroup (clone3 with CLONE_INTO_CGROUP).
func TestSetProcAttrV2(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	mount, own := v2Mount(t)
	dir := filepath.Join(mount, own, fmt.Sprintf("ration-test-%d-clone", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a v2 cgroup: %v", err)
	}
	t.Cleanup(func() { testutil.RemoveCgroup(t, dir) })
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	g := &Group{Dir: dir, Version: 2, fd: fd}
	cmd := exec.Command("cat", "/proc/self/cgroup")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	g.SetProcAttr(cmd.SysProcAttr)
	var out []byte
	pdeath.Do(func() { out, err = cmd.Output() })
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(own, filepath.Base(dir))
	for line := range strings.Lines(string(out)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			if p != want {
				t.Errorf("the child started in %q, want %q", p, want)
			}
			return
		}
	}
	t.Errorf("no v2 line in the child's /proc/self/cgroup:\n%s", out)
}

// v2Mount returns the mount point of the cgroup v2 hierarchy and the
// test process's cgroup path in it, or skips.
func v2Mount(t *testing.T) (mount, own string) {
	for line := range strings.Lines(readString("/proc/self/cgroup")) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			own = p
		}
	}
	for line := range strings.Lines(readString("/proc/self/mountinfo")) {
		f := strings.Fields(line)
		for i, x := range f {
			if x == "-" && i+1 < len(f) && f[i+1] == "cgroup2" && f[3] == "/" {
				mount = f[4]
			}
		}
	}
	if mount == "" || own == "" {
		t.Skip("no cgroup v2 hierarchy mounted at its root")
	}
	return mount, own
}

// hugetlbV2 is the domain controller of a hybrid host's v2 hierarchy
// (memory is v1's there), with the limit file of 2 MiB pages.
var hugetlbV2 = controller{"hugetlb", "hugetlb.2MB.max"}

// vacateHelper is the process TestVacateV2 starts alone in a v2 cgroup:
// it makes a hugetlb group there as Create makes the memory group on v2,
// starts a process through it, and prints where everything was, before
// and after Close.
func vacateHelper() int {
	parent := os.Getenv("CG")
	g, err := createFor(hugetlbV2, parent, 2, 1<<30, 2<<20, os.Getpid())
	if err != nil {
		fmt.Println("create:", err)
		return 1
	}
	fmt.Println("self", v2Line(readString("/proc/self/cgroup")))
	fmt.Println("subtree", strings.TrimSpace(readString(filepath.Join(parent, "cgroup.subtree_control"))))
	fmt.Println("limit", strings.TrimSpace(readString(filepath.Join(g.Dir, hugetlbV2.limitFile))))
	cmd := exec.Command("cat", "/proc/self/cgroup")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	g.SetProcAttr(cmd.SysProcAttr)
	var out []byte
	pdeath.Do(func() { out, err = cmd.Output() })
	if err != nil {
		fmt.Println("child:", err)
		return 1
	}
	fmt.Println("child", v2Line(string(out)))
	// A process a job left running (a daemon) is still in the group at
	// Close.
	leak := exec.Command("sleep", "60")
	leak.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	g.SetProcAttr(leak.SysProcAttr)
	pdeath.Do(func() { err = leak.Start() })
	if err != nil {
		fmt.Println("leak:", err)
		return 1
	}
	fmt.Println("leak-pid", leak.Process.Pid)
	if err := g.Close(); err != nil {
		fmt.Println("close:", err)
		return 1
	}
	fmt.Println("closed", v2Line(readString("/proc/self/cgroup")))
	fmt.Println("leak-closed", v2Line(readString(fmt.Sprintf("/proc/%d/cgroup", leak.Process.Pid))))
	fmt.Println("subtree-after", strings.TrimSpace(readString(filepath.Join(parent, "cgroup.subtree_control"))))
	return 0
}

// v2Line is the path of the "0::" line of /proc/PID/cgroup contents.
func v2Line(data string) string {
	for line := range strings.Lines(data) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			return p
		}
	}
	return ""
}

// TestVacateV2 checks what Create does on cgroup v2 with the kernel's own
// rules, where a v2 memory controller is not at hand (this machine's
// memory is v1's; the v2 host runs TestCreateReal): a process alone in a
// v2 cgroup moves itself into a leaf beside the group, enables the
// controller for the parent's children (which the kernel refuses while
// the parent holds a process), sets the group's limit, and a child
// started through the group starts in it. Close moves the process back,
// disables the controller and removes both cgroups, also when a process
// started through the group still runs: it is moved to the parent. The
// controller is hugetlb, the domain controller of a hybrid host's v2
// hierarchy.
func TestVacateV2(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	mount, own := v2Mount(t)
	if !strings.Contains(readString(filepath.Join(mount, own, "cgroup.controllers")), "hugetlb") {
		t.Skip("no hugetlb controller in the v2 hierarchy")
	}
	if _, err := os.Stat("/sys/kernel/mm/hugepages/hugepages-2048kB"); err != nil {
		t.Skip("no 2 MiB huge pages")
	}
	// The test's own cgroup offers hugetlb to its children; on a hybrid
	// host it is the v2 root, which may hold processes.
	ownControl := filepath.Join(mount, own, "cgroup.subtree_control")
	if !strings.Contains(readString(ownControl), "hugetlb") {
		if err := os.WriteFile(ownControl, []byte("+hugetlb"), 0o644); err != nil {
			t.Skipf("cannot enable hugetlb in %s: %v", ownControl, err)
		}
		t.Cleanup(func() { _ = os.WriteFile(ownControl, []byte("-hugetlb"), 0o644) })
	}
	parent := filepath.Join(mount, own, fmt.Sprintf("ration-test-%d-vacate", os.Getpid()))
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Skipf("cannot create a v2 cgroup: %v", err)
	}
	t.Cleanup(func() { testutil.RemoveCgroup(t, parent) })
	got, pid := runHelper(t, "vacate", parent)
	if leak, err := strconv.Atoi(got["leak-pid"]); err == nil {
		defer syscall.Kill(leak, syscall.SIGKILL)
	}
	p := filepath.Join(own, filepath.Base(parent))
	for _, c := range []struct{ key, want string }{
		{"self", fmt.Sprintf("%s/ration-%d", p, pid)},
		{"subtree", "hugetlb"},
		{"limit", strconv.Itoa(1<<30 - 2<<20)},
		{"child", fmt.Sprintf("%s/ration-%d-jobs", p, pid)},
		{"closed", p},
		{"leak-closed", p},
		{"subtree-after", ""},
	} {
		if got[c.key] != c.want {
			t.Errorf("%s: %q, want %q", c.key, got[c.key], c.want)
		}
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			t.Errorf("%s left after Close", e.Name())
		}
	}
}
