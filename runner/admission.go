package runner

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/ration-run/ration/internal/memory"
	"github.com/ration-run/ration/runner/event"
)

// admission applies package memory to a run: before each attempt starts it
// asks the Gate whether the memory the jobs share has room for one more
// (Config.Memory; without it every attempt starts at once), and when an
// attempt ends it attributes an OOM kill (also through a shell, exit 137)
// and decides whether the OOM-killed job runs again (memory.OOMRetry).
//
// A job held for memory holds its pool slot (the CPU policy's bound) but
// is not counted as running: the Gate counts only the attempts it let
// start, and the decisions are taken one at a time, so each one sees the
// starts before it.
type admission struct {
	gate    *memory.Gate    // nil: no memory admission
	sampler *memory.Sampler // nil with gate
	proc    string          // the /proc to read jobs' RSS from
	tracker memory.Tracker

	decide sync.Mutex // one decision at a time, held across the cgroup reads

	// The latest readings (under decide): the cgroup's at fresh (dirty:
	// an attempt ended since), the jobs' RSS by process group at rssAt.
	fresh   time.Time
	dirty   bool
	reading memory.Reading
	rss     map[int]int64
	rssAt   time.Time

	mu       sync.Mutex
	admitted map[int64]bool    // attempts running now, by job
	kills    map[int64]int     // OOM kills so far, by job
	verdicts map[int64]string  // why an OOM-killed job was not re-queued
	below    map[int64]int     // a re-queued job waits for fewer others than this
	seen     map[int64]int64   // the largest RSS sampled of a running attempt
	oomPeaks map[int64][]int64 // the peaks the Gate learnt of a job's OOM-killed attempts
}

func newAdmission(cfg Config) *admission {
	a := &admission{proc: "/proc", admitted: map[int64]bool{}, kills: map[int64]int{}, verdicts: map[int64]string{},
		below: map[int64]int{}, seen: map[int64]int64{}, oomPeaks: map[int64][]int64{}}
	if cfg.Memory != nil {
		a.sampler = cfg.Memory
		a.gate = memory.New(cfg.Admit)
	}
	return a
}

// waitToStart waits until attempt j.n may start. An attempt after an OOM
// kill first waits for concurrency to drop (waitForRoom: fewer others
// than half of those that ran at the kill, and than the pool size), and
// while one waits so, no new job starts: the drop must happen. Then every
// attempt waits for the memory admission. It returns false when the run
// stops first. The attempt counts as running from its return on;
// attemptEnded ends that.
func (r *Runner) waitToStart(ctx context.Context, j *job) bool {
	a := r.adm
	if j.n > 1 && j.cause == event.CauseOOM {
		if !r.waitForRoom(ctx, j.rj, a.readyBelow(j.it.seq)) {
			return false
		}
	} else if !r.waitReruns(ctx, j.rj) {
		return false
	}
	if !r.hooks.startGate(ctx, j) {
		return false
	}
	if a.gate == nil {
		a.started(j.it.seq, r.oom.base())
		return true
	}
	again := false
	return r.waitUntil(ctx, j.rj, func() bool {
		// Admission reads files and /proc: not under r.mu.
		size := r.size
		r.mu.Unlock()
		defer r.mu.Lock()
		d := r.admitOne(j.it.seq, size, again)
		if !d.Start && !again {
			r.log.Debug("job held for memory", "seq", j.it.seq, "rule", string(d.Rule), "reason", d.Reason)
		}
		again = !d.Start
		return d.Start
	})
}

// admitOne asks the Gate about job seq with the memory cgroup and the
// running attempts' RSS read now; a Start counts the attempt as running
// before the next question is asked.
func (r *Runner) admitOne(seq int64, size int, again bool) memory.Decision {
	a := r.adm
	a.decide.Lock()
	defer a.decide.Unlock()
	seqs, pids := r.admittedPIDs()
	a.sample(pids, time.Now())
	running := make([]int64, len(pids))
	a.mu.Lock()
	for i, pid := range pids {
		running[i] = a.rss[pid] // 0: unknown (a job started since), counted at its peak
		if pid > 0 && a.admitted[seqs[i]] {
			a.seen[seqs[i]] = max(a.seen[seqs[i]], running[i])
		}
	}
	a.mu.Unlock()
	reading := a.reading
	d := a.gate.Admit(memory.Request{Reading: reading, Running: running, Limit: size, Again: again})
	if d.Start {
		a.started(seq, r.oom.base())
	}
	return d
}

// How long readings serve admission decisions. Held jobs ask again every
// 100 ms and whenever an attempt ends, and a run of tiny jobs asks
// thousands of times a second: the cgroup's few small files are re-read
// when the reading is sampleMaxAge old, or dirtyMaxAge old once an attempt
// ended (its memory was freed); the jobs' RSS, a scan of /proc, at most
// every sampleMaxAge. A stale RSS only makes the decision cautious: a job
// missing from the scan counts at the peak estimate, and memory a job
// gained since counts as not the jobs'.
const (
	sampleMaxAge = 100 * time.Millisecond
	dirtyMaxAge  = 5 * time.Millisecond
)

// sample refreshes the reading of the memory cgroup and the RSS of the
// process groups pids as they are due (under decide).
func (a *admission) sample(pids []int, now time.Time) {
	age := now.Sub(a.fresh)
	if a.fresh.IsZero() || age > sampleMaxAge || (a.dirty && age > dirtyMaxAge) {
		reading, _, err := a.sampler.Sample()
		if err != nil {
			reading = memory.Reading{} // unknown: memory holds nothing
		}
		a.reading, a.fresh, a.dirty = reading, now, false
	}
	if a.reading.Limit <= 0 || len(pids) == 0 {
		a.rss, a.rssAt = nil, time.Time{}
		return
	}
	if a.rssAt.IsZero() || now.Sub(a.rssAt) > sampleMaxAge {
		// Each job runs in its own process group (its PID's): its RSS is
		// the group's, a shell's children included. Only the processes
		// of the memory cgroup are read (see memory.GroupRSSOf); all of
		// /proc only when its process list cannot be read.
		procs, _ := a.procs()
		a.rss = memory.GroupRSSOf(a.proc, procs, pids)
		a.rssAt = now
		return
	}
	for _, pid := range pids {
		if _, ok := a.rss[pid]; !ok && pid > 0 {
			// Started since the scan: its leader's RSS until the next one.
			if n, err := memory.ProcessRSS(a.proc, pid); err == nil {
				a.rss[pid] = n
			}
		}
	}
}

// admittedPIDs returns the running attempts' jobs and the PID of each,
// 0 for one whose process has not started yet.
func (r *Runner) admittedPIDs() ([]int64, []int) {
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
	return seqs, pids
}

// procs returns the processes whose memory counts against the limit the
// jobs share: those of the memory cgroup the sampler reads (and below),
// or every process when there is no sampler or its list cannot be read.
func (a *admission) procs() ([]int, error) {
	if a.sampler != nil {
		if pids, err := a.sampler.Procs(); err == nil {
			return pids, nil
		}
	}
	return memory.ProcessIDs(a.proc)
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
// attributed (memory.Attribute): it reports whether the attempt was
// OOM-killed, and whether no other job ran then (alone). An OOM kill is
// counted for the job's re-queue decision (oomRequeue).
func (r *Runner) attemptEnded(j *job, res AttemptResult, timedOut bool) (oom, alone bool) {
	a := r.adm
	seq := j.it.seq
	a.mu.Lock()
	delete(a.admitted, seq)
	// The executor's peak (rusage, or a worker's) or the largest RSS seen
	// while it ran, whichever is larger: a worker's task reports no peak
	// unless sampled.
	peak := max(res.PeakRSS, a.seen[seq])
	delete(a.seen, seq)
	a.mu.Unlock()
	if a.gate != nil {
		a.gate.Finished(peak)
		a.decide.Lock()
		a.dirty = true
		a.decide.Unlock()
	}
	r.mu.Lock()
	r.wakeLocked() // a held job may fit now
	r.mu.Unlock()
	e := memory.End{ExitCode: res.ExitCode, Signal: res.Signal, Stopped: res.Stopped || timedOut}
	now := int64(-1)
	if r.oom.read != nil && e.Failed() && !e.Stopped && res.Cause == event.CauseNone {
		base := a.tracker.Base(int(seq))
		if res.Signal == int(syscall.SIGKILL) || res.ExitCode == 128+int(syscall.SIGKILL) {
			// The counter may lag the kill a little: re-read (memory.Rose).
			r.oom.rose(base)
		}
		now = r.oom.kills()
		// Only a rise makes the group matter, and looking may wait.
		e.GroupGone = now > base && a.groupGone(res.PID)
	}
	at := a.tracker.Ended(int(seq), now, e)
	if !at.OOM || res.Cause != event.CauseNone {
		a.mu.Lock()
		delete(a.oomPeaks, seq)
		a.mu.Unlock()
		return false, false
	}
	alone = len(at.Candidates) == 1
	// Config.OOMAloneFails takes the job's own peak as the measure that
	// it does not fit: a job that fits may also end "alone" when the job
	// that grew past the limit ended first (the candidates are the jobs
	// still running at this end), and then keeps its free re-queue.
	firstFree := !(r.cfg.OOMAloneFails && alone && a.gate != nil && a.gate.Outgrew(peak))
	v := r.oomVerdict(seq, len(at.Candidates)-1, firstFree)
	a.oomKilled(seq, peak, v.Requeue, alone)
	r.log.Warn("job OOM-killed", "seq", seq, "attempt", j.n, "why", at.Reason, "then", v.Reason)
	return true, alone
}

// oomKilled keeps the peak that the Gate learnt of job seq's OOM-killed
// attempt: a lower bound of the job's need while it is re-queued. When
// the job fails instead (not requeue) after a kill while no other job ran
// (alone), it does not fit in the memory limit at all: the Gate forgets
// its peaks, which, near the whole limit, would make every other job
// start alone as if it needed as much, although no job like it can run.
func (a *admission) oomKilled(seq, peak int64, requeue, alone bool) {
	if a.gate == nil {
		return
	}
	a.mu.Lock()
	peaks := append(a.oomPeaks[seq], peak)
	if requeue {
		a.oomPeaks[seq] = peaks
	} else {
		delete(a.oomPeaks, seq)
	}
	a.mu.Unlock()
	if !requeue && alone {
		a.gate.Forget(peaks...)
	}
}

// oomVerdict counts one OOM kill of job seq and applies the re-queue rule:
// others is how many other jobs ran when it was killed. With firstFree
// the first kill is always re-queued (the kill may have been caused by a
// process that is not a job; an executor that classified the kill itself
// has retried already); a later one fails the job when it ran alone or
// was the bound's. A re-queued job then waits for fewer other jobs than
// half of others (readyBelow).
func (r *Runner) oomVerdict(seq int64, others int, firstFree bool) memory.Verdict {
	a := r.adm
	a.mu.Lock()
	defer a.mu.Unlock()
	a.kills[seq]++
	k := a.kills[seq]
	rule := memory.OOMRetry{MaxKills: memory.DefaultOOMAttempts}
	if a.gate != nil {
		rule = a.gate.OOMRetry()
	}
	kill := memory.OOMKill{Kills: k, Others: others}
	v := rule.Decide(kill)
	if firstFree {
		v = rule.DecideFirstFree(kill, "re-queued")
	}
	if v.Requeue {
		delete(a.verdicts, seq)
		a.below[seq] = rule.Below(others)
	} else {
		a.verdicts[seq] = v.Reason
		delete(a.below, seq)
	}
	return v
}

// readyBelow is how few other jobs must run for the re-queued job seq to
// start again: half of those that ran at its kill (at least 1: alone).
func (a *admission) readyBelow(seq int64) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return max(a.below[seq], 1)
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
	if st.BoundDecisions == 0 || st.Bound.Rule == memory.RuleSlowStart {
		return ""
	}
	return st.String()
}
