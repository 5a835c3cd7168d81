// Package event defines what a run reports about its jobs, workers and pool,
// as one stream of values that the progress bar, logs, metrics and the stall
// watchdog all observe.
//
// Observers are called synchronously from the goroutine where the thing
// happened, never while the runner holds an internal lock, so an observer may
// call back into the runner (for example to read the table of running jobs).
// They must be safe for concurrent use and return quickly: a slow observer
// slows the run, it never deadlocks it.
//
// It imports the standard library only, so that every package of the module
// may import it.
package event

import "time"

// Kind says what happened.
type Kind int

// The kinds of event, in the order they happen to a job or worker.
const (
	_ Kind = iota
	// JobStarted: a job's process (or its task on a worker) started.
	JobStarted
	// JobFinished: a job ended for good; Outcome says how. Every job that
	// starts ends with exactly one JobFinished, whatever its retries.
	JobFinished
	// JobRetried: an attempt failed and the job will run again.
	JobRetried
	// JobSkipped: a job was not run because the joblog records it as done
	// (--resume). Inputs of other shards are not reported: there may be millions.
	JobSkipped
	// WorkerStarted: a long-lived worker process started.
	WorkerStarted
	// WorkerBroken: a worker process broke; Cause says why.
	WorkerBroken
	// WorkerRetired: a worker was retired on purpose (shrink, recycling,
	// the pool's end: Reason is then ReasonPoolClosed).
	WorkerRetired
	// PoolResized: the pool's concurrency changed to Size; Reason says why.
	PoolResized
	// PoolRecreated: systemic breakage made the pool recreate itself.
	PoolRecreated
)

// ReasonPoolClosed is the Reason of the WorkerRetired event of every
// worker still running when its pool is closed: the normal end of a run,
// which logs report at debug level only.
const ReasonPoolClosed = "pool closed"

var kindNames = [...]string{"", "job_started", "job_finished", "job_retried", "job_skipped",
	"worker_started", "worker_broken", "worker_retired", "pool_resized", "pool_recreated"}

// String returns the snake_case name of k, as used in logs.
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Outcome is how a job ended.
type Outcome int

// The outcomes of a job.
const (
	_ Outcome = iota
	Succeeded
	Failed
	// Quarantined: the job broke --max-breaks workers and was set aside.
	Quarantined
	// NotStarted: the run was interrupted before the job started.
	NotStarted
	// Stopped: the run stopped the job before it ended on its own (an
	// interrupt, --halt now). It is neither a success nor a failure: it
	// is not in the joblog, and --resume runs it again.
	Stopped
)

var outcomeNames = [...]string{"", "succeeded", "failed", "quarantined", "not_started", "stopped"}

// String returns the snake_case name of o.
func (o Outcome) String() string {
	if o > 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// Cause names why a worker broke or a job attempt failed abnormally.
type Cause string

// The causes of breakage. They are metric label values, so they never change.
const (
	CauseNone     Cause = ""
	CauseOOM      Cause = "oom"      // SIGKILL together with a rise of the cgroup's oom_kill counter
	CauseSignal   Cause = "signal"   // killed by another signal
	CauseExit     Cause = "exit"     // exited (a worker must not exit while it has a task)
	CauseProtocol Cause = "protocol" // wrote something that is not the protocol
	CauseTimeout  Cause = "timeout"  // exceeded --timeout
)

// Event is one thing that happened during a run. Fields that do not apply to
// the Kind are zero.
type Event struct {
	Kind Kind
	Time time.Time

	Seq     int64  // job number, 1-based in input order ({#}); 0 for pool events
	Slot    int    // worker slot ({%}), 1-based
	PID     int    // process id of the job or worker
	Input   string // the job's input, as read
	Attempt int    // 1 for the first attempt

	QueueWait time.Duration // input read -> job started (JobStarted)
	Duration  time.Duration // run time of the attempt (JobFinished, JobRetried)
	ExitCode  int           // exit status, -1 when killed by a signal
	Signal    int           // signal number that ended the job, 0 if none
	PeakRSS   int64         // peak resident set size in bytes, from rusage
	Outcome   Outcome       // JobFinished
	Cause     Cause         // WorkerBroken, and JobFinished/JobRetried when abnormal
	Err       error         // the error, if any, as the user should read it
	// Alone is set on a JobRetried or JobFinished with Cause OOM when no
	// other job ran when the attempt was OOM-killed: fewer jobs at once
	// would not have saved it, and on JobFinished it means that the job
	// does not fit in the memory limit at all.
	Alone bool

	Size   int    // pool size after PoolResized/PoolRecreated
	Reason string // why the pool changed, in words
}

// Observer receives events. See the package doc for the rules it must follow.
type Observer interface {
	Observe(Event)
}

// Func adapts a function to an Observer.
type Func func(Event)

// Observe calls f(e).
func (f Func) Observe(e Event) { f(e) }

// Multi fans an event out to several observers, in order. Nil entries are
// skipped, so optional observers can be listed unconditionally.
type Multi []Observer

// Observe passes e to every observer in m.
func (m Multi) Observe(e Event) {
	for _, o := range m {
		if o != nil {
			o.Observe(e)
		}
	}
}
