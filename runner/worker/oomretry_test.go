//go:build linux

package worker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ration-run/ration/internal/testutil"
	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/worker"
)

// TestRealOOMRedispatchWaits: in a 128 MiB memory cgroup, task A holds 40
// MiB for 3 s on one worker; task B, which needs 95 MiB, is then given to
// the other and is OOM-killed beside A (the kernel takes the larger). B
// fits alone, so it must not be quarantined: its re-dispatch waits until
// no other task is in flight (half of the one that ran beside it), i.e.
// until A has ended, and then succeeds. Before the rule, B went to the
// replacement worker at once, beside A, was killed again and quarantined.
func TestRealOOMRedispatchWaits(t *testing.T) {
	cg, _ := testutil.MemoryCgroup(t, 128<<20) // swap included: no escape into swap
	p, rec := newPool(t, worker.Config{Command: []string{goWorker}, Size: 2, OnStart: moveTo(cg)})

	var (
		mu       sync.Mutex
		aStarted = make(chan struct{})
		bStarts  []worker.Stats // the pool's counters at each start of B
	)
	var wg sync.WaitGroup
	var ra, rb worker.Result
	wg.Add(1)
	go func() {
		defer wg.Done()
		ra = p.Run(context.Background(), worker.Task{Seq: 1, Input: "alloc:40:3000",
			Started: func(int, int) { close(aStarted) }})
	}()
	<-aStarted
	time.Sleep(300 * time.Millisecond) // A's 40 MiB are resident
	rb = p.Run(context.Background(), worker.Task{Seq: 2, Input: "alloc:95", Started: func(int, int) {
		s := p.Stats()
		mu.Lock()
		bStarts = append(bStarts, s)
		mu.Unlock()
	}})
	wg.Wait()

	if ra.Err != nil {
		t.Errorf("A: %v %v, want success", ra.Outcome, ra.Err)
	}
	var q *worker.QuarantinedError
	if errors.As(rb.Err, &q) {
		t.Fatalf("B was quarantined although it fits alone: %v", rb.Err)
	}
	if rb.Err != nil || rb.Outcome != event.Succeeded {
		t.Fatalf("B: %v %v, want success", rb.Outcome, rb.Err)
	}
	s := p.Stats()
	if s.Breaks[event.CauseOOM] < 1 || rb.Attempts < 2 || rb.Cause != event.CauseOOM {
		t.Fatalf("B: %d attempts, cause %v; pool breaks %v: the scenario did not OOM-kill B beside A", rb.Attempts, rb.Cause, s.Breaks)
	}
	mu.Lock()
	defer mu.Unlock()
	// Each re-dispatch of B started with B as the only busy worker: the
	// number of tasks in flight had dropped, not just the target.
	for i, st := range bStarts[1:] {
		if st.Busy != 1 {
			t.Errorf("B's start %d: %d busy workers (B included), want 1: it was re-dispatched beside A", i+2, st.Busy)
		}
	}
	if n := rec.count(event.WorkerBroken); n < 1 {
		t.Errorf("%d WorkerBroken events, want at least 1", n)
	}
	t.Logf("B: %d attempts; pool: %s", rb.Attempts, s)
}

// TestRealOOMRecreationHalves: 4 workers in a 150 MiB memory cgroup that
// fits two tasks of 60 MiB but not three. The tasks' OOM kills recreate
// the pool, and an observer halves it (as the runner's controller does).
// No task is quarantined, since each fits alone; and every re-dispatch
// after an OOM kill starts with no more tasks in flight, the retiring old
// generation's included, than the size the pool has then.
func TestRealOOMRecreationHalves(t *testing.T) {
	cg, _ := testutil.MemoryCgroup(t, 150<<20) // swap included: no escape into swap
	var pool atomic.Pointer[worker.Pool]
	halve := event.Func(func(e event.Event) {
		if e.Kind == event.PoolRecreated && e.Cause == event.CauseOOM {
			if p := pool.Load(); p != nil {
				p.Resize(p.Stats().Size/2, "systemic OOM")
			}
		}
	})
	p, rec := newPool(t, worker.Config{Command: []string{goWorker}, Size: 4, OnStart: moveTo(cg), Observer: halve,
		Backoff: 100 * time.Millisecond, MaxRecreations: 100})
	pool.Store(p)

	const n = 12
	var (
		mu     sync.Mutex
		starts = map[int64]int{}
		bad    []string
	)
	res := make([]worker.Result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seq := int64(i + 1)
			res[i] = p.Run(context.Background(), worker.Task{Seq: seq, Input: "alloc:60:500", Started: func(int, int) {
				s := p.Stats()
				mu.Lock()
				defer mu.Unlock()
				starts[seq]++
				if starts[seq] > 1 && s.Busy > max(s.Size, 1) {
					bad = append(bad, fmt.Sprintf("task %d restarted with %d busy workers (size %d)", seq, s.Busy, s.Size))
				}
			}})
		}()
	}
	wg.Wait()
	for i, r := range res {
		if r.Err != nil {
			t.Errorf("task %d: %v %v, want success (a task fits alone)", i+1, r.Outcome, r.Err)
		}
	}
	mu.Lock()
	for _, b := range bad {
		t.Error(b)
	}
	mu.Unlock()
	s := p.Stats()
	if s.Breaks[event.CauseOOM] == 0 {
		t.Errorf("no OOM break (%v): the scenario did not reach the limit", s.Breaks)
	}
	t.Logf("pool: %s; retries %d; recreations %d; pool events %d", s, s.Retries, s.Recreations, rec.count(event.PoolRecreated))
}
