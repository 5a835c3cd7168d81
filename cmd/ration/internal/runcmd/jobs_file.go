package runcmd

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/ration-run/ration/limits"
	"github.com/ration-run/ration/runner/event"
)

// jobsFile is -j FILE while running: as GNU parallel, the file is read
// again whenever a job ends and the file was modified since it was last
// read, and the run is resized to the new value (jobs running go on when
// it shrinks).
type jobsFile struct {
	path   string
	opts   limits.Options
	runner *runnerRef
	warn   func(string)

	mu    sync.Mutex
	mtime time.Time
}

// Observe re-reads the file after a job ended.
func (j *jobsFile) Observe(e event.Event) {
	if e.Kind != event.JobFinished {
		return
	}
	st, err := os.Stat(j.path)
	if err != nil {
		return
	}
	j.mu.Lock()
	changed := st.ModTime() != j.mtime
	j.mtime = st.ModTime()
	j.mu.Unlock()
	if !changed {
		return
	}
	spec, err := readJobsFile(j.path)
	if err != nil {
		j.warn(fmt.Sprintf("-j %s: %v (the number of jobs is unchanged)", j.path, err))
		return
	}
	o := j.opts
	o.Jobs = spec
	d, err := limits.Decide(o)
	if err != nil {
		j.warn(fmt.Sprintf("-j %s: %v (the number of jobs is unchanged)", j.path, err))
		return
	}
	if r := j.runner.p.Load(); r != nil {
		r.Resize(d.Jobs, fmt.Sprintf("-j %s changed: %s", j.path, d.Reason))
	}
}
