//go:build unix

package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

func pidGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	// A zombie still answers kill(0); it is gone for our purpose if its
	// state is Z.
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] == "Z"
}

func waitGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !pidGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("child %d of the stopped job is still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	// The child ignores SIGTERM: only the group SIGKILL after the grace
	// can end it.
	script := `sh -c 'trap "" TERM; echo $$ > ` + pidFile + `; exec sleep 60' & wait`
	sum, _, rec, err := run(t, Config{Command: []string{"sh", "-c", script}, Input: input.Args([]string{"1"}),
		Timeout: 300 * time.Millisecond, Grace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 1 || sum.Killed != 0 {
		t.Errorf("summary %+v", sum)
	}
	fin := rec.Kind(event.JobFinished)
	if len(fin) != 1 || fin[0].Cause != event.CauseTimeout || !errors.Is(fin[0].Err, ErrTimeout) {
		t.Errorf("finished %+v", fin)
	}
	waitGone(t, pidFile)
}

// TestTimeoutEscapedOutputHolder: a job whose leader exited at once but
// left a process outside its group (setsid) holding its stdout ends at its
// --timeout (timed out, its output so far delivered), not when that
// process ends: once the group got SIGKILL, its output is read for
// escapedHold more. It ran for as long as the escaped process lived.
func TestTimeoutEscapedOutputHolder(t *testing.T) {
	setsid, err := exec.LookPath("setsid")
	if err != nil {
		t.Skip("no setsid:", err)
	}
	pidFile := filepath.Join(t.TempDir(), "escaped")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	script := setsid + ` sleep 60 & echo $! > ` + pidFile + `; echo started`
	type result struct {
		sum Summary
		out string
		rec *recorder
		err error
	}
	ch := make(chan result, 1)
	go func() {
		sum, out, rec, err := run(t, Config{Command: []string{"sh", "-c", script}, Input: input.Args([]string{"1"}),
			Timeout: 300 * time.Millisecond, Grace: 100 * time.Millisecond})
		ch <- result{sum, out, rec, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-time.After(30 * time.Second): // a hang guard: the escaped sleep lasts 60 s
		t.Fatal("the job did not end at its --timeout: it waited for the escaped process that holds its stdout")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	fin := r.rec.Kind(event.JobFinished)
	if r.sum.Failed != 1 || len(fin) != 1 || fin[0].Cause != event.CauseTimeout || !strings.Contains(r.out, "started") {
		t.Errorf("summary %+v, finished %+v, output %q: want one job timed out, its output delivered", r.sum, fin, r.out)
	}
}
