package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// memPoint is one run of the flat-memory scenario.
type memPoint struct {
	n      int
	maxRSS int64 // bytes: VmHWM of the process
	cgPeak int64 // bytes: the cgroup's peak (v1 memory.max_usage_in_bytes, v2 memory.peak): process + jobs + page cache
	live   int64 // bytes: poolmap's live heap after its final GC (-1: not reported)
	gcs    int64 // poolmap's number of GC cycles
	wall   time.Duration
	exit   int
	note   string
}

type memSeries struct {
	name, method string
	points       []memPoint
	// why, when set, makes the series informational: shown and plotted,
	// but not judged by the acceptance ratio, for the reason given.
	why string
}

// flatMemory streams 10^3..10^6 inputs through ration run and through
// pool.Map and records each process's peak RSS (ru_maxrss from wait4).
func flatMemory(ctx context.Context, e *env, _ calibration) (section, error) {
	pow := func(k int) int {
		n := 1
		for range k {
			n *= 10
		}
		return n
	}
	var poolNs, realNs, dryNs []int
	for k := 3; k <= 6; k++ {
		poolNs = append(poolNs, pow(k))
		dryNs = append(dryNs, pow(k))
	}
	// One more decade for the library: cheap (seconds), and it shows where
	// the curve goes after 10^6.
	poolNs = append(poolNs, pow(7))
	realNs = []int{pow(3), pow(4), pow(5)}
	if e.quick {
		poolNs, realNs, dryNs = poolNs[:3], realNs[:2], dryNs[:3]
	}
	measure := func(name string, args []string, n int) memPoint {
		if ctx.Err() != nil {
			return memPoint{n: n, note: "interrupted"}
		}
		// VmHWM is the high-water mark of the process's own address space
		// since exec. wait4's ru_maxrss would not do: Go starts children
		// with vfork, and the kernel carries the parent's RSS high-water
		// mark over exec into the child's ru_maxrss (GNU time's %M shows
		// the same inflation when GNU time itself is started from Go).
		// VmHWM only grows, so the last sample before exit is the peak, to
		// within the growth of the last 5 ms.
		var hwm int64
		sample := func(ctx context.Context, _ *cgroup, pid int, _ time.Time) {
			path := fmt.Sprintf("/proc/%d/status", pid)
			for {
				if v := vmHWM(path); v > hwm {
					hwm = v
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		}
		r := run(ctx, e.h, spec{Name: name, Args: args, Stdin: seqInput(n), Timeout: 10 * time.Minute, During: sample})
		p := memPoint{n: n, wall: r.Wall, exit: r.Exit, maxRSS: hwm, cgPeak: r.PeakMem, live: -1}
		if f := strings.Fields(r.LastLine); len(f) >= 12 && f[8] == "live-heap-bytes" {
			p.live, _ = strconv.ParseInt(f[9], 10, 64)
			p.gcs, _ = strconv.ParseInt(f[11], 10, 64)
		}
		if r.Exit != 0 || r.TimedOut || r.Err != nil {
			p.note = fmt.Sprintf("exit %d timed out %v err %v: %s", r.Exit, r.TimedOut, r.Err, clip(lastLines(r.Stderr, 2), 200))
		}
		e.log("  %s n=%d: peak RSS %.1f MiB (cgroup %.1f MiB), %.1fs, exit %d", name, n, mib(hwm), mib(r.PeakMem), sec(r.Wall), r.Exit)
		return p
	}
	// Two pool series: the pool's own footprint (the caller makes no
	// garbage, so any growth is the pool's), and the same with a string per
	// item, where Go's GC goal, not the pool, sets the curve.
	series := []memSeries{
		{name: "pool.Map (Go API)", method: "`bin/poolmap`: stdin lines parsed as ints without allocating -> `pool.Map(ctx, pool.New(0), nums, sha256-of-number)`, every item a real pool task; the caller makes no garbage, so the curve is the pool's own memory"},
		{name: "pool.Map, a string per item", method: "`bin/poolmap -strings`: the same with every line a new string (16 bytes of garbage per item, as in most programs)",
			why: "informational: the Go runtime lets garbage grow to its minimum GC goal (4 MiB) before the first collection, which a 10^4 run never reaches; the live heap after a final GC is the same at every size"},
	}
	for _, n := range poolNs {
		series[0].points = append(series[0].points, measure("poolmap", []string{e.poolmap}, n))
		series[1].points = append(series[1].points, measure("poolmap-strings", []string{e.poolmap, "-strings"}, n))
	}
	real := memSeries{name: "ration run -- true {} (real processes)", method: "`ration run -- true {}` with default -j: every input starts a real `true` process"}
	for _, n := range realNs {
		real.points = append(real.points, measure("ration-true", []string{e.ration, "run", "--", "true", "{}"}, n))
	}
	series = append(series, real)
	if e.has("--dry-run") {
		dry := memSeries{name: "ration run --dry-run", method: "`ration run --dry-run -- true {}`: inputs read, templated and reported, no process started"}
		for _, n := range dryNs {
			dry.points = append(dry.points, measure("ration-dry", []string{e.ration, "run", "--dry-run", "--", "true", "{}"}, n))
		}
		series = append(series, dry)
	}
	if ctx.Err() != nil {
		return section{}, ctx.Err()
	}

	var b strings.Builder
	b.WriteString("Peak RSS = `VmHWM` of the tool's own process (from `/proc/PID/status`, sampled every 5 ms; it only grows, so the last sample is the peak); the cgroup's peak (tool + its jobs + page cache) is in the CSV against the number of inputs streamed on stdin. No CPU or memory limit.\n\n")
	for _, s := range series {
		fmt.Fprintf(&b, "- **%s**: %s\n", s.name, s.method)
	}
	b.WriteString("\n| series | inputs | peak RSS MiB | cgroup peak MiB | wall s | live heap after final GC (pool.Map) | problems |\n|---|---:|---:|---:|---:|---|---|\n")
	rows := [][]string{{"series", "inputs", "vmhwm_mib", "cgroup_peak_mib", "wall_s", "exit", "live_heap_mib", "gcs", "problems"}}
	for _, s := range series {
		for _, p := range s.points {
			live := ""
			if p.live >= 0 {
				live = fmt.Sprintf("%.2f MiB after %d GCs", mib(p.live), p.gcs)
			}
			fmt.Fprintf(&b, "| %s | %d | %.1f | %.1f | %.1f | %s | %s |\n", s.name, p.n, mib(p.maxRSS), mib(p.cgPeak), sec(p.wall), live, p.note)
			rows = append(rows, []string{s.name, fmt.Sprint(p.n), f3(mib(p.maxRSS)), f3(mib(p.cgPeak)), f3(sec(p.wall)), fmt.Sprint(p.exit), f3(mib(p.live)), fmt.Sprint(p.gcs), p.note})
		}
	}
	if err := writeCSV(filepath.Join(e.out, "flatmem.csv"), rows); err != nil {
		return section{}, err
	}
	if err := chartFlatMem(filepath.Join(e.out, "flatmem.svg"), series); err != nil {
		return section{}, err
	}
	b.WriteString("\n![flat memory](flatmem.svg)\n\n")
	b.WriteString("**Acceptance** (peak RSS at 10^6 inputs within 1.5x of the peak at 10^4):\n\n")
	for _, s := range series {
		at := func(n int) *memPoint {
			for i := range s.points {
				if s.points[i].n == n {
					return &s.points[i]
				}
			}
			return nil
		}
		p4, p6, p5 := at(pow(4)), at(pow(6)), at(pow(5))
		switch {
		case p4 != nil && p6 != nil:
			ratio := float64(p6.maxRSS) / float64(p4.maxRSS)
			if s.why != "" {
				fmt.Fprintf(&b, "- %s (not judged; %s): %.1f MiB at 10^6 vs %.1f MiB at 10^4 = %.2fx", s.name, s.why, mib(p6.maxRSS), mib(p4.maxRSS), ratio)
			} else {
				fmt.Fprintf(&b, "- %s: %s (%.1f MiB at 10^6 vs %.1f MiB at 10^4 = %.2fx)", s.name, pass(ratio <= 1.5 && p6.note == ""), mib(p6.maxRSS), mib(p4.maxRSS), ratio)
			}
			if p7 := at(pow(7)); p7 != nil {
				fmt.Fprintf(&b, "; at 10^7 it is %.1f MiB (%.2fx of 10^6)", mib(p7.maxRSS), float64(p7.maxRSS)/float64(p6.maxRSS))
			}
			if p6.live >= 0 && p4.live >= 0 {
				fmt.Fprintf(&b, "; live heap after a final forced GC: %.2f MiB at 10^4 (%d GCs in all), %.2f MiB at 10^6 (%d GCs in all)", mib(p4.live), p4.gcs, mib(p6.live), p6.gcs)
			}
			b.WriteString("\n")
		case p4 != nil && p5 != nil && e.quick:
			fmt.Fprintf(&b, "- %s: not measured at 10^6 in quick mode; at 10^5 it is %.1f MiB vs %.1f MiB at 10^4 = %.2fx\n",
				s.name, mib(p5.maxRSS), mib(p4.maxRSS), float64(p5.maxRSS)/float64(p4.maxRSS))
		case p4 != nil && p5 != nil:
			fmt.Fprintf(&b, "- %s: NOT MEASURED at 10^6 (10^5 took %.0f s, so 10^6 would take about %.0f minutes, more than this benchmark's whole budget); "+
				"at 10^5 it is %.1f MiB vs %.1f MiB at 10^4 = %.2fx\n", s.name, sec(p5.wall), 10*sec(p5.wall)/60, mib(p5.maxRSS), mib(p4.maxRSS), float64(p5.maxRSS)/float64(p4.maxRSS))
		default:
			fmt.Fprintf(&b, "- %s: not enough points in this mode\n", s.name)
		}
	}
	b.WriteString("\n")
	var sum strings.Builder
	sum.WriteString("Peak RSS in MiB against the number of inputs:\n\n| | 10^3 | 10^4 | 10^5 | 10^6 | 10^7 |\n|---|---:|---:|---:|---:|---:|\n")
	for _, s := range series {
		fmt.Fprintf(&sum, "| %s |", s.name)
		for k := 3; k <= 7; k++ {
			cell := " not run |"
			for _, p := range s.points {
				if p.n == pow(k) {
					cell = fmt.Sprintf(" %.1f |", mib(p.maxRSS))
				}
			}
			sum.WriteString(cell)
		}
		sum.WriteString("\n")
	}
	sum.WriteString("\n![flat memory](bench/results/flatmem.svg)\n")
	return section{id: "flatmem", title: "Scenario \"flat memory\"", md: b.String(), summary: sum.String()}, nil
}

// vmHWM reads VmHWM (peak resident set) from a /proc/PID/status file, in
// bytes; 0 when the process is gone.
func vmHWM(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
