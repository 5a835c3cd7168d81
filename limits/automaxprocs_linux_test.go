package limits_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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
// cgroup.Reader reads for the same process, with and without a quota.
func TestAutomaxprocsAgrees(t *testing.T) {
	for _, tt := range []struct {
		name  string
		quota int // microseconds per 100000; 0: none
	}{
		{"quota 1.5", 150000},
		{"quota 0.5", 50000},
		{"no quota", 0},
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
			got, ours := automaxprocsIn(t, dir)
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
		})
	}
}

// automaxprocsIn starts the child, moves it into the cgroup dir before it
// looks, and returns the quota automaxprocs found ("undefined" for none)
// and cgroup.Reader's reading of the child.
func automaxprocsIn(t *testing.T, dir string) (string, cgroup.Snapshot) {
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
		if q, ok := strings.CutPrefix(sc.Text(), "automaxprocs quota "); ok {
			return q, ours
		}
	}
	t.Fatalf("the child printed no quota (%v)", sc.Err())
	return "", ours
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
	quota := "undefined"
	_, err := maxprocs.Set(
		maxprocs.Logger(func(string, ...any) {}),
		maxprocs.RoundQuotaFunc(func(q float64) int {
			quota = strconv.FormatFloat(q, 'f', -1, 64)
			return 1
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("automaxprocs quota " + quota)
}
