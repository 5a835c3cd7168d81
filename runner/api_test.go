package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ration-run/ration/runner/event"
	"github.com/ration-run/ration/runner/input"
)

// TestObserverPanicLosesNoJob checks that an Observer that panics (user
// code) neither orphans the job whose event it was given nor drops it from
// the Summary: Run still returns only once every started job ended, counts
// every pulled job, stops starting new ones and says why in its error.
func TestObserverPanicLosesNoJob(t *testing.T) {
	dir := t.TempDir()
	// Job 1 outlives the others, so that a Run that does not wait for it
	// returns before its file exists.
	script := `[ "$1" = 1 ] && sleep 1; touch "$0/$1"`
	var mu sync.Mutex
	finished := map[int64]event.Outcome{}
	r, err := New(Config{
		Command: []string{"sh", "-c", script, dir}, Jobs: 2, Input: input.Args(nums(4)),
		Observer: event.Func(func(e event.Event) {
			if e.Kind == event.JobStarted && e.Seq == 1 {
				panic("observer bug")
			}
			if e.Kind == event.JobFinished {
				mu.Lock()
				finished[e.Seq] = e.Outcome
				mu.Unlock()
			}
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background())
	if !errors.Is(err, ErrObserverPanic) {
		t.Errorf("Run's error %v, want one wrapping ErrObserverPanic", err)
	}
	if _, statErr := os.Stat(filepath.Join(dir, "1")); statErr != nil {
		t.Errorf("job 1 had not ended when Run returned: %v", statErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if o, ok := finished[1]; !ok || o != event.Succeeded {
		t.Errorf("job 1's JobFinished: %v (seen %v), want succeeded", o, ok)
	}
	if n := sum.Succeeded + sum.Failed + sum.Killed + sum.NotStarted; n != int64(len(finished)) {
		t.Errorf("summary %+v counts %d jobs, %d JobFinished events", sum, n, len(finished))
	}
}
