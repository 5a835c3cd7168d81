package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// overhead: many tiny jobs, no limits, every tool at the same -j: what the
// tool itself costs per job.
func overhead(ctx context.Context, e *env, _ calibration) (section, error) {
	n, reps := 2000, 5
	if e.quick {
		n, reps = 300, 1
	}
	j := fmt.Sprint(e.nproc)
	type tool struct {
		name string
		args []string
	}
	tools := []tool{
		{fmt.Sprintf("ration run -j %s", j), []string{e.ration, "run", "-j", j, "--", "true", "{}"}},
		{fmt.Sprintf("xargs -P %s -n 1", j), []string{e.xargs, "-P", j, "-n", "1", "true"}},
	}
	if e.parallel != "" {
		tools = append(tools, tool{fmt.Sprintf("GNU parallel -j %s", j), []string{e.parallel, "--will-cite", "-j", j, "true", "{}"}})
	}
	walls := make([][]time.Duration, len(tools))
	peaks := make([]int64, len(tools))
	fails := make([]string, len(tools))
	// Interleave the repetitions so a burst of load elsewhere hits every tool alike.
	for rep := range reps {
		for i, t := range tools {
			r := run(ctx, e.h, spec{Name: t.name, Args: t.args, Stdin: seqInput(n), Timeout: 5 * time.Minute})
			if ctx.Err() != nil {
				return section{}, ctx.Err()
			}
			if r.Err != nil || r.Exit != 0 || r.TimedOut {
				fails[i] = fmt.Sprintf("exit %d, timed out %v, err %v: %s", r.Exit, r.TimedOut, r.Err, clip(lastLines(r.Stderr, 3), 300))
			}
			walls[i] = append(walls[i], r.Wall)
			peaks[i] = max(peaks[i], r.PeakMem)
			e.log("  rep %d %s: %.2fs exit %d", rep+1, t.name, sec(r.Wall), r.Exit)
		}
	}
	med := func(ds []time.Duration) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)/2]
	}
	xargsMed := med(walls[1])
	var b strings.Builder
	fmt.Fprintf(&b, "%d jobs of `true`, no CPU or memory limit, every tool at -j %s; %d runs each, interleaved; median shown.\n\n", n, j, reps)
	b.WriteString("| tool | median wall s | min s | max s | per job ms | vs xargs | peak cgroup MiB | problems |\n|---|---:|---:|---:|---:|---:|---:|---|\n")
	rows := [][]string{{"tool", "median_s", "min_s", "max_s", "per_job_ms", "vs_xargs", "peak_mib", "runs_s", "problems", "command"}}
	var bars []barItem
	for i, t := range tools {
		m := med(walls[i])
		runs := make([]string, len(walls[i]))
		for k, w := range walls[i] {
			runs[k] = f3(sec(w))
		}
		fmt.Fprintf(&b, "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.0f | %s |\n", t.name, sec(m), sec(slices.Min(walls[i])), sec(slices.Max(walls[i])),
			ms(m)/float64(n), sec(m)/sec(xargsMed), mib(peaks[i]), fails[i])
		rows = append(rows, []string{t.name, f3(sec(m)), f3(sec(slices.Min(walls[i]))), f3(sec(slices.Max(walls[i]))), f3(ms(m) / float64(n)),
			f3(sec(m) / sec(xargsMed)), f1(mib(peaks[i])), strings.Join(runs, " "), fails[i], shellJoin(t.args)})
		bars = append(bars, barItem{name: t.name, value: sec(m), lo: sec(slices.Min(walls[i])), hi: sec(slices.Max(walls[i]))})
	}
	if err := writeCSV(filepath.Join(e.out, "overhead.csv"), rows); err != nil {
		return section{}, err
	}
	if err := chartBars(filepath.Join(e.out, "overhead.svg"), fmt.Sprintf("Per-job overhead: %d x true, -j %s (median, min-max)", n, j), "wall time (s)", bars, nil); err != nil {
		return section{}, err
	}
	b.WriteString("\n![per-job overhead](overhead.svg)\n\n")
	rm, pm := med(walls[0]), med(walls[2])
	b.WriteString("**Acceptance** (ration run):\n\n")
	fmt.Fprintf(&b, "- within 1.3x of xargs -P: %s (%.2fx)\n", pass(sec(rm) <= 1.3*sec(xargsMed) && fails[0] == ""), sec(rm)/sec(xargsMed))
	fmt.Fprintf(&b, "- below GNU parallel: %s (%.2f s vs %.2f s)\n\n", pass(rm < pm && fails[0] == ""), sec(rm), sec(pm))
	var sum strings.Builder
	fmt.Fprintf(&sum, "%d jobs of `true`, -j %s, median of %d runs:\n\n| tool | wall s | per job ms |\n|---|---:|---:|\n", n, j, reps)
	for i, t := range tools {
		fmt.Fprintf(&sum, "| %s | %.2f | %.2f |\n", t.name, sec(med(walls[i])), ms(med(walls[i]))/float64(n))
	}
	sum.WriteString("\n![per-job overhead](bench/results/overhead.svg)\n")
	return section{id: "overhead", title: "Scenario \"per-job overhead\"", md: b.String(), summary: sum.String()}, nil
}
