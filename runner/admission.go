package runner

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/ration-run/ration/runner/admit"
	"github.com/ration-run/ration/runner/event"
)

// admission applies package admit to a run: before each attempt starts it
// asks the Gate whether the memory the jobs share has room for one more
// (Config.Memory; without it every attempt starts at once), and when an
// attempt ends it attributes an OOM kill (also through a shell, exit 137)
// and decides whether the OOM-killed job runs again (admit.OOMRetry).
//
// A job held for memory holds its pool slot (the CPU policy's bound) but
// is not counted as running: the Gate counts only the attempts it let
// start, and the decisions are taken one at a time, so each one sees the
// starts before it.
type admission struct {
	gate    *admit.Gate    // nil: no memory admission
	sampler *admit.Sampler // nil with gate
	proc    string         // the /proc to read jobs' RSS from
	tracker admit.Tracker

	decide sync.Mutex // one decision at a time, held across the cgroup reads

	mu       sync.Mutex
	admitted map[int64]bool   // attempts running now, by job
	kills    map[int64]int    // OOM kills so far, by job
	verdicts map[int64]string // why an OOM-killed job was not re-queued
}

func newAdmission(cfg Config) *admission {
	a := &admission{proc: "/proc", admitted: map[int64]bool{}, kills: map[int64]int{}, verdicts: map[int64]string{}}
	if cfg.Memory != nil {
		a.sampler = cfg.Memory
		a.gate = admit.New(cfg.Admit)
	}
	return a
}

// waitToStart waits until attempt j.n may start: an attempt after an OOM
// kill first waits for concurrency to drop (waitForRoom, admit.OOMRetry's
// Ready rule), and every attempt waits for the memory admission. It
// returns false when the run stops first. The attempt counts as running
// from its return on; attemptEnded ends that.
func (r *Runner) waitToStart(ctx context.Context, j *job) bool {
	if j.n > 1 && j.cause == event.CauseOOM && !r.waitForRoom(ctx, j.rj) {
		return false
	}
	a := r.adm
	if a.gate == nil {
		a.started(j.it.seq, r.oom.base())
		return true
	}
	r.mu.Lock()
	j.rj.waiting = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		j.rj.waiting = false
		r.mu.Unlock()
	}()
	logged := false
	for {
		if r.stopping.Load() || ctx.Err() != nil {
			return false
		}
		r.mu.Lock()
		wake, size := r.wake, r.size
		r.mu.Unlock()
		d := r.admitOne(j.it.seq, size)
		if d.Start {
			return true
		}
		if !logged {
			r.log.Debug("job held for memory", "seq", j.it.seq, "rule", string(d.Rule), "reason", d.Reason)
			logged = true
		}
		t := time.NewTimer(d.RetryAfter)
		select {
		case <-wake:
		case <-t.C:
		case <-ctx.Done():
		case <-r.drainCh:
		}
		t.Stop()
	}
}

// admitOne asks the Gate about job seq with the memory cgroup and the
// running attempts' RSS read now; a Start counts the attempt as running
// before the next question is asked.
func (r *Runner) admitOne(seq int64, size int) admit.Decision {
	a := r.adm
	a.decide.Lock()
	defer a.decide.Unlock()
	reading, _, err := a.sampler.Sample()
	if err != nil {
		reading = admit.Reading{} // unknown: memory holds nothing
	}
	pids := r.admittedPIDs()
	running := make([]int64, len(pids))
	if reading.Limit > 0 && len(pids) > 0 {
		// Each job runs in its own process group (its PID's): its RSS is
		// the group's, a shell's children included.
		rss, _ := admit.GroupRSS(a.proc, pids)
		for i, pid := range pids {
			running[i] = rss[pid]
		}
	}
	d := a.gate.Admit(admit.Request{Reading: reading, Running: running, Limit: size})
	if d.Start {
		a.started(seq, r.oom.base())
	}
	return d
}

// admittedPIDs returns the PID of each running attempt, 0 for one whose
// process has not started yet.
func (r *Runner) admittedPIDs() []int {
	a := r.adm
	a.mu.Lock()
	seqs := make([]int64, 0, len(a.admitted))
	for s := range a.admitted {
		seqs = append(seqs, s)
	}
	a.mu.Unlock()
	pids := make([]int, len(seqs))
	r.mu.Lock()
	for i, s := range seqs {
		if rj := r.running[s]; rj != nil {
			pids[i] = rj.PID
		}
	}
	r.mu.Unlock()
	return pids
}

// started counts an attempt of job seq as running from now, when the
// oom_kill counter was oomKills (-1: unknown).
func (a *admission) started(seq int64, oomKills int64) {
	a.mu.Lock()
	a.admitted[seq] = true
	a.mu.Unlock()
	a.tracker.Started(int(seq), oomKills)
}

// attemptEnded ends the attempt of j that ended as res: it no longer
// counts as running, its peak teaches the Gate one job's need, and it is
// attributed (admit.Attribute): it reports whether the attempt was
// OOM-killed. An OOM kill is counted for the job's re-queue decision
// (oomRequeue).
func (r *Runner) attemptEnded(j *job, res AttemptResult, timedOut bool) bool {
	a := r.adm
	seq := j.it.seq
	a.mu.Lock()
	delete(a.admitted, seq)
	a.mu.Unlock()
	if a.gate != nil {
		a.gate.Finished(res.PeakRSS)
	}
	r.mu.Lock()
	r.wakeLocked() // a held job may fit now
	r.mu.Unlock()

	e := admit.End{ExitCode: res.ExitCode, Signal: res.Signal, Stopped: res.Stopped || timedOut}
	now := int64(-1)
	if r.oom.read != nil && e.Failed() && !e.Stopped && res.Cause == event.CauseNone {
		e.GroupGone = groupGone(res.PID)
		base := a.tracker.Base(int(seq))
		if res.Signal == int(syscall.SIGKILL) || res.ExitCode == 128+int(syscall.SIGKILL) {
			// The counter may lag the kill a little: re-read (oomkill.Rose).
			r.oom.rose(base)
		}
		now = r.oom.kills()
	}
	at := a.tracker.Ended(int(seq), now, e)
	if !at.OOM || res.Cause != event.CauseNone {
		return false
	}
	v := r.oomVerdict(seq, len(at.Candidates)-1)
	r.log.Warn("job OOM-killed", "seq", seq, "attempt", j.n, "why", at.Reason, "then", v.Reason)
	return true
}

// oomVerdict counts one OOM kill of job seq and applies the re-queue rule:
// others is how many other jobs ran while the counter rose (the other
// candidates of the attribution). The first kill is always
// re-queued (the kill may have been caused by a process that is not a
// job); a later one fails the job when it ran alone or was the bound's.
func (r *Runner) oomVerdict(seq int64, others int) admit.Verdict {
	a := r.adm
	a.mu.Lock()
	defer a.mu.Unlock()
	a.kills[seq]++
	k := a.kills[seq]
	rule := admit.OOMRetry{MaxKills: admit.DefaultOOMAttempts}
	if a.gate != nil {
		rule = a.gate.OOMRetry()
	}
	v := rule.Decide(admit.OOMKill{Kills: k, Others: others})
	if !v.Requeue && k == 1 {
		v = admit.Verdict{Requeue: true, Reason: "first OOM kill: re-queued once (" + v.Reason + ")"}
	}
	if v.Requeue {
		delete(a.verdicts, seq)
	} else {
		a.verdicts[seq] = v.Reason
	}
	return v
}

// oomRequeue reports whether the OOM-killed job j runs again without it
// counting against Retries.
func (r *Runner) oomRequeue(j *job) bool {
	a := r.adm
	a.mu.Lock()
	defer a.mu.Unlock()
	_, failed := a.verdicts[j.it.seq]
	return a.kills[j.it.seq] > 0 && !failed
}

// oomErr is the error of a job whose last attempt was OOM-killed: it
// wraps ErrOOMKilled and says why it was not re-queued.
func (r *Runner) oomErr(j *job) error {
	a := r.adm
	a.mu.Lock()
	why := a.verdicts[j.it.seq]
	a.mu.Unlock()
	if why == "" {
		return ErrOOMKilled
	}
	return fmt.Errorf("%w: %s", ErrOOMKilled, why)
}

// memoryBound says, for the run's summary, how far memory bound the number
// of jobs; "" when it never did (or without memory admission).
func (r *Runner) memoryBound() string {
	if r.adm.gate == nil {
		return ""
	}
	st := r.adm.gate.Stats()
	// Slow start holds jobs before anything is known of their memory:
	// that is caution, not memory binding (it never follows a peak).
	if st.BoundDecisions == 0 || st.Bound.Rule == admit.RuleSlowStart {
		return ""
	}
	return st.String()
}
