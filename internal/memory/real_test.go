//go:build linux

package memory_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/internal/testutil"
)

// job is a real process started in a memory cgroup from its first
// instruction, in its own process group.
type job struct {
	cmd   *exec.Cmd
	stdin interface{ Close() error }
}

// startJob runs script (sh) in cgroup dir; when ready is set it waits for
// the job's first line.
func startJob(t *testing.T, dir, script string, ready bool) *job {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", `echo $$ > "$0" && `+script, filepath.Join(dir, "cgroup.procs"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	if ready {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "ready") {
			t.Fatalf("job: %q, %v", line, err)
		}
	}
	return &job{cmd: cmd, stdin: stdin}
}

// TestRealAdmission runs jobs of about 67 MiB in a real memory cgroup of
// 200 MiB and asks the Gate with real readings: the second job is admitted
// once slow start has seen the first one settle, the third is held (memory
// allows 2 of the 8 the CPU would), and a job run through a shell that is
// OOM-killed (exit 137) is attributed to the OOM killer.
func TestRealAdmission(t *testing.T) {
	py := testutil.Python(t)
	dir, version := testutil.ChildCgroup(t, "memory")
	limitFile := "memory.limit_in_bytes"
	if version == 2 {
		limitFile = "memory.max"
		if _, err := os.Stat(filepath.Join(dir, "memory.swap.max")); err == nil {
			if err := os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.Itoa(200<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1e9, 0)
	g := memory.New(memory.Config{Now: func() time.Time { return now }})
	s := memory.SamplerFor(dir, version)
	var jobs []*job
	ask := func() memory.Decision {
		t.Helper()
		r, _, err := s.Sample()
		if err != nil {
			t.Fatal(err)
		}
		var pgs []int
		for _, j := range jobs {
			pgs = append(pgs, j.cmd.Process.Pid)
		}
		rss, err := memory.GroupRSS("/proc", pgs)
		if err != nil {
			t.Fatal(err)
		}
		running := make([]int64, len(pgs))
		for i, pg := range pgs {
			running[i] = rss[pg]
		}
		d := g.Admit(memory.Request{Reading: r, Running: running, Limit: 8})
		t.Logf("limit %d MiB, working set %d MiB, running %v: start=%v %s", r.Limit>>20, r.WorkingSet>>20, running, d.Start, d.Reason)
		return d
	}
	hold := py + ` -c 'import sys; b = bytearray(60 << 20); print("ready", flush=True); sys.stdin.read()'`

	if d := ask(); !d.Start || d.Rule != memory.RuleAlone {
		t.Fatalf("first job: %+v", d)
	}
	jobs = append(jobs, startJob(t, dir, "exec "+hold, true))
	if d := ask(); d.Start || d.Rule != memory.RuleSlowStart {
		t.Fatalf("second job before the first settled: %+v", d)
	}
	now = now.Add(memory.DefaultSettle)
	if d := ask(); !d.Start || d.MemoryJobs != 2 {
		t.Fatalf("second job once the first settled: %+v", d)
	}
	jobs = append(jobs, startJob(t, dir, "exec "+hold, true))
	// The runner asks again every Config.Poll: the Gate sees the second
	// job's growth when it happens, and settles from there.
	if d := ask(); d.Start {
		t.Fatalf("third job right after the second started: %+v", d)
	}
	now = now.Add(memory.DefaultSettle)
	d := ask()
	if d.Start || d.Rule != memory.RuleHeadroom || !d.MemoryBound || d.MemoryJobs != 2 {
		t.Fatalf("third job: %+v", d)
	}
	if got := g.Stats().String(); !strings.HasPrefix(got, "memory bound 2 of 8 jobs: ") {
		t.Errorf("Stats = %q", got)
	}

	// The first job ends; its peak (wait4's ru_maxrss) ends slow start and
	// the third job fits beside the second.
	jobs[0].stdin.Close()
	if err := jobs[0].cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	ru := jobs[0].cmd.ProcessState.SysUsage().(*syscall.Rusage)
	g.Finished(ru.Maxrss << 10)
	jobs = jobs[1:]
	if d := ask(); !d.Start || d.PerJob < 60<<20 {
		t.Fatalf("after the first job ended: %+v", d)
	}

	// A job through a shell that needs 300 MiB: the shell reports its
	// child's SIGKILL as 137; the counter rose and the group is gone.
	var tr memory.Tracker
	_, before, _ := s.Sample()
	tr.Started(7, before)
	tr.Started(8, before) // the holder, running beside it
	hog := startJob(t, dir, py+` -c 'b = bytearray(300 << 20)'; exit $?`, false)
	_ = hog.cmd.Wait()
	_, after, _ := s.Sample()
	exit := hog.cmd.ProcessState.ExitCode()
	gone := syscall.Kill(-hog.cmd.Process.Pid, 0) == syscall.ESRCH
	a := tr.Ended(7, after, memory.End{ExitCode: exit, GroupGone: gone})
	t.Logf("hog: exit %d, oom_kill %d -> %d: %+v", exit, before, after, a)
	if exit != 137 || !a.OOM || len(a.Candidates) != 2 || !strings.Contains(a.Reason, "exit 137") {
		t.Errorf("shell-wrapped OOM kill: exit %d, %+v", exit, a)
	}
	v := g.OOMRetry().Decide(memory.OOMKill{Kills: 1, Others: 1})
	if !v.Requeue {
		t.Errorf("first kill beside another job: %+v", v)
	}
}
