package main

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// contender is one way to run the batch.
type contender struct {
	name   string
	short  string   // for charts
	python bool     // the job runs inside Python (cost: calibration.Python)
	args   []string // nil when unavailable
	why    string   // why it is unavailable
}

// batchContenders lists the tools of the "analyzer" and "OOM" scenarios,
// each running the same job (extra: flags for burn / burnlib, e.g. the big
// job of the OOM scenario).
func batchContenders(e *env, extra []string) []contender {
	job := append([]string{"-ms", fmt.Sprint(jobMs), "-mib", fmt.Sprint(jobMiB)}, extra...)
	burnCmd := append([]string{e.burn}, job...)
	pyFlags := make([]string, len(job))
	for i, a := range job {
		if strings.HasPrefix(a, "-") {
			a = "-" + a // burnlib takes --flags
		}
		pyFlags[i] = a
	}
	n2 := fmt.Sprint(2 * e.nproc)
	cs := []contender{
		{name: "ration run (defaults)", short: "ration run", args: concat([]string{e.ration, "run", "--"}, burnCmd, []string{"{}"})},
		{name: "ration run --worker (Python worker)", short: "ration run --worker", python: true},
		{name: fmt.Sprintf("GNU parallel (default -j, = %d)", e.nproc), short: fmt.Sprintf("parallel (-j %d)", e.nproc), args: concat([]string{e.parallel, "--will-cite"}, burnCmd, []string{"{}"})},
		{name: fmt.Sprintf("GNU parallel -j 200%% (= %s)", n2), short: "parallel -j 200%", args: concat([]string{e.parallel, "--will-cite", "-j", "200%"}, burnCmd, []string{"{}"})},
		{name: fmt.Sprintf("xargs -P %d", e.nproc), short: fmt.Sprintf("xargs -P %d", e.nproc), args: concat([]string{e.xargs, "-P", fmt.Sprint(e.nproc), "-n", "1"}, burnCmd)},
		{name: fmt.Sprintf("xargs -P %s", n2), short: "xargs -P " + n2, args: concat([]string{e.xargs, "-P", n2, "-n", "1"}, burnCmd)},
		{name: "Python ProcessPoolExecutor (seed code)", short: "ProcessPoolExecutor", python: true, args: concat([]string{e.python, filepath.Join(e.workers, "ppe.py")}, pyFlags)},
	}
	if e.parallel == "" {
		cs[2].args, cs[2].why = nil, noGNU
		cs[3].args, cs[3].why = nil, noGNU
	}
	if e.has("--worker") {
		cs[1].args = []string{e.ration, "run", "--worker", strings.Join(concat([]string{e.python, filepath.Join(e.workers, "worker.py")}, pyFlags), " ")}
	} else {
		cs[1].why = "not available in this build (`ration run --help` lists no --worker)"
	}
	return cs
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// batchRun is one contender's outcome in a batch scenario.
type batchRun struct {
	c     contender
	r     result
	bound time.Duration // physical bound for this contender's job kind
}

const (
	podCPU = 0.5
	podMem = 160 << 20
)

func runBatch(ctx context.Context, e *env, cal calibration, n int, extra []string) []batchRun {
	var runs []batchRun
	for _, c := range batchContenders(e, extra) {
		cost := cal.Burn
		if c.python {
			cost = cal.Python
		}
		bound := time.Duration(float64(n) * float64(cost) / podCPU)
		br := batchRun{c: c, bound: bound}
		if c.args == nil {
			runs = append(runs, br)
			continue
		}
		e.log("  %s", c.name)
		br.r = run(ctx, e.h, spec{Name: c.name, Args: c.args, Stdin: seqInput(n), CPUQuota: podCPU, MemLimit: podMem,
			Timeout: 4*bound + 60*time.Second})
		e.log("    %.1fs exit=%d done=%d peak=%.0fMiB oomkills=%d", sec(br.r.Wall), br.r.Exit, len(br.r.Done), mib(br.r.PeakMem), br.r.OOMKills)
		runs = append(runs, br)
		if ctx.Err() != nil {
			break
		}
	}
	return runs
}

func analyzer(ctx context.Context, e *env, cal calibration) (section, error) {
	n := 200
	if e.quick {
		n = 40
	}
	runs := runBatch(ctx, e, cal, n, nil)
	var b strings.Builder
	fmt.Fprintf(&b, "%d jobs, each burning %d ms of CPU (measured: %.1f ms per `burn` process, %.1f ms per Python in-process job) and touching %d MiB, "+
		"in a cgroup of %.1f CPU and %d MiB on this %d-CPU machine. Physical bound = jobs x measured CPU per job / %.1f CPU.\n\n",
		n, jobMs, ms(cal.Burn), ms(cal.Python), jobMiB, podCPU, podMem>>20, e.nproc, podCPU)
	b.WriteString("| contender | wall s | bound s | wall / bound | completed | failed | exit | peak MiB | limit hits | OOM kills | CFS periods | throttled periods | throttled s | CPU s |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	rows := [][]string{{"contender", "wall_s", "bound_s", "ratio", "completed", "failed", "exit", "timed_out", "peak_mib", "failcnt", "oom_kills", "nr_periods", "nr_throttled", "throttled_s", "cpu_s", "command"}}
	for _, br := range runs {
		r := br.r
		if br.c.args == nil {
			fmt.Fprintf(&b, "| %s | %s | | | | | | | | | | | | |\n", br.c.name, br.c.why)
			rows = append(rows, []string{br.c.name, "", "", "", "", "", "", "", "", "", "", "", "", "", "", br.c.why})
			continue
		}
		done := countIn(r.Done, 1, n)
		exit := fmt.Sprint(r.Exit)
		if r.TimedOut {
			exit += " (timed out)"
		}
		if r.Err != nil {
			exit += " (" + r.Err.Error() + ")"
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.2f | %d | %d | %s | %.0f | %d | %d | %d | %d | %.1f | %.1f |\n",
			br.c.name, sec(r.Wall), sec(br.bound), sec(r.Wall)/sec(br.bound), done, n-done, exit, mib(r.PeakMem), r.FailCnt, r.OOMKills,
			r.NrPeriods, r.NrThrottled, sec(r.ThrottledTime), sec(r.CPUUsage))
		rows = append(rows, []string{br.c.name, f1(sec(r.Wall)), f1(sec(br.bound)), f3(sec(r.Wall) / sec(br.bound)), fmt.Sprint(done), fmt.Sprint(n - done),
			fmt.Sprint(r.Exit), fmt.Sprint(r.TimedOut), f1(mib(r.PeakMem)), fmt.Sprint(r.FailCnt), fmt.Sprint(r.OOMKills), fmt.Sprint(r.NrPeriods),
			fmt.Sprint(r.NrThrottled), f3(sec(r.ThrottledTime)), f3(sec(r.CPUUsage)), shellJoin(br.c.args)})
	}
	fmt.Fprintf(&b, "\n*completed* counts distinct `done ID` lines the tool delivered on stdout; *limit hits* is %s; "+
		"*OOM kills* is `oom_kill` from %s; *throttled* is from `cpu.stat`; *CPU s* is %s of the whole cgroup (tool + jobs).\n\n",
		e.h.file("`memory.failcnt`", "`max` from `memory.events`"), e.h.file("`memory.oom_control`", "`memory.events`"), e.h.file("`cpuacct.usage`", "`usage_usec` from `cpu.stat`"))
	if err := writeCSV(filepath.Join(e.out, "analyzer.csv"), rows); err != nil {
		return section{}, err
	}
	if err := chartAnalyzer(filepath.Join(e.out, "analyzer.svg"), runs); err != nil {
		return section{}, err
	}
	b.WriteString("![analyzer in a small pod](analyzer.svg)\n\n")
	// Acceptance.
	if rr := findRun(runs, "ration run (defaults)"); rr != nil && rr.c.args != nil {
		r := rr.r
		done := countIn(r.Done, 1, n)
		ratio := sec(r.Wall) / sec(rr.bound)
		b.WriteString("**Acceptance** (ration run, defaults):\n\n")
		fmt.Fprintf(&b, "- completes all jobs: %s (%d of %d)\n", pass(done == n), done, n)
		fmt.Fprintf(&b, "- peak memory under the %d MiB limit: %s (peak %.1f MiB, limit hits %d)\n", podMem>>20, pass(r.PeakMem < podMem && r.FailCnt == 0), mib(r.PeakMem), r.FailCnt)
		fmt.Fprintf(&b, "- wall time within 1.15x of the physical bound: %s (%.1f s vs %.1f s = %.2fx)\n", pass(ratio <= 1.15), sec(r.Wall), sec(rr.bound), ratio)
		b.WriteString("\n")
		if s := strings.TrimSpace(lastLines(r.Stderr, 3)); s != "" {
			fmt.Fprintf(&b, "ration's summary on stderr:\n\n```\n%s\n```\n\n", s)
		}
	}
	var sum strings.Builder
	fmt.Fprintf(&sum, "%d jobs of %d ms CPU + %d MiB each, in a %.1f CPU / %d MiB cgroup (physical bound %.1f s):\n\n", n, jobMs, jobMiB, podCPU, podMem>>20, sec(runs[0].bound))
	sum.WriteString("| contender | wall s | x bound | completed | peak MiB | OOM kills |\n|---|---:|---:|---:|---:|---:|\n")
	for _, br := range runs {
		if br.c.args == nil {
			fmt.Fprintf(&sum, "| %s | %s | | | | |\n", br.c.name, "not available in this build")
			continue
		}
		fmt.Fprintf(&sum, "| %s | %.1f | %.2f | %d / %d | %.0f | %d |\n", br.c.name, sec(br.r.Wall), sec(br.r.Wall)/sec(br.bound), countIn(br.r.Done, 1, n), n, mib(br.r.PeakMem), br.r.OOMKills)
	}
	sum.WriteString("\n![analyzer in a small pod](bench/results/analyzer.svg)\n")
	return section{id: "analyzer", title: "Scenario \"analyzer in a small pod\"", md: b.String(), summary: sum.String()}, nil
}

func oomScenario(ctx context.Context, e *env, cal calibration) (section, error) {
	n, every := 200, 50
	if e.quick {
		n, every = 50, 25
	}
	extra := []string{"-big-every", fmt.Sprint(every), "-big-mib", "300"}
	runs := runBatch(ctx, e, cal, n, extra)
	isBig := func(id int) bool { return id%every == 0 }
	var bigIDs []int
	for i := every; i <= n; i += every {
		bigIDs = append(bigIDs, i)
	}
	normal := n - len(bigIDs)
	var b strings.Builder
	fmt.Fprintf(&b, "The same %d jobs in the same %.1f CPU / %d MiB cgroup, but every %dth job (ids %s) touches 300 MiB: it cannot fit, whatever the concurrency. "+
		"The question is what happens to the other %d jobs.\n\n", n, podCPU, podMem>>20, every, joinInts(bigIDs), normal)
	b.WriteString("| contender | wall s | normal jobs completed | normal jobs lost | big jobs (fail expected) | exit | OOM kills | peak MiB | says which job was killed, and why | rerun needed |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n")
	rows := [][]string{{"contender", "wall_s", "normal_completed", "normal_lost", "big_completed", "exit", "timed_out", "oom_kills", "peak_mib", "names_killed_job", "command"}}
	var chartRows []oomBar
	var notes strings.Builder
	for _, br := range runs {
		r := br.r
		if br.c.args == nil {
			fmt.Fprintf(&b, "| %s | %s | | | | | | | | |\n", br.c.name, br.c.why)
			rows = append(rows, []string{br.c.name, "", "", "", "", "", "", "", "", "", br.c.why})
			continue
		}
		okNormal, okBig := 0, 0
		for id := range r.Done {
			if id < 1 || id > n {
				continue
			}
			if isBig(id) {
				okBig++
			} else {
				okNormal++
			}
		}
		named := namesKilled(r.Stderr, bigIDs)
		exit := fmt.Sprint(r.Exit)
		if r.TimedOut {
			exit += " (timed out)"
		}
		rerun := "no"
		if okNormal < normal {
			rerun = fmt.Sprintf("yes: %d jobs", normal-okNormal)
		}
		namedCell := "no"
		if named != "" {
			namedCell = "yes"
		}
		fmt.Fprintf(&b, "| %s | %.1f | %d | %d | %d of %d done | %s | %d | %.0f | %s | %s |\n", br.c.name, sec(r.Wall), okNormal, normal-okNormal,
			okBig, len(bigIDs), exit, r.OOMKills, mib(r.PeakMem), namedCell, rerun)
		rows = append(rows, []string{br.c.name, f1(sec(r.Wall)), fmt.Sprint(okNormal), fmt.Sprint(normal - okNormal), fmt.Sprint(okBig), fmt.Sprint(r.Exit),
			fmt.Sprint(r.TimedOut), fmt.Sprint(r.OOMKills), f1(mib(r.PeakMem)), fmt.Sprint(named != ""), shellJoin(br.c.args)})
		chartRows = append(chartRows, oomBar{name: br.c.short, done: okNormal, lost: normal - okNormal})
		if tail := strings.TrimSpace(lastLines(r.Stderr, 4)); tail != "" || named != "" {
			fmt.Fprintf(&notes, "**%s**", br.c.name)
			if named != "" {
				fmt.Fprintf(&notes, " (lines naming a big job)")
				tail = named
			} else {
				fmt.Fprintf(&notes, " (last lines of stderr)")
			}
			fmt.Fprintf(&notes, ":\n\n```\n%s\n```\n\n", clip(tail, 1200))
		}
	}
	b.WriteString("\n*says which job was killed*: the tool's stderr has a line naming a big job's id together with OOM / memory / SIGKILL. " +
		"*rerun needed*: normal jobs the run did not complete, which a user has to find and run again.\n\n")
	if err := writeCSV(filepath.Join(e.out, "oom.csv"), rows); err != nil {
		return section{}, err
	}
	if err := chartOOM(filepath.Join(e.out, "oom.svg"), chartRows, normal, every); err != nil {
		return section{}, err
	}
	b.WriteString("![a worker gets OOM-killed](oom.svg)\n\n")
	if rr := findRun(runs, "ration run (defaults)"); rr != nil && rr.c.args != nil {
		okNormal := 0
		for id := range rr.r.Done {
			if id >= 1 && id <= n && !isBig(id) {
				okNormal++
			}
		}
		b.WriteString("**Acceptance** (ration run, defaults):\n\n")
		fmt.Fprintf(&b, "- completes every other job in one run: %s (%d of %d)\n", pass(okNormal == normal), okNormal, normal)
		fmt.Fprintf(&b, "- names the killed job and why: %s\n\n", pass(namesKilled(rr.r.Stderr, bigIDs) != ""))
	}
	b.WriteString("What each tool said:\n\n")
	b.WriteString(notes.String())
	var sum strings.Builder
	fmt.Fprintf(&sum, "The same batch, but %d of the %d jobs need 300 MiB and cannot fit:\n\n", len(bigIDs), n)
	sum.WriteString("| contender | other jobs completed | lost | exit | names the killed job |\n|---|---:|---:|---:|---|\n")
	for _, row := range rows[1:] {
		if row[1] == "" {
			fmt.Fprintf(&sum, "| %s | not available in this build | | | |\n", row[0])
			continue
		}
		fmt.Fprintf(&sum, "| %s | %s / %d | %s | %s | %s |\n", row[0], row[2], normal, row[3], row[5], map[string]string{"true": "yes", "false": "no"}[row[9]])
	}
	sum.WriteString("\n![a worker gets OOM-killed](bench/results/oom.svg)\n")
	return section{id: "oom", title: "Scenario \"a worker gets OOM-killed\"", md: b.String(), summary: sum.String()}, nil
}

var killWords = regexp.MustCompile(`(?i)oom|out of memory|memory|killed|sigkill|signal 9`)

// namesKilled returns stderr lines that name one of ids together with a
// reason (OOM, memory, SIGKILL).
func namesKilled(stderr string, ids []int) string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if !killWords.MatchString(line) {
			continue
		}
		for _, id := range ids {
			if regexp.MustCompile(`(^|[^0-9.])` + fmt.Sprint(id) + `([^0-9.]|$)`).MatchString(line) {
				out = append(out, line)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

func findRun(runs []batchRun, name string) *batchRun {
	for i := range runs {
		if runs[i].c.name == name {
			return &runs[i]
		}
	}
	return nil
}

func countIn(done map[int]time.Duration, lo, hi int) int {
	n := 0
	for id := range done {
		if id >= lo && id <= hi {
			n++
		}
	}
	return n
}

func pass(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + " [...]"
}

func shellJoin(args []string) string {
	out := slices.Clone(args)
	for i, a := range out {
		if strings.ContainsAny(a, " %{}'\"") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

func f1(x float64) string { return fmt.Sprintf("%.1f", x) }
func f3(x float64) string { return fmt.Sprintf("%.3f", x) }
