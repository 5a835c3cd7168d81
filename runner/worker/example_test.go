//go:build linux

package worker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/ration-run/ration/runner/worker"
)

// A pool of two Python workers: answers, a task's own error, and a task
// that kills its worker twice and is quarantined.
func Example() {
	ctx := context.Background()
	p, err := worker.New(ctx, worker.Config{
		Command: []string{"python3", "examples/worker.py"},
		Size:    2,
		Stderr:  io.Discard,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close(ctx)

	out, err := p.Do(ctx, "sleep:1")
	fmt.Println(worker.OutputText(out), err)

	_, err = p.Do(ctx, "fail:bad input")
	var te *worker.TaskError
	fmt.Println(errors.As(err, &te), te.Message)

	_, err = p.Do(ctx, "exit:3")
	var q *worker.QuarantinedError
	fmt.Println(errors.As(err, &q), q.Cause, q.Breaks)

	s := p.Stats()
	fmt.Println(s.Succeeded, s.Failed, s.Quarantined, s.Replacements)
	// Output:
	// sleep:1 <nil>
	// true bad input
	// true exit 2
	// 1 1 1 2
}

// BenchmarkDo measures the round trip of one task through the pool to the
// Go example worker and back (pipe write, worker decode/encode, read).
func BenchmarkDo(b *testing.B) {
	p, err := worker.New(context.Background(), worker.Config{Command: []string{goWorker}, Size: 1, Stderr: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx := context.Background()
	for b.Loop() {
		if _, err := p.Do(ctx, "sleep:0"); err != nil {
			b.Fatal(err)
		}
	}
}
