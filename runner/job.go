package runner

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/joblog"
)

// job is one job's state across its attempts.
type job struct {
	r    *Runner
	it   item
	slot int // the runner's slot ({%})
	rj   *runningJob
	out  *output
	argv []string

	n          int           // the attempt running or last run, 1-based
	res        AttemptResult // the last attempt's result
	cause      event.Cause
	outcome    event.Outcome
	byRun      bool // stopped by the run itself, not by the job or its timeout
	oomRetries int  // OOM re-queues granted (they do not count against Retries)
	oomAlone   bool // the last attempt was OOM-killed while no other job ran
	// requeued: a hook stopped the last attempt to run it again
	// (attemptHooks.requeue); freeRetries counts those re-queues, which
	// do not count against Retries either.
	requeued bool
	// timedOut is why the last attempt timed out (ErrTimeout, or an error
	// wrapping it that says the limit), else nil.
	timedOut    error
	freeRetries int
	// undelivered: the job's output could not be delivered because
	// ration's stdout or stderr is gone; it is not recorded (recorded).
	undelivered bool
}

// runJob runs one job to its end: attempts, retries, output, joblog,
// events, halt.
func (r *Runner) runJob(ctx context.Context, it item, jl *joblog.Writer) jobResult {
	if r.stopping.Load() || ctx.Err() != nil {
		r.slots.skip(it.pos)
		r.jobNotStarted(it)
		return jobResult{}
	}
	j := r.newJob(it)
	defer r.jobGone(j)
	if !r.attempts(ctx, j) {
		r.jobNotStarted(it)
		j.out.discard()
		return jobResult{}
	}
	return r.finishJob(ctx, j, jl)
}

// newJob registers a job as running (not yet started), in its slot.
func (r *Runner) newJob(it item) *job {
	r.mu.Lock()
	size := r.size
	r.mu.Unlock()
	slot := r.slots.take(it.pos, size)
	// With -k, a job prints line by line only once it is first in order
	// (liveAdd).
	out := newOutput(r.out, r.cfg.LineBuffer && !r.cfg.KeepOrder, r.cfg.SpillBytes, r.cfg.TempDir)
	out.out.compress, out.err.compress = r.hooks.CompressSpill, r.hooks.CompressSpill
	out.onGone = func(err error) { r.outputGone(fmt.Errorf("job %d: %w", it.seq, err)) }
	j := &job{r: r, it: it, slot: slot, out: out, argv: r.argvOf(it, slot),
		rj: &runningJob{RunningJob: RunningJob{Slot: slot, Seq: it.seq, Input: it.input, Start: time.Now()}, out: out}}
	r.mu.Lock()
	r.running[it.seq] = j.rj
	r.mu.Unlock()
	if r.printsLive() {
		r.liveAdd(it.pos, out)
	}
	return j
}

// jobGone removes an ended job from the running ones.
func (r *Runner) jobGone(j *job) {
	if r.printsLive() {
		r.liveRemove(j.it.pos)
	}
	r.slots.release(j.slot)
	r.mu.Lock()
	delete(r.running, j.it.seq)
	r.wakeLocked()
	r.mu.Unlock()
}

// attempts runs the job's attempts until one succeeds, the attempts run
// out or the run stops. It returns false when the first attempt never
// started.
func (r *Runner) attempts(ctx context.Context, j *job) bool {
	for j.n = 1; ; j.n++ {
		if !r.waitToStart(ctx, j) {
			if j.n == 1 {
				return false
			}
			// The run stopped while the retry waited: it counts as an
			// attempt the run stopped, so every JobRetried is followed by a
			// JobStarted, as observers (metrics) expect.
			st := &attemptStart{r: r, j: j, n: j.n}
			st.started(j.slot, 0)
			j.res = AttemptResult{Outcome: event.Failed, Start: time.Now(), ExitCode: -1, Stopped: true}
			j.byRun, j.outcome = true, event.Failed
			return true
		}
		if !r.attempt(ctx, j) {
			return false
		}
		if !r.retry(j) {
			return true
		}
	}
}

// attemptStart reports the start of one attempt, once.
type attemptStart struct {
	r        *Runner
	j        *job
	n        int
	reported atomic.Bool
}

// started is the attempt's Attempt.Started.
func (s *attemptStart) started(slot, pid int) {
	if slot <= 0 {
		slot = s.j.slot
	}
	now := time.Now()
	first := !s.reported.Swap(true)
	rj := s.j.rj
	s.r.mu.Lock()
	rj.PID, rj.Slot = pid, slot
	if first {
		rj.Attempt, rj.Start, rj.started = s.n, now, true
	}
	s.r.mu.Unlock()
	if first {
		s.r.emit(event.Event{Kind: event.JobStarted, Time: now, Seq: s.j.it.seq, Slot: slot, PID: pid,
			Input: s.j.it.input, Attempt: s.n, QueueWait: now.Sub(s.j.it.read)})
	}
}

// attempt runs the job's attempt j.n and classifies how it ended: its
// hooks bound and prepare it (attemptHooks), the executor runs it. It
// returns false when it was the first attempt and it never started.
func (r *Runner) attempt(ctx context.Context, j *job) bool {
	st := &attemptStart{r: r, j: j, n: j.n}
	actx, cancel := r.hooks.boundContext(ctx, j)
	res := r.runAttempt(actx, j, st)
	r.stoppedBy(ctx, actx, j, &res)
	cancel()
	timedOut := j.timedOut != nil
	oom, alone := r.attemptEnded(j, res, timedOut)
	j.oomAlone = oom && alone
	if !r.reportStart(j, st, &res) {
		return false
	}
	j.res = res
	j.byRun = res.Stopped && !timedOut && !j.requeued
	j.cause = classify(res, timedOut, oom)
	j.outcome = outcomeOf(res, timedOut || j.byRun || j.requeued)
	return true
}

// execute runs the attempt on the executor. A Config.Executor is user
// code: a panic that went on up would take the job out of the Summary and
// its events (no JobFinished) and leave what it started behind unknown.
// So execute fails the attempt with it, and stops the run as an observer's
// panic does (emit): no more jobs start, and Run's error wraps
// ErrExecutorPanic with the panic's value and stack.
func (r *Runner) execute(ctx context.Context, a *Attempt) (res AttemptResult) {
	defer func() {
		if v := recover(); v != nil {
			r.log.Error("the executor panicked; starting no more jobs", "seq", a.Seq, "panic", fmt.Sprint(v))
			r.setErr(fmt.Errorf("%w: job %d: %v\n%s", ErrExecutorPanic, a.Seq, v, debug.Stack()))
			r.stop()
			res = AttemptResult{Outcome: event.Failed, Start: time.Now(), ExitCode: -1,
				Err: fmt.Errorf("%w: %v", ErrExecutorPanic, v)}
		}
	}()
	return r.exec.Exec(ctx, a)
}

// outcomeOf is the job's outcome after an attempt: the executor's, unless
// the runner stopped the attempt (its timeout, or the run).
func outcomeOf(res AttemptResult, stopped bool) event.Outcome {
	switch {
	case res.Outcome == event.Quarantined:
		return event.Quarantined
	case res.Outcome == event.Succeeded && res.ExitCode == 0 && res.Signal == 0 && res.Err == nil && !stopped:
		return event.Succeeded
	}
	return event.Failed
}

// retry decides whether the job runs again after its last attempt, and
// reports the retry. A job that would run again but for the run's stop
// (an interrupt, --halt, a lost output) counts as stopped by the run: it
// is not done, so it is not recorded as failed, and --resume runs it
// again with all its attempts: it is left out of the joblog.
func (r *Runner) retry(j *job) bool {
	if j.outcome != event.Failed || j.byRun {
		return false
	}
	free := j.requeued || (j.cause == event.CauseOOM && r.oomRequeue(j))
	if !free && j.n-j.oomRetries-j.freeRetries >= max(r.cfg.Retries, 1) {
		return false
	}
	if r.stopping.Load() {
		j.byRun = true
		return false
	}
	if j.requeued {
		j.freeRetries++
	} else if free {
		if j.oomRetries == 0 {
			r.oomRetried.Add(1)
		}
		j.oomRetries++
	}
	r.mu.Lock()
	j.rj.started = false
	r.mu.Unlock()
	res := j.res
	r.emit(event.Event{Kind: event.JobRetried, Seq: j.it.seq, Slot: r.slotOf(j.rj), PID: res.PID, Input: j.it.input, Attempt: j.n,
		Duration: res.Duration, ExitCode: res.ExitCode, Signal: res.Signal, PeakRSS: res.PeakRSS, Cause: j.cause, Err: res.Err,
		Alone: j.cause == event.CauseOOM && j.oomAlone})
	j.out.discard()
	return true
}

// finishJob prints and records a job that started, counts it and reports
// its JobFinished. A job is recorded as succeeded only once its whole
// output was delivered: output that could not be kept or printed fails
// the job. With -k the output waits for the jobs before it, and so does
// the record (Runner.deliver).
func (r *Runner) finishJob(ctx context.Context, j *job, jl *joblog.Writer) jobResult {
	if j.byRun {
		j.cause, j.outcome = event.CauseSignal, event.Stopped
	}
	received := j.out.bytesReceived()
	r.dropHalted(j)
	if err := j.out.lost(); err != nil && !j.byRun {
		r.outputFailed(j, fmt.Errorf("job %d: %w", j.it.seq, err))
	}
	var result jobResult
	switch {
	case r.cfg.KeepOrder:
		result.out = j.out
		succeeded := j.outcome == event.Succeeded && !j.byRun
		j.out.delivered = func(err error) {
			r.record(j, jl, received, err)
			if succeeded && j.outcome != event.Succeeded {
				r.succeeded.Add(-1)
				if j.byRun {
					r.killed.Add(1)
				} else {
					r.failed.Add(1)
				}
			}
		}
	default:
		r.record(j, jl, received, j.out.flush())
	}
	res := j.res
	r.rss.add(res.PeakRSS)
	r.count(j)
	r.emit(event.Event{Kind: event.JobFinished, Seq: j.it.seq, Slot: r.slotOf(j.rj), PID: res.PID, Input: j.it.input, Attempt: j.n,
		Duration: res.Duration, ExitCode: res.ExitCode, Signal: res.Signal, PeakRSS: res.PeakRSS,
		Outcome: j.outcome, Cause: j.cause, Err: r.finishErr(ctx, j), Alone: j.cause == event.CauseOOM && j.oomAlone})
	r.jobEnded(j)
	return result
}

// count adds the ended job to the Summary's counts.
func (r *Runner) count(j *job) {
	switch {
	case j.byRun:
		r.killed.Add(1)
	case j.outcome == event.Succeeded:
		r.succeeded.Add(1)
	default:
		if j.outcome == event.Quarantined {
			r.quarantined.Add(1)
		}
		r.failed.Add(1)
	}
}

// finishErr is the error a job's JobFinished carries.
func (r *Runner) finishErr(ctx context.Context, j *job) error {
	switch {
	case j.byRun:
		if err := context.Cause(ctx); err != nil {
			return err
		}
		return ErrInterrupted
	case j.cause == event.CauseTimeout && j.res.Cause == event.CauseNone:
		if j.timedOut != nil && j.timedOut != ErrTimeout {
			return j.timedOut // --timeout P% says its limit
		}
		return fmt.Errorf("%w after %s", ErrTimeout, r.cfg.Timeout)
	case j.cause == event.CauseOOM && j.res.Err == nil:
		return r.oomErr(j)
	}
	return j.res.Err
}

// slotOf returns the slot a job's events report: the runner's, or the
// executor's own worker slot (Attempt.Started).
func (r *Runner) slotOf(rj *runningJob) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return rj.Slot
}

// classify names why an attempt ended abnormally, CauseNone when it
// exited on its own. It is the one place that decides: a timeout first,
// then the executor's own cause (a worker's break), then an OOM kill
// (a failure while the cgroup's oom_kill counter rose, attributed by the
// caller: attemptEnded), then any other signal.
func classify(res AttemptResult, timedOut, oomKilled bool) event.Cause {
	switch {
	case timedOut:
		return event.CauseTimeout
	case res.Cause != event.CauseNone:
		return res.Cause
	case oomKilled:
		return event.CauseOOM
	case res.Signal != 0:
		return event.CauseSignal
	}
	return event.CauseNone
}

// jobEnded is called once a job is counted: it tells the dialect
// (runhook.Hooks.Ended) and checks --halt.
func (r *Runner) jobEnded(j *job) {
	r.hooks.Ended(j, j.outcome == event.Succeeded, j.res.Duration)
	r.checkHalt(j)
}
