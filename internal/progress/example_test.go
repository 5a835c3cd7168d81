package progress_test

import (
	"fmt"
	"strings"

	"github.com/ration-run/ration/internal/progress"
	"github.com/ration-run/ration/runner/event"
)

// Off a terminal (stderr redirected to a file, as in a CI log) the Bar
// writes a whole line every Options.LogEvery and a last one at Finish; a
// Bar is an event.Observer, so the runner's events are all it needs.
func Example() {
	var log strings.Builder
	bar := progress.New(&log, progress.Options{Total: 3})
	bar.Start()
	for seq := int64(1); seq <= 3; seq++ {
		bar.Observe(event.Event{Kind: event.JobStarted, Seq: seq})
		outcome := event.Succeeded
		if seq == 2 {
			outcome = event.Failed
		}
		bar.Observe(event.Event{Kind: event.JobFinished, Seq: seq, Outcome: outcome})
	}
	bar.Finish()
	// The rest of the line, rate, elapsed time and ETA, varies from run
	// to run.
	line, _, _ := strings.Cut(log.String(), " running")
	fmt.Println(line + " running, ...")
	// Output:
	// ration: [####################] 3/3 100%, 1 failed, 0 running, ...
}
