package memory

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// OOMRetry is the re-queue rule for an OOM-killed job (rules 2 and 3 of
// OOM kills in the package documentation).
type OOMRetry struct {
	// MaxKills is how many OOM kills make a job fail although it never
	// ran alone; values below 1 mean DefaultOOMAttempts.
	MaxKills int
}

// OOMKill describes one OOM kill of a job.
type OOMKill struct {
	// Kills counts the OOM kills of this job so far, this one included.
	Kills int
	// Others is the number of other jobs that ran when it was killed
	// (when its end was seen). 0: it ran alone, and cannot fit.
	Others int
}

// Verdict is what to do with an OOM-killed job.
type Verdict struct {
	// Requeue is true when the job is to run again; it does not count
	// against --retries. False: the job fails, OOM-killed.
	Requeue bool
	Reason  string
}

// Decide applies the rule to one OOM kill: the job fails when it ran
// alone, or when this is kill number MaxKills; otherwise it is re-queued.
func (p OOMRetry) Decide(k OOMKill) Verdict {
	maxKills := p.MaxKills
	if maxKills < 1 {
		maxKills = DefaultOOMAttempts
	}
	switch {
	case k.Others <= 0:
		return Verdict{Reason: fmt.Sprintf("OOM-killed while running alone (kill %d): it does not fit in the memory limit", max(k.Kills, 1))}
	case k.Kills >= maxKills:
		return Verdict{Reason: fmt.Sprintf("OOM-killed %d times (the bound is %d), the last time beside %s", k.Kills, maxKills, plural(k.Others, "other job"))}
	}
	return Verdict{Requeue: true, Reason: fmt.Sprintf("OOM-killed beside %s (kill %d of at most %d): re-queued until fewer jobs run", plural(k.Others, "other job"), k.Kills, maxKills)}
}

// DecideFirstFree is Decide, except that a first kill always runs the job
// again, again saying how ("re-queued", "re-dispatched"): the kernel may
// have been pushed over the limit by a process that is not a job. The job
// runner and the worker pool apply this one rule.
func (p OOMRetry) DecideFirstFree(k OOMKill, again string) Verdict {
	v := p.Decide(k)
	if !v.Requeue && k.Kills == 1 {
		v = Verdict{Requeue: true, Reason: "first OOM kill: " + again + " once (" + v.Reason + ")"}
	}
	return v
}

// Below is the bound a re-queued job waits under ([Reruns.Wait]): half of
// the others that ran at its kill, rounded up, at least 1 (alone). So it
// runs again at the concurrency lowered in reaction to the kill, not
// beside as many jobs as the attempt that was killed.
func (OOMRetry) Below(others int) int { return max((others+1)/2, 1) }

// Ready reports whether a re-queued job may start again: only when the jobs
// running besides it (others) are fewer than the run's concurrency after
// the halving (size), i.e. when concurrency has actually dropped to the new
// size, counting running jobs rather than the target. size below 1 counts
// as 1. [Gate.Admit] must still say Start.
func (OOMRetry) Ready(others, size int) bool { return others < max(size, 1) }

// End is how one job attempt ended, for [Attribute].
type End struct {
	// ExitCode is the exit status (-1 when killed by a signal); Signal the
	// signal that killed the job's main process (0 when it exited).
	ExitCode int
	Signal   int
	// Stopped is true when the runner stopped the attempt itself
	// (--timeout, drain, kill): such an attempt is never OOM-killed.
	Stopped bool
	// GroupGone is true when no process of the job's process group was
	// left when the attempt ended (a member that lives on means the job's
	// processes were not all killed, whatever the counter did).
	GroupGone bool
	// OOMBefore and OOMAfter are the memory cgroup's oom_kill counter when
	// the attempt started and when its end was seen; -1 when unknown.
	OOMBefore, OOMAfter int64
}

// sigkill is SIGKILL's number on every Unix; this package holds policy
// only and does not import syscall.
const sigkill = 9

// Failed reports whether the attempt failed (a non-zero exit or a signal).
func (e End) Failed() bool { return e.ExitCode != 0 || e.Signal != 0 }

// Attribution is [Attribute]'s answer.
type Attribution struct {
	// OOM is true when the attempt counts as OOM-killed.
	OOM bool
	// Rise is how much the oom_kill counter rose during the attempt.
	Rise int64
	// Candidates lists the jobs (sequence numbers, sorted) that ran while
	// the counter rose, this one included: the kernel does not say which
	// one it killed. Set only when OOM is true.
	Candidates []int
	Reason     string
}

// Attribute applies the attribution rule (rule 1 of OOM kills in the
// package documentation) to the attempt of job seq that ended as e.
// others lists the other jobs that ran while the counter rose (see
// [Tracker]); they become the candidates with seq.
func Attribute(seq int, e End, others []int) Attribution {
	var a Attribution
	if e.OOMBefore >= 0 && e.OOMAfter >= 0 {
		a.Rise = max(e.OOMAfter-e.OOMBefore, 0)
	}
	switch {
	case e.Stopped:
		a.Reason = "stopped by the run"
	case !e.Failed():
		a.Reason = "succeeded"
	case e.OOMBefore < 0 || e.OOMAfter < 0:
		a.Reason = "the oom_kill counter is unknown"
	case a.Rise == 0:
		a.Reason = "the oom_kill counter did not rise during the attempt"
	case !e.GroupGone:
		a.Reason = "processes of its group are still alive"
	default:
		a.OOM = true
		a.Candidates = append([]int{seq}, others...)
		slices.Sort(a.Candidates)
		a.Candidates = slices.Compact(a.Candidates)
		how := fmt.Sprintf("exit %d", e.ExitCode)
		switch {
		case e.Signal == sigkill:
			how = "SIGKILL"
		case e.Signal != 0:
			how = fmt.Sprintf("signal %d", e.Signal)
		case e.ExitCode == 128+sigkill:
			how = "exit 137 (a shell reporting its child's SIGKILL)"
		}
		a.Reason = fmt.Sprintf("%s while the memory cgroup's oom_kill rose by %d (%d -> %d)", how, a.Rise, e.OOMBefore, e.OOMAfter)
		if len(a.Candidates) > 1 {
			a.Reason += "; jobs running then: " + joinInts(a.Candidates)
		}
	}
	return a
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// Tracker keeps the oom_kill counter at the start of each running attempt,
// so that [Attribute] can be applied at its end with the jobs that ran
// while the counter rose. It is safe for concurrent use; the zero value is
// ready to use.
type Tracker struct {
	mu      sync.Mutex
	running map[int]int64 // seq -> counter when its attempt started
}

// Started records that an attempt of job seq started when the counter was
// oomKills (-1: unknown). A job has one attempt running at a time; a
// second Started for seq replaces the first.
func (t *Tracker) Started(seq int, oomKills int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running == nil {
		t.running = map[int]int64{}
	}
	t.running[seq] = oomKills
}

// Base returns the counter recorded by Started for job seq's running
// attempt, -1 when none is recorded.
func (t *Tracker) Base(seq int) int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.running[seq]; ok {
		return c
	}
	return -1
}

// Ended forgets the attempt of job seq and attributes its end: e.OOMBefore
// is taken from Started (-1 when Started was not called), e.OOMAfter is
// the counter now. The candidates are seq and every job still running
// whose attempt started when the counter was lower than now, so that it
// ran while the counter rose.
func (t *Tracker) Ended(seq int, oomKills int64, e End) Attribution {
	t.mu.Lock()
	before, ok := t.running[seq]
	if !ok {
		before = -1
	}
	delete(t.running, seq)
	var others []int
	for s, c := range t.running {
		// A job that started before the counter reached its value now is
		// still running, so it ran when it rose.
		if c >= 0 && c < oomKills {
			others = append(others, s)
		}
	}
	t.mu.Unlock()
	e.OOMBefore, e.OOMAfter = before, oomKills
	return Attribute(seq, e, others)
}
