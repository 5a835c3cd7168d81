//go:build linux

package memory

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// testWriter writes to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// guardGrower grows by 8 MiB chunks, each touched as it is allocated,
// to 300 MiB within about a tenth of a second (or at argv[1] MiB a
// second, where given and not 0: testutil.GuardRaceGrowth), then sleeps.
const guardGrower = `import sys, time
print("ready", flush=True)
sys.stdin.readline()
rate = float(sys.argv[1]) if len(sys.argv) > 1 else 0
b = []
for _ in range(38):
    b.append(bytearray(8 << 20))
    if rate > 0:
        time.sleep(8 / rate)
time.sleep(60)`

// guardSmall holds 16 MiB and sleeps: a job that fits.
const guardSmall = `import sys, time
b = bytearray(16 << 20)
print("ready", flush=True)
time.sleep(60)`

// guardJob starts python3 -c script args in the memory cgroup dir, in a
// process group of its own, as a child of the test (ration's place), and
// waits for its "ready" line.
func guardJob(t *testing.T, py, dir, script string, args ...string) (*exec.Cmd, func()) {
	t.Helper()
	sh := `echo $$ > "$0" && py=$1 script=$2 && shift 2 && exec "$py" -c "$script" "$@"`
	cmd := exec.Command("/bin/sh", append([]string{"-c", sh, filepath.Join(dir, "cgroup.procs"), py, script}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	wait := func() { once.Do(func() { _ = cmd.Wait() }) }
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ready") {
		t.Fatalf("job: %q, %v", line, err)
	}
	return cmd, func() { _, _ = stdin.Write([]byte("go\n")) }
}

// TestRealGuard runs, in a real memory cgroup of 128 MiB, a job of 16 MiB
// that fits and one that grows to 300 MiB in about a tenth of a second.
// Without the guard the kernel's OOM killer fires in the cgroup (on cgroup
// v2 with memory.oom.group it would take every process there, ration
// included); with it, the guard stops the grower first: the cgroup's
// oom_kill stays 0, the small job runs on, and the guard counts the stop.
func TestRealGuard(t *testing.T) {
	py := testutil.Python(t)
	for _, guarded := range []bool{false, true} {
		name := "unguarded"
		if guarded {
			name = "guarded"
		}
		t.Run(name, func(t *testing.T) {
			dir, version := testutil.MemoryCgroup(t, 128<<20)
			g := &Guard{dir: dir, version: version, leaf: dir, proc: "/proc", self: syscall.Getpid(), log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			if guarded {
				go func() { done <- g.Run(ctx) }()
			} else {
				done <- nil
			}
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			small, _ := guardJob(t, py, dir, guardSmall)
			grower, grow := guardJob(t, py, dir, guardGrower, strconv.Itoa(testutil.GuardRaceGrowth()))
			grow()
			err := grower.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("grower ended with %v; want SIGKILL", err)
			}
			time.Sleep(50 * time.Millisecond) // the counter, and a second kill if any
			kills := testutil.OOMKills(t, dir)
			if syscall.Kill(small.Process.Pid, 0) != nil {
				t.Errorf("the small job was killed too")
			}
			if !guarded {
				if kills == 0 {
					t.Errorf("oom_kill 0 without the guard: the test cannot tell")
				}
				return
			}
			if kills != 0 {
				t.Errorf("oom_kill %d with the guard; want 0 (the guard stops the grower first)", kills)
			}
			if g.Kills() != 1 {
				t.Errorf("guard kills %d; want 1", g.Kills())
			}
		})
	}
}

// guardIdle holds nothing of its own: a job smaller than guardSmall.
const guardIdle = `import time
print("ready", flush=True)
time.sleep(60)`

// freezerCgroup returns a new child of the test process's own cgroup v1
// freezer cgroup, thawed at cleanup; it skips where there is none (cgroup
// v2's freezer lets a killed process exit, so it cannot hold one killed).
func freezerCgroup(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot create cgroups")
	}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no /proc/self/cgroup: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 || !slices.Contains(strings.Split(f[1], ","), "freezer") {
			continue
		}
		own := filepath.Join("/sys/fs/cgroup/freezer", f[2])
		if _, err := os.Stat(filepath.Join(own, "cgroup.procs")); err != nil {
			t.Skipf("the freezer hierarchy is not at /sys/fs/cgroup/freezer: %v", err)
		}
		dir := testutil.ChildCgroupOf(t, own)
		t.Cleanup(func() { thaw(dir) })
		return dir
	}
	t.Skip("no cgroup v1 freezer")
	return ""
}

// alwaysPast is a guard's reading past its line.
func alwaysPast() (int64, bool) { return 250 << 20, true }

func thaw(freezer string) {
	_ = os.WriteFile(filepath.Join(freezer, "freezer.state"), []byte("THAWED"), 0o644)
}

// TestGuardWaitsForKilledJob: a job is being killed (SIGKILL pending)
// but has not yet run to free its memory, as when the kernel's OOM killer
// came before the guard, its reaper has already taken the victim's
// resident pages, and the victim waits for a CPU. The guard must not
// stop the largest of the jobs left, one that fits, while that memory is
// on its way back; a process stuck killed for longer than guardGrace no
// longer holds it back. The killed job is held by a frozen cgroup v1
// freezer, and holds less than the job that fits.
func TestGuardWaitsForKilledJob(t *testing.T) {
	py := testutil.Python(t)
	freezer := freezerCgroup(t)
	dir, version := testutil.MemoryCgroup(t, 256<<20)
	g := &Guard{dir: dir, version: version, leaf: dir, proc: "/proc", self: syscall.Getpid(), log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	fits, _ := guardJob(t, py, dir, guardSmall)
	dying, _ := guardJob(t, py, dir, guardIdle)
	t.Cleanup(func() { thaw(freezer) }) // before the job's cleanup waits for it
	pid := dying.Process.Pid
	testutil.WriteFile(t, filepath.Join(freezer, "cgroup.procs"), strconv.Itoa(pid))
	testutil.WriteFile(t, filepath.Join(freezer, "freezer.state"), "FROZEN")
	stat := func() procState {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			t.Fatal(err)
		}
		st, err := parseProcState(string(b))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	testutil.WaitForText(t, 5*time.Second, func() string {
		b, _ := os.ReadFile(filepath.Join(freezer, "freezer.state"))
		return string(b)
	}, "FROZEN")
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for stat().pending&(1<<(syscall.SIGKILL-1)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no SIGKILL pending in /proc/%d/stat: %+v", pid, stat())
		}
		time.Sleep(10 * time.Millisecond)
	}

	held := guardHold{}
	now := time.Now()
	g.stop(now, 256<<20, held, alwaysPast)
	if g.Kills() != 0 || syscall.Kill(fits.Process.Pid, 0) != nil {
		t.Fatalf("guard kills %d while a killed job's memory is on its way back; want 0", g.Kills())
	}
	g.stop(now.Add(guardGrace), 256<<20, held, alwaysPast)
	if g.Kills() != 1 {
		t.Errorf("guard kills %d with the killed job stuck for guardGrace; want 1 (the job that fits, the only candidate)", g.Kills())
	}
}

// guardHeavy holds 600 MiB: its exit takes milliseconds to free.
const guardHeavy = `import time
b = bytearray(600 << 20)
print("ready", flush=True)
time.sleep(60)`

// TestGuardWaitsForExitingJob: once the guard has stopped the largest
// job, it stops no other while that job's memory is being freed, nor
// once it is freed, though the reading that called it came before: the
// guard is called again and again for most of guardGrace, as it would be
// by a reading past its line taken before the stopped job's exit ended.
// It must read the charge again before a stop.
func TestGuardWaitsForExitingJob(t *testing.T) {
	py := testutil.Python(t)
	dir, version := testutil.MemoryCgroup(t, 1<<30)
	g := &Guard{dir: dir, version: version, leaf: dir, proc: "/proc", self: syscall.Getpid(), log: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	small, _ := guardJob(t, py, dir, guardSmall)
	heavy, _ := guardJob(t, py, dir, guardHeavy)
	// The guard's line at 400 MiB: the 600 MiB job is past it, the small
	// one alone is not.
	usage := filepath.Join(dir, "memory.current")
	if version == 1 {
		usage = filepath.Join(dir, "memory.usage_in_bytes")
	}
	past := func() (int64, bool) {
		b, err := os.ReadFile(usage)
		if err != nil {
			t.Error(err)
			return 0, false
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n, n > 400<<20
	}
	held := guardHold{}
	start := time.Now()
	g.stop(start, 1<<30, held, past)
	if g.Kills() != 1 {
		t.Fatalf("guard kills %d; want 1, the 600 MiB job", g.Kills())
	}
	stat := filepath.Join("/proc", strconv.Itoa(heavy.Process.Pid), "stat")
	freed := 0 // calls made once the stopped job was a zombie
	for time.Since(start) < guardGrace*3/4 {
		if b, err := os.ReadFile(stat); err != nil || strings.Contains(string(b), ") Z ") {
			freed++
		}
		g.stop(time.Now(), 1<<30, held, past)
	}
	if freed == 0 {
		t.Errorf("the stopped job did not free its memory within %v: the test cannot tell", guardGrace*3/4)
	}
	if g.Kills() != 1 || syscall.Kill(small.Process.Pid, 0) != nil {
		t.Errorf("guard kills %d after the stopped job (%d calls after it freed its memory); want 1", g.Kills(), freed)
	}
}
