//go:build unix

package runner

import (
	"errors"
	"fmt"
	"os"
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
