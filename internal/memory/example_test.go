package memory_test

import (
	"fmt"

	"github.com/ration-run/ration/internal/memory"
)

// A runner asks before each start. Here 200 MiB are shared, 10 MiB of it
// not by jobs, and finished jobs peaked at 60 MiB: three run, and memory
// holds the fourth although the CPU policy would run 8.
func ExampleGate() {
	g := memory.New(memory.Config{})
	g.Finished(60 << 20)
	d := g.Admit(memory.Request{
		Reading: memory.Reading{Limit: 200 << 20, WorkingSet: 190 << 20},
		Running: []int64{60 << 20, 60 << 20, 60 << 20},
		Limit:   8,
	})
	fmt.Println(d.Start, d.Rule, d.MemoryJobs)
	fmt.Println(g.Stats())
	// Output:
	// false headroom 3
	// memory bound 3 of 8 jobs: 180 MiB headroom / 60 MiB per job (held 1 start)
}

// The OOM rules: a job killed beside others is re-queued and waits until
// fewer jobs run than the halved size; killed alone, it fails.
func ExampleOOMRetry() {
	var p memory.OOMRetry
	fmt.Println(p.Decide(memory.OOMKill{Kills: 1, Others: 7}).Requeue, p.Ready(7, 4), p.Ready(3, 4))
	fmt.Println(p.Decide(memory.OOMKill{Kills: 2, Others: 0}).Reason)
	// Output:
	// true false true
	// OOM-killed while running alone (kill 2): it does not fit in the memory limit
}
