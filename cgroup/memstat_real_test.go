//go:build linux

package cgroup_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/cgroup"
	"github.com/ration-run/ration/internal/testutil"
)

// startIn starts argv inside the cgroup directory dir from its first
// instruction: a shell writes its pid into cgroup.procs and execs argv,
// so the allocation is charged to dir (v1 does not move charges).
func startIn(t *testing.T, dir string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(dir, "cgroup.procs")}, argv...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	return cmd
}

// TestRealMemStat runs a process holding 60 MiB in a child memory cgroup
// with a 200 MiB limit, and a reading taken while it holds them must show
// them as anonymous working set; then one that wants 300 MiB is
// OOM-killed and the counter rises.
func TestRealMemStat(t *testing.T) {
	py := testutil.Python(t)
	dir, version := testutil.ChildCgroup(t, "memory")
	limitFile, limit := "memory.limit_in_bytes", int64(200<<20)
	if version == 2 {
		limitFile = "memory.max"
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil {
			// Without swap a job over the limit is killed, as on v1.
			if err := os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := cgroup.ReadMemStat(dir, version)
	if err != nil {
		t.Fatal(err)
	}
	if before.Limit != limit || before.Usage > 1<<20 || before.OOMKills != 0 {
		t.Fatalf("empty cgroup: %+v", before)
	}

	// The process says "ready" once the 60 MiB are written, then holds
	// them until its stdin closes.
	holder := exec.Command("/bin/sh", "-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(dir, "cgroup.procs"),
		py, "-c", "import sys; b = bytearray(60 << 20); print('ready', flush=True); sys.stdin.read()")
	stdin, _ := holder.StdinPipe()
	stdout, _ := holder.StdoutPipe()
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	buf := make([]byte, 6)
	if _, err := stdout.Read(buf); err != nil || string(buf[:5]) != "ready" {
		t.Fatalf("holder: %q, %v", buf, err)
	}
	held, err := cgroup.ReadMemStat(dir, version)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("holding 60 MiB: usage %d MiB, working set %d MiB, anon %d MiB, file %d MiB, inactive_file %d MiB",
		held.Usage>>20, held.WorkingSet>>20, held.Anon>>20, held.File>>20, held.InactiveFile>>20)
	if held.Anon < 60<<20 || held.WorkingSet < 60<<20 || held.WorkingSet > held.Usage || held.Usage > limit {
		t.Errorf("holding 60 MiB: %+v", held)
	}
	stdin.Close()
	if err := holder.Wait(); err != nil {
		t.Fatalf("holder: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		after, err := cgroup.ReadMemStat(dir, version)
		if err != nil {
			t.Fatal(err)
		}
		if after.Anon < 10<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("anon memory not released after exit: %+v", after)
		}
		time.Sleep(20 * time.Millisecond)
	}

	hog := startIn(t, dir, py, "-c", "b = bytearray(300 << 20)")
	err = hog.Wait()
	ws, _ := hog.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("a 300 MiB allocation in 200 MiB: %v, want SIGKILL", err)
	}
	oom, err := cgroup.ReadMemStat(dir, version)
	if err != nil {
		t.Fatal(err)
	}
	if oom.OOMKills != before.OOMKills+1 {
		t.Errorf("OOMKills after one kill = %d, want %d", oom.OOMKills, before.OOMKills+1)
	}
	if version == 2 && !oom.Pressure.Present {
		if _, err := os.Stat("/proc/pressure/memory"); err == nil {
			t.Errorf("the kernel has PSI but %s/memory.pressure was not read", dir)
		}
	}
}
