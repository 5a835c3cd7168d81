//go:build linux

package workerexec_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/adapt"
	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/internal/workerexec"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/worker"
)

// moveTo returns an OnStart hook that moves each worker into cgroup dir.
func moveTo(dir string) func(pid int) error {
	return func(pid int) error {
		return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
	}
}

// TestAdaptive: the memory cgroup fits two tasks but not three or four. A
// run of 4 workers breaks by OOM, the runner's controller halves, grows
// back, and settles at 2; every job succeeds, and the stats say so.
func TestAdaptive(t *testing.T) {
	// A Python worker is ~14 MiB; a task holds 64 MiB for 150 ms.
	// 2 x 78 = 156 MiB fits in 190 MiB; 3 x 78 = 234 MiB does not. The
	// limit includes swap (v1 memsw, v2 memory.swap.max 0): no escape.
	cg, _ := testutil.MemoryCgroup(t, 190<<20)
	inputs := make([]string, 48)
	for i := range inputs {
		inputs[i] = "alloc:64:150"
	}
	// The controller probes above a learned OOM ceiling after
	// adapt.ProbeRuns x GrowAfter successes in a row; with more of those
	// than tasks the run ends where the OOM kills left it.
	growAfter := len(inputs)/adapt.ProbeRuns + 1
	x, err := workerexec.New(worker.Config{Command: pyWorker(t), Size: 4, OnStart: moveTo(cg),
		MaxBreaks: 6, Backoff: 100 * time.Millisecond, MaxRecreations: 100, Stderr: &testutil.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	var rec testutil.Recorder
	r, err := runner.New(runner.Config{Command: []string{"worker", "{}"}, Input: input.Args(inputs), Jobs: 4,
		Adapt: &adapt.Config{GrowAfter: growAfter}, Executor: x, Observer: &rec, Stderr: &testutil.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if err != nil || sum.Succeeded != int64(len(inputs)) {
		t.Errorf("summary %+v, %v: want every job succeeded", sum, err)
	}
	if n := rec.Count(event.JobFinished); n != len(inputs) {
		t.Errorf("%d JobFinished events, want one per job (%d)", n, len(inputs))
	}
	s := x.Stats()
	s.Adapt = r.Controller().Stats()
	var sizes []int
	for _, e := range rec.Kind(event.PoolResized) {
		sizes = append(sizes, e.Size)
	}
	t.Logf("sizes %v; stats: breaks %v, recreations %d, adapt %+v", sizes, s.Breaks, s.Recreations, s.Adapt)
	if s.Size != 2 || s.Adapt.Size != 2 || s.Adapt.OOMReductions == 0 || s.Breaks[event.CauseOOM] == 0 {
		t.Errorf("stats %+v: want the pool settled at 2 after OOM reductions", s)
	}
	if !strings.Contains(s.Adapt.Reason, "grew back to 2") && !strings.Contains(s.Adapt.Reason, "halved to 2") {
		t.Errorf("adapt reason %q does not explain size 2", s.Adapt.Reason)
	}
	line := s.String()
	t.Logf("summary: %s", line)
	if !strings.Contains(line, "concurrency 2 (limit 4): ") || !strings.Contains(line, "oom ") || !strings.Contains(line, "48 succeeded") {
		t.Errorf("summary %q does not say the pool settled at 2 of 4 after OOM", line)
	}
}

// TestLiveResize: the run follows the CPU quota of a real child cpu cgroup,
// and so do its workers. The watched process is a child placed in that
// cgroup (the test process itself is never moved into it): the watcher
// reads its cgroup by pid.
func TestLiveResize(t *testing.T) {
	cg, _ := testutil.ChildCgroup(t, "cpu")
	testutil.SetCPUQuota(t, cg, 2)
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	testutil.WriteFile(t, filepath.Join(cg, "cgroup.procs"), strconv.Itoa(sleeper.Process.Pid))

	decide := adapt.CgroupDecider(sleeper.Process.Pid, "", 0)
	d, err := decide(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Jobs < 2 {
		t.Skipf("2 CPUs of quota give %d jobs here (%s): nothing to shrink", d.Jobs, d.Reason)
	}
	x, err := workerexec.New(worker.Config{Command: pyWorker(t), Size: d.Jobs, Stderr: &testutil.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	// Keep the workers busy until the test is done.
	var stop atomic.Bool
	busy := func(yield func(string, error) bool) {
		for !stop.Load() && yield("sleep:20", nil) {
		}
	}
	var rec testutil.Recorder
	r, err := runner.New(runner.Config{Command: []string{"worker", "{}"}, Input: busy, Jobs: d.Jobs,
		Adapt: &adapt.Config{}, Executor: x, Observer: &rec})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = r.Run(context.Background()) })
	// The watch's first reading is its baseline: the quota changes after it.
	baseline := make(chan struct{})
	var once sync.Once
	watched := func(ctx context.Context) (limits.Decision, error) {
		d, err := decide(ctx)
		once.Do(func() { close(baseline) })
		return d, err
	}
	wg.Go(func() { _ = adapt.Watch(ctx, r.Controller(), 200*time.Millisecond, watched) })
	defer func() { cancel(); stop.Store(true); wg.Wait() }()

	full := d.Jobs
	settled := func(n int) func() bool {
		return func() bool { s := x.Stats(); return s.Size == n && s.Live == n && s.Retiring == 0 }
	}
	testutil.Eventually(t, 10*time.Second, "the workers to start", settled(full))
	<-baseline
	testutil.SetCPUQuota(t, cg, 0.5)
	t0 := time.Now()
	testutil.Eventually(t, 10*time.Second, "the pool to shrink to 1", settled(1))
	t.Logf("quota 0.5 CPU: pool at 1 worker after %v", time.Since(t0))
	testutil.SetCPUQuota(t, cg, 2)
	t0 = time.Now()
	testutil.Eventually(t, 10*time.Second, fmt.Sprintf("the pool to grow back to %d", full), settled(full))
	t.Logf("quota 2 CPUs: pool at %d workers after %v", full, time.Since(t0))
	var sizes []string
	for _, e := range rec.Kind(event.PoolResized) {
		sizes = append(sizes, fmt.Sprintf("%d (%s)", e.Size, e.Reason))
	}
	if len(sizes) != 2 || !strings.Contains(sizes[0], "limits changed") {
		t.Errorf("PoolResized events %q, want a shrink and a growth naming the limits", sizes)
	}
}
