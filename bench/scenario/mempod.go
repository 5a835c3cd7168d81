package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The "memory-bound pod" scenario: jobs whose memory, not CPU,
// bounds the concurrency, and which ration is not told about.
const (
	memPodJobs     = 40
	memPodQuickN   = 12
	memPodLimit    = 200 << 20 // the cgroup: memory for about 2 jobs
	memPodHoldMiB  = 70        // what each job holds; about 85 MiB peak RSS with the interpreter
	memPodHold     = 500 * time.Millisecond
	memPodAccRatio = 1.15 // ration's wall within this factor of the best fixed setting
	memPodMaxKills = 2
)

// memPodProgram is the job: it writes every page of 70 MiB (bytearray(n)
// is zero-filled with memset, so the pages are resident), holds them for a
// moment as a real job holds its working data, and reports its id.
var memPodProgram = fmt.Sprintf(`import sys, time
b = bytearray(%d << 20)
time.sleep(%g)
print("done", sys.argv[1], flush=True)
`, memPodHoldMiB, memPodHold.Seconds())

// memPodContender is one way to run the batch; fixed marks the settings a
// user picks by hand (the column "x best fixed" compares with the best).
type memPodContender struct {
	name  string
	args  []string // nil: not available
	env   []string // added to the environment
	why   string
	fixed bool
}

// memPodGuard is the contender that runs as ration does where it cannot
// give its jobs a memory cgroup (a pod's read-only cgroupfs): the jobs
// share its cgroup, and its memory guard stops a job before the kernel's
// OOM killer would (on cgroup v2 with memory.oom.group, a kill there
// takes ration and every job).
const memPodGuard = "ration run (defaults, jobs in ration's cgroup: memory guard)"

func memPodContenders(e *env, job []string) []memPodContender {
	cs := []memPodContender{
		{name: "ration run (defaults)", args: concat([]string{e.ration, "run", "--"}, job, []string{"{}"})},
		{name: "ration run --mem-per-job auto"},
		{name: memPodGuard, args: concat([]string{e.ration, "run", "--"}, job, []string{"{}"}), env: []string{"RATION_JOB_CGROUP=0", "RATION_MEM_GUARD=1"}},
	}
	if e.has("--mem-per-job") {
		cs[1].args = concat([]string{e.ration, "run", "--mem-per-job", "auto", "--"}, job, []string{"{}"})
	} else {
		cs[1].why = "not available in this build (`ration run --help` lists no --mem-per-job)"
	}
	for _, p := range []int{2, 4, 8} {
		cs = append(cs, memPodContender{name: fmt.Sprintf("xargs -P %d", p), fixed: true,
			args: concat([]string{e.xargs, "-P", fmt.Sprint(p), "-n", "1"}, job)})
	}
	gnu := memPodContender{name: fmt.Sprintf("GNU parallel (default -j, = %d)", e.nproc), why: noGNU}
	if e.parallel != "" {
		gnu.args = concat([]string{e.parallel, "--will-cite"}, job, []string{"{}"})
	}
	return append(cs, gnu)
}

type memPodRun struct {
	c    memPodContender
	r    result
	done int
}

// memoryPod runs memPodJobs jobs of a Python program holding 70 MiB in a
// 200 MiB memory cgroup without a CPU quota, so that memory, not CPU,
// bounds the concurrency, and nothing tells ration how much a job needs.
func memoryPod(ctx context.Context, e *env, _ calibration) (section, error) {
	n := memPodJobs
	if e.quick {
		n = memPodQuickN
	}
	dir, err := os.MkdirTemp("", "ration-bench-mempod-")
	if err != nil {
		return section{}, err
	}
	defer os.RemoveAll(dir)
	prog := filepath.Join(dir, "hold.py")
	if err := os.WriteFile(prog, []byte(memPodProgram), 0o644); err != nil {
		return section{}, err
	}
	job := []string{e.python, prog}
	// Every job at once would need n x 85 MiB; one at a time about 0.6 s
	// each: a run taking 4x the serial time has hung.
	timeout := time.Duration(n)*(memPodHold+time.Second)*4 + 60*time.Second

	var runs []memPodRun
	for _, c := range memPodContenders(e, job) {
		if c.args == nil {
			runs = append(runs, memPodRun{c: c})
			continue
		}
		e.log("  %s", c.name)
		r := run(ctx, e.h, spec{Name: c.name, Args: c.args, Env: c.env, Stdin: seqInput(n), MemLimit: memPodLimit, Timeout: timeout})
		done := countIn(r.Done, 1, n)
		e.log("    %.1fs exit=%d done=%d peak=%.0fMiB oomkills=%d", sec(r.Wall), r.Exit, done, mib(r.PeakMem), r.OOMKills)
		runs = append(runs, memPodRun{c: c, r: r, done: done})
		if ctx.Err() != nil {
			break
		}
	}
	best := bestFixed(runs, n)

	var b strings.Builder
	fmt.Fprintf(&b, "%d jobs of a Python program that writes %d MiB and holds it for %.1f s (about %d MiB peak RSS with the interpreter), "+
		"in a cgroup of %d MiB **without a CPU quota** on this %d-CPU machine: memory, not CPU, bounds the concurrency (about 2 jobs fit), "+
		"and no contender is told how much a job needs. The CPU policy alone would run %d jobs at once here.\n\n",
		n, memPodHoldMiB, memPodHold.Seconds(), memPodHoldMiB+15, memPodLimit>>20, e.nproc, min(2*e.nproc, 8))
	fmt.Fprintf(&b, "The job, `hold.py ID`:\n\n```python\n%s```\n\n", memPodProgram)
	b.WriteString("| contender | completed | failed | OOM kills | wall s | x best fixed setting | exit | peak MiB |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	rows := [][]string{{"contender", "completed", "failed", "oom_kills", "wall_s", "x_best_fixed", "exit", "timed_out", "peak_mib", "command"}}
	for _, pr := range runs {
		if pr.c.args == nil {
			fmt.Fprintf(&b, "| %s | %s | | | | | | |\n", pr.c.name, pr.c.why)
			rows = append(rows, []string{pr.c.name, "", "", "", "", "", "", "", "", pr.c.why})
			continue
		}
		r := pr.r
		exit := fmt.Sprint(r.Exit)
		if r.TimedOut {
			exit += " (timed out)"
		}
		if r.Err != nil {
			exit += " (" + r.Err.Error() + ")"
		}
		ratio := "" // a run that gave up on jobs is not faster
		if best > 0 && pr.done == n {
			ratio = fmt.Sprintf("%.2f", sec(r.Wall)/sec(best))
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.1f | %s | %s | %.0f |\n", pr.c.name, pr.done, n-pr.done, r.OOMKills, sec(r.Wall), ratio, exit, mib(r.PeakMem))
		rows = append(rows, []string{pr.c.name, fmt.Sprint(pr.done), fmt.Sprint(n - pr.done), fmt.Sprint(r.OOMKills), f1(sec(r.Wall)), ratio,
			fmt.Sprint(r.Exit), fmt.Sprint(r.TimedOut), f1(mib(r.PeakMem)), shellJoin(r.Args)})
	}
	fmt.Fprintf(&b, "\n*completed* counts distinct `done ID` lines on stdout; *OOM kills* is `oom_kill` from %s; "+
		"*x best fixed setting* is the wall time over that of the fastest xargs -P N that completed every job "+
		"(a setting a user would have to find by trial), given only for contenders that completed every job.\n\n", e.h.file("`memory.oom_control`", "`memory.events`"))
	if err := writeCSV(filepath.Join(e.out, "mempod.csv"), rows); err != nil {
		return section{}, err
	}
	for _, pr := range runs {
		if !strings.HasPrefix(pr.c.name, "ration") || pr.c.args == nil {
			continue
		}
		if s := strings.TrimSpace(lastLines(pr.r.Stderr, 6)); s != "" {
			fmt.Fprintf(&b, "%s, last lines of stderr:\n\n```\n%s\n```\n\n", pr.c.name, clip(s, 1500))
		}
	}
	for _, name := range []string{"ration run (defaults)", memPodGuard} {
		i := slicesIndexName(runs, name)
		if i < 0 || runs[i].c.args == nil {
			continue
		}
		pr := runs[i]
		fmt.Fprintf(&b, "**Acceptance** (%s):\n\n", name)
		fmt.Fprintf(&b, "- completes every job: %s (%d of %d)\n", pass(pr.done == n), pr.done, n)
		fmt.Fprintf(&b, "- at most %d OOM kills: %s (%d)\n", memPodMaxKills, pass(pr.r.OOMKills <= memPodMaxKills), pr.r.OOMKills)
		if best > 0 {
			ratio := sec(pr.r.Wall) / sec(best)
			fmt.Fprintf(&b, "- wall time within %.2fx of the best xargs -P N: %s (%.1f s vs %.1f s = %.2fx)\n", memPodAccRatio, pass(ratio <= memPodAccRatio), sec(pr.r.Wall), sec(best), ratio)
		} else {
			fmt.Fprintf(&b, "- wall time within %.2fx of the best xargs -P N: FAIL (no xargs setting completed every job to compare with)\n", memPodAccRatio)
		}
		b.WriteString("\n")
	}

	var sum strings.Builder
	fmt.Fprintf(&sum, "%d jobs of about %d MiB each in a %d MiB cgroup without a CPU quota (job memory not given to any tool):\n\n", n, memPodHoldMiB+15, memPodLimit>>20)
	sum.WriteString("| contender | completed | failed | OOM kills | wall s | x best fixed |\n|---|---:|---:|---:|---:|---:|\n")
	for _, row := range rows[1:] {
		if row[1] == "" {
			fmt.Fprintf(&sum, "| %s | not available in this build | | | | |\n", row[0])
			continue
		}
		fmt.Fprintf(&sum, "| %s | %s / %d | %s | %s | %s | %s |\n", row[0], row[1], n, row[2], row[3], row[4], row[5])
	}
	return section{id: "mempod", title: "Scenario \"memory-bound pod\"", md: b.String(), summary: sum.String()}, nil
}

// bestFixed is the wall time of the fastest fixed setting that completed
// every job; when none did, of the fastest fixed setting at all; 0 when no
// fixed setting ran.
func bestFixed(runs []memPodRun, n int) time.Duration {
	var all, complete time.Duration
	for _, pr := range runs {
		if !pr.c.fixed || pr.c.args == nil || pr.r.Err != nil || pr.r.TimedOut {
			continue
		}
		if all == 0 || pr.r.Wall < all {
			all = pr.r.Wall
		}
		if pr.done == n && (complete == 0 || pr.r.Wall < complete) {
			complete = pr.r.Wall
		}
	}
	if complete > 0 {
		return complete
	}
	return all
}

func slicesIndexName(runs []memPodRun, name string) int {
	for i, pr := range runs {
		if pr.c.name == name {
			return i
		}
	}
	return -1
}
