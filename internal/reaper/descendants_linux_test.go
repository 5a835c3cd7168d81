package reaper

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKillDescendants: a process a child started in its own session and
// left behind (its parent exited) comes back to a subreaper, and
// KillDescendants kills it; nothing below this process is left.
func TestKillDescendants(t *testing.T) {
	r, err := New(context.Background(), Options{Subreaper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	cmd := exec.Command("sh", "-c", "setsid sleep 1000 >/dev/null 2>&1 </dev/null & echo $!")
	var out strings.Builder
	cmd.Stdout = &out
	if err := r.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(cmd); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("pid %q: %v", out.String(), err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := readStat(pid)
		if err == nil && st.ppid == os.Getpid() {
			break // reparented to this subreaper
		}
		if time.Now().After(deadline) {
			t.Fatalf("the orphan %d was not reparented here: %+v %v", pid, st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := r.KillDescendants(5 * time.Second); n < 1 {
		t.Errorf("KillDescendants killed %d, want the orphan", n)
	}
	if left := descendants(os.Getpid()); len(left) > 0 {
		t.Errorf("descendants left: %v", left)
	}
	if st, err := readStat(pid); err == nil && st.state != 'Z' {
		t.Errorf("the orphan %d is alive: %c", pid, st.state)
	}
}
