package pool

import "time"

// TaskInfo describes one task to the hooks set by [OnStart] and [OnFinish].
type TaskInfo struct {
	// Slot is the task's slot, see [Slot].
	Slot int
	// Wait is how long the task waited for a free worker before it started:
	// in the pool's queue, or with its submitter blocked on a full queue (0
	// when a worker was idle, and for inline tasks).
	Wait time.Duration
	// Run is the task's run time (0 for OnStart).
	Run time.Duration
	// Err is the task's error (nil for OnStart); a panic is a *PanicError.
	Err error
	// Inline reports whether the task ran beside the pool's workers
	// rather than on one: inline on a submitting task's goroutine because
	// no worker was free (see the package documentation), or, rarely, taken
	// from a closed pool's queue for a submitter that had just queued it.
	Inline bool
}
