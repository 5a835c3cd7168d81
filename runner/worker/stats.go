package worker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/ration-run/ration/internal/adapt"
	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/event"
)

// Stats is a snapshot of a pool's counters.
type Stats struct {
	Size     int // the number of workers wanted now
	Live     int // workers running and not retiring
	Busy     int // workers running a task
	Retiring int // workers finishing their last task

	Starts       int64 // worker processes started
	Replacements int64 // workers started to replace a broken one
	Retired      int64 // workers retired on purpose (shrink, recycling, recreation, close)
	Recycled     int64 // of those, retired by MaxTasks or MaxRSS
	Recreations  int64 // systemic breakages that recreated the pool
	Breaks       map[event.Cause]int64

	Succeeded   int64
	Failed      int64
	Quarantined int64
	Stopped     int64 // tasks whose context ended after a worker took them (their owner stopped them)
	Retries     int64 // re-dispatches after a break

	// TaskNoun is what String calls the tasks it counts (one per Pool.Run
	// call); "" means "tasks". An owner whose tasks are something else
	// names them: in ration run --worker each task is one attempt of a job
	// (--retries runs a failed job again), so workerexec says "job
	// attempts", and the counts do not read as jobs beside the runner's.
	TaskNoun string

	// Adapt is the concurrency controller's snapshot. The pool has no
	// controller of its own (whoever resizes it owns one: the runner);
	// Pool.Stats leaves it zero, and String reports it when it is set.
	Adapt adapt.Stats
}

// String summarizes s in one line for the end-of-run summary (stopped
// tasks only when there are some; "tasks" is TaskNoun), e.g.
//
//	workers: 6 started, 2 replaced, 1 recreation, breaks: oom 2; tasks: 49 succeeded, 0 failed, 1 quarantined; concurrency 2 (limit 4): systemic OOM breakage at 4 jobs: halved to 2 (will grow back to at most 3)
func (s Stats) String() string {
	var b strings.Builder
	plural := func(n int64, one, many string) string {
		if n == 1 {
			return one
		}
		return many
	}
	fmt.Fprintf(&b, "workers: %d started, %d replaced, %d %s", s.Starts, s.Replacements, s.Recreations,
		plural(s.Recreations, "recreation", "recreations"))
	if s.Recycled > 0 {
		fmt.Fprintf(&b, ", %d recycled", s.Recycled)
	}
	if len(s.Breaks) > 0 {
		b.WriteString(", breaks:")
		for _, c := range slices.Sorted(maps.Keys(s.Breaks)) {
			fmt.Fprintf(&b, " %s %d", c, s.Breaks[c])
		}
	}
	noun := s.TaskNoun
	if noun == "" {
		noun = "tasks"
	}
	fmt.Fprintf(&b, "; %s: %d succeeded, %d failed, %d quarantined", noun, s.Succeeded, s.Failed, s.Quarantined)
	if s.Stopped > 0 {
		fmt.Fprintf(&b, ", %d stopped", s.Stopped)
	}
	fmt.Fprintf(&b, "; concurrency %d", s.Size)
	if s.Adapt.Limit == 0 {
		return b.String()
	}
	if s.Adapt.Limit != s.Size {
		fmt.Fprintf(&b, " (limit %d)", s.Adapt.Limit)
	}
	if s.Adapt.LearnedMemPerJob > 0 {
		fmt.Fprintf(&b, ", learned memory per job %s (p95 of %d)", limits.FormatSize(s.Adapt.LearnedMemPerJob), s.Adapt.Samples)
	}
	if s.Adapt.Reason != "" && s.Adapt.Size != s.Adapt.Limit {
		b.WriteString(": " + s.Adapt.Reason)
	}
	return b.String()
}

// Stats returns a snapshot of the pool's counters (Adapt zero).
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.st
	s.Breaks = make(map[event.Cause]int64, len(p.st.Breaks))
	for k, v := range p.st.Breaks {
		s.Breaks[k] = v
	}
	s.Size = p.size
	s.Live, s.Busy, s.Retiring = 0, 0, 0
	for w := range p.workers {
		if w.retiring {
			s.Retiring++
		} else {
			s.Live++
		}
		if w.busy {
			s.Busy++
		}
	}
	return s
}

// WorkerInfo describes one worker process of a pool.
type WorkerInfo struct {
	Slot     int
	PID      int    // 0 while the process is starting
	Busy     bool   // running a task
	Input    string // the input of that task
	Seq      int64  // the Task.Seq of that task
	Retiring bool   // finishing its last task; never restarted
	Reason   string // why it is retiring
	// Since is when the worker took its task (busy), or else when it
	// finished its last one or started (idle), or was created (PID 0).
	Since time.Time
}

// Workers lists the pool's worker processes, ordered by slot, to show what
// every worker is doing (a hang is explained by the table).
func (p *Pool) Workers() []WorkerInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]WorkerInfo, 0, len(p.workers))
	for w := range p.workers {
		out = append(out, WorkerInfo{Slot: w.slot, PID: w.pid, Busy: w.busy, Input: w.input, Seq: w.seq,
			Retiring: w.retiring, Reason: w.why, Since: w.since})
	}
	slices.SortFunc(out, func(a, b WorkerInfo) int { return a.Slot - b.Slot })
	return out
}
