package runner

import (
	"strings"
	"testing"
)

// TestSummaryCallsStoppedJobsStopped: the jobs the run stopped (an
// interrupt, --halt now) are "stopped" in the logs ("job stopped"), the
// metrics (ration_jobs_stopped_total) and the interrupt notice; the
// summary line called them "killed".
func TestSummaryCallsStoppedJobsStopped(t *testing.T) {
	s := Summary{Succeeded: 3, Failed: 1, Killed: 2, NotStarted: 4, InputDone: true}.String()
	if !strings.HasPrefix(s, "3 done, 1 failed, 2 stopped, 4 not started, 0 skipped in 0s") || strings.Contains(s, "killed") {
		t.Errorf("summary %q, want 3 done, 1 failed, 2 stopped, 4 not started", s)
	}
}

// TestSummaryOneJob: a run at one job at a time says "1 job", not "1 jobs".
func TestSummaryOneJob(t *testing.T) {
	for jobs, want := range map[int]string{1: "; 1 job (", 4: "; 4 jobs ("} {
		if s := (Summary{Jobs: jobs, JobsReason: "jobs=x", InputDone: true}).String(); !strings.Contains(s, want) {
			t.Errorf("summary %q, want %q", s, want)
		}
	}
}
