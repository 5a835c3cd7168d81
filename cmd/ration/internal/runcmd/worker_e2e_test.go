//go:build unix

package runcmd

// Acceptance tests of worker processes, OOM adaptation and live
// resize) against the built binary, with real processes and real cgroups,
// v1 or v2 (testutil.ChildCgroup): children of this test process's own
// cgroup, into which only the ration process under test moves itself (its
// jobs and workers inherit it). They need root and skip otherwise, and
// they skip while `ration run --help` does not list the flags they need.

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
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

// accCgroupEmpty fails t if a process is still in dir a few seconds after
// ration ended: ration must not leave workers or jobs behind.
func accCgroupEmpty(t *testing.T, dir string) {
	t.Helper()
	var procs string
	for range 100 {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			t.Errorf("read %s: %v", dir, err)
			return
		}
		if procs = strings.TrimSpace(string(b)); procs == "" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, pid := range strings.Fields(procs) {
		cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
		t.Errorf("process %s (%q) left in %s after ration ended", pid, strings.ReplaceAll(string(cmdline), "\x00", " "), dir)
	}
}

// TestWorkerRealOOME2E is the real-OOM acceptance test at the CLI:
// `ration run --worker` in a 64 MiB memory cgroup, 50 tasks of which one
// allocates 256 MiB. That task is quarantined with "OOM-killed" on stderr
// next to its input, once it was killed running alone, while another task
// still runs; the other 49 succeed exactly once (stdout and joblog); exit
// status 1; no worker is left behind.
func TestWorkerRealOOME2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	help := accHelp(t, bin)
	accNeed(t, help, "worker", "metrics-addr")
	ownCgroup(t)                            // skips unless root, before building the Go worker
	t.Cleanup(func() { noChildrenLeft(t) }) // after the parallel subtests
	py, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "runner", "worker", "examples", "worker.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		name string
		cmd  func(t *testing.T) string
	}{
		{"python", func(t *testing.T) string {
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("no python3")
			}
			return "python3 " + py
		}},
		{"go", accGoWorker},
	} {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel() // each in its own memory cgroup
			worker := w.cmd(t)
			cg, _ := testutil.MemoryCgroup(t, 64<<20)
			jl := filepath.Join(t.TempDir(), "joblog")
			const hog = 17
			inputs := make([]string, 50)
			for i := range inputs {
				inputs[i] = fmt.Sprintf("task-%d", i)
				if i > hog {
					// The tasks after the hog take 40 ms each, so that they
					// outlast its first OOM kill (~150 ms to reach the limit)
					// and the held last task starts only after its
					// quarantine: an OOM-killed task is given to a worker
					// again only once no task that ran beside it is in
					// flight, and the held task would be one for 5 s.
					inputs[i] = fmt.Sprintf("sleep:40:task-%d", i)
				}
			}
			inputs[hog] = "alloc:256"
			args := []string{"--worker", worker, "-j", "2", "--joblog", jl, "--term-timeout", "1s"}
			// The last task holds the run for a few seconds, so that
			// /metrics can be read after the others ended.
			addr := accFreeAddr(t)
			args = append(args, "--metrics-addr", addr)
			inputs[len(inputs)-1] = "sleep:5000:hold"
			p := accStart(t, bin, nil, nil, []string{cg}, append(append(args, ":::"), inputs...)...)
			workerMetrics(t, p, "http://"+addr+"/metrics", len(inputs))
			code := p.wait(120 * time.Second)
			stdout, stderr := p.stdout.String(), p.stderr.String()
			accCgroupEmpty(t, cg)
			if code == 250 {
				t.Fatalf("could not move into %s: %s", cg, stderr)
			}
			if code != 1 {
				t.Errorf("exit %d, want 1 (the quarantined task)", code)
			}
			if kills := testutil.OOMKills(t, cg); kills < 1 {
				t.Errorf("the cgroup's oom_kill count is %d: no real OOM kill happened", kills)
			}
			named := false
			for line := range strings.Lines(stderr) {
				if strings.Contains(line, "OOM-killed") && strings.Contains(line, inputs[hog]) {
					named = true
				}
			}
			if !named {
				t.Errorf("no stderr line says OOM-killed next to the input %q", inputs[hog])
			}
			// The pool's OOM rule: quarantined only once killed alone.
			if !strings.Contains(stderr, "OOM-killed while running alone") {
				t.Errorf("stderr does not say the hog was OOM-killed while running alone")
			}
			// stdout: one answer per task, each task's own, exactly once.
			seen := map[string]int{}
			for line := range strings.Lines(stdout) {
				var a struct {
					Input string `json:"input"`
					PID   int    `json:"pid"`
				}
				if in := strings.TrimSuffix(line, "\n"); strings.HasPrefix(in, "sleep:") {
					a.Input = in // a sleep task answers its input, a string output printed as it is
				} else if err := json.Unmarshal([]byte(line), &a); err != nil || a.PID == 0 {
					t.Errorf("stdout line %q is not a worker's answer", line)
					continue
				}
				seen[a.Input]++
			}
			for i, in := range inputs {
				if want := map[bool]int{true: 0, false: 1}[i == hog]; seen[in] != want {
					t.Errorf("task %q printed %d times, want %d", in, seen[in], want)
				}
			}
			if len(seen) != len(inputs)-1 {
				t.Errorf("%d distinct answers, want %d", len(seen), len(inputs)-1)
			}
			// joblog: every task once; only the hog failed.
			es := accJoblog(t, jl)
			ok, failed := accCount(t, es)
			if len(es) != len(inputs) || ok != len(inputs)-1 || failed != 1 {
				t.Errorf("joblog: %d lines, %d ok, %d failed; want %d, %d, 1", len(es), ok, failed, len(inputs), len(inputs)-1)
			}
			for _, e := range es {
				if e.Succeeded() == (e.Seq == hog+1) {
					t.Errorf("joblog job %d: exit %d signal %d", e.Seq, e.Exitval, e.Signal)
				}
			}
			if t.Failed() {
				t.Logf("stderr:\n%s", stderr)
			} else {
				t.Logf("oom_kill %d; stderr lines naming OOM:\n%s", testutil.OOMKills(t, cg), grepLines(stderr, "OOM"))
			}
		})
	}
}

// workerMetrics scrapes /metrics of the OOM run until every task but the
// held last one has ended, then checks the counters: n started, n-2
// succeeded, 1 quarantined, 1 running, and at least 2 OOM breaks.
func workerMetrics(t *testing.T, p *accProc, url string, n int) {
	t.Helper()
	c := accClient(t)
	const oomBreaks = `ration_worker_breaks_total{cause="oom"}`
	var m map[string]float64
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if p.exited() || time.Now().After(deadline) {
			t.Logf("the run ended before /metrics showed %d ended tasks (last scrape %v): metrics not checked", n-1, m)
			return
		}
		got, err := accScrape(c, url)
		if err != nil {
			continue
		}
		m = got
		if m[mSucceeded]+m[mFailed]+m[mQuarantined] == float64(n-1) {
			break
		}
	}
	t.Logf("while the held task runs: started %v succeeded %v failed %v quarantined %v running %v; oom breaks %v, worker starts %v, recreations %v",
		m[mStarted], m[mSucceeded], m[mFailed], m[mQuarantined], m[mRunning], m[oomBreaks], m["ration_worker_starts_total"], m["ration_pool_recreations_total"])
	if m[mStarted] != float64(n) || m[mSucceeded] != float64(n-2) || m[mFailed] != 0 || m[mQuarantined] != 1 || m[mRunning] != 1 {
		t.Errorf("counters: started %v succeeded %v failed %v quarantined %v running %v; want %d, %d, 0, 1, 1",
			m[mStarted], m[mSucceeded], m[mFailed], m[mQuarantined], m[mRunning], n, n-2)
	}
	// max-breaks 2: the hog broke two workers by OOM. The kernel may take
	// an innocent worker too: more OOM breaks, and then a systemic
	// recreation, whose fresh workers start only after its backoff. And
	// the starts counter counts started processes (WorkerStarted), which
	// may come a moment after the quarantine. So the replacement of the
	// second broken worker may not be counted yet; the first break is
	// never systemic, and its replacement started long before the last
	// tasks ran: at least 2 + 1 starts.
	if m[oomBreaks] < 2 || m["ration_worker_starts_total"] < 3 {
		t.Errorf("%s = %v, ration_worker_starts_total = %v; want at least 2 and at least 2 + 1 replacement",
			oomBreaks, m[oomBreaks], m["ration_worker_starts_total"])
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// accResizes returns the pool_resized records of a JSON log as sizes and
// reasons, in order.
func accResizes(stderr string) (sizes []int, reasons []string) {
	recs, _ := accJSONLines(stderr)
	for _, r := range recs {
		if r["event"] != "pool_resized" {
			continue
		}
		n, _ := r["size"].(float64)
		why, _ := r["reason"].(string)
		sizes = append(sizes, int(n))
		reasons = append(reasons, why)
	}
	return sizes, reasons
}

// TestWorkerAdaptiveE2E is the adaptive acceptance test in
// one-process-per-job mode: a 200 MiB memory cgroup fits two jobs that
// each hold 64 MiB (~80 MiB with the interpreter) but not three or four.
// `-j 4` runs into OOM kills, halves, and settles at 2; every job succeeds
// (the OOM-killed ones are retried), and the summary says the concurrency
// changed and why.
func TestWorkerAdaptiveE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// In parallel with TestWorkerChaosE2E only (the parallel tests run
	// after all the others): the two are the slowest, and neither checks
	// for child processes of the test beyond its own.
	t.Parallel()
	bin := buildRation(t)
	accNeed(t, accHelp(t, bin), "worker", "log-format")
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	cg, _ := testutil.MemoryCgroup(t, 200<<20)
	jl := filepath.Join(t.TempDir(), "joblog")
	const n = 40
	args := []string{"-j", "4", "--log-format", "json", "--joblog", jl, "--term-timeout", "1s",
		"python3", "-c", `import time; b = b"x" * (64 << 20); time.sleep(0.5)`, ":::"}
	for i := 1; i <= n; i++ {
		args = append(args, strconv.Itoa(i))
	}
	// Without the memory admission, which would hold the third
	// job and so avoid the OOM kills this test is about.
	p := accStart(t, bin, nil, []string{"RATION_MEM_ADMISSION=0"}, []string{cg}, args...)
	code := p.wait(300 * time.Second)
	stderr := p.stderr.String()
	accCgroupEmpty(t, cg)
	if code == 250 {
		t.Fatalf("could not move into %s: %s", cg, stderr)
	}
	sizes, reasons := accResizes(stderr)
	_, other := accJSONLines(stderr)
	t.Logf("exit %d; oom_kill %d; pool sizes %v", code, testutil.OOMKills(t, cg), sizes)
	for i := range sizes {
		t.Logf("resize to %d: %s", sizes[i], reasons[i])
	}
	t.Logf("non-JSON stderr lines:\n%s\nlast lines:\n%s", strings.Join(other, "\n"), tail(stderr, 3))
	if code != 0 {
		t.Errorf("exit %d, want 0: every job must finish", code)
	}
	es := accJoblog(t, jl)
	if ok, _ := accCount(t, es); len(es) != n || ok != n {
		t.Errorf("joblog: %d lines, %d ok; want %d each", len(es), ok, n)
	}
	if testutil.OOMKills(t, cg) == 0 {
		t.Fatalf("no OOM kill happened: 4 jobs fit in the cgroup after all, nothing to adapt to")
	}
	if len(sizes) == 0 || sizes[len(sizes)-1] != 2 || slices.Max(sizes) > 4 {
		t.Errorf("pool sizes %v: want it to settle at 2 (never above 4)", sizes)
	}
	oomWhy := false
	for _, why := range reasons {
		if strings.Contains(strings.ToLower(why), "oom") {
			oomWhy = true
		}
	}
	if !oomWhy {
		t.Errorf("no resize names OOM as its reason: %q", reasons)
	}
	// The summary (the last lines ration writes) says the concurrency is 2
	// and why.
	if !summarySays(stderr, "2") {
		t.Errorf("the summary does not say the concurrency changed to 2 because of OOM:\n%s", tail(stderr, 5))
	}
}

// summarySays reports whether a line among the last few of stderr (the
// summary) says the concurrency is now want and names OOM.
func summarySays(stderr, want string) bool {
	re := regexp.MustCompile(`(?i)\bconcurrency:? ` + want + `\b.*\boom\b|\boom\b.*\bconcurrency:? ` + want + `\b`)
	for line := range strings.Lines(tail(stderr, 5)) {
		if re.MatchString(line) {
			return true
		}
	}
	return false
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "")
}

// TestWorkerLiveResizeE2E is the live-resize acceptance test at the
// CLI: a running `ration run` (no -j) in a child cpu cgroup whose quota
// goes from 2 CPUs to 0.5 and back, once with one process per job and once
// with --worker. The pool must shrink to 1 within 10 s (pool_resized in
// the JSON log, the ration_pool_size gauge when --metrics-addr exists) and
// really run one job at a time (ration's children: jobs, or workers once
// the retiring ones finished), then grow back to where it started.
func TestWorkerLiveResizeE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	help := accHelp(t, bin)
	accNeed(t, help, "watch-interval", "log-format", "metrics-addr")
	if s := ownCgroup(t); s.CPUQuota > 0 && s.CPUQuota < 2 {
		t.Skipf("own cgroup has a CPU quota of %.2f: cannot give a child 2 CPUs", s.CPUQuota)
	}
	t.Run("process", func(t *testing.T) { liveResize(t, bin, help, nil, "sh", "-c", "sleep 0.2") })
	t.Run("worker", func(t *testing.T) {
		accNeed(t, help, "worker")
		liveResize(t, bin, help, func(i int) string { return fmt.Sprintf("sleep:200:%d", i) }, "--worker", accGoWorker(t))
	})
	t.Run("disabled", func(t *testing.T) { noResize(t, bin, "--watch-limits=false") })
	t.Run("explicit-j", func(t *testing.T) { noResize(t, bin, "-j", "3") })
	noChildrenLeft(t)
}

// noResize runs ration with args in a child cpu cgroup whose quota drops
// from 2 CPUs to 0.5: with --watch-limits=false, or an explicit -j, the
// pool must keep its size.
func noResize(t *testing.T, bin string, args ...string) {
	cg, _ := testutil.ChildCgroup(t, "cpu")
	testutil.SetCPUQuota(t, cg, 2)
	release := filepath.Join(t.TempDir(), "release")
	args = append(args, "--watch-interval", "200ms", "--log-format", "json", "--term-timeout", "1s",
		"sh", "-c", `while [ ! -e "$RELEASE" ]; do sleep 0.05; done`, ":::", "a", "b", "c")
	p := accStart(t, bin, nil, []string{"RELEASE=" + release}, []string{cg}, args...)
	testutil.Eventually(t, 30*time.Second, "the three jobs to run", func() bool { return len(childrenOf(p.cmd.Process.Pid)) == 3 })
	testutil.SetCPUQuota(t, cg, 0.5)
	time.Sleep(2 * time.Second) // ten watch intervals
	os.WriteFile(release, nil, 0o644)
	code := p.wait(60 * time.Second)
	accCgroupEmpty(t, cg)
	if sizes, reasons := accResizes(p.stderr.String()); code != 0 || len(sizes) > 0 {
		t.Errorf("exit %d, resizes %v %q: want 0 and none", code, sizes, reasons)
	}
}

// liveResize runs one live-resize scenario; input makes the i-th input
// (nil: the number i), cmd ends ration's arguments.
func liveResize(t *testing.T, bin, help string, input func(int) string, cmd ...string) {
	cg, _ := testutil.ChildCgroup(t, "cpu")
	testutil.SetCPUQuota(t, cg, 2)
	full := int(limitsIn(t, bin, cg)["jobs"].(float64))
	if full < 2 {
		t.Skipf("a 2-CPU quota gives %d jobs here: nothing to shrink", full)
	}
	if input == nil {
		input = strconv.Itoa
	}
	workers := len(cmd) > 0 && cmd[0] == "--worker"

	dir := t.TempDir()
	jl := filepath.Join(dir, "joblog")
	args := []string{"--watch-interval", "500ms", "--log-format", "json", "--joblog", jl, "--term-timeout", "1s"}
	addr := accFreeAddr(t)
	args = append(args, "--metrics-addr", addr)
	args = append(args, cmd...)

	// Feed inputs at 10 a second, more than one job slot (5 a second)
	// takes, for as long as the test runs.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stop, fed := make(chan struct{}), make(chan int, 1)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		i := 0
	feed:
		for {
			select {
			case <-stop:
				break feed
			case <-tick.C:
				if _, err := fmt.Fprintln(w, input(i+1)); err != nil {
					break feed
				}
				i++
			}
		}
		w.Close() // end of input: ration finishes what it has
		fed <- i
	}()
	stopped := false
	stopFeeding := func() int {
		if !stopped {
			stopped = true
			close(stop)
		}
		return <-fed
	}
	t.Cleanup(func() {
		if !stopped {
			stopFeeding()
		}
	})
	p := accStart(t, bin, r, nil, []string{cg}, args...)
	r.Close()

	c := accClient(t)
	gauge := func(name string) float64 {
		if addr == "" {
			return -1
		}
		m, err := accScrape(c, "http://"+addr+"/metrics")
		if err != nil {
			return -1
		}
		return m[name]
	}
	// waitSize waits for a pool_resized record to size n after the first
	// `after` records, for the gauge to agree and, with workers, for that
	// many worker processes.
	waitSize := func(n, after int, limit time.Duration) time.Duration {
		t.Helper()
		t0 := time.Now()
		for {
			if p.exited() {
				t.Fatalf("ration exited (status %d)\nstderr:\n%s", p.cmd.ProcessState.ExitCode(), tail(p.stderr.String(), 30))
			}
			sizes, _ := accResizes(p.stderr.String())
			kids := len(childrenOf(p.cmd.Process.Pid))
			if len(sizes) > after && slices.Contains(sizes[after:], n) && (addr == "" || gauge(mPoolSize) == float64(n)) && (!workers || kids == n) {
				return time.Since(t0)
			}
			if time.Since(t0) > limit {
				t.Fatalf("pool not at %d %v after the quota changed: resizes %v, gauge %v, %d children\nstderr:\n%s",
					n, limit, sizes, gauge(mPoolSize), kids, tail(p.stderr.String(), 30))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	// Let it run at full size first.
	time.Sleep(2 * time.Second)
	if g := gauge(mPoolSize); addr != "" && g != float64(full) {
		t.Errorf("pool size gauge %v at the start, want %d", g, full)
	}
	if kids := len(childrenOf(p.cmd.Process.Pid)); workers && kids != full {
		t.Errorf("%d worker processes at the start, want %d", kids, full)
	}
	before, _ := accResizes(p.stderr.String())
	testutil.SetCPUQuota(t, cg, 0.5)
	shrink := waitSize(1, len(before), 10*time.Second)
	t.Logf("quota 0.5 CPU: pool at 1 after %v", shrink.Round(time.Millisecond))
	// The jobs that ran when the pool shrank end within 0.2s (slower under
	// the quota), and retiring workers exit; after that only one job may
	// run at a time.
	testutil.Eventually(t, 10*time.Second, "the jobs and workers beyond the first to end", func() bool {
		return len(childrenOf(p.cmd.Process.Pid)) <= 1 && gauge(mRunning) <= 1
	})
	for range 10 {
		if kids := len(childrenOf(p.cmd.Process.Pid)); kids > 1 {
			t.Errorf("%d children of ration at pool size 1", kids)
		}
		if g := gauge(mRunning); g > 1 {
			t.Errorf("%v jobs running at pool size 1", g)
		}
		time.Sleep(100 * time.Millisecond)
	}
	mid, _ := accResizes(p.stderr.String())
	testutil.SetCPUQuota(t, cg, 2)
	grow := waitSize(full, len(mid), 20*time.Second)
	t.Logf("quota 2 CPUs: pool back at %d after %v", full, grow.Round(time.Millisecond))

	n := stopFeeding()
	code := p.wait(120 * time.Second)
	stderr := p.stderr.String()
	accCgroupEmpty(t, cg)
	sizes, reasons := accResizes(stderr)
	for i := range sizes {
		t.Logf("resize to %d: %s", sizes[i], reasons[i])
	}
	if code != 0 {
		t.Errorf("exit %d, want 0\nstderr:\n%s", code, tail(stderr, 30))
	}
	if i := slices.Index(sizes, 1); i < 0 || !slices.Contains(sizes[i:], full) || slices.ContainsFunc(sizes, func(n int) bool { return n != 1 && n != full }) {
		t.Errorf("pool sizes %v, want 1 and then %d, nothing else", sizes, full)
	}
	for _, why := range reasons {
		if !strings.Contains(why, "limit") && !strings.Contains(why, "quota") {
			t.Errorf("resize reason %q does not name the changed limit", why)
		}
	}
	es := accJoblog(t, jl)
	if ok, _ := accCount(t, es); len(es) != n || ok != n {
		t.Errorf("joblog: %d lines, %d ok; want all %d inputs fed, once, ok", len(es), ok, n)
	}
}

// childrenOf returns the pids of the live (not zombie) processes whose
// parent is ppid.
func childrenOf(ppid int) []int {
	var pids []int
	for _, c := range procChildren(ppid) {
		if c.state != "Z" {
			pids = append(pids, c.pid)
		}
	}
	return pids
}

// TestWorkerChaosE2E is the chaos acceptance test at the CLI (the
// library test covers it in depth): 1,000 tasks on 4 Go workers while the
// test SIGKILLs a random worker of the running `ration run --worker` every
// 50 ms. Every task ends exactly once in the joblog, as a success printed
// once with its own answer or as a quarantine (by the signal); none is
// lost; the exit status counts the quarantined ones; the summary counts
// the replacements; no worker outlives ration.
func TestWorkerChaosE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel() // with TestWorkerAdaptiveE2E, see there
	bin := buildRation(t)
	accNeed(t, accHelp(t, bin), "worker")
	dir := t.TempDir()
	gw := accGoWorker(t)
	jl := filepath.Join(dir, "joblog")
	const n = 1000
	inputs := make([]string, n)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("sleep:10:chaos-%d", i)
	}
	p := accStart(t, bin, strings.NewReader(strings.Join(inputs, "\n")+"\n"), nil, nil,
		"--worker", gw, "-j", "4", "--joblog", jl, "--term-timeout", "1s")
	seen := map[int]bool{}
	kills := 0
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	rnd := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	deadline := time.After(5 * time.Minute)
chaos:
	for {
		select {
		case <-p.done:
			break chaos
		case <-deadline:
			t.Fatalf("still running after 5 minutes, %d kills\nstderr:\n%s", kills, tail(p.stderr.String(), 20))
		case <-tick.C:
		}
		pids := childrenOf(p.cmd.Process.Pid)
		for _, pid := range pids {
			seen[pid] = true
		}
		if len(pids) > 0 && syscall.Kill(pids[rnd.IntN(len(pids))], syscall.SIGKILL) == nil {
			kills++
		}
	}
	code := p.cmd.ProcessState.ExitCode()
	stdout, stderr := p.stdout.String(), p.stderr.String()
	for pid := range seen {
		if alive(pid) {
			t.Errorf("worker %d outlived ration", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	es := accJoblog(t, jl)
	ok, bad := accCount(t, es)
	succeeded := map[string]bool{}
	for _, e := range es {
		if e.Seq < 1 || e.Seq > n {
			t.Errorf("joblog job %d: no such input", e.Seq)
			continue
		}
		switch {
		case e.Succeeded():
			succeeded[inputs[e.Seq-1]] = true
		case e.Signal != int(syscall.SIGKILL):
			t.Errorf("joblog job %d: exit %d signal %d; a task may only succeed or be quarantined by the kills", e.Seq, e.Exitval, e.Signal)
		}
	}
	printed := map[string]int{}
	for line := range strings.Lines(stdout) {
		printed[strings.TrimSuffix(line, "\n")]++
	}
	for in, c := range printed {
		if c != 1 || !succeeded[in] {
			t.Errorf("stdout has %q %d times; its job succeeded: %v", in, c, succeeded[in])
		}
	}
	m := regexp.MustCompile(`(\d+) replaced`).FindStringSubmatch(stderr)
	t.Logf("%d kills of %d workers seen; exit %d; joblog %d ok, %d quarantined; summary: %s",
		kills, len(seen), code, ok, bad, grepLines(stderr, "replaced"))
	if len(es) != n || len(printed) != ok {
		t.Errorf("joblog %d lines (%d ok), stdout %d answers: want %d lines and one answer per success", len(es), ok, len(printed), n)
	}
	if want := min(bad, 101); code != want {
		t.Errorf("exit %d, want %d (the quarantined tasks)", code, want)
	}
	if kills == 0 || m == nil || m[1] == "0" {
		t.Errorf("%d kills, summary %q: want kills and replacements counted", kills, grepLines(stderr, "replaced"))
	}
}

// TestWorkerCLIE2E checks the rest of the --worker contract at
// the CLI: -k order, task errors and breaks named with their input on
// stderr, the worker's stderr passed through with its slot, recycling,
// --timeout as a break, SIGTERM then --resume, and --mem-per-job auto.
func TestWorkerCLIE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	help := accHelp(t, bin)
	accNeed(t, help, "worker")
	gw := accGoWorker(t)
	run := func(t *testing.T, stdin string, args ...string) (int, string, string) {
		t.Helper()
		var in io.Reader
		if stdin != "" {
			in = strings.NewReader(stdin)
		}
		p := accStart(t, bin, in, nil, nil, append([]string{"--term-timeout", "1s"}, args...)...)
		code := p.wait(120 * time.Second)
		return code, p.stdout.String(), p.stderr.String()
	}

	t.Cleanup(func() { noChildrenLeft(t) }) // after the parallel subtests

	t.Run("KeepOrder", func(t *testing.T) {
		t.Parallel()
		var inputs []string
		for i := range 12 {
			inputs = append(inputs, fmt.Sprintf("sleep:%d:k%d", []int{300, 5, 150, 1}[i%4], i))
		}
		code, out, errs := run(t, "", append([]string{"--worker", gw, "-k", "-j", "4", ":::"}, inputs...)...)
		if code != 0 || out != strings.Join(inputs, "\n")+"\n" {
			t.Errorf("exit %d, stdout %q: want 0 and the inputs in order\nstderr:\n%s", code, out, errs)
		}
	})

	t.Run("ErrorsAndBreaks", func(t *testing.T) {
		t.Parallel()
		jl := filepath.Join(t.TempDir(), "joblog")
		inputs := []string{"plain", "fail:boom", "stderr:hello-from-worker", "garbage", "exit:3"}
		code, out, errs := run(t, "", append([]string{"--worker", gw, "-j", "2", "--joblog", jl, ":::"}, inputs...)...)
		if code != 3 {
			t.Errorf("exit %d, want 3 (one task error, two quarantined)", code)
		}
		for _, want := range []struct{ input, text string }{
			{"fail:boom", "boom"}, {"garbage", "protocol"}, {"exit:3", "exit"},
		} {
			found := false
			for line := range strings.Lines(errs) {
				if strings.Contains(line, want.input) && strings.Contains(strings.ToLower(line), want.text) {
					found = true
				}
			}
			if !found {
				t.Errorf("no stderr line names the input %q with %q", want.input, want.text)
			}
		}
		if !regexp.MustCompile(`(?m)^\[\d+\] hello-from-worker$`).MatchString(errs) {
			t.Errorf("the worker's stderr line is not passed through as \"[SLOT] hello-from-worker\"")
		}
		if !strings.Contains(out, `"input":"plain"`) || !strings.Contains(out, "stderr:hello-from-worker\n") || strings.Count(out, "\n") != 2 {
			t.Errorf("stdout %q: want the two successes' answers only", out)
		}
		es := accJoblog(t, jl)
		if ok, failed := accCount(t, es); len(es) != 5 || ok != 2 || failed != 3 {
			t.Errorf("joblog: %d lines, %d ok, %d failed; want 5, 2, 3", len(es), ok, failed)
		}
		if t.Failed() {
			t.Logf("stderr:\n%s", errs)
		}
	})

	t.Run("JSONLogs", func(t *testing.T) {
		t.Parallel()
		accNeed(t, help, "log-format")
		inputs := []string{"plain", "fail:boom", "stderr:hello-from-worker", "garbage", "exit:3"}
		code, _, errs := run(t, "", append([]string{"--worker", gw, "-j", "2", "--log-format", "json", ":::"}, inputs...)...)
		if code != 3 {
			t.Errorf("exit %d, want 3", code)
		}
		recs, other := accJSONLines(errs)
		passed := regexp.MustCompile(`^\[\d+\] `) // the worker's own stderr, passed through
		for _, line := range other {
			if !passed.MatchString(line) {
				t.Errorf("stderr line of ration is not JSON: %q", line)
			}
		}
		quarantined := 0
		for _, r := range recs {
			if r["event"] == "job_finished" && r["outcome"] == "quarantined" {
				quarantined++
			}
		}
		if quarantined != 2 {
			t.Errorf("%d job_finished records with outcome quarantined, want 2", quarantined)
		}
	})

	t.Run("Recycle", func(t *testing.T) {
		t.Parallel()
		accNeed(t, help, "worker-max-tasks")
		var inputs []string
		for i := range 20 {
			inputs = append(inputs, fmt.Sprintf("r%d", i))
		}
		code, out, errs := run(t, "", append([]string{"--worker", gw, "-j", "2", "--worker-max-tasks", "3", ":::"}, inputs...)...)
		pids := map[int]bool{}
		for line := range strings.Lines(out) {
			var a struct{ PID, Tasks int }
			if err := json.Unmarshal([]byte(line), &a); err != nil || a.Tasks < 1 || a.Tasks > 3 {
				t.Errorf("answer %q: want a worker's answer after at most 3 tasks", line)
			}
			pids[a.PID] = true
		}
		if code != 0 || len(pids) < 7 || !strings.Contains(errs, "recycled") {
			t.Errorf("exit %d, %d worker pids (want >= 7 = 20 tasks / 3), summary %q", code, len(pids), grepLines(errs, "workers:"))
		}
	})

	t.Run("TimeoutIsABreak", func(t *testing.T) {
		t.Parallel()
		inputs := []string{"sleep:30000:stuck", "a", "b", "c", "d"}
		jl := filepath.Join(t.TempDir(), "joblog")
		code, out, errs := run(t, "", append([]string{"--worker", gw, "-j", "2", "--timeout", "1s", "--joblog", jl, ":::"}, inputs...)...)
		// The joblog line of the stuck task carries the signal that
		// killed its (last) worker at the timeout.
		for _, e := range accJoblog(t, jl) {
			if e.Seq == 1 && (e.Signal != int(syscall.SIGKILL) || e.Succeeded()) {
				t.Errorf("joblog of the stuck task: exit %d signal %d, want signal %d", e.Exitval, e.Signal, syscall.SIGKILL)
			}
		}
		if code != 1 || strings.Count(out, "\n") != 4 || strings.Contains(out, "stuck") {
			t.Errorf("exit %d, stdout %q: want 1 and the 4 other answers", code, out)
		}
		if !strings.Contains(grepLines(errs, "sleep:30000:stuck"), "quarantined") || !strings.Contains(strings.ToLower(grepLines(errs, "sleep:30000:stuck")), "time") {
			t.Errorf("no stderr line says the stuck task was quarantined after timeouts:\n%s", errs)
		}
	})

	t.Run("SIGTERMThenResume", func(t *testing.T) {
		t.Parallel()
		jl := filepath.Join(t.TempDir(), "joblog")
		var inputs []string
		for i := range 30 {
			inputs = append(inputs, fmt.Sprintf("sleep:200:s%d", i))
		}
		stdin := strings.Join(inputs, "\n") + "\n"
		p := accStart(t, bin, strings.NewReader(stdin), nil, nil, "--worker", gw, "-j", "2", "--joblog", jl, "--term-timeout", "5s")
		for len(accJoblog(t, jl)) < 3 {
			if p.exited() {
				t.Fatalf("ended early\nstderr:\n%s", p.stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		workers := childrenOf(p.cmd.Process.Pid)
		p.cmd.Process.Signal(syscall.SIGTERM)
		if code := p.wait(60 * time.Second); code != 143 {
			t.Errorf("exit %d after SIGTERM, want 143\nstderr:\n%s", code, p.stderr.String())
		}
		assertGone(t, workers...)
		first := p.stdout.String()
		code, second, errs := run(t, stdin, "--worker", gw, "-j", "2", "--joblog", jl, "--resume")
		if code != 0 {
			t.Errorf("resume: exit %d\nstderr:\n%s", code, errs)
		}
		all := strings.Fields(first + second)
		slices.Sort(all)
		want := slices.Clone(inputs)
		slices.Sort(want)
		if !slices.Equal(all, want) {
			t.Errorf("the two runs printed %d answers %q, want each of the %d inputs once (first run %d)", len(all), all, len(want), len(strings.Fields(first)))
		}
		if es := accJoblog(t, jl); len(es) != len(inputs) {
			t.Errorf("joblog has %d lines after resume, want %d", len(es), len(inputs))
		}
	})

	t.Run("MemPerJobAuto", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("no python3")
		}
		var inputs []string
		for i := range 8 {
			inputs = append(inputs, strconv.Itoa(i))
		}
		code, _, errs := run(t, "", append([]string{"--mem-per-job", "auto", "-j", "2",
			"python3", "-c", `b = b"x" * (40 << 20)`, ":::"}, inputs...)...)
		m := regexp.MustCompile(`learned memory per job ([0-9.]+) MiB`).FindStringSubmatch(errs)
		if code != 0 || m == nil {
			t.Fatalf("exit %d; no learned memory per job in the summary:\n%s", code, tail(errs, 3))
		}
		if mib, _ := strconv.ParseFloat(m[1], 64); mib < 40 || mib > 100 {
			t.Errorf("learned %s MiB per job; a job holds 40 MiB plus the interpreter", m[1])
		}
	})
}

// TestWorkerUsageE2E: bad values of the --worker flags are one-line usage
// errors with exit status 255.
func TestWorkerUsageE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	accUsage(t, bin, accHelp(t, bin), []accUsageCase{
		{"max-breaks", []string{"--worker", "cat", "--max-breaks", "0"}, "--max-breaks"},
		{"worker-max-tasks", []string{"--worker", "cat", "--worker-max-tasks", "-1"}, "--worker-max-tasks"},
		{"worker-max-rss", []string{"--worker", "cat", "--worker-max-rss", "lots"}, "lots"},
		{"mem-per-job", []string{"--mem-per-job", "automatic"}, "automatic"},
		{"watch-interval", []string{"--watch-interval", "often"}, "often"},
		{"worker", []string{"--worker", ""}, "--worker"},
		{"worker", []string{"--worker", "cat", "sh", "-c", "true"}, "COMMAND"},
		{"worker", []string{"--worker", "cat", "--shell"}, "--shell"},
		{"worker", []string{"--shell", "--worker", "cat", "--dry-run"}, "--shell"},
	})
}

// TestWorkerDryRunE2E: --dry-run with --worker prints the task line each
// input would be sent as (the protocol's request, numbered by job), not a
// command, and starts no worker.
func TestWorkerDryRunE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildRation(t)
	accNeed(t, accHelp(t, bin), "worker", "dry-run")
	marker := filepath.Join(t.TempDir(), "started")
	p := accStart(t, bin, nil, nil, nil, "--worker", "touch "+marker+"; cat", "--dry-run", "-k", ":::", "a", `b "quoted" c`, "ü\\")
	code := p.wait(60 * time.Second)
	want := `{"id":1,"input":"a"}` + "\n" + `{"id":2,"input":"b \"quoted\" c"}` + "\n" + `{"id":3,"input":"ü\\"}` + "\n"
	if code != 0 || p.stdout.String() != want {
		t.Errorf("exit %d, stdout %q; want 0 and %q\nstderr:\n%s", code, p.stdout.String(), want, p.stderr.String())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("--dry-run started a worker")
	}
}
