package runner

import (
	"strings"
	"time"

	"github.com/ration-run/ration/pool"
	"github.com/ration-run/ration/runner/event"
)

// Status is what the SIGUSR1 report shows, for a report of the caller's
// own making (WriteStatus writes the text one): the run's counts so far,
// its pool, the running jobs, and the executor's own processes.
type Status struct {
	Succeeded, Failed, Killed int64
	Pool                      pool.Stats
	Running                   []event.Row
	// Workers is what an executor that is a StatusWriter writes about
	// its processes (ration run --worker: the workers), "" otherwise.
	Workers string
}

// Status returns the run's status now.
func (r *Runner) Status() Status {
	s := Status{Succeeded: r.succeeded.Load(), Failed: r.failed.Load(), Killed: r.killed.Load(),
		Pool: r.PoolStats(), Running: r.Rows()}
	if sw, ok := r.exec.(StatusWriter); ok {
		var b strings.Builder
		_ = sw.WriteStatus(&b, time.Now()) // a strings.Builder does not fail
		s.Workers = b.String()
	}
	return s
}
