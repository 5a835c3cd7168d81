package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The job of every cgroup scenario.
const (
	jobMs  = 100 // CPU per job
	jobMiB = 40  // memory touched per job
)

// calibration is the measured CPU cost of one job, run unconstrained.
type calibration struct {
	Burn     time.Duration // one bench/bin/burn process, exec to exit (user+sys)
	Python   time.Duration // one burnlib.burn call inside a running Python worker
	BurnRuns int
	PyRuns   int
}

// calibrate runs the job sequentially, alone and without limits, and takes
// the CPU time the kernel accounted to it (wait4 rusage), so the physical
// bound uses the job's real cost rather than its nominal 100 ms.
func calibrate(ctx context.Context, e *env) (calibration, error) {
	c := calibration{BurnRuns: 20, PyRuns: 20}
	if e.quick {
		c.BurnRuns, c.PyRuns = 5, 5
	}
	var total time.Duration
	for i := range c.BurnRuns {
		cmd := exec.CommandContext(ctx, e.burn, "-ms", fmt.Sprint(jobMs), "-mib", fmt.Sprint(jobMiB), fmt.Sprint(i+1))
		if err := cmd.Run(); err != nil {
			return c, fmt.Errorf("calibrate burn: %w", err)
		}
		total += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	c.Burn = total / time.Duration(c.BurnRuns)

	// Python: a worker answering n requests minus one answering none.
	pyCPU := func(n int) (time.Duration, error) {
		var in strings.Builder
		for i := range n {
			fmt.Fprintf(&in, "{\"id\":%d,\"input\":\"%d\"}\n", i, i+1)
		}
		cmd := exec.CommandContext(ctx, e.python, filepath.Join(e.workers, "worker.py"), "--ms", fmt.Sprint(jobMs), "--mib", fmt.Sprint(jobMiB))
		cmd.Stdin = strings.NewReader(in.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("calibrate worker.py: %w: %s", err, out)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
	}
	base, err := pyCPU(0)
	if err != nil {
		return c, err
	}
	full, err := pyCPU(c.PyRuns)
	if err != nil {
		return c, err
	}
	c.Python = (full - base) / time.Duration(c.PyRuns)
	e.log("calibration: burn process %.1f ms CPU, python in-process job %.1f ms CPU", ms(c.Burn), ms(c.Python))
	return c, nil
}

func ms(d time.Duration) float64  { return float64(d) / float64(time.Millisecond) }
func sec(d time.Duration) float64 { return d.Seconds() }
func mib(b int64) float64         { return float64(b) / (1 << 20) }
