// Command scenario runs ration's benchmark scenarios against the tools people
// use today and writes RESULTS.md, CSV files and SVG charts.
//
// Usage (from bench/, as root; `make bench` builds everything and runs this):
//
//	scenario [-quick] [-only analyzer,oom,overhead,flatmem,quota,mempod] [-out results] [-bin bin]
//
// Every contender runs in a fresh child cgroup (cgroup v1: cpu, cpuacct when
// present, memory; cgroup v2: one cgroup with cpu and memory) of the
// harness's own cgroups, created before and removed after the run, also on
// failure or interrupt. On v2 the harness first enables the cpu and memory
// controllers for its children, moving the processes of its own cgroup into
// a leaf under it, and undoes that at the end. See bench/results/RESULTS.md for what
// each scenario does and measures.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// env is what every scenario needs: tools, paths and the run mode.
// noGNU is why GNU parallel's rows are empty on a host without it (a
// cgroup v2 test host).
const noGNU = "GNU parallel is not installed on this host"

type env struct {
	h        *hierarchy
	quick    bool
	out      string // results directory
	ration   string // bench/bin/ration
	burn     string // bench/bin/burn
	poolmap  string // bench/bin/poolmap
	python   string // the real python3 executable (not a pyenv shim)
	workers  string // bench/workers
	parallel string
	xargs    string
	help     string // `ration run --help` output
	nproc    int
	load0    string // load average when the run started
	started  time.Time
	log      func(format string, args ...any)
}

// has reports whether `ration run --help` lists flag (e.g. "--worker").
func (e *env) has(flag string) bool {
	for _, f := range strings.FieldsFunc(e.help, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ',' || r == '=' || r == '[' || r == ']'
	}) {
		if f == flag {
			return true
		}
	}
	return false
}

type section struct {
	id    string
	title string
	md    string // markdown body
	// summary is a short markdown block for docs/performance.md: the
	// headline table and the chart, with paths relative to the repository
	// root (the page, in docs/, puts ../ before them).
	summary string
}

func main() {
	quick := flag.Bool("quick", false, "small job counts, one repetition: for developing the harness, not for publishing")
	only := flag.String("only", scenarioIDs, "comma-separated scenarios to run")
	out := flag.String("out", "results", "directory for RESULTS.md, CSV and SVG files")
	bin := flag.String("bin", "bin", "directory holding ration, burn and poolmap")
	note := flag.String("note", "", "a sentence about the machine's load during the run, printed in RESULTS.md")
	flag.Parse()
	if err := mainErr(*quick, *only, *out, *bin, *note); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// scenarioIDs lists every scenario -only may name, in the order they run.
const scenarioIDs = "analyzer,oom,overhead,flatmem,quota,mempod"

func mainErr(quick bool, only, out, bin, note string) error {
	for _, s := range strings.Split(only, ",") {
		if !slices.Contains(strings.Split(scenarioIDs, ","), strings.TrimSpace(s)) {
			return fmt.Errorf("-only: unknown scenario %q (known: %s)", strings.TrimSpace(s), scenarioIDs)
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("the scenarios create cgroups and need root; run `sudo make bench`")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	h, err := ownHierarchy()
	if err != nil {
		return err
	}
	h.removeStale()
	restore, err := h.prepare()
	if err != nil {
		return err
	}
	defer func() {
		if err := restore(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: restore cgroups:", err)
		}
	}()
	e := &env{h: h, quick: quick, out: out, nproc: runtime.NumCPU(), started: time.Now(), workers: "workers", load0: loadavg()}
	e.log = func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(e.started).Seconds(), fmt.Sprintf(format, args...))
	}
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	e.ration, e.burn, e.poolmap, e.workers = abs(filepath.Join(bin, "ration")), abs(filepath.Join(bin, "burn")), abs(filepath.Join(bin, "poolmap")), abs(e.workers)
	for _, p := range []string{e.ration, e.burn, e.poolmap, filepath.Join(e.workers, "worker.py"), filepath.Join(e.workers, "ppe.py")} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("missing %s (run `make bench`, which builds it): %w", p, err)
		}
	}
	for _, t := range []struct {
		dst  *string
		name string
	}{{&e.parallel, "parallel"}, {&e.xargs, "xargs"}} {
		p, err := exec.LookPath(t.name)
		if err != nil && t.name == "parallel" {
			// A cgroup v2 test host may have no GNU parallel: its rows
			// say so instead of the run stopping.
			e.log("GNU parallel is not installed: its rows are left out")
			continue
		}
		if err != nil {
			return fmt.Errorf("%s is not installed; this harness installs nothing: install it (Debian: apt-get install %s) and re-run", t.name, map[string]string{"parallel": "parallel", "xargs": "findutils"}[t.name])
		}
		*t.dst = p
	}
	py, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return fmt.Errorf("python3 is needed for the worker and ProcessPoolExecutor contenders: %w", err)
	}
	e.python = strings.TrimSpace(string(py))
	help, _ := exec.Command(e.ration, "run", "--help").CombinedOutput()
	e.help = string(help)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}

	want := map[string]bool{}
	for _, s := range strings.Split(only, ",") {
		want[strings.TrimSpace(s)] = true
	}
	cal, err := calibrate(ctx, e)
	if err != nil {
		return err
	}
	var secs []section
	type scen struct {
		id string
		fn func(context.Context, *env, calibration) (section, error)
	}
	for _, s := range []scen{{"analyzer", analyzer}, {"oom", oomScenario}, {"overhead", overhead}, {"flatmem", flatMemory}, {"quota", quotaChange}, {"mempod", memoryPod}} {
		if !want[s.id] {
			continue
		}
		e.log("scenario %s", s.id)
		sec, err := s.fn(ctx, e, cal)
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted during %s: %w", s.id, ctx.Err())
		}
		if err != nil {
			return fmt.Errorf("scenario %s: %w", s.id, err)
		}
		secs = append(secs, sec)
	}
	if err := writeResults(e, cal, secs, note); err != nil {
		return err
	}
	e.log("done in %s; wrote %s", time.Since(e.started).Round(time.Second), filepath.Join(out, "RESULTS.md"))
	return nil
}
