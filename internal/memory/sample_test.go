package memory

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/cgroup"
)

func TestFromCgroupFixture(t *testing.T) {
	// A container in a pod of 200 MiB whose working set is 140 MiB;
	// the container's own PSI some avg10 is 12.5.
	root := filepath.Join("..", "..", "cgroup", "testdata", "memstat-v2")
	m, err := cgroup.Reader{Root: root}.MemStat()
	if err != nil {
		t.Fatal(err)
	}
	r := FromCgroup(m)
	if want := (Reading{Limit: 200 * mib, WorkingSet: 140 * mib, Pressure: true, PressureSome10: 12.5}); r != want {
		t.Errorf("FromCgroup = %+v, want %+v", r, want)
	}
	s, err := NewSampler(cgroup.Reader{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	r2, oom, err := s.Sample()
	if err != nil || r2 != r || oom != 2 {
		t.Errorf("Sample = %+v, %d, %v; want %+v, 2", r2, oom, err, r)
	}
	// v1: the process's own cgroup sets the limit; no PSI.
	s, err = NewSampler(cgroup.Reader{Root: filepath.Join("..", "..", "cgroup", "testdata", "memstat-v1")})
	if err != nil {
		t.Fatal(err)
	}
	r, oom, err = s.Sample()
	if want := (Reading{Limit: 200 * mib, WorkingSet: 150 * mib}); err != nil || r != want || oom != 4 {
		t.Errorf("v1 Sample = %+v, %d, %v; want %+v, 4", r, oom, err, want)
	}
	if _, err := NewSampler(cgroup.Reader{Root: filepath.Join("..", "..", "cgroup", "testdata", "none")}); err == nil {
		t.Error("NewSampler without cgroups: no error")
	}
	if _, _, err := SamplerFor(t.TempDir(), 2).Sample(); err == nil {
		t.Error("Sample of an empty directory: no error")
	}
}

func TestParseProcStat(t *testing.T) {
	for _, tt := range []struct {
		in         string
		pgrp       int
		pages      int64
		wantErr    bool
		whatItSays string
	}{
		{in: "25756 (cat) R 25723 25723 32482 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 131981 3133440 381 18446744073709551615 93863813349376 0", pgrp: 25723, pages: 381},
		{in: "7 (a) b) (c) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 21504 0\n", pgrp: 7, pages: 21504, whatItSays: "a name with ') ('"},
		{in: "7 (x) S 1 7", wantErr: true},
		{in: "no parenthesis", wantErr: true},
		{in: "7 (x) S 1 pg 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 5 0", wantErr: true},
		{in: "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 -5 0", wantErr: true},
	} {
		pg, pages, err := parseProcStat(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && (pg != tt.pgrp || pages != tt.pages)) {
			t.Errorf("parseProcStat(%q) = %d, %d, %v; want %d, %d, error %v", tt.in, pg, pages, err, tt.pgrp, tt.pages, tt.wantErr)
		}
	}
}

// TestParseProcState reads whole /proc/PID/stat lines: a sleep, the same
// SIGKILLed while frozen (state D, SIGKILL pending in field 31, not yet
// PF_EXITING), one exiting, and lines that end before field 31.
func TestParseProcState(t *testing.T) {
	for _, tt := range []struct {
		in      string
		state   byte
		pending uint64
		killed  bool
		wantErr bool
	}{
		{in: "21806 (sleep) S 21798 21798 20080 0 -1 4194304 133 0 0 0 0 0 0 0 20 0 1 0 3504463 2990080 444 18446744073709551615 93907872010240 93907872028169 140737250673568 0 0 0 0 6 0 1 0 0 17 1 0 0 0 0 0 93907872042256 93907872043520 93908589322240 140737250675401 140737250675411 140737250675411 140737250676713 0\n", state: 'S'},
		{in: "21801 (sleep) D 21798 21798 20080 0 -1 4194304 132 0 0 0 0 0 0 0 20 0 1 0 3504411 2990080 405 18446744073709551615 94872831352832 94872831370761 140727818193936 0 0 256 0 6 0 1 0 0 17 1 0 0 0 0 0 94872831384848 94872831386112 94873009295360 140727818201801 140727818201811 140727818201811 140727818203113 9\n", state: 'D', pending: 256, killed: true},
		{in: "9 (python3) R 8 8 1 0 -1 4194308 99 0 0 0 0 0 0 0 20 0 1 0 1 1 2000 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0", state: 'R', killed: true},
		{in: "25756 (cat) R 25723 25723 32482 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 131981 3133440 381 0", state: 'R'},
		{in: "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 5 0 0 0 0 0 0 x 0 0", wantErr: true},
		{in: "7 (x) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 1 1 5 0 0 0 0 0 0 -256 0 0", wantErr: true},
	} {
		st, err := parseProcState(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && (st.state != tt.state || st.pending != tt.pending || st.killed() != tt.killed)) {
			t.Errorf("parseProcState(%q) = %+v (killed %v), %v; want state %c, pending %d, killed %v, error %v", tt.in, st, st.killed(), err, tt.state, tt.pending, tt.killed, tt.wantErr)
		}
	}
}

func FuzzParseProcStat(f *testing.F) {
	f.Add("25756 (cat) R 25723 25723 32482 0 -1 4194304 99 0 0 0 0 0 0 0 20 0 1 0 131981 3133440 381 0")
	f.Add("1 ()) S")
	f.Fuzz(func(t *testing.T, s string) {
		if _, pages, err := parseProcStat(s); err == nil && pages < 0 {
			t.Fatalf("negative pages from %q", s)
		}
	})
}

// TestGroupRSS starts a process group of a shell and a child that holds
// 40 MiB: the group's RSS counts both.
func TestGroupRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	cmd := exec.Command("/bin/sh", "-c", `"$0" -c 'import sys; b = bytearray(40 << 20); print("ready", flush=True); sys.stdin.read()'; exit $?`, py)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	buf := make([]byte, 5)
	if _, err := stdout.Read(buf); err != nil {
		t.Fatal(err)
	}
	pg := cmd.Process.Pid
	got, err := GroupRSS("/proc", []int{pg, 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if got[pg] < 40*mib || got[pg] > 200*mib {
		t.Errorf("group RSS = %d MiB, want 40 MiB and an interpreter", got[pg]/mib)
	}
	if _, ok := got[1<<30]; ok {
		t.Error("a group without processes has an entry")
	}
	// The leader is the shell: ProcessRSS counts it alone, without python.
	if n, err := ProcessRSS("/proc", pg); err != nil || n <= 0 || n >= 40*mib {
		t.Errorf("ProcessRSS of the shell = %d MiB, %v; want a few MiB", n/mib, err)
	}
	if _, err := ProcessRSS("/proc", 1<<30); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ProcessRSS of no process: %v, want fs.ErrNotExist", err)
	}
	stdin.Close()
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, _ := GroupRSS("/proc", []int{pg})
		if _, ok := got[pg]; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %d still has RSS after exit: %v", pg, got)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := GroupRSS(filepath.Join(t.TempDir(), "none"), []int{1}); err == nil {
		t.Error("GroupRSS without /proc: no error")
	}
}

// TestGroupRunsZombie: a process group whose only process has exited but
// was not waited for (a zombie) still answers kill(2), but runs nothing:
// GroupRuns is false for it, true while the process runs.
func TestGroupRunsZombie(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	cmd := exec.Command("sh", "-c", "read x")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	pids, err := ProcessIDs("/proc")
	if err != nil {
		t.Fatal(err)
	}
	if runs := GroupRuns("/proc", pids, pgid); !runs {
		t.Errorf("GroupRuns of a running group = %v; want true", runs)
	}
	stdin.Close() // sh exits; not waited for, it stays a zombie
	deadline := time.Now().Add(5 * time.Second)
	for {
		pids, err := ProcessIDs("/proc")
		if err != nil {
			t.Fatal(err)
		}
		if !GroupRuns("/proc", pids, pgid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("GroupRuns still true 5 s after the group's process exited")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(-pgid, 0); err != nil {
		t.Errorf("kill(-pgid, 0) = %v: the zombie should still answer it", err)
	}
	_ = cmd.Wait()
}
