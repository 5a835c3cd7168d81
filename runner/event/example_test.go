package event_test

import (
	"fmt"

	"github.com/ration-run/ration/runner/event"
)

// An observer that counts outcomes, beside one that prints failures: Multi
// hands each event to both, in order, and skips the nil one.
func ExampleMulti() {
	outcomes := map[event.Outcome]int{}
	count := event.Func(func(e event.Event) {
		if e.Kind == event.JobFinished {
			outcomes[e.Outcome]++
		}
	})
	failures := event.Func(func(e event.Event) {
		if e.Kind == event.JobFinished && e.Outcome != event.Succeeded {
			fmt.Printf("job %d (%s): %s, cause %s\n", e.Seq, e.Input, e.Outcome, e.Cause)
		}
	})
	var none event.Observer // an optional observer left out
	obs := event.Multi{count, failures, none}

	obs.Observe(event.Event{Kind: event.JobStarted, Seq: 1, Input: "a.go"})
	obs.Observe(event.Event{Kind: event.JobFinished, Seq: 1, Input: "a.go", Outcome: event.Succeeded})
	obs.Observe(event.Event{Kind: event.JobFinished, Seq: 2, Input: "b.go", Outcome: event.Failed,
		ExitCode: -1, Signal: 9, Cause: event.CauseOOM})
	fmt.Println(outcomes[event.Succeeded], "succeeded,", outcomes[event.Failed], "failed")
	// Output:
	// job 2 (b.go): failed, cause oom
	// 1 succeeded, 1 failed
}
