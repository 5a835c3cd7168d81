package pool_test

// Regression tests for issue 15: each failed on the code before its fix.

import (
	"context"
	"testing"

	"github.com/ration-run/ration/pool"
)

// TestLoopBodyPanic: a panic in the loop body comes back as itself after
// the cleanup, while workers keep delivering results (under -race: no data
// race between the workers and the cleanup).
func TestLoopBodyPanic(t *testing.T) {
	p := newPool(t, 4)
	for run := range 300 {
		func() {
			defer func() {
				if v := recover(); v != "body" {
					t.Fatalf("run %d: recovered %v, want the loop body's own panic", run, v)
				}
			}()
			n := 0
			for range pool.Map(context.Background(), p, seqN(100), func(_ context.Context, i int) (int, error) { return i, nil }) {
				if n++; n == 1+run%5 {
					panic("body")
				}
			}
		}()
	}
}
