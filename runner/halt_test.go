package runner

import (
	"testing"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

// TestHaltSoon moved here unchanged from progress_test.go when the
// progress bar moved to internal/progress.
func TestHaltSoon(t *testing.T) {
	sum, _, rec, _ := run(t, Config{Command: []string{"sh", "-c", `sleep 0.2; [ "$1" -gt 2 ]`, "sh"},
		Input: input.Args(nums(40)), Jobs: 2, Halt: Halt{When: HaltSoon, On: HaltOnFail, Count: 2}})
	// Jobs 1 and 2 fail together; the ones already running finish.
	if !sum.Halted || sum.Failed != 2 || sum.Killed != 0 || len(rec.Kind(event.JobStarted)) > 4 {
		t.Errorf("summary %+v, %d started", sum, len(rec.Kind(event.JobStarted)))
	}
}

// TestHaltStatusOfSignal: a halt by a job killed by a signal exits 128
// plus the signal.
func TestHaltStatusOfSignal(t *testing.T) {
	if got := (Halt{When: HaltNow, On: HaltOnFail, Count: 1}).status(1, 0, 0, 9); got != 137 {
		t.Errorf("a job killed by signal 9: status %d, want 137", got)
	}
}
