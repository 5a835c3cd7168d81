//go:build linux

package runcmd

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// TestMemoryGuardE2E: ration in a real 64 MiB memory cgroup, its jobs in
// the same cgroup (RATION_JOB_CGROUP=0, as where cgroupfs is read-only),
// -j 2, one job of the five needs 128 MiB. With the memory guard
// (RATION_MEM_GUARD=1) ration stops that job before the kernel's OOM
// killer fires: the cgroup's oom_kill stays 0 (on cgroup v2 with
// memory.oom.group, a kernel OOM kill would have taken ration and every
// running job), the job is stopped (beside another job, then re-queued
// and stopped again running alone, or running alone at once) and reported
// as OOM-killed, and the other jobs complete, each in the joblog,
// which --resume then finds complete. Without it (RATION_MEM_GUARD=0) the
// kernel kills instead.
func TestMemoryGuardE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	python, prog := memJob(t)
	for _, guard := range []bool{true, false} {
		t.Run(fmt.Sprintf("guard=%v", guard), func(t *testing.T) {
			t.Parallel() // each in its own memory cgroup
			cg, _ := testutil.MemoryCgroup(t, 64<<20)
			jl := filepath.Join(t.TempDir(), "joblog")
			env := []string{"RATION_JOB_CGROUP=0", "RATION_MEM_GUARD=0"}
			if guard {
				env[1] = "RATION_MEM_GUARD=1"
			}
			inputs := []string{"1", "2", "big", "4", "5"}
			args := []string{"-j", "2", "--joblog", jl, "--", python, prog, "{}", "5", "0.2", strconv.Itoa(testutil.GuardRaceGrowth()), ":::"}
			p := accStart(t, bin, nil, env, []string{cg}, append(args, inputs...)...)
			code := p.wait(60 * time.Second)
			stdout, stderr := p.stdout.String(), p.stderr.String()
			accCgroupEmpty(t, cg)
			if code != 1 {
				t.Errorf("exit %d, want 1 (the job that does not fit)", code)
			}
			for _, id := range []string{"1", "2", "4", "5"} {
				if !strings.Contains(stdout, "done "+id+"\n") {
					t.Errorf("job %s did not complete", id)
				}
			}
			if !strings.Contains(stderr, "OOM-killed while running alone") {
				t.Errorf("stderr does not say the job was OOM-killed while running alone")
			}
			es := accJoblog(t, jl)
			ok, failed := accCount(t, es)
			if len(es) != len(inputs) || ok != len(inputs)-1 || failed != 1 {
				t.Errorf("joblog: %d lines, %d ok, %d failed; want %d, %d, 1", len(es), ok, failed, len(inputs), len(inputs)-1)
			}
			kills := testutil.OOMKills(t, cg)
			stops := strings.Count(stderr, "memory guard: stopped the largest job")
			switch {
			case guard && (kills != 0 || stops < 1 || stops > 2):
				t.Errorf("oom_kill %d, guard stops %d; want 0 and 1 or 2 (the job, and its attempt re-queued after a stop beside another job)", kills, stops)
			case !guard && (kills < 2 || stops != 0):
				t.Errorf("oom_kill %d, guard stops %d; want at least 2 and 0", kills, stops)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr)
			}
			if !guard {
				return
			}
			// Nothing finished is lost: --resume runs none of them again.
			p = accStart(t, bin, nil, env, []string{cg}, append([]string{"--resume"}, append(args, inputs...)...)...)
			if code := p.wait(60 * time.Second); code != 0 || p.stdout.Len() != 0 {
				t.Errorf("--resume: exit %d, stdout %q; want 0 and nothing run", code, p.stdout.String())
			}
			if es := accJoblog(t, jl); len(es) != len(inputs) {
				t.Errorf("joblog after --resume: %d lines, want %d", len(es), len(inputs))
			}
		})
	}
}

// TestMemoryGuardAloneE2E: under the memory guard, a job stopped while
// running alone fails at once, without the re-queue a first OOM kill
// otherwise gets: the guard measured that it does not fit, and running it
// again would race the kernel's group kill once more. -j 1 in a real 64
// MiB memory cgroup shared with ration, the middle job of three needs 128
// MiB: one stop, exit 1, the two others complete.
func TestMemoryGuardAloneE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	python, prog := memJob(t)
	cg, _ := testutil.MemoryCgroup(t, 64<<20)
	jl := filepath.Join(t.TempDir(), "joblog")
	env := []string{"RATION_JOB_CGROUP=0", "RATION_MEM_GUARD=1"}
	inputs := []string{"1", "big", "3"}
	args := []string{"-j", "1", "--joblog", jl, "--", python, prog, "{}", "5", "0.2", strconv.Itoa(testutil.GuardRaceGrowth()), ":::"}
	p := accStart(t, bin, nil, env, []string{cg}, append(args, inputs...)...)
	code := p.wait(60 * time.Second)
	stdout, stderr := p.stdout.String(), p.stderr.String()
	accCgroupEmpty(t, cg)
	if code != 1 {
		t.Errorf("exit %d, want 1 (the job that does not fit)", code)
	}
	for _, id := range []string{"1", "3"} {
		if !strings.Contains(stdout, "done "+id+"\n") {
			t.Errorf("job %s did not complete", id)
		}
	}
	stops := strings.Count(stderr, "memory guard: stopped the largest job")
	if kills := testutil.OOMKills(t, cg); kills != 0 || stops != 1 {
		t.Errorf("oom_kill %d, guard stops %d; want 0 and 1", kills, stops)
	}
	if !strings.Contains(stderr, "OOM-killed while running alone (kill 1)") || strings.Contains(stderr, "re-queued") {
		t.Errorf("stderr does not say the job failed at its first stop, running alone")
	}
	if es := accJoblog(t, jl); len(es) != len(inputs) {
		t.Errorf("joblog: %d lines, want %d", len(es), len(inputs))
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr)
	}
}

// TestMemoryGuardWorkerE2E: the same with --worker: two Python workers
// share ration's real 64 MiB memory cgroup, and one of 12 tasks allocates
// 256 MiB. With the memory guard the worker running it is the one
// stopped, before the kernel's OOM killer fires (oom_kill 0), and the
// task is quarantined as after an OOM kill, once stopped running alone;
// the other 11 succeed, each in the joblog.
func TestMemoryGuardWorkerE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	py, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "runner", "worker", "examples", "worker.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, guard := range []bool{true, false} {
		t.Run(fmt.Sprintf("guard=%v", guard), func(t *testing.T) {
			t.Parallel() // each in its own memory cgroup
			cg, _ := testutil.MemoryCgroup(t, 64<<20)
			jl := filepath.Join(t.TempDir(), "joblog")
			env := []string{"RATION_JOB_CGROUP=0", "RATION_MEM_GUARD=0"}
			if guard {
				env[1] = "RATION_MEM_GUARD=1"
			}
			const hog = 5
			inputs := make([]string, 12)
			for i := range inputs {
				inputs[i] = fmt.Sprintf("sleep:40:task-%d", i)
			}
			inputs[hog] = "alloc:256"
			args := []string{"--worker", "python3 " + py, "-j", "2", "--joblog", jl, "--term-timeout", "1s", ":::"}
			p := accStart(t, bin, nil, env, []string{cg}, append(args, inputs...)...)
			code := p.wait(120 * time.Second)
			stdout, stderr := p.stdout.String(), p.stderr.String()
			accCgroupEmpty(t, cg)
			if code != 1 {
				t.Errorf("exit %d, want 1 (the quarantined task)", code)
			}
			if !strings.Contains(stderr, "OOM-killed while running alone") {
				t.Errorf("stderr does not say the hog was OOM-killed while running alone")
			}
			for i, in := range inputs {
				if i != hog && !strings.Contains(stdout, in+"\n") {
					t.Errorf("task %q did not complete", in)
				}
			}
			es := accJoblog(t, jl)
			ok, failed := accCount(t, es)
			if len(es) != len(inputs) || ok != len(inputs)-1 || failed != 1 {
				t.Errorf("joblog: %d lines, %d ok, %d failed; want %d, %d, 1", len(es), ok, failed, len(inputs), len(inputs)-1)
			}
			kills := testutil.OOMKills(t, cg)
			stops := strings.Count(stderr, "memory guard: stopped the largest job")
			switch {
			case guard && (kills != 0 || stops < 1):
				t.Errorf("oom_kill %d, guard stops %d; want 0 and at least 1", kills, stops)
			case !guard && (kills < 1 || stops != 0):
				t.Errorf("oom_kill %d, guard stops %d; want at least 1 and 0", kills, stops)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr)
			}
		})
	}
}

// TestGuardJobsNiceE2E: where the guard is the defence the jobs start 10
// nicer than ration, so that its readings are not kept waiting for a CPU
// behind jobs that touch memory; --nice N still sets their niceness, and
// without the guard they keep ration's.
func TestGuardJobsNiceE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	for _, tc := range []struct {
		name  string
		guard string
		flags []string
		want  string
	}{
		{"guard", "1", nil, "10"},
		{"guard --nice 3", "1", []string{"--nice", "3"}, "3"},
		{"no guard", "0", nil, "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cg, _ := testutil.MemoryCgroup(t, 256<<20)
			env := []string{"RATION_JOB_CGROUP=0", "RATION_MEM_GUARD=" + tc.guard}
			args := append(tc.flags, "--", "sh", "-c", "cut -d' ' -f19 /proc/self/stat", ":::", "1")
			p := accStart(t, bin, nil, env, []string{cg}, args...)
			if code := p.wait(60 * time.Second); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
			if got := strings.TrimSpace(p.stdout.String()); got != tc.want {
				t.Errorf("the job's niceness %q; want %s", got, tc.want)
			}
		})
	}
}

// niceWorker answers each task with the niceness of the worker's thread.
const niceWorker = `import json, os, sys
for line in sys.stdin:
    task = json.loads(line)
    print(json.dumps({"id": task["id"], "ok": True, "output": os.getpriority(os.PRIO_PROCESS, 0)}), flush=True)`

// TestGuardWorkersNiceE2E: under the memory guard the --worker workers
// start 10 nicer than ration, as the jobs do; without it they keep
// ration's niceness.
func TestGuardWorkersNiceE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	for _, tc := range []struct{ guard, want string }{{"1", "10"}, {"0", "0"}} {
		t.Run("guard="+tc.guard, func(t *testing.T) {
			t.Parallel()
			cg, _ := testutil.MemoryCgroup(t, 256<<20)
			env := []string{"RATION_JOB_CGROUP=0", "RATION_MEM_GUARD=" + tc.guard}
			worker := py + " -c '" + niceWorker + "'"
			p := accStart(t, bin, nil, env, []string{cg}, "-j", "2", "--worker", worker, ":::", "a", "b", "c")
			if code := p.wait(60 * time.Second); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
			if got := strings.Fields(p.stdout.String()); len(got) != 3 || got[0] != tc.want || got[1] != tc.want || got[2] != tc.want {
				t.Errorf("the workers' niceness %q; want %s for each task", got, tc.want)
			}
		})
	}
}
