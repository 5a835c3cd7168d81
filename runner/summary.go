package runner

import (
	"fmt"
	"time"

	"github.com/ration-run/ration/limits"
)

// RunningJob describes a job that is running now.
type RunningJob struct {
	Slot     int
	PID      int // 0 until the process started
	Seq      int64
	Input    string
	Attempt  int
	Start    time.Time
	LastLine string // the last line the job wrote, "" if none
}

// Summary is what a run did. Succeeded+Failed+Killed+NotStarted is the
// number of jobs pulled from the input (in this shard, not skipped).
type Summary struct {
	Succeeded int64 // ended with status 0
	Failed    int64 // ended otherwise on their own, or timed out
	Killed    int64 // stopped by the run (interrupt, --halt now)
	// Quarantined counts the failed jobs (included in Failed) that an
	// executor set aside because they broke too many workers.
	Quarantined int64
	// OOMRetried counts the jobs retried because they were OOM-killed.
	OOMRetried int64
	NotStarted int64 // pulled from the input, never started
	Skipped    int64 // recorded in the joblog (--resume)

	Wall       time.Duration
	Jobs       int    // jobs at once, at the start
	JobsReason string // why
	// PeakRSSMax and PeakRSSP95 are the largest and the 95th percentile
	// (estimated within 25%) of the jobs' peak RSS in bytes.
	PeakRSSMax, PeakRSSP95 int64

	// MemoryBound says when the memory admission (Config.Memory) held
	// jobs, i.e. memory and not the CPU policy bound the number of jobs,
	// and by how much: "memory bound 2 of 4 jobs: 180 MiB headroom / 85
	// MiB per job (held 12 starts)". "" when memory never bound them.
	MemoryBound string

	Interrupted bool // Drain, Kill or the context stopped the run
	Halted      bool // --halt stopped the run
	// InputDone reports that the input was read to its end.
	InputDone bool
}

// String returns the one-line summary printed at the end of a run.
func (s Summary) String() string {
	line := fmt.Sprintf("%d done, %d failed", s.Succeeded, s.Failed)
	if s.Quarantined > 0 {
		line += fmt.Sprintf(" (%d quarantined)", s.Quarantined)
	}
	if s.OOMRetried > 0 {
		line += fmt.Sprintf(", %d retried after an OOM kill", s.OOMRetried)
	}
	if s.Killed > 0 {
		line += fmt.Sprintf(", %d stopped", s.Killed) // "job stopped" in the log, as in the metrics
	}
	if s.NotStarted > 0 || !s.InputDone {
		line += fmt.Sprintf(", %d not started", s.NotStarted)
		if !s.InputDone {
			line += " (and the unread input)"
		}
	}
	jobs := "jobs"
	if s.Jobs == 1 {
		jobs = "job"
	}
	line += fmt.Sprintf(", %d skipped in %s; %d %s", s.Skipped, s.Wall.Round(time.Millisecond), s.Jobs, jobs)
	if s.JobsReason != "" {
		line += " (" + s.JobsReason + ")"
	}
	if s.PeakRSSMax > 0 {
		line += fmt.Sprintf("; peak RSS max %s, p95 %s", limits.FormatSize(s.PeakRSSMax), limits.FormatSize(s.PeakRSSP95))
	}
	if s.MemoryBound != "" {
		line += "; " + s.MemoryBound
	}
	return line
}
