package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCharts renders every chart from fixed data. Set BENCH_CHART_DIR to
// keep the SVGs for a look.
func TestCharts(t *testing.T) {
	dir := os.Getenv("BENCH_CHART_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	mk := func(name, short string, wall float64, done int, peak int64, oom int64) batchRun {
		r := result{Wall: time.Duration(wall * float64(time.Second)), Done: map[int]time.Duration{}}
		for i := range done {
			r.Done[i+1] = 0
		}
		r.PeakMem, r.OOMKills = peak<<20, oom
		return batchRun{c: contender{name: name, short: short, args: []string{"x"}}, r: r, bound: 44 * time.Second}
	}
	runs := []batchRun{
		mk("ration run (defaults)", "ration run", 46, 200, 44, 0),
		{c: contender{name: "ration run --worker (Python worker)", short: "ration run --worker", python: true}, bound: 44 * time.Second},
		mk("GNU parallel (default -j, = 2)", "parallel (-j 2)", 48, 200, 96, 0),
		mk("GNU parallel -j 200% (= 4)", "parallel -j 200%", 45, 120, 160, 80),
		mk("xargs -P 2", "xargs -P 2", 47, 200, 83, 0),
		mk("xargs -P 4", "xargs -P 4", 1.3, 3, 160, 1),
		mk("Python ProcessPoolExecutor (seed code)", "ProcessPoolExecutor", 50, 200, 95, 0),
	}
	if err := chartAnalyzer(filepath.Join(dir, "analyzer.svg"), runs); err != nil {
		t.Fatal(err)
	}
	if err := chartOOM(filepath.Join(dir, "oom.svg"), []oomBar{{"ration run", 196, 0}, {"parallel (-j 2)", 196, 0}, {"xargs -P 2", 49, 147}, {"ProcessPoolExecutor", 30, 166}}, 196, 50); err != nil {
		t.Fatal(err)
	}
	if err := chartBars(filepath.Join(dir, "overhead.svg"), "Per-job overhead: 2000 x true, -j 2 (median, min-max)", "wall time (s)",
		[]barItem{{name: "ration run -j 2", value: 2.1, lo: 2, hi: 2.3}, {name: "xargs -P 2 -n 1", value: 1.9, lo: 1.8, hi: 2}, {name: "GNU parallel -j 2", value: 9, lo: 8.5, hi: 9.9}}, nil); err != nil {
		t.Fatal(err)
	}
	series := []memSeries{
		{name: "pool.Map (Go API)", points: []memPoint{{n: 1e3, maxRSS: 3 << 20}, {n: 1e4, maxRSS: 3 << 20}, {n: 1e5, maxRSS: 4 << 20}, {n: 1e6, maxRSS: 7 << 20}}},
		{name: "ration run -- true {} (real processes)", points: []memPoint{{n: 1e3, maxRSS: 12 << 20}, {n: 1e4, maxRSS: 13 << 20}, {n: 1e5, maxRSS: 14 << 20}}},
		{name: "ration run --dry-run", points: []memPoint{{n: 1e3, maxRSS: 10 << 20}, {n: 1e6, maxRSS: 11 << 20}}},
	}
	if err := chartFlatMem(filepath.Join(dir, "flatmem.svg"), series); err != nil {
		t.Fatal(err)
	}
	var samples []quotaSample
	for i := range 200 {
		tt := time.Duration(i) * 200 * time.Millisecond
		q, run := 2.0, 4
		if tt >= 12*time.Second && tt < 30*time.Second {
			q, run = 0.5, 1
		}
		samples = append(samples, quotaSample{t: tt, quota: q, running: run, done: i * 2})
	}
	if err := chartQuota(filepath.Join(dir, "quota.svg"), samples, 105*time.Millisecond, true); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"analyzer", "oom", "overhead", "flatmem", "quota"} {
		b, err := os.ReadFile(filepath.Join(dir, f+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "<svg") || !strings.Contains(string(b), "Times New Roman") {
			t.Errorf("%s.svg: not an SVG with the font fallbacks", f)
		}
	}
}

func TestNamesKilled(t *testing.T) {
	summary := "ration: 48 done, 2 failed in 30s; 1 job (jobs=1: cgroup v1 CPU quota 0.50 CPUs at /ration-bench-642-050); 2 OOM kills"
	if got := namesKilled(summary, []int{50, 100}); got != "" {
		t.Errorf("summary line taken for naming a job: %q", got)
	}
	line := "ration: job 50 (input 50) killed by the OOM killer (SIGKILL, cgroup memory limit 160 MiB)"
	if got := namesKilled(summary+"\n"+line, []int{50, 100}); got != line {
		t.Errorf("namesKilled = %q, want the job line", got)
	}
}
