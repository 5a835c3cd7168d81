package limits_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/testutil"
	"go.uber.org/automaxprocs/maxprocs"
)

// childEnv marks the test binary started as TestAutomaxprocsChild's child.
const childEnv = "RATION_AUTOMAXPROCS_CHILD"

// TestAutomaxprocsAgrees cross-checks package cgroup against
// go.uber.org/automaxprocs, which ration does not link (see the package
// doc): a child process placed in a fresh cgroup runs maxprocs.Set, and
// the CPU quota automaxprocs reads for it must be the leaf quota that
// cgroup.Reader reads for the same process, with and without a quota. It
// also checks the package doc's claim that automaxprocs rounds down.
func TestAutomaxprocsAgrees(t *testing.T) {
	for _, tt := range []struct {
		name  string
		quota int // microseconds per 100000; 0: none
		procs int // the GOMAXPROCS automaxprocs sets; 0: not checked
	}{
		{"quota 1.5", 150000, 1}, // the runtime would choose 2
		{"quota 0.5", 50000, 1},
		{"no quota", 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, version := testutil.ChildCgroup(t, "cpu")
			if tt.quota > 0 {
				f, v := "cpu.cfs_quota_us", strconv.Itoa(tt.quota)
				if version == 2 {
					f, v = "cpu.max", fmt.Sprintf("%d 100000", tt.quota)
				}
				if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, procs, ours := automaxprocsIn(t, dir)
			want := "undefined"
			if ours.LeafCPUQuota > 0 {
				want = strconv.FormatFloat(ours.LeafCPUQuota, 'f', -1, 64)
			}
			if got != want {
				t.Errorf("automaxprocs read quota %s, cgroup.Reader read %s (%s)", got, want, ours.CPUCgroup)
			}
			if wantQuota := float64(tt.quota) / 100000; ours.LeafCPUQuota != wantQuota {
				t.Errorf("cgroup.Reader read leaf quota %v in %s, want %v", ours.LeafCPUQuota, dir, wantQuota)
			}
			if tt.procs != 0 && procs != tt.procs {
				t.Errorf("automaxprocs set GOMAXPROCS %d, want %d", procs, tt.procs)
			}
		})
	}
}

// automaxprocsIn starts the child, moves it into the cgroup dir before it
// looks, and returns the quota automaxprocs found ("undefined" for none),
// the GOMAXPROCS it then set, and cgroup.Reader's reading of the child.
func automaxprocsIn(t *testing.T, dir string) (string, int, cgroup.Snapshot) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAutomaxprocsChild$", "-test.count=1")
	// maxprocs.Set leaves alone a GOMAXPROCS that is set at all, even
	// empty, and would then read no quota.
	cmd.Env = []string{childEnv + "=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOMAXPROCS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	pid := cmd.Process.Pid
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	ours, err := cgroup.Reader{}.ReadProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if ours.CPUDir != dir {
		t.Fatalf("child's cpu cgroup is %s, want %s", ours.CPUDir, dir)
	}
	// The child reads its cgroup only after this line: it is in dir now.
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var quota string
		var procs int
		if _, err := fmt.Sscanf(sc.Text(), "automaxprocs quota %s gomaxprocs %d", &quota, &procs); err == nil {
			return quota, procs, ours
		}
	}
	t.Fatalf("the child printed no quota (%v)", sc.Err())
	return "", 0, ours
}

// TestAutomaxprocsChild is the child of TestAutomaxprocsAgrees; run on its
// own it does nothing.
func TestAutomaxprocsChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("only run as TestAutomaxprocsAgrees' child")
	}
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	quiet := maxprocs.Logger(func(string, ...any) {})
	quota := "undefined"
	undo, err := maxprocs.Set(quiet, maxprocs.RoundQuotaFunc(func(q float64) int {
		quota = strconv.FormatFloat(q, 'f', -1, 64)
		return 1
	}))
	if err != nil {
		t.Fatal(err)
	}
	undo()
	// Now as a program that imports it would: its own rounding.
	if _, err := maxprocs.Set(quiet); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("automaxprocs quota %s gomaxprocs %d\n", quota, runtime.GOMAXPROCS(0))
}
