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
	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/internal/pdeath"
)

// helperEnv makes the test binary the helper of TestCreateReal.
const helperEnv = "JOBCGROUP_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		os.Exit(helper())
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
// not; Follow(128 MiB) makes its limit 112 MiB; after Close the group is gone and the process is back where it
// started.
func TestCreateReal(t *testing.T) {
	cg, version := testutil.MemoryCgroup(t, 256<<20)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `echo $$ > "$CG/cgroup.procs" || exit 250; exec "$@"`
	cmd := exec.Command("/bin/sh", "-c", script, "sh", self, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "CG="+cg)
	out, err := cmd.CombinedOutput()
	t.Logf("helper (cgroup v%d):\n%s", version, out)
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	got := map[string]string{}
	for line := range strings.Lines(string(out)) {
		k, v, _ := strings.Cut(strings.TrimSpace(line), " ")
		got[k] = v
	}
	own, err := cgroup.Reader{}.Read()
	if err != nil {
		t.Fatal(err)
	}
	cgPath := testutil.CgroupPath(own.MemoryCgroup, own.MemoryDir, cg)
	dir := got["dir"]
	if want := filepath.Join(cg, fmt.Sprintf("ration-%d-jobs", cmd.Process.Pid)); dir != want {
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
