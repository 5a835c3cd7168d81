package pool

import "sync/atomic"

// Stats is a snapshot of a pool's state and counters. Counters are
// cumulative since New. The fields are read one by one without stopping the
// pool, so a snapshot taken under load is not one instant (e.g. Completed
// may already include a task that Busy still counts).
type Stats struct {
	// Size is the target size, as last set by New or Resize.
	Size int
	// Workers is the number of workers, idle or busy. It differs from
	// Size while a shrink waits for busy workers to finish their task; once
	// the pool is closed it counts down as the workers leave, and it is 0
	// when Close has returned nil. An idle worker that has never run a task
	// holds no goroutine (see Goroutines).
	Workers int
	// Goroutines is the number of worker goroutines started and not yet
	// leaving, at most Workers. Workers start on demand, when a task finds
	// none idle (or a Resize finds submitters blocked), and then stay until
	// a shrink or Close, so Goroutines grows with the tasks run at once,
	// not with Size.
	Goroutines int
	// Busy is the number of tasks accepted and not yet finished, inline
	// ones included, minus the queued ones: a task is counted (here or in
	// Queued) by the time Go, TryGo or Map's hand-over returns, and until
	// just before its outcome is published (before Wait returns it or its
	// Result is delivered). A snapshot taken while a submission is being
	// attempted may be off by that one submission.
	Busy int
	// Queued is the number of accepted tasks waiting in the pool's queue
	// for a busy worker, at most the queue's length ([QueueSlack] unless
	// set with [Queue]; always 0 with Queue(0)), estimated as the
	// accepted tasks beyond the workers.
	Queued int
	// Waiting is the number of submissions waiting for a free worker: the
	// Queued tasks plus the submitters (Go callers and Map dispatchers)
	// blocked because the queue is full.
	Waiting int
	// Completed is the number of tasks finished, whatever their outcome.
	Completed int64
	// Failed is the number of finished tasks that returned an error
	// (panics included).
	Failed int64
	// Panics is the number of recovered panics in tasks and hooks.
	Panics int64
	// Inline is the number of tasks run beside the workers (see
	// TaskInfo.Inline): inline on a submitting task's goroutine because
	// the pool was full (nested submission), or taken from a closed
	// pool's queue for a submitter.
	Inline int64
	// QueueWait summarizes how long tasks waited for a free worker (queued,
	// or with their submitter blocked), per task (see TaskInfo.Wait).
	QueueWait Summary
	// Run summarizes task run times.
	//
	// Both summaries are exact when hooks are set, and while tasks run
	// longer than about 50 µs. For shorter tasks, reading the clock would
	// cost more than the task, so one in 64 tasks (per worker) and one in 64
	// submissions are measured, and Count is the number measured.
	Run Summary
}

// Stats returns a snapshot of the pool's statistics. It takes no lock and
// may be called at any time, from anywhere, including hooks and tasks.
func (p *Pool) Stats() Stats {
	want, live := p.want.Load(), p.live.Load()
	waiting := p.waiting.n.Load()
	// busy counts the tasks accepted for the workers, the queued ones
	// included, and the task of each submitter blocked on a full queue
	// (added before its send, so that offer never sees a worker idle that
	// is not); nested inline tasks are counted apart.
	accepted := max(p.st.busy.n.Load()-waiting, 0)
	queued := min(max(accepted-max(want, live), 0), int64(cap(p.tasks)))
	return Stats{
		Size:       int(want),
		Workers:    p.workerCount(),
		Goroutines: int(live),
		Busy:       int(accepted - queued + p.st.inlineRunning.n.Load()),
		Queued:     int(queued),
		Waiting:    int(waiting + queued),
		Completed:  p.st.completed.Load(),
		Failed:     p.st.failed.Load(),
		Panics:     p.st.panics.Load(),
		Inline:     p.st.inline.Load(),
		QueueWait:  p.st.wait.summary(),
		Run:        p.st.run.summary(),
	}
}

type stats struct {
	busy          zeroWaiter // accepted for the workers, not finished (queued included)
	inlineRunning zeroWaiter // nested inline tasks running (not in busy)
	completed     atomic.Int64
	failed        atomic.Int64
	panics        atomic.Int64
	inline        atomic.Int64
	wait, run     hist
}

func (s *stats) record(wait, run int64, err error, inline bool) {
	if wait >= 0 {
		s.wait.add(wait)
	}
	if run >= 0 {
		s.run.add(run)
	}
	if err != nil {
		s.failed.Add(1)
		if isPanic(err) {
			s.panics.Add(1)
		}
	}
	if inline {
		s.inline.Add(1)
	}
	s.completed.Add(1)
}

// workerCount is Stats.Workers: until Close, the workers not started yet
// count as idle ones.
func (p *Pool) workerCount() int {
	l := p.live.Load()
	if p.closed.Load() {
		return int(l)
	}
	return int(max(l, p.want.Load()))
}
