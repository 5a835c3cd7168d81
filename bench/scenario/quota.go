package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// quotaSample is one observation of the quota scenario.
type quotaSample struct {
	t       time.Duration
	quota   float64 // CPUs
	running int     // burn processes alive in the cgroup: the jobs ration runs
	done    int     // jobs finished so far
}

type phase struct {
	until time.Duration
	quota float64
}

// quotaChange lowers the CPU quota of a running `ration run` from 2 CPUs to
// 0.5 and back, and samples how many jobs run and how fast they finish.
func quotaChange(ctx context.Context, e *env, cal calibration) (section, error) {
	phases := []phase{{12 * time.Second, 2}, {30 * time.Second, 0.5}, {42 * time.Second, 2}}
	if e.quick {
		phases = []phase{{4 * time.Second, 2}, {12 * time.Second, 0.5}, {16 * time.Second, 2}}
	}
	end := phases[len(phases)-1].until
	const qMiB = 10
	watch := e.has("--watch-limits")
	args := []string{e.ration, "run"}
	if watch {
		args = append(args, "--watch-limits")
	}
	args = append(args, "--", e.burn, "-ms", fmt.Sprint(jobMs), "-mib", fmt.Sprint(qMiB), "{}")
	var samples []quotaSample
	during := func(ctx context.Context, cg *cgroup, _ int, start time.Time) {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		cur := phases[0].quota
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			t := time.Since(start)
			for _, ph := range phases {
				if t < ph.until {
					if ph.quota != cur {
						if err := cg.setQuota(ph.quota); err != nil {
							e.log("  set quota: %v", err)
						}
						cur = ph.quota
						e.log("  t=%.1fs quota -> %.1f CPU", sec(t), cur)
					}
					break
				}
			}
			samples = append(samples, quotaSample{t: t, quota: cur, running: countComm(cg, "burn")})
		}
	}
	e.log("  ration run%s, %s", map[bool]string{true: " --watch-limits", false: " (no --watch-limits in this build)"}[watch], end)
	r := run(ctx, e.h, spec{Name: "ration-quota", Args: args, Stdin: seqInput(100000), CPUQuota: phases[0].quota, Timeout: end + time.Minute,
		During: during, Stop: end})
	if ctx.Err() != nil {
		return section{}, ctx.Err()
	}
	// Jobs done by each sample's time, from the arrival times of "done ID".
	for i := range samples {
		for _, at := range r.Done {
			if at <= samples[i].t {
				samples[i].done++
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "`%s` runs jobs of %d ms CPU / %d MiB from an endless input; the harness writes the cgroup's "+e.h.file("`cpu.cfs_quota_us`", "`cpu.max`")+" "+
		"(2 CPUs, then 0.5, then 2 again) and samples every 200 ms how many `burn` processes are alive in the cgroup (the jobs running: ration's effective pool size) "+
		"and how many jobs have finished. After %s the harness sends SIGTERM.\n\n", shellJoin(append([]string{"ration"}, args[1:]...)), jobMs, qMiB, end)
	if m := regexp.MustCompile(`--watch-interval\s+\S+\s.*\(default "([^"]+)"\)`).FindStringSubmatch(e.help); watch && m != nil {
		fmt.Fprintf(&b, "ration re-reads the limits every %s (the default of --watch-interval), so a change shows up within that time.\n\n", m[1])
	}
	if !watch {
		b.WriteString("**This build of `ration run` has no `--watch-limits` (live quota polling has not landed)**: ration sizes its pool once, at start, from the 2-CPU quota, " +
			"so this run shows the behaviour without the feature.\n\n")
	}
	var phaseTable strings.Builder
	phaseTable.WriteString("| phase | quota CPUs | expected jobs min(2 x quota, 8) | mean running jobs | jobs/s | ideal jobs/s (quota / CPU per job) |\n|---|---:|---:|---:|---:|---:|\n")
	rows := [][]string{{"t_s", "quota_cpus", "running_jobs", "done_jobs"}}
	for _, s := range samples {
		rows = append(rows, []string{f3(sec(s.t)), f1(s.quota), fmt.Sprint(s.running), fmt.Sprint(s.done)})
	}
	from := time.Duration(0)
	var adapt []string
	for i, ph := range phases {
		var sum, cnt int
		first, last := -1, -1
		for k, s := range samples {
			if s.t >= from && s.t < ph.until {
				sum += s.running
				cnt++
				if first < 0 {
					first = k
				}
				last = k
			}
		}
		mean, rate := 0.0, 0.0
		if cnt > 0 {
			mean = float64(sum) / float64(cnt)
			if last > first {
				rate = float64(samples[last].done-samples[first].done) / sec(samples[last].t-samples[first].t)
			}
		}
		want := min(max(int(2*ph.quota), 1), 8)
		fmt.Fprintf(&phaseTable, "| %d: %.0f-%.0f s | %.1f | %d | %.2f | %.1f | %.1f |\n", i+1, sec(from), sec(ph.until), ph.quota, want, mean, rate, ph.quota/sec(cal.Burn))
		// How long after the change until the running count matched the new target.
		if i > 0 && first >= 0 {
			lat := "never within the phase"
			for k := first; k <= last; k++ {
				if samples[k].running == want {
					lat = fmt.Sprintf("%.1f s", sec(samples[k].t-from))
					break
				}
			}
			adapt = append(adapt, fmt.Sprintf("quota %.1f -> %.1f at %.0f s: running jobs reached %d after %s", phases[i-1].quota, ph.quota, sec(from), want, lat))
		}
		from = ph.until
	}
	b.WriteString(phaseTable.String())
	b.WriteString("\n")
	for _, a := range adapt {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	fmt.Fprintf(&b, "\nWhole run: %d jobs done, exit %d after SIGTERM, throttled %d of %d periods (%.1f s).\n\n", len(r.Done), r.Exit, r.NrThrottled, r.NrPeriods, sec(r.ThrottledTime))
	if s := strings.TrimSpace(lastLines(r.Stderr, 4)); s != "" {
		fmt.Fprintf(&b, "ration's stderr (end):\n\n```\n%s\n```\n\n", clip(s, 1500))
	}
	if err := writeCSV(filepath.Join(e.out, "quota.csv"), rows); err != nil {
		return section{}, err
	}
	if err := chartQuota(filepath.Join(e.out, "quota.svg"), samples, cal.Burn, watch); err != nil {
		return section{}, err
	}
	b.WriteString("![quota change](quota.svg)\n\n")
	sum := "The CPU quota of a running `ration run` drops from 2 CPUs to 0.5 and back:\n\n" + phaseTable.String() + "\n"
	if !watch {
		sum += "(This build has no `--watch-limits`: the pool is sized once, at start.)\n\n"
	}
	sum += "![quota change](bench/results/quota.svg)\n"
	return section{id: "quota", title: "Scenario \"quota change\"", md: b.String(), summary: sum}, nil
}

// countComm counts the cgroup's processes whose command name is comm.
func countComm(cg *cgroup, comm string) int {
	n := 0
	for _, p := range readPids(filepath.Join(cg.memory, "cgroup.procs")) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p))
		if err == nil && strings.TrimSpace(string(b)) == comm {
			n++
		}
	}
	return n
}
