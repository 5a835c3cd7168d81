//go:build linux

package memory

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"path/filepath"
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
// to 300 MiB within about a tenth of a second, then sleeps.
const guardGrower = `import sys, time
print("ready", flush=True)
sys.stdin.readline()
b = [bytearray(8 << 20) for _ in range(38)]
time.sleep(60)`

// guardSmall holds 16 MiB and sleeps: a job that fits.
const guardSmall = `import sys, time
b = bytearray(16 << 20)
print("ready", flush=True)
time.sleep(60)`

// guardJob starts python3 -c script in the memory cgroup dir, in a process
// group of its own, as a child of the test (ration's place), and waits for
// its "ready" line.
func guardJob(t *testing.T, py, dir, script string) (*exec.Cmd, func()) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `echo $$ > "$0" && exec "$1" -c "$2"`, filepath.Join(dir, "cgroup.procs"), py, script)
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
			grower, grow := guardJob(t, py, dir, guardGrower)
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
