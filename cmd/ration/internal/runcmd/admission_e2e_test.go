//go:build unix

package runcmd

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
)

// memProgram writes every page of argv[2] MiB (bytearray is zero-filled
// with memset, so the pages are resident), 128 MiB for the ID "big",
// holds them for argv[3] seconds, and prints "done ID". With argv[4], a
// rate in MiB a second, it grows by 1 MiB chunks at that rate instead of
// at once (see testutil.GuardRaceGrowth).
const memProgram = `import sys, time
n = 128 if sys.argv[1] == "big" else int(sys.argv[2])
rate = float(sys.argv[4]) if len(sys.argv) > 4 else 0
if rate > 0:
    b = []
    for _ in range(n):
        b.append(bytearray(1 << 20))
        time.sleep(1 / rate)
else:
    b = bytearray(n << 20)
time.sleep(float(sys.argv[3]))
print("done", sys.argv[1], flush=True)
`

func memJob(t *testing.T) (python, prog string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	prog = filepath.Join(t.TempDir(), "hold.py")
	writeFile(t, prog, memProgram)
	return python, prog
}

// TestMemoryAdmissionE2E: 8 jobs of 40 MiB (about 53 MiB peak RSS with
// the interpreter) in a real 128 MiB memory cgroup (v1 or v2), -j 4: the
// admission runs at most 2 at once, so every job completes without an OOM
// kill, and the summary says that memory bound the jobs, 2 of 4.
func TestMemoryAdmissionE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	cg, _ := testutil.MemoryCgroup(t, 128<<20)
	python, prog := memJob(t)
	inputs := make([]string, 8)
	for i := range inputs {
		inputs[i] = fmt.Sprint(i + 1)
	}
	p := accStart(t, bin, nil, nil, []string{cg}, append([]string{"-j", "4", "--", python, prog, "{}", "40", "0.3", ":::"}, inputs...)...)
	code := p.wait(60 * time.Second)
	stdout, stderr := p.stdout.String(), p.stderr.String()
	accCgroupEmpty(t, cg)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	if n := strings.Count(stdout, "done "); n != len(inputs) {
		t.Errorf("%d jobs done, want %d", n, len(inputs))
	}
	if kills := testutil.OOMKills(t, cg); kills != 0 {
		t.Errorf("oom_kill %d, want 0: the admission let too many jobs run", kills)
	}
	if !strings.Contains(stderr, "memory bound 2 of 4 jobs: ") {
		t.Errorf("the summary does not say memory bound 2 of 4 jobs:\n%s", stderr)
	}
}

// TestOOMAloneE2E: in a real 64 MiB memory cgroup (v1 or v2), a job that
// needs 128 MiB is OOM-killed, re-queued once, killed again running alone
// and reported as OOM-killed (stderr names it, its joblog line is
// written); the other jobs complete. Directly and through a shell that
// exits 137 after its child's SIGKILL.
func TestOOMAloneE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	python, prog := memJob(t)
	for _, shell := range []bool{false, true} {
		t.Run(fmt.Sprintf("shell=%v", shell), func(t *testing.T) {
			t.Parallel() // each in its own memory cgroup
			cg, _ := testutil.MemoryCgroup(t, 64<<20)
			jl := filepath.Join(t.TempDir(), "joblog")
			args := []string{"-j", "2", "--joblog", jl, "--", python, prog, "{}", "5", "0.2"}
			if shell {
				// "; exit $?" keeps the shell from exec'ing python: it
				// waits, and exits 137 after python's SIGKILL.
				args = []string{"-j", "2", "--joblog", jl, "--shell", python + " " + prog + " {} 5 0.2; exit $?"}
			}
			inputs := []string{"1", "2", "big", "4", "5"}
			p := accStart(t, bin, nil, nil, []string{cg}, append(append(args, ":::"), inputs...)...)
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
			if kills := testutil.OOMKills(t, cg); kills < 2 {
				t.Errorf("oom_kill %d, want at least 2 (the kill and the re-queued attempt's)", kills)
			}
			if !strings.Contains(stderr, "OOM-killed while running alone") {
				t.Errorf("stderr does not say the job was OOM-killed while running alone")
			}
			if shell && !strings.Contains(stderr, "exit 137") {
				t.Errorf("stderr does not name the shell's exit 137 as the OOM kill")
			}
			if !strings.Contains(stderr, "retried after an OOM kill") {
				t.Errorf("the summary does not count the OOM re-queue")
			}
			es := accJoblog(t, jl)
			ok, failed := accCount(t, es)
			if len(es) != len(inputs) || ok != len(inputs)-1 || failed != 1 {
				t.Errorf("joblog: %d lines, %d ok, %d failed; want %d, %d, 1", len(es), ok, failed, len(inputs), len(inputs)-1)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr)
			}
		})
	}
}

// TestWorkerMemoryAdmissionE2E: --worker follows the same admission: 12
// tasks that each allocate 40 MiB, on 4 Python workers in a real 128 MiB
// memory cgroup (v1 or v2), -j 4. The workers' baseline and one task fit,
// two do not: tasks run one at a time, with no OOM kill, and the summary
// says memory bound 1 of 4 jobs. (Without admission 4 tasks at once are
// OOM-killed.)
func TestWorkerMemoryAdmissionE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	py, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "runner", "worker", "examples", "worker.py"))
	if err != nil {
		t.Fatal(err)
	}
	cg, _ := testutil.MemoryCgroup(t, 128<<20)
	inputs := make([]string, 12)
	for i := range inputs {
		inputs[i] = "alloc:40:300"
	}
	p := accStart(t, bin, nil, nil, []string{cg}, append([]string{"-j", "4", "--worker", "python3 " + py, ":::"}, inputs...)...)
	code := p.wait(60 * time.Second)
	stderr := p.stderr.String()
	accCgroupEmpty(t, cg)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
	}
	if n := strings.Count(p.stdout.String(), "\n"); n != len(inputs) {
		t.Errorf("%d answers, want %d", n, len(inputs))
	}
	if kills := testutil.OOMKills(t, cg); kills != 0 {
		t.Errorf("oom_kill %d, want 0: the admission let too many tasks run", kills)
	}
	// Four idle Python workers and the tasks' 40 MiB leave room for one or
	// two tasks at a time in 128 MiB, depending on what the workers and
	// the page cache hold when a task asks: either is right, as long as
	// memory, not -j 4, bound the run and nothing was OOM-killed.
	if !regexp.MustCompile(`memory bound [12] of 4 jobs: `).MatchString(stderr) {
		t.Errorf("the summary does not say memory bound 1 or 2 of 4 jobs:\n%s", stderr)
	}
}

// TestJobMemoryCannotKillRationE2E: in a real 64 MiB memory cgroup (v1 or
// v2), a job fills a tmpfs file until it is OOM-killed. Its memory stays
// charged after its death (a file, not the job's RSS), as an OOM-killed
// worker's does for a few milliseconds, and the kernel's OOM killer picks
// the biggest process of the cgroup that is over its limit. Where jobs
// share ration's cgroup, that is ration: it was killed and the run lost
// (a --worker run's failure, made certain). ration runs its jobs in a
// child cgroup whose limit leaves ration room, so only jobs are killed:
// ration reports the job OOM-killed after running alone, writes its
// joblog line and exits 1.
func TestJobMemoryCannotKillRationE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	cg, _ := testutil.MemoryCgroup(t, 64<<20)
	shm, err := os.MkdirTemp("/dev/shm", "ration-test-")
	if err != nil {
		t.Skipf("no tmpfs at /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	jl := filepath.Join(t.TempDir(), "joblog")
	fill := "head -c 256M /dev/zero > " + filepath.Join(shm, "fill")
	p := accStart(t, bin, nil, nil, []string{cg}, "-j", "2", "--joblog", jl, "--shell", fill, ":::", "x")
	code := p.wait(60 * time.Second)
	stderr := p.stderr.String()
	accCgroupEmpty(t, cg)
	if code != 1 {
		t.Errorf("exit %d, want 1 (the job that does not fit); ration itself was OOM-killed if -1", code)
	}
	if !strings.Contains(stderr, "OOM-killed while running alone") {
		t.Errorf("stderr does not say the job was OOM-killed while running alone")
	}
	if es := accJoblog(t, jl); len(es) != 1 || es[0].Succeeded() {
		t.Errorf("joblog: %+v, want one failed line", es)
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr)
	}
}

// jobLimitScript prints "limit N", the memory limit of the job's own
// memory cgroup (v1 memory.limit_in_bytes, v2 memory.max), after a sleep.
const jobLimitScript = `sleep 0.1
m=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup | cut -d: -f3)
if [ -n "$m" ]; then f=/sys/fs/cgroup/memory$m/memory.limit_in_bytes
else f=/sys/fs/cgroup$(grep '^0::' /proc/self/cgroup | cut -d: -f3)/memory.max; fi
echo limit $(cat "$f")`

// TestJobCgroupFollowsLimitE2E: the jobs run in a cgroup of their own
// whose limit is below ration's 128 MiB (the reserve), and when the
// limit is raised to 256 MiB while ration runs, --watch-limits raises the
// jobs' limit by as much.
func TestJobCgroupFollowsLimitE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	cg, _ := testutil.MemoryCgroup(t, 128<<20)
	inputs := make([]string, 15)
	for i := range inputs {
		inputs[i] = fmt.Sprint(i)
	}
	args := append([]string{"-j", "1", "--watch-interval", "50ms", "--shell", jobLimitScript, ":::"}, inputs...)
	p := accStart(t, bin, nil, nil, []string{cg}, args...)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(p.stdout.String(), "limit ") && !p.exited() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	testutil.SetMemoryLimit(t, cg, 256<<20)
	code := p.wait(60 * time.Second)
	stdout, stderr := p.stdout.String(), p.stderr.String()
	accCgroupEmpty(t, cg)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var limits []int64
	for line := range strings.Lines(stdout) {
		var n int64
		if _, err := fmt.Sscanf(line, "limit %d", &n); err == nil {
			limits = append(limits, n)
		}
	}
	if len(limits) != len(inputs) {
		t.Fatalf("%d limit lines, want %d:\n%s", len(limits), len(inputs), stdout)
	}
	first, last := limits[0], limits[len(limits)-1]
	if first >= 128<<20 || first < 96<<20 {
		t.Errorf("the first job's cgroup limit is %d: want the jobs' own, 128 MiB less a reserve of at most a quarter", first)
	}
	if last-first != 128<<20 {
		t.Errorf("the last job's cgroup limit is %d, the first's %d: want 128 MiB more after the resize", last, first)
	}
}

// drainOOMProgram is a job of TestOOMDuringDrainE2E. The small ones
// write every page of 4 MiB, mark themselves started in the directory
// argv[1] and hold the memory until the file "release" there is written
// to; the big one ("big") marks itself started, waits until "go" is
// written to and then writes every page of 128 MiB.
//
// The small ones allocate nothing while they wait, not even a dentry of a
// path lookup (they poll the size of a file they opened before): when the
// kernel kills the big one, its memory stays charged for a few
// milliseconds while it is freed, and any page a small one charged then
// brought a second OOM kill, of a small one (4 in 210 runs beside the
// other end-to-end tests; dmesg showed the second kill come from a stat
// of the polled path).
const drainOOMProgram = `import os, sys, time
d, id = sys.argv[1], sys.argv[2]
if id != "big":
    b = bytearray(4 << 20)
gate = os.open(os.path.join(d, "go" if id == "big" else "release"), os.O_RDONLY)
open(os.path.join(d, "started-" + id), "w").close()
while os.fstat(gate).st_size == 0:
    time.sleep(0.02)
if id == "big":
    b = bytearray(128 << 20)
print("done", id, flush=True)
`

// TestOOMDuringDrainE2E: a job OOM-killed beside two others in a real
// 64 MiB memory cgroup is re-queued (it may fit once fewer jobs run). When
// that happens after SIGTERM, while the running jobs finish, the run
// starts it no more, so the run stopped it: it is not counted as failed
// and gets no joblog line, so that --resume runs it again, as when the
// re-queued job was still waiting at the SIGTERM. (It was recorded as a
// failure, which --resume skips: the job was lost.)
func TestOOMDuringDrainE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "job.py")
	writeFile(t, prog, drainOOMProgram)
	goFile, release := filepath.Join(dir, "go"), filepath.Join(dir, "release")
	writeFile(t, goFile, "")
	writeFile(t, release, "")
	cg, _ := testutil.MemoryCgroup(t, 64<<20)
	jl := filepath.Join(dir, "joblog")
	// No admission: the three jobs start at once, as the CPU policy allows.
	p := accStart(t, bin, nil, []string{"RATION_MEM_ADMISSION=0"}, []string{cg},
		"-j", "3", "--term-timeout", "60s", "--joblog", jl, "--", python, prog, dir, "{}", ":::", "big", "s1", "s2")
	testutil.Eventually(t, 30*time.Second, "the three jobs start", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "started-*"))
		return len(m) == 3 || p.exited()
	})
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testutil.WaitForText(t, 30*time.Second, p.stderr.String, "got SIGTERM")
	writeFile(t, goFile, "go\n")
	testutil.WaitForText(t, 30*time.Second, p.stderr.String, "job OOM-killed")
	writeFile(t, release, "release\n")
	code := p.wait(60 * time.Second)
	stdout, stderr := p.stdout.String(), p.stderr.String()
	accCgroupEmpty(t, cg)
	if code != 143 {
		t.Errorf("exit %d, want 143 (SIGTERM)", code)
	}
	for _, id := range []string{"s1", "s2"} {
		if !strings.Contains(stdout, "done "+id+"\n") {
			t.Errorf("job %s did not complete", id)
		}
	}
	if !strings.Contains(stderr, "re-queued until fewer jobs run") {
		t.Fatalf("the big job was not OOM-killed beside the others and re-queued; stderr:\n%s", stderr)
	}
	es := accJoblog(t, jl)
	for _, e := range es {
		if e.Seq == 1 {
			t.Errorf("the joblog records the re-queued job (exit %d, signal %d): --resume would skip it", e.Exitval, e.Signal)
		}
	}
	if ok, failed := accCount(t, es); ok != 2 || failed != 0 {
		t.Errorf("joblog: %d ok, %d failed; want 2 ok (s1, s2), no failure", ok, failed)
	}
	if !strings.Contains(stderr, "interrupted by SIGTERM: 2 done, 0 failed, 1 stopped") {
		t.Errorf("the interrupted line does not count the re-queued job as stopped; stderr:\n%s", stderr)
	}
}

// TestOOMAloneKeepsConcurrencyE2E: a job that does not fit in a real
// 64 MiB memory cgroup even alone (128 MiB) is OOM-killed running alone,
// re-queued once, killed alone again and fails; the jobs after it run as
// before, -j 4. Its kills say nothing of how many jobs fit: no other job
// ran, so they do not halve the concurrency (it was halved twice, down to
// 1 with an OOM ceiling of 1), and its peaks are not taken for one job's
// peak by the memory admission (which then let one job run at a time).
// The small jobs come on stdin only after it failed, so that it runs
// alone.
func TestOOMAloneKeepsConcurrencyE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	python, prog := memJob(t)
	cg, _ := testutil.MemoryCgroup(t, 64<<20)
	in, feed := io.Pipe()
	defer feed.Close()
	p := accStart(t, bin, in, nil, []string{cg}, "-j", "4", "--", python, prog, "{}", "1", "0.3")
	go fmt.Fprintln(feed, "big")
	// Its failure, not the first kill (after which it runs again).
	testutil.WaitForText(t, 60*time.Second, p.stderr.String, `msg="job failed"`)
	small := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"}
	go func() {
		fmt.Fprintln(feed, strings.Join(small, "\n"))
		feed.Close()
	}()
	code := p.wait(60 * time.Second)
	stdout, stderr := p.stdout.String(), p.stderr.String()
	accCgroupEmpty(t, cg)
	if code != 1 {
		t.Errorf("exit %d, want 1 (the job that does not fit)", code)
	}
	for _, id := range small {
		if !strings.Contains(stdout, "done "+id+"\n") {
			t.Errorf("job %s did not complete", id)
		}
	}
	if strings.Contains(stderr, "OOM halving") || strings.Contains(stderr, "concurrency changed") {
		t.Errorf("the kills of a job running alone changed the concurrency")
	}
	// The small jobs may bind by memory (4 of about 14 MiB do not fit in
	// the jobs' 48 MiB), but by their own peak, not by big's near 64 MiB.
	if m := regexp.MustCompile(`memory bound .*/ ([0-9.]+) MiB per job`).FindStringSubmatch(stderr); m != nil {
		if perJob, _ := strconv.ParseFloat(m[1], 64); perJob >= 32 {
			t.Errorf("the memory admission took the peak of the job that does not fit for one job's: %s", m[0])
		}
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", stderr)
	}
}

// TestJobCgroupRemovedAfterLeakE2E: a job that leaves a process running
// outside its process group (setsid, as a daemon does) in a real memory
// cgroup with a limit: when ration ends, the process is killed (ration is
// a subreaper and kills every descendant at the end of the run: no process
// a job started outlives it) and the jobs' cgroup it made is gone. (The
// jobs' cgroup stayed, holding the process, until some later ration found
// it empty; then the process ran on in ration's cgroup.)
func TestJobCgroupRemovedAfterLeakE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	cg, _ := testutil.MemoryCgroup(t, 128<<20)
	pidFile := filepath.Join(t.TempDir(), "pid")
	p := accStart(t, bin, nil, nil, []string{cg}, "--shell",
		"setsid sh -c 'echo $$ > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+"; exec sleep 60' >/dev/null 2>&1 </dev/null & "+
			"while [ ! -s "+pidFile+" ]; do sleep 0.01; done; echo started {}", ":::", "a")
	code := p.wait(60 * time.Second)
	stderr := p.stderr.String()
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	pid := testutil.ReadPID(t, pidFile, 10*time.Second)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if m, _ := filepath.Glob(filepath.Join(cg, "ration-*")); len(m) > 0 {
		t.Errorf("left after ration ended: %v; stderr:\n%s", m, stderr)
	}
	procs, err := os.ReadFile(filepath.Join(cg, "cgroup.procs"))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(strings.Fields(string(procs)), strconv.Itoa(pid)) {
		t.Errorf("the job's leftover process %d outlived ration, in its cgroup %s", pid, cg)
	}
}

// TestJobCgroupFollowsLiftedLimitE2E: when the 128 MiB limit of ration's
// real memory cgroup is lifted while ration runs, --watch-limits lifts the
// jobs' cgroup's limit too: the jobs then share what ration's cgroup may
// use (no limit, or an ancestor's, at least 512 MiB where the test runs),
// instead of staying held to 128 MiB less the reserve for the rest of the
// run.
func TestJobCgroupFollowsLiftedLimitE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := buildRation(t)
	ownCgroup(t)
	cg, _ := testutil.MemoryCgroup(t, 128<<20)
	inputs := make([]string, 15)
	for i := range inputs {
		inputs[i] = fmt.Sprint(i)
	}
	args := append([]string{"-j", "1", "--watch-interval", "50ms", "--shell", jobLimitScript, ":::"}, inputs...)
	p := accStart(t, bin, nil, nil, []string{cg}, args...)
	testutil.WaitForText(t, 20*time.Second, p.stdout.String, "limit ")
	testutil.SetMemoryLimit(t, cg, 0)
	code := p.wait(60 * time.Second)
	stdout, stderr := p.stdout.String(), p.stderr.String()
	accCgroupEmpty(t, cg)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var limits []string
	for line := range strings.Lines(stdout) {
		// "limit N INPUT": the input is appended to the command.
		if f := strings.Fields(line); len(f) > 1 && f[0] == "limit" {
			limits = append(limits, f[1])
		}
	}
	if len(limits) != len(inputs) {
		t.Fatalf("%d limit lines, want %d:\n%s", len(limits), len(inputs), stdout)
	}
	first, last := limits[0], limits[len(limits)-1]
	if n, err := strconv.ParseInt(first, 10, 64); err != nil || n >= 128<<20 {
		t.Errorf("the first job's cgroup limit is %s: want the jobs' own, below 128 MiB", first)
	}
	if n, err := strconv.ParseInt(last, 10, 64); err == nil && n < 512<<20 {
		t.Errorf("the last job's cgroup limit is %s, the first's %s: want it lifted with ration's; stderr:\n%s", last, first, stderr)
	}
}
