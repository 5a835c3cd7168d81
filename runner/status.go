package runner

import (
	"github.com/ration-run/ration/pool"
	"github.com/ration-run/ration/runner/event"
)

// Status is what the SIGUSR1 report shows, for a report of the caller's
// own making (WriteStatus writes the text one): the run's counts so far,
// its pool, and the running jobs.
type Status struct {
	Succeeded, Failed, Killed int64
	Pool                      pool.Stats
	Running                   []event.Row
}

// Status returns the run's status now.
func (r *Runner) Status() Status {
	return Status{Succeeded: r.succeeded.Load(), Failed: r.failed.Load(), Killed: r.killed.Load(),
		Pool: r.PoolStats(), Running: r.Rows()}
}
