package progress

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ration-run/ration/runner/event"
)

// TestLineEnds: the last line counts the jobs as the run's summary does,
// however the run ended: a job the run stopped (an interrupt, --halt
// now) or never started is neither finished nor failed.
func TestLineEnds(t *testing.T) {
	for _, c := range []struct {
		name     string
		outcomes []event.Outcome
		want     []string
		not      []string
	}{
		{"interrupted", []event.Outcome{event.Stopped, event.Stopped, event.Stopped, event.Stopped,
			event.NotStarted, event.NotStarted, event.NotStarted, event.NotStarted, event.NotStarted},
			[]string{" 0/10 ", "0 failed", "4 stopped", "5 not started"}, []string{"ETA"}},
		{"halted", []event.Outcome{event.Succeeded, event.Failed, event.Stopped},
			[]string{" 2/10 ", "1 failed", "1 stopped"}, []string{"not started", "ETA"}},
		{"all failed", []event.Outcome{event.Failed, event.Failed, event.Quarantined, event.Failed, event.Failed,
			event.Failed, event.Failed, event.Failed, event.Failed, event.Failed},
			[]string{" 10/10 100%", "10 failed", "ETA 0s"}, []string{"stopped", "not started"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var term bytes.Buffer
			b := New(&term, Options{Terminal: true, Total: 10})
			for _, o := range c.outcomes {
				if o != event.NotStarted {
					b.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
				}
				b.Observe(event.Event{Kind: event.JobFinished, Outcome: o})
			}
			b.Finish()
			last := screen(term.String())[0]
			for _, w := range c.want {
				if !strings.Contains(last, w) {
					t.Errorf("last line %q lacks %q", last, w)
				}
			}
			for _, w := range c.not {
				if strings.Contains(last, w) {
					t.Errorf("last line %q holds %q", last, w)
				}
			}
			if !strings.Contains(last, " 0 running") {
				t.Errorf("last line %q: jobs still running", last)
			}
		})
	}
}

// TestLineUnknownTotalDone: without a total, "done" is what the summary
// calls done, the jobs that succeeded.
func TestLineUnknownTotalDone(t *testing.T) {
	var term bytes.Buffer
	b := New(&term, Options{Terminal: true, Total: -1})
	for _, o := range []event.Outcome{event.Succeeded, event.Failed, event.Stopped} {
		b.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
		b.Observe(event.Event{Kind: event.JobFinished, Outcome: o})
	}
	b.Finish()
	if last := screen(term.String())[0]; !strings.HasPrefix(last, "ration: 1 done, 1 failed, 1 stopped,") {
		t.Errorf("last line %q, want 1 done, 1 failed, 1 stopped", last)
	}
}
