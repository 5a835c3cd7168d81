package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/runner/adapt"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

// runAll runs the inputs with conc submitters and returns the results in
// input order. Task i has Seq i+1.
func runAll(t *testing.T, p *worker.Pool, inputs []string, conc int) []worker.Result {
	t.Helper()
	res := make([]worker.Result, len(inputs))
	calls := make([]int, len(inputs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res[i] = p.Run(context.Background(), worker.Task{Seq: int64(i + 1), Input: inputs[i]})
				calls[i]++
			}
		}()
	}
	for i := range inputs {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, n := range calls {
		if n != 1 {
			t.Fatalf("task %d returned %d times", i, n)
		}
	}
	return res
}

// checkEndedOnce asserts that every task has exactly one JobFinished event
// and that it agrees with the task's Result.
func checkEndedOnce(t *testing.T, rec *recorder, res []worker.Result) {
	t.Helper()
	fin := map[int64][]event.Event{}
	for _, e := range rec.snapshot() {
		if e.Kind == event.JobFinished {
			fin[e.Seq] = append(fin[e.Seq], e)
		}
	}
	for i, r := range res {
		es := fin[int64(i+1)]
		if len(es) != 1 {
			t.Errorf("task %d: %d JobFinished events, want exactly 1", i+1, len(es))
			continue
		}
		if es[0].Outcome != r.Outcome {
			t.Errorf("task %d: event outcome %v, result %v", i+1, es[0].Outcome, r.Outcome)
		}
	}
	if len(fin) != len(res) {
		t.Errorf("JobFinished for %d tasks, want %d", len(fin), len(res))
	}
}

// TestRealOOM: a 64 MiB memory cgroup holds the workers; one task of 50
// allocates 256 MiB. That task is quarantined with cause OOM, the other 49
// succeed exactly once, and nothing else is affected.
func TestRealOOM(t *testing.T) {
	for _, w := range []struct {
		name string
		cmd  func(t *testing.T) []string
	}{
		{"python", func(t *testing.T) []string { return pyWorker(t) }},
		{"go", func(*testing.T) []string { return []string{goWorker} }},
	} {
		t.Run(w.name, func(t *testing.T) {
			cg := childCgroup(t, "memory")
			writeFile(t, filepath.Join(cg, "memory.limit_in_bytes"), strconv.Itoa(64<<20))
			if _, err := os.Stat(filepath.Join(cg, "memory.memsw.limit_in_bytes")); err == nil {
				writeFile(t, filepath.Join(cg, "memory.memsw.limit_in_bytes"), strconv.Itoa(64<<20)) // no escape into swap
			}
			p, rec := newPool(t, worker.Config{Command: w.cmd(t), Size: 2, OnStart: moveTo(cg)})
			inputs := make([]string, 50)
			const hog = 17
			for i := range inputs {
				inputs[i] = fmt.Sprintf("task-%d", i)
			}
			inputs[hog] = "alloc:256"
			res := runAll(t, p, inputs, 4)
			for i, r := range res {
				if i == hog {
					var q *worker.QuarantinedError
					if r.Outcome != event.Quarantined || !errors.As(r.Err, &q) || q.Cause != event.CauseOOM {
						t.Fatalf("hog: %v %v, want quarantined with cause oom", r.Outcome, r.Err)
					}
					if !strings.Contains(r.Err.Error(), "OOM-killed") {
						t.Errorf("hog error %q does not say OOM-killed", r.Err)
					}
					t.Logf("hog: %v", r.Err)
					continue
				}
				var e echo
				if r.Err != nil || json.Unmarshal(r.Output, &e) != nil || e.Input != inputs[i] {
					t.Errorf("task %d: %s %v, want its own echo", i, r.Output, r.Err)
				}
			}
			checkEndedOnce(t, rec, res)
			// The hog broke MaxBreaks (2) workers by OOM. The kernel may
			// also OOM-kill an innocent worker that allocates while the
			// hog's memory is being freed: that is more OOM breaks, a
			// retry, possibly a systemic recreation, none of which the
			// acceptance is about. Only the tasks' ends are.
			s := p.Stats()
			if s.Succeeded != 49 || s.Quarantined != 1 || s.Failed != 0 || s.Breaks[event.CauseOOM] < 2 {
				t.Errorf("stats %+v: want 49 succeeded, 1 quarantined, at least 2 OOM breaks", s)
			}
			if sum := s.String(); !strings.Contains(sum, "tasks: 49 succeeded, 0 failed, 1 quarantined") || !strings.Contains(sum, "breaks: oom ") {
				t.Errorf("summary %q", sum)
			}
			t.Logf("stats: breaks %v, retries %d, recreations %d", s.Breaks, s.Retries, s.Recreations)
		})
	}
}

// TestChaos: 1,000 tasks on 4 workers while a worker is SIGKILLed every
// 50 ms. Every task ends exactly once, every success carries its own
// input, and the replacements are counted.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test skipped in -short mode")
	}
	p, rec := newPool(t, worker.Config{Command: []string{goWorker}, Size: 4, Backoff: 20 * time.Millisecond, MaxRecreations: 1 << 20})
	stop := make(chan struct{})
	var kills int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if pids := rec.livePIDs(); len(pids) > 0 {
				if syscall.Kill(pids[rand.IntN(len(pids))], syscall.SIGKILL) == nil {
					kills++
				}
			}
		}
	}()
	inputs := make([]string, 1000)
	for i := range inputs {
		inputs[i] = fmt.Sprintf("sleep:10:chaos-%d", i)
	}
	start := time.Now()
	res := runAll(t, p, inputs, 16)
	close(stop)
	wg.Wait()
	outcomes := map[event.Outcome]int{}
	for i, r := range res {
		outcomes[r.Outcome]++
		switch r.Outcome {
		case event.Succeeded:
			if worker.OutputText(r.Output) != inputs[i] {
				t.Errorf("task %d succeeded with %s, not its own answer", i, r.Output)
			}
		case event.Quarantined:
			var q *worker.QuarantinedError
			if !errors.As(r.Err, &q) {
				t.Errorf("task %d quarantined with %v", i, r.Err)
			}
		default:
			t.Errorf("task %d: %v %v", i, r.Outcome, r.Err)
		}
	}
	checkEndedOnce(t, rec, res)
	s := p.Stats()
	t.Logf("%v: %d kills; outcomes %v; stats: starts %d, replacements %d, recreations %d, breaks %v, retries %d",
		time.Since(start), kills, outcomes, s.Starts, s.Replacements, s.Recreations, s.Breaks, s.Retries)
	if s.Succeeded+s.Quarantined != 1000 || s.Failed != 0 {
		t.Errorf("stats %+v: want 1000 tasks ended as succeeded or quarantined", s)
	}
	if kills == 0 || s.Replacements == 0 || s.Breaks[event.CauseSignal] == 0 {
		t.Errorf("%d kills, stats %+v: want kills, signal breaks and replacements", kills, s)
	}
}

// TestAdaptive: the memory cgroup fits two tasks but not three or four. A
// pool of 4 breaks by OOM, halves, grows back, and settles at 2; every
// task succeeds, and the stats say so.
func TestAdaptive(t *testing.T) {
	cg := childCgroup(t, "memory")
	// A Python worker is ~14 MiB; a task holds 64 MiB for 150 ms.
	// 2 x 78 = 156 MiB fits in 190 MiB; 3 x 78 = 234 MiB does not.
	writeFile(t, filepath.Join(cg, "memory.limit_in_bytes"), strconv.Itoa(190<<20))
	if _, err := os.Stat(filepath.Join(cg, "memory.memsw.limit_in_bytes")); err == nil {
		writeFile(t, filepath.Join(cg, "memory.memsw.limit_in_bytes"), strconv.Itoa(190<<20))
	}
	inputs := make([]string, 48)
	// The controller probes above a learned OOM ceiling after
	// adapt.ProbeRuns x GrowAfter successes in a row; with more of those
	// than tasks the pool ends where the OOM kills left it. (GrowAfter 4, a
	// probe after 40, let a run whose kills all came early probe 3 at the
	// end.)
	growAfter := len(inputs)/adapt.ProbeRuns + 1
	p, rec := newPool(t, worker.Config{Command: pyWorker(t), Size: 4, OnStart: moveTo(cg),
		MaxBreaks: 6, Backoff: 100 * time.Millisecond, MaxRecreations: 100,
		Adapt: adapt.Config{GrowAfter: growAfter}})
	for i := range inputs {
		inputs[i] = "alloc:64:150"
	}
	res := runAll(t, p, inputs, 8)
	for i, r := range res {
		if r.Err != nil {
			t.Errorf("task %d: %v", i, r.Err)
		}
	}
	checkEndedOnce(t, rec, res)
	s := p.Stats()
	var sizes []int
	for _, e := range rec.snapshot() {
		if e.Kind == event.PoolResized {
			sizes = append(sizes, e.Size)
		}
	}
	t0 := rec.snapshot()[0].Time
	for _, e := range rec.snapshot() {
		if e.Kind != event.JobStarted && e.Kind != event.JobFinished {
			t.Logf("%v %v size=%d pid=%d cause=%s %s %v", e.Time.Sub(t0).Round(time.Millisecond), e.Kind, e.Size, e.PID, e.Cause, e.Reason, e.Err)
		}
	}
	t.Logf("sizes %v; stats: breaks %v, recreations %d, adapt %+v", sizes, s.Breaks, s.Recreations, s.Adapt)
	if s.Size != 2 || s.Adapt.Size != 2 || s.Adapt.OOMReductions == 0 || s.Breaks[event.CauseOOM] == 0 {
		t.Errorf("stats %+v: want the pool settled at 2 after OOM reductions", s)
	}
	if !strings.Contains(s.Adapt.Reason, "grew back to 2") && !strings.Contains(s.Adapt.Reason, "halved to 2") {
		t.Errorf("adapt reason %q does not explain size 2", s.Adapt.Reason)
	}
	sum := s.String()
	t.Logf("summary: %s", sum)
	if !strings.Contains(sum, "concurrency 2 (limit 4): ") || !strings.Contains(sum, "oom ") || !strings.Contains(sum, "48 succeeded") {
		t.Errorf("summary %q does not say the pool settled at 2 of 4 after OOM", sum)
	}
}

// TestRetireWhileCrashing: shrinking from 4 to 1 while the retiring workers
// crash mid-task. No retired worker is restarted, their tasks are
// re-dispatched to the one remaining worker, and nothing is lost.
func TestRetireWhileCrashing(t *testing.T) {
	t.Run("deterministic", func(t *testing.T) {
		p, rec := newPool(t, worker.Config{Command: []string{goWorker}, Size: 4})
		inputs := []string{"sleep:1500", "sleep:1501", "sleep:1502", "sleep:1503"}
		done := make(chan []worker.Result)
		go func() { done <- runAll(t, p, inputs, 4) }()
		waitFor(t, 10*time.Second, "4 busy workers", func() bool { return p.Stats().Busy == 4 })
		p.Resize(1, "test: shrink")
		var retiring []int
		for _, w := range p.Workers() {
			if w.Retiring {
				retiring = append(retiring, w.PID)
			}
		}
		if len(retiring) != 3 {
			t.Fatalf("workers %+v: want 3 retiring", p.Workers())
		}
		for _, pid := range retiring {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		res := <-done
		for i, r := range res {
			if r.Err != nil || worker.OutputText(r.Output) != inputs[i] {
				t.Errorf("task %d: %s %v", i, r.Output, r.Err)
			}
		}
		checkEndedOnce(t, rec, res)
		s := p.Stats()
		if s.Starts != 4 || s.Replacements != 0 || s.Breaks[event.CauseSignal] != 3 || s.Live != 1 || s.Retiring != 0 {
			t.Errorf("stats %+v: want 4 starts (none after the shrink), 3 signal breaks, 1 live worker", s)
		}
		if n := rec.count(event.WorkerStarted); n != 4 {
			t.Errorf("%d WorkerStarted events, want 4", n)
		}
		broken := 0
		for _, e := range rec.snapshot() {
			if e.Kind == event.WorkerBroken && strings.Contains(e.Reason, "while retiring") {
				broken++
			}
		}
		if broken != 3 {
			t.Errorf("%d WorkerBroken events say 'while retiring', want 3", broken)
		}
	})
	t.Run("random", func(t *testing.T) {
		// Crashing tasks break live workers (replaced) while a shrink
		// retires others, which are killed too (never replaced). Systemic
		// recreation is off (a 1 ns window) so every start is accounted.
		p, rec := newPool(t, worker.Config{Command: []string{goWorker}, Size: 4, BreakWindow: time.Nanosecond, MaxBreaks: 3})
		inputs := make([]string, 120)
		for i := range inputs {
			inputs[i] = fmt.Sprintf("sleep:%d", 5+i%7)
			if i%10 == 3 {
				inputs[i] = "exit:1"
			}
		}
		done := make(chan []worker.Result)
		go func() { done <- runAll(t, p, inputs, 6) }()
		waitFor(t, 10*time.Second, "some tasks", func() bool { return p.Stats().Succeeded >= 20 })
		p.Resize(1, "test: shrink")
		for _, w := range p.Workers() {
			if w.Retiring && w.PID > 0 {
				syscall.Kill(w.PID, syscall.SIGKILL)
			}
		}
		res := <-done
		for i, r := range res {
			want := event.Succeeded
			if inputs[i] == "exit:1" {
				want = event.Quarantined
			}
			if r.Outcome != want {
				t.Errorf("task %d (%s): %v %v, want %v", i, inputs[i], r.Outcome, r.Err, want)
			}
		}
		checkEndedOnce(t, rec, res)
		var starts, liveBreaks, retiringBreaks int
		for _, e := range rec.snapshot() {
			switch {
			case e.Kind == event.WorkerStarted:
				starts++
			case e.Kind == event.WorkerBroken && strings.Contains(e.Reason, "while retiring"):
				retiringBreaks++
			case e.Kind == event.WorkerBroken:
				liveBreaks++
			}
		}
		s := p.Stats()
		t.Logf("starts %d, live breaks %d, retiring breaks %d; stats %+v", starts, liveBreaks, retiringBreaks, s)
		if starts != 4+liveBreaks || int64(liveBreaks) != s.Replacements {
			t.Errorf("%d starts, want 4 + %d replacements of live workers: a retiring worker was restarted", starts, liveBreaks)
		}
		if s.Live != 1 {
			t.Errorf("%d live workers, want 1", s.Live)
		}
		if retiringBreaks == 0 {
			t.Errorf("no retiring worker broke: the case was not exercised")
		}
	})
}

// TestLiveResize: the pool follows the CPU quota of a real child cpu cgroup.
// The watched process is a child placed in that cgroup (the test process
// itself is never moved): the watcher reads its cgroup by pid.
func TestLiveResize(t *testing.T) {
	cg := childCgroup(t, "cpu")
	writeFile(t, filepath.Join(cg, "cpu.cfs_period_us"), "100000")
	writeFile(t, filepath.Join(cg, "cpu.cfs_quota_us"), "200000")
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	writeFile(t, filepath.Join(cg, "cgroup.procs"), strconv.Itoa(sleeper.Process.Pid))

	decide := adapt.CgroupDecider(sleeper.Process.Pid, "", 0)
	d, err := decide(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.Jobs < 2 {
		t.Skipf("2 CPUs of quota give %d jobs here (%s): nothing to shrink", d.Jobs, d.Reason)
	}
	p, rec := newPool(t, worker.Config{Command: []string{goWorker}, Size: d.Jobs})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); adapt.Watch(ctx, p.Controller(), 200*time.Millisecond, decide) }()
	go func() { // keep the workers busy meanwhile
		defer wg.Done()
		for ctx.Err() == nil {
			p.Do(ctx, "sleep:20")
		}
	}()
	defer func() { cancel(); wg.Wait() }()

	full := d.Jobs
	settled := func(n int) func() bool {
		return func() bool { s := p.Stats(); return s.Size == n && s.Live == n && s.Retiring == 0 }
	}
	time.Sleep(500 * time.Millisecond)
	writeFile(t, filepath.Join(cg, "cpu.cfs_quota_us"), "50000")
	t0 := time.Now()
	waitFor(t, 10*time.Second, "the pool to shrink to 1", settled(1))
	t.Logf("quota 0.5 CPU: pool at 1 worker after %v", time.Since(t0))
	writeFile(t, filepath.Join(cg, "cpu.cfs_quota_us"), "200000")
	t0 = time.Now()
	waitFor(t, 10*time.Second, fmt.Sprintf("the pool to grow back to %d", full), settled(full))
	t.Logf("quota 2 CPUs: pool at %d workers after %v", full, time.Since(t0))
	var sizes []string
	for _, e := range rec.snapshot() {
		if e.Kind == event.PoolResized {
			sizes = append(sizes, fmt.Sprintf("%d (%s)", e.Size, e.Reason))
		}
	}
	if len(sizes) != 2 || !strings.Contains(sizes[0], "limits changed") {
		t.Errorf("PoolResized events %q, want a shrink and a growth naming the limits", sizes)
	}
}
