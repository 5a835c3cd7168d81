package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ration-run/ration/internal/memory"
)

// oomBaseMaxAge is how old an OOM-kill count may be to serve as a job's
// base. Reading the count is three system calls; with thousands of short
// jobs a second, re-reading it for each one was a tenth of ration's own CPU
// time. The price: a kill in the last oomBaseMaxAge before a job started
// that no job's end accounted for could make that job's later SIGKILL by
// someone else look like an OOM kill (as a kill of another process while
// the job ran always could).
const oomBaseMaxAge = 50 * time.Millisecond

// oomCounter reads Config.OOMKills and keeps the last reading.
type oomCounter struct {
	read func() (int64, error) // nil: no OOM classification

	mu   sync.Mutex // guards seen and at, never held across read
	seen int64      // the OOM-kill count last read
	at   time.Time  // when it was read; zero: never
}

// base is the OOM-kill count to compare a job's end against: a reading
// at most oomBaseMaxAge old, -1 when unknown.
func (c *oomCounter) base() int64 {
	if c.read == nil {
		return -1
	}
	c.mu.Lock()
	n, at := c.seen, c.at
	c.mu.Unlock()
	if !at.IsZero() && time.Since(at) < oomBaseMaxAge {
		return n
	}
	return c.kills()
}

// kills reads the counter: -1 when unknown. Every reading, also the
// re-reads after a SIGKILL, refreshes the one base hands out.
func (c *oomCounter) kills() int64 {
	if c.read == nil {
		return -1
	}
	now := time.Now()
	n, err := c.read()
	if err != nil {
		n = -1
	}
	c.mu.Lock()
	if now.After(c.at) {
		c.seen, c.at = n, now
	}
	c.mu.Unlock()
	return n
}

// rose reports whether the counter rose above base (memory.Rose).
func (c *oomCounter) rose(base int64) bool { return memory.Rose(c.kills, base) }

// waitUntil waits, with rj marked as waiting (not counted as running by
// othersRunningLocked), until ready (called under r.mu) holds; it is
// asked again when a job or an attempt ends, the size changes, and every
// 100 ms. It returns false when the run stops first.
func (r *Runner) waitUntil(ctx context.Context, rj *runningJob, ready func() bool) bool {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	was := rj.waiting
	rj.waiting = true
	defer func() { rj.waiting = was }()
	for {
		if r.stopping.Load() || ctx.Err() != nil {
			return false
		}
		if ready() {
			return true
		}
		wake := r.wake
		r.mu.Unlock()
		select {
		case <-wake:
		case <-tick.C:
		case <-ctx.Done():
		case <-r.stopCh:
		}
		r.mu.Lock()
	}
}

// waitForRoom waits, with rj marked as waiting, until fewer other jobs
// run than both the pool size and below (memory.Reruns.Wait), so that a
// job re-queued after an OOM kill runs at the concurrency lowered in
// reaction to it, not beside as many jobs as the one that was killed.
// While it waits, no first attempt starts (waitReruns). It returns false
// when the run stops first.
func (r *Runner) waitForRoom(ctx context.Context, rj *runningJob, below int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	was := rj.waiting
	rj.waiting = true
	err := r.reruns.Wait(ctx, below, func() (int, int) { return r.othersRunningLocked(rj), r.size }, r.stoppedLocked)
	rj.waiting = was
	if err == nil {
		// The job goes on to the start gate and the memory admission
		// as any other: it keeps no bound while it runs.
		r.reruns.Started()
	}
	r.wakeLocked() // the jobs held for it
	return err == nil
}

// errRunStopped ends a wait for room when the run stops.
var errRunStopped = errors.New("the run stops")

// stoppedLocked is errRunStopped once the run stops starting jobs.
func (r *Runner) stoppedLocked() error {
	if r.stopping.Load() {
		return errRunStopped
	}
	return nil
}

// waitReruns waits while a job re-queued after an OOM kill waits for room
// (memory.Reruns.Waiting), so that the number of jobs running really
// drops. It returns false when the run stops first.
func (r *Runner) waitReruns(ctx context.Context, rj *runningJob) bool {
	r.mu.Lock()
	held := r.reruns.Waiting()
	r.mu.Unlock()
	return !held || r.waitUntil(ctx, rj, func() bool { return !r.reruns.Waiting() })
}

// othersRunningLocked counts the running jobs other than rj that are not
// waiting (for room, or for admission).
func (r *Runner) othersRunningLocked(rj *runningJob) int {
	n := 0
	for _, j := range r.running {
		if j != rj && !j.waiting {
			n++
		}
	}
	return n
}
