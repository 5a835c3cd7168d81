//go:build linux

package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
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

// checkEndedOnce asserts that every task ended with an outcome and that
// the pool reported no job events: a task's start, retries and end are its
// owner's to report (the runner's, tested in package workerexec).
func checkEndedOnce(t *testing.T, rec *recorder, res []worker.Result) {
	t.Helper()
	for i, r := range res {
		if r.Outcome == 0 {
			t.Errorf("task %d: no outcome", i+1)
		}
	}
	for _, k := range []event.Kind{event.JobStarted, event.JobRetried, event.JobFinished} {
		if n := rec.count(k); n != 0 {
			t.Errorf("the pool reported %d %v events, want none", n, k)
		}
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
			cg, _ := testutil.MemoryCgroup(t, 64<<20) // swap included: no escape into swap
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
			if i >= 16 && i < 64 {
				// Long enough that the shrink, made once 20 succeeded,
				// finds workers busy (to retire) however slow the
				// machine: with only short tasks a loaded -race run
				// could shrink an idle or finished pool.
				inputs[i] = fmt.Sprintf("sleep:%d", 30+10*(i%7))
			}
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
