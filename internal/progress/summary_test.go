package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/ration-run/ration/runner"
)

// issueSummary is the summary of `seq 50 | ration run false` on a 2-CPU
// host: 190 characters off a terminal.
var issueSummary = runner.Summary{Failed: 50, Wall: time.Millisecond, Jobs: 4, InputDone: true,
	JobsReason: "jobs=4: 2 host CPUs (affinity 2, cpuset 0-1), no CPU quota in cgroup v1 /; 2 x 2.00 = 4.00",
	PeakRSSMax: 13 << 20, PeakRSSP95: 12 << 20}

func TestSummaryLine(t *testing.T) {
	const prefix = len("ration: ")
	for _, c := range []struct {
		name    string
		s       runner.Summary
		more    string
		columns int
		want    string
	}{
		{"not a terminal", issueSummary, "", 0, issueSummary.String()},
		{"not a terminal, more", issueSummary, "workers: 4 started", 0, issueSummary.String() + "; workers: 4 started"},
		{"80 columns", issueSummary, "", 80, "0 done, 50 failed in 1ms; 4 jobs; peak RSS max 13 MiB, p95 12 MiB"},
		{"40 columns", issueSummary, "", 40, "0 done, 50 failed in 1ms"},
		{"200 columns", issueSummary, "", 200, "0 done, 50 failed in 1ms; 4 jobs (" + issueSummary.JobsReason + "); peak RSS max 13 MiB, p95 12 MiB"},
		{"memory bound before peak RSS", runner.Summary{Succeeded: 9, Wall: 2 * time.Second, Jobs: 1, InputDone: true,
			MemoryBound: "memory bound 2 of 4 jobs", PeakRSSMax: 1 << 30, PeakRSSP95: 1 << 30}, "", 80,
			"9 done, 0 failed in 2s; 1 job; memory bound 2 of 4 jobs"},
		{"interrupted, counts whole", runner.Summary{Killed: 4, NotStarted: 5, Skipped: 3, Wall: 20 * time.Second, Jobs: 4},
			"", 40, "0 done, 0 failed, 4 stopped, 5 not started (and the unread input), 3 skipped in 20s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := SummaryLine(c.s, c.more, prefix, c.columns)
			if got != c.want {
				t.Errorf("SummaryLine(%d columns) =\n%q, want\n%q", c.columns, got, c.want)
			}
			if c.columns > 0 && prefix+len(got) >= c.columns && !strings.HasPrefix(c.name, "interrupted") {
				t.Errorf("%d characters on a %d-column terminal", prefix+len(got), c.columns)
			}
		})
	}
}

// TestSummaryCountsAsString: the counts on a terminal are those of
// Summary.String, in its words.
func TestSummaryCountsAsString(t *testing.T) {
	for _, s := range []runner.Summary{
		{Succeeded: 3, Failed: 1, Killed: 2, NotStarted: 4, Skipped: 5, Wall: 1500 * time.Millisecond},
		{Succeeded: 1, Failed: 7, Quarantined: 2, OOMRetried: 3, Skipped: 1, InputDone: true, Wall: time.Minute},
		{Skipped: 1, InputDone: true},
	} {
		if got, full := summaryCounts(s), s.String(); !strings.HasPrefix(full, got+";") {
			t.Errorf("counts %q are not the start of %q", got, full)
		}
	}
}
