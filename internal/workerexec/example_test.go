//go:build linux

package workerexec_test

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ration-run/ration/internal/workerexec"
	"github.com/ration-run/ration/runner"
	"github.com/ration-run/ration/runner/input"
	"github.com/ration-run/ration/runner/worker"
)

// ration run --worker in Go: two long-lived Python workers answer the
// jobs, each answer is its job's output line (in input order with
// KeepOrder), and a task's error fails its job as a failing command
// would.
func Example() {
	x, err := workerexec.New(worker.Config{
		Command: []string{"python3", "../../runner/worker/examples/worker.py"},
		Stderr:  io.Discard,
	})
	if err != nil {
		panic(err)
	}
	r, err := runner.New(runner.Config{
		Command:   []string{"worker", "{}"}, // not run: the input is the task
		Input:     input.Args([]string{"sleep:20:a", "fail:bad input", "sleep:0:b"}),
		Jobs:      2,
		KeepOrder: true,
		Executor:  x,
		Stdout:    os.Stdout,
		Stderr:    io.Discard,
	})
	if err != nil {
		panic(err)
	}
	sum, err := r.Run(context.Background())
	fmt.Println(sum.Succeeded, "succeeded,", sum.Failed, "failed,", err)
	// Output:
	// sleep:20:a
	// sleep:0:b
	// 2 succeeded, 1 failed, <nil>
}
