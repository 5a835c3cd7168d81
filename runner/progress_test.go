package runner

import (
	"strings"
	"testing"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

func TestProgress(t *testing.T) {
	var b syncBuf
	p := NewProgress(&b, 4)
	p.Observe(event.Event{Kind: event.JobSkipped})
	for _, o := range []event.Outcome{event.Succeeded, event.Failed} {
		p.Observe(event.Event{Kind: event.JobStarted, Attempt: 1})
		p.Observe(event.Event{Kind: event.JobFinished, Outcome: o})
	}
	p.Finish()
	out := b.String()
	last := out[strings.LastIndexByte(strings.TrimSuffix(out, "\n"), '\r')+1:]
	for _, want := range []string{"2/3", "67%", "1 failed", "0 running", "1 skipped", "ETA"} {
		if !strings.Contains(last, want) {
			t.Errorf("final line %q lacks %q", last, want)
		}
	}
	// Unknown total: counts only.
	b = syncBuf{}
	p = NewProgress(&b, -1)
	p.Observe(event.Event{Kind: event.JobFinished, Outcome: event.Succeeded})
	p.Finish()
	if s := b.String(); strings.Contains(s, "ETA") || !strings.Contains(s, "1 done") {
		t.Errorf("unknown total: %q", s)
	}
}

func TestHaltSoon(t *testing.T) {
	sum, _, rec, _ := run(t, Config{Command: []string{"sh", "-c", `sleep 0.2; [ "$1" -gt 2 ]`, "sh"},
		Input: input.Args(nums(40)), Jobs: 2, Halt: Halt{When: HaltSoon, On: HaltOnFail, Count: 2}})
	// Jobs 1 and 2 fail together; the ones already running finish.
	if !sum.Halted || sum.Failed != 2 || sum.Killed != 0 || len(rec.Kind(event.JobStarted)) > 4 {
		t.Errorf("summary %+v, %d started", sum, len(rec.Kind(event.JobStarted)))
	}
}
