package runner

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// HaltWhen says what --halt does once its condition holds.
type HaltWhen int

// The --halt modes.
const (
	HaltNever HaltWhen = iota // run every job
	HaltSoon                  // start no more jobs, let the running ones finish
	HaltNow                   // start no more jobs and stop the running ones
)

// HaltOn is what --halt counts.
type HaltOn int

// The --halt conditions.
const (
	HaltOnFail    HaltOn = iota // failed jobs
	HaltOnSuccess               // succeeded jobs
	HaltOnDone                  // finished jobs, either way
)

// HaltMinJobs is how many jobs must have finished before a percentage
// condition (fail=P%) is checked when the number of jobs is not known. The
// runner knows it whenever a percentage is given: it reads the whole input
// before the first job then.
const HaltMinJobs = 10

// Halt is a --halt policy. The zero value never halts.
type Halt struct {
	When HaltWhen
	On   HaltOn
	// Count is the number of jobs that triggers the halt; with Percent
	// set it is unused.
	Count int64
	// Percent, when > 0, triggers the halt once Percent % of all the
	// jobs count: the Runner then reads the whole input before the first
	// job, to know how many there are. Only where
	// that number is unknown, at least HaltMinJobs jobs must have finished
	// and Percent % of the finished ones count.
	Percent float64
}

// check reports whether h is a policy: a known mode, and a count or a
// percentage to halt at unless it never halts.
func (h Halt) check() error {
	switch {
	case h.When < HaltNever || h.When > HaltNow || h.On < HaltOnFail || h.On > HaltOnDone:
		return fmt.Errorf("runner: Halt %d,%d: unknown When or On", h.When, h.On)
	case h.When != HaltNever && h.Percent == 0 && h.Count < 1,
		h.Percent < 0 || h.Percent > 100 || math.IsNaN(h.Percent):
		return errors.New("runner: Halt: want Count >= 1 or 0 < Percent <= 100")
	}
	return nil
}

// triggered reports whether the counts meet the condition; total is the
// number of jobs of the run when known (else 0). A percentage is of total,
// so fail=20% of 10 jobs halts at the second failure,
// whenever it comes.
func (h Halt) triggeredOf(failed, succeeded, total int64) bool {
	if h.When == HaltNever {
		return false
	}
	n := failed
	switch h.On {
	case HaltOnSuccess:
		n = succeeded
	case HaltOnDone:
		n = failed + succeeded
	}
	if h.Percent > 0 {
		if total > 0 {
			return float64(n) >= h.jobsOf(total)
		}
		done := failed + succeeded
		return done >= HaltMinJobs && float64(n)*100 >= h.Percent*float64(done)
	}
	return n >= h.Count
}

// triggered is triggeredOf with the number of jobs unknown.
func (h Halt) triggered(failed, succeeded int64) bool { return h.triggeredOf(failed, succeeded, 0) }

// jobsOf is the number of jobs of total that Percent is: total times
// Percent/100, in that order, so that the comparisons with it round the
// same way on every platform and in every release.
func (h Halt) jobsOf(total int64) float64 { return float64(total) * (h.Percent / 100) }

// status is the exit status of a run that halted as h says:
// 0 for success=...; with fail or done, the status of the job that
// triggered it for a count of 1 (exit and signal are its record's Exitval
// and Signal: Exitval when not 0, -1 (a job the runner stopped, or that
// failed for a reason of ration's) giving 255; else 128 plus the signal),
// the percentage of failed jobs (rounded up) for a percentage, else the
// number of failed jobs, at most 101. A percentage that comes to exactly
// one job of total is a count of 1.
func (h Halt) status(failed, total int64, exit, signal int) int {
	one := h.Count == 1 || (h.Percent > 0 && total > 0 && h.jobsOf(total) == 1)
	switch {
	case h.On == HaltOnSuccess:
		return 0
	case one && exit != 0:
		return exit & 0xff // -1: 255, as a process's exit(-1)
	case one && signal != 0:
		return 128 + signal
	case one:
		return 0
	case h.Percent > 0 && total > 0:
		return int(math.Ceil(float64(failed) * 100 / float64(total)))
	}
	return int(min(failed, 101))
}

// haltStatus is the exit status the first halt decided.
type haltStatus struct {
	mu   sync.Mutex
	set  bool
	code int
}

// checkHalt halts the run when the job j, just counted, meets --halt's
// condition, and keeps the exit status of the first halt.
func (r *Runner) checkHalt(j *job) {
	h := r.cfg.Halt
	if j.byRun || !h.triggeredOf(r.failed.Load(), r.succeeded.Load(), r.total.Load()) {
		return
	}
	hs := &r.haltSt
	hs.mu.Lock()
	if !hs.set {
		// The record's columns, not the raw exit code: a job that failed
		// while exiting 0 (its output lost, no --results files) must not
		// halt the run with status 0.
		exit, signal := exitColumns(j)
		hs.set, hs.code = true, h.status(r.failed.Load(), r.total.Load(), exit, signal)
	}
	hs.mu.Unlock()
	r.halt()
}

// HaltStatus returns the exit status of a run with --halt (see
// Halt.status), and whether --halt decides it: when the run halted, and
// when --halt gave a percentage, whose status is the percentage of failed
// jobs of those that ran (rounded up) even if the condition never held.
// Otherwise the status is the number of failed jobs, as without --halt,
// and HaltStatus returns false. Call it after Run.
func (r *Runner) HaltStatus() (int, bool) {
	hs := &r.haltSt
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.set {
		return hs.code, true
	}
	if h := r.cfg.Halt; h.When != HaltNever && h.Percent > 0 {
		failed := r.failed.Load()
		ran := max(failed+r.succeeded.Load(), 1)
		return int(math.Ceil(float64(failed) * 100 / float64(ran))), true
	}
	return 0, false
}

// dropHalted discards the output of a job that --halt now stopped: a run
// prints nothing of the jobs it kills when it halts.
func (r *Runner) dropHalted(j *job) {
	if j.byRun && r.halted.Load() && r.cfg.Halt.When == HaltNow {
		j.out.discard()
	}
}
